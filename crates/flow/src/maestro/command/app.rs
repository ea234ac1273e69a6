//! The commands that name only an app (the header's, or the one given): `stopApp`, `killApp`,
//! `clearState`.

use super::super::compat::Status;
use android::text::quote;

use super::super::read::Reader;
use super::super::write::quoted;
use super::super::yaml::{field, only_keys};
use super::{Given, Spec};
use crate::commands::{Aim, Command, Run};
use crate::{Action, Step, quoted as lit};

pub(in crate::maestro) const STOP_APP: Spec = Spec {
    name: "stopApp",
    status: Status::Replayed,
    note: "the header's appId, or the one given (alone or as appId)",
    own: &["appId", "optional"],
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| Ok(Some(Action::Stop { package: app(given)? }))),
    with_the_flow: false,
};

pub(in crate::maestro) const KILL_APP: Spec = Spec {
    name: "killApp",
    status: Status::Replayed,
    note: "am kill, the process death the system causes (Maestro's); the header's appId, or the one given (alone or as appId)",
    own: &["appId", "optional"],
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        Ok(Some(Action::Command(Command::Kill(Kill { package: app(given)? }))))
    }),
    with_the_flow: false,
};

pub(in crate::maestro) const CLEAR_STATE: Spec = Spec {
    name: "clearState",
    status: Status::Replayed,
    note: "pm clear; the header's appId, or the one given (alone or as appId)",
    own: &["appId", "optional"],
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| Ok(Some(Action::ClearData { package: app(given)? }))),
    with_the_flow: false,
};

/// The app a command names: alone (`stopApp: com.x`), as its `appId` (`stopApp: {appId: com.x}`,
/// Maestro's `YamlStopApp`), or none (the header's).
fn app(given: &Given) -> Result<String, String> {
    match given.arg.filter(|a| a.data.as_mapping().is_some()) {
        Some(map) => {
            only_keys(map, &["appId", "optional"])?;
            given.package(field(map, "appId"))
        }
        None => given.package(given.arg),
    }
}

/// `killApp`: `am kill`, the death of its process the system causes (Maestro's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kill {
    pub(crate) package: String,
}

impl Run for Kill {
    fn describe(&self) -> String {
        format!("kill {} (am kill)", self.package)
    }

    fn body(&self, _: &Aim) -> Vec<String> {
        vec![format!(
            "await shellChecked({});",
            lit(&format!("am kill {}", quote(&self.package)))
        )]
    }

    fn write(&self) -> String {
        format!("- killApp: {}\n", quoted(&self.package))
    }
}
