//! `action: NAME`: Maestro's older spelling of a command that takes no argument (`action: back`),
//! read as that command (`YamlFluentCommand.action`: back, hideKeyboard, scroll, clearKeychain,
//! pasteText; any other is Maestro's "Unknown navigation target"). And `openBrowser`, a field
//! Maestro reads and maps to no command.

use super::super::compat::Status;
use super::super::read::Reader;
use super::super::yaml::{at, string, written};
use super::{Given, Spec};
use crate::{Action, Step};

/// The names `action` takes (Maestro 1.39.10, `YamlFluentCommand.kt` line 282 on).
const NAMES: &[&str] = &["back", "hideKeyboard", "scroll", "clearKeychain", "pasteText"];

pub(in crate::maestro) const ACTION: Spec = Spec {
    name: "action",
    status: Status::Replayed,
    note: "back, hideKeyboard, scroll, clearKeychain or pasteText, read as that command (Maestro's older spelling: `action: back` is `- back`)",
    own: &[],
    aimed: &[],
    read: Some(read),
    with_the_flow: true,
};

pub(in crate::maestro) const OPEN_BROWSER: Spec = Spec::refused(
    "openBrowser",
    Status::Refused,
    "Maestro reads the field and maps it to no command: it fails the flow with \"Invalid command: No mapping provided\" (YamlFluentCommand.kt line 466)",
);

fn read(reader: &mut Reader, given: &Given, steps: &mut Vec<Step>) -> Result<Option<Action>, String> {
    let node = given.needed()?;
    written(node, "action", "the command it names, read with the flow")?;
    let name = string(node, "action")?;
    let spec = NAMES
        .contains(&name.as_str())
        .then(|| super::find(&name))
        .flatten()
        .ok_or_else(|| {
            at(
                node,
                &format!(
                    "action is {}, as Maestro reads it (it refuses any other: \"Unknown navigation target\")",
                    NAMES.join(", ")
                ),
            )
        })?;
    let read = spec
        .read
        .ok_or_else(|| at(node, &super::super::compat::refusal(&name)))?;
    let named = Given {
        name: spec.name,
        arg: None,
        item: given.item,
        app: given.app,
        optional: given.optional,
    };
    read(reader, &named, steps)
}
