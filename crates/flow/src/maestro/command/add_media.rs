//! `addMedia: [FILE, …]` (or `{files: […]}`): files beside the flow, pushed to the device before
//! the run (`media`: what the replay pushes, `check_media`: each file's first bytes), then a media
//! scan of each.

use android::text::quote;
use saphyr::MarkedYamlOwned;

use super::super::compat::Status;
use super::super::read::Reader;
use super::super::write::quoted;
use super::super::yaml::{at, field, only_keys, string, written};
use super::{Given, Spec};
use crate::commands::{Aim, Command, Run};
use crate::{Action, Step, quoted as lit};

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
        check_media(&given, &mut file).map_err(|e| at(item, &format!("addMedia: {e}")))?;
        files.push(given);
    }
    if files.is_empty() {
        return Err(at(list, "addMedia takes one file at least"));
    }
    Ok(Action::Command(Command::AddMedia(AddMedia {
        folder: folder.display().to_string(),
        files,
    })))
}

/// `addMedia`: each file (a path inside `folder`, the flow's, as the flow wrote it) in the
/// device's shared Pictures (or Movies) folder, pushed before the run (`src/replay/files.rs`)
/// through the one door, and made known to the media store here, as Maestro does on Android (a
/// media scan of the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddMedia {
    pub(crate) folder: String,
    pub(crate) files: Vec<String>,
}

impl Run for AddMedia {
    fn describe(&self) -> String {
        let names: Vec<String> = self.files.iter().map(|f| media_path(f)).collect();
        format!("add media {}", names.join(", "))
    }

    /// A media scan of each file, pushed before the run.
    fn body(&self, _: &Aim) -> Vec<String> {
        self.files
            .iter()
            .map(|f| {
                let scan = format!(
                    "am broadcast -a android.intent.action.MEDIA_SCANNER_SCAN_FILE -d {}",
                    quote(&format!("file://{}", media_path(f)))
                );
                format!("await shellChecked({});", lit(&scan))
            })
            .collect()
    }

    fn write(&self) -> String {
        let each: String = self.files.iter().map(|f| format!("    - {}\n", quoted(f))).collect();
        format!("- addMedia:\n{each}")
    }
}

/// Where `addMedia` puts a host file on the device: a video in the shared Movies folder, anything
/// else in Pictures, under its own file name.
fn media_path(host: &str) -> String {
    let name = std::path::Path::new(host)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let video = [".mp4", ".mov", ".3gp", ".webm", ".mkv"]
        .iter()
        .any(|e| name.to_ascii_lowercase().ends_with(e));
    format!("/sdcard/{}/{name}", if video { "Movies" } else { "Pictures" })
}

/// A host file `addMedia` pushes: the flow's folder, the file's path inside it, and where it
/// goes on the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Media {
    pub folder: String,
    pub file: String,
    pub device: String,
}

/// The host files a flow's `addMedia` steps push, and where each goes on the device.
pub fn media(steps: &[Step]) -> Vec<Media> {
    steps
        .iter()
        .filter_map(|s| match &s.action {
            Action::Command(Command::AddMedia(add)) => Some(add),
            _ => None,
        })
        .flat_map(|add| {
            add.files.iter().map(|f| Media {
                folder: add.folder.clone(),
                file: f.clone(),
                device: media_path(f),
            })
        })
        .collect()
}

/// Checks by its first bytes that the media file `given` is what its name says: an image (PNG,
/// JPEG, GIF, WebP) for a picture, a video (an ISO `ftyp` box: MP4, MOV, 3GP; EBML: WebM, MKV)
/// for a `.mp4`, `.mov`, `.3gp`, `.webm` or `.mkv`. The content is never echoed (it may be a
/// secret a link led to).
pub fn check_media(given: &str, file: &mut impl std::io::Read) -> Result<(), String> {
    use std::io::Read as _;
    let mut head = Vec::new();
    file.take(16)
        .read_to_end(&mut head)
        .map_err(|e| format!("cannot read {given}: {e}"))?;
    let image = head.starts_with(b"\x89PNG\r\n\x1a\n")
        || head.starts_with(&[0xff, 0xd8, 0xff])
        || head.starts_with(b"GIF87a")
        || head.starts_with(b"GIF89a")
        || (head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WEBP".as_slice()));
    let video = head.get(4..8) == Some(b"ftyp".as_slice()) || head.starts_with(&[0x1a, 0x45, 0xdf, 0xa3]);
    let wants_video = media_path(given).starts_with("/sdcard/Movies/");
    match (wants_video, image, video) {
        (false, true, _) | (true, _, true) => Ok(()),
        (false, ..) => Err(format!(
            "{given} is no image by its content (a PNG, JPEG, GIF or WebP starts with its own bytes)"
        )),
        (true, ..) => Err(format!(
            "{given} is no video by its content (an MP4, MOV or 3GP has an ftyp box; a WebM or MKV starts with EBML)"
        )),
    }
}
