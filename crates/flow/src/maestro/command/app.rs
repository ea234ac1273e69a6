//! The commands that name only an app (the header's, or the one given): `stopApp`, `killApp`,
//! `clearState`.

use super::super::compat::Status;
use super::super::read::Reader;
use super::{Given, Spec};
use crate::commands::Command;
use crate::{Action, Step};

pub(in crate::maestro) const STOP_APP: Spec = Spec {
    name: "stopApp",
    status: Status::Replayed,
    note: "the header's appId, or the one given",
    own: &[],
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        Ok(Some(Action::Stop {
            package: given.package(given.arg)?,
        }))
    }),
    with_the_flow: false,
};

pub(in crate::maestro) const KILL_APP: Spec = Spec {
    name: "killApp",
    status: Status::Replayed,
    note: "am kill, the process death the system causes (Maestro's); the header's appId, or the one given",
    own: &[],
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        Ok(Some(Action::Command(Command::Kill {
            package: given.package(given.arg)?,
        })))
    }),
    with_the_flow: false,
};

pub(in crate::maestro) const CLEAR_STATE: Spec = Spec {
    name: "clearState",
    status: Status::Replayed,
    note: "pm clear",
    own: &[],
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        Ok(Some(Action::ClearData {
            package: given.package(given.arg)?,
        }))
    }),
    with_the_flow: false,
};
