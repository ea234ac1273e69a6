//! `takeScreenshot: NAME` (or `{path: NAME}`): NAME.png beside the report, as Maestro appends
//! `.png` to the path it is given; and the name a command's file takes (`file_name`), which
//! `startRecording` shares.

use saphyr::MarkedYamlOwned;

use super::super::compat::Status;
use super::super::read::Reader;
use super::super::template::marked;
use super::super::yaml::{at, field, only_keys, string};
use super::{Given, Spec};
use crate::commands::Command;
use crate::{Action, Step};

pub(in crate::maestro) const TAKE_SCREENSHOT: Spec = Spec {
    name: "takeScreenshot",
    status: Status::Replayed,
    note: "PATH.png in the JUnit report's folder (else the current folder), PATH a path of plain names inside it (an absolute PATH or a .. refused at its line; a ${…} in it rendered as the step runs, the name it makes held to the same rules): screencap on the device, pulled after the run",
    own: &["path", "optional"],
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        let name = file_name(given.needed()?, &TAKE_SCREENSHOT, ".png")?;
        Ok(Some(Action::Command(Command::Screenshot { name })))
    }),
    with_the_flow: false,
};

/// The name a command's file takes (`path`, its `extension` appended as Maestro appends it): a
/// path inside the report's folder, as the one door takes it (`confine::relative`: plain names,
/// `/` between folders); an absolute path or a `..` is refused, so a flow a third party wrote
/// writes nowhere else.
pub(super) fn file_name(arg: &MarkedYamlOwned, command: &Spec, extension: &str) -> Result<String, String> {
    let node = match arg.data.as_mapping() {
        Some(_) => {
            only_keys(arg, command.own)?;
            field(arg, "path").ok_or_else(|| at(arg, &format!("{} takes path", command.name)))?
        }
        None => arg,
    };
    let name = string(node, command.name)?;
    let name = name.strip_suffix(extension).unwrap_or(&name).to_string();
    // A template's name is held to the door's rules as its step reads it again, rendered.
    if marked(node) {
        return Ok(name);
    }
    if let Err(e) = confine::relative(&format!("{name}{extension}")) {
        return Err(at(
            node,
            &format!("{}: {e}; the file lands in the report's folder", command.name),
        ));
    }
    Ok(name)
}
