//! `clearKeychain`: iOS's; nothing to do on Android, which its step line says.

use super::super::args::no_argument;
use super::super::compat::Status;
use super::super::fields::NO_ARGUMENT;
use super::super::read::Reader;
use super::{Given, Spec};
use crate::commands::{Aim, Command, Run};
use crate::{Action, Step};

pub(in crate::maestro) const CLEAR_KEYCHAIN: Spec = Spec {
    name: "clearKeychain",
    status: Status::Replayed,
    note: "iOS only: nothing to do on Android, which its step line says",
    own: NO_ARGUMENT,
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        no_argument(given.arg)?;
        Ok(Some(Action::Command(Command::Nothing(Nothing {
            said: "clearKeychain: nothing to do on Android (the keychain is iOS's)".into(),
        }))))
    }),
    with_the_flow: false,
};

/// A command with nothing to do on Android (`clearKeychain`), said in its step line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nothing {
    pub(crate) said: String,
}

impl Run for Nothing {
    fn describe(&self) -> String {
        self.said.clone()
    }

    fn body(&self, _: &Aim) -> Vec<String> {
        Vec::new()
    }

    fn write(&self) -> String {
        "- clearKeychain\n".into()
    }
}
