//! `addMedia: [FILE, …]` (or `{files: […]}`): files beside the flow, pushed to the device before
//! the run, then a media scan of each.

use saphyr::MarkedYamlOwned;

use super::super::compat::Status;
use super::super::read::Reader;
use super::super::yaml::{at, field, only_keys, string, written};
use super::{Given, Spec};
use crate::commands::Command;
use crate::{Action, Step};

pub(in crate::maestro) const ADD_MEDIA: Spec = Spec {
    name: "addMedia",
    status: Status::Replayed,
    note: "files beside the flow, pushed to the device's Pictures (videos: Movies) before the run, then a media scan of each (am broadcast MEDIA_SCANNER_SCAN_FILE)",
    own: &["files", "optional"],
    aimed: &[],
    read: Some(|reader: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        add_media(given.needed()?, super::folder(reader)).map(Some)
    }),
    with_the_flow: true,
};

/// `addMedia: [FILE, …]` (or `{files: […]}`): each an image or a video beside the flow (`base`,
/// its folder), opened now through the one door (no link followed) and checked by its first
/// bytes, so a missing, linked or mislabelled one fails with its line.
fn add_media(arg: &MarkedYamlOwned, base: Option<&std::path::Path>) -> Result<Action, String> {
    let list = match arg.data.as_mapping() {
        Some(_) => {
            only_keys(arg, ADD_MEDIA.own)?;
            field(arg, "files").ok_or_else(|| at(arg, "addMedia takes files"))?
        }
        None => arg,
    };
    let items = list
        .data
        .as_sequence()
        .ok_or_else(|| at(list, "addMedia takes a list of files"))?;
    // The flow's folder: its path as the person gave it, links in it followed; below it, none.
    let folder = base.unwrap_or(std::path::Path::new(""));
    let beside = confine::Folder::chosen(folder).map_err(|e| at(list, &format!("addMedia: {e}")))?;
    let mut files = Vec::new();
    for item in items {
        written(item, "addMedia", "a file pushed to the device before the run")?;
        let given = string(item, "a file")?;
        // The one check, as the flow is read (`--check` and a run alike): a file beside the
        // flow or in a folder below it, never `../` or an absolute path.
        let parts = confine::inside(&given).map_err(|e| at(item, &format!("addMedia: {e}")))?;
        let path = std::path::Path::new(&given);
        let known = ["png", "jpg", "jpeg", "gif", "webp", "mp4", "mov", "3gp", "webm", "mkv"];
        let extension = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
        if !extension.is_some_and(|e| known.contains(&e.as_str())) {
            return Err(at(
                item,
                &format!("addMedia {given:?} is no image or video ({})", known.join(", ")),
            ));
        }
        let cannot = |e: String| at(item, &format!("addMedia cannot read {given}: {e}"));
        let (mut file, _) = beside.open_existing(&parts).map_err(cannot)?;
        crate::commands::check_media(&given, &mut file).map_err(|e| at(item, &format!("addMedia: {e}")))?;
        files.push(given);
    }
    if files.is_empty() {
        return Err(at(list, "addMedia takes one file at least"));
    }
    Ok(Action::Command(Command::AddMedia {
        folder: folder.display().to_string(),
        files,
    }))
}
