//! `takeScreenshot: NAME` (or `{path: NAME}`): NAME.png beside the report, as Maestro appends
//! `.png` to the path it is given (its run calls `pullLater`, `commands.js`'s, which only it calls);
//! and the name a command's file takes (`file_name`), which `startRecording` shares.

use saphyr::MarkedYamlOwned;

use super::super::compat::Status;
use super::super::read::Reader;
use super::super::template::marked;
use super::super::write::quoted;
use super::super::yaml::{at, field, only_keys, string};
use super::{Given, Spec};
use crate::commands::{Aim, Command, Run, device_file};
use crate::{Action, Step, quoted as lit};

pub(in crate::maestro) const TAKE_SCREENSHOT: Spec = Spec {
    name: "takeScreenshot",
    status: Status::Replayed,
    note: "PATH.png in the working folder (the JUnit report's folder, else the current folder), as Maestro writes PATH beside the folder it runs in, confined to it as a chroot: a .. that would climb out stays at its top and an absolute PATH starts there (`../../reports/x` is reports/x.png, `/tmp/x` tmp/x.png), each part a plain name, else refused at its line (a ${…} in it rendered as the step runs, the name it makes held to the same rules): screencap on the device, pulled after the run",
    own: &["path", "optional"],
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        let name = file_name(given.needed()?, &TAKE_SCREENSHOT, ".png")?;
        Ok(Some(Action::Command(Command::Screenshot(Screenshot { name }))))
    }),
    with_the_flow: false,
};

/// `takeScreenshot`: the screen as `NAME.png`, beside the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screenshot {
    pub(crate) name: String,
}

impl Run for Screenshot {
    fn describe(&self) -> String {
        format!("screenshot {}.png", self.name)
    }

    /// `pullLater` (`commands.js`): screencap into the device file, pulled after the run.
    fn body(&self, _: &Aim) -> Vec<String> {
        let name = &self.name;
        vec![format!(
            "await pullLater({}, {}, \"screencap -p \");",
            lit(&device_file(name, "png")),
            lit(&format!("{name}.png"))
        )]
    }

    fn write(&self) -> String {
        format!("- takeScreenshot: {}\n", quoted(&self.name))
    }
}

/// The name a command's file takes (`path`, its `extension` appended as Maestro appends it, to
/// a path that ends with it too): a
/// path inside the working folder, as the one door takes it (`confine::relative`: plain names,
/// `/` between folders). Maestro writes the path beside the folder it runs in, or where an
/// absolute one says; a replay confines it to that folder (`inside`), so a flow a third party
/// wrote writes nowhere else.
pub(super) fn file_name(arg: &MarkedYamlOwned, command: &Spec, extension: &str) -> Result<String, String> {
    let node = match arg.data.as_mapping() {
        Some(_) => {
            only_keys(arg, command.own)?;
            field(arg, "path").ok_or_else(|| at(arg, &format!("{} takes path", command.name)))?
        }
        None => arg,
    };
    let name = string(node, command.name)?;
    // Appended to whatever the path ends with, as Maestro appends it: `shot.png` is
    // `shot.png.png`, never the same file as `shot`.
    let name = confine::chrooted(&name);
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

#[cfg(test)]
mod tests {
    use crate::Action;
    use crate::commands::Command;
    use confine::chrooted as inside;

    /// A report path that climbs out of the working folder, as public flows write it
    /// (`takeScreenshot: ../../reports/x`), lands inside it; an absolute one is still refused.
    #[test]
    fn a_screenshot_path_is_confined_to_the_working_folder() {
        let steps = super::super::super::parse(
            "appId: a.b\n---\n- takeScreenshot: ../../reports/login\n- takeScreenshot:\n    path: ./shots/../done\n",
        )
        .unwrap_or_else(|e| panic!("refused: {e}"));
        let names: Vec<&str> = steps
            .iter()
            .filter_map(|s| match &s.action {
                Action::Command(Command::Screenshot(shot)) => Some(shot.name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["reports/login", "done"]);
        let hidden = super::super::super::parse("appId: a.b\n---\n- takeScreenshot: ../.x\n").unwrap_err();
        assert!(hidden.contains("line 3"), "{hidden}");
        assert_eq!(inside("/tmp/356-stage1"), "tmp/356-stage1");
        assert_eq!(inside("a/../../b/./c"), "b/c");
        assert_eq!(inside("../.."), "");
    }
}
