//! `setAirplaneMode: enabled | disabled` (or `{value}`) and `toggleAirplaneMode`: `cmd
//! connectivity airplane-mode` (Android 11 and later).

use saphyr::MarkedYamlOwned;

use super::super::args::no_argument;
use super::super::compat::Status;
use super::super::fields::NO_ARGUMENT;
use super::super::read::Reader;
use super::super::yaml::{at, field, only_keys, scalar, typed};
use super::{Given, Spec};
use crate::commands::{Aim, Command, Run};
use crate::{Action, Step};

pub(in crate::maestro) const SET_AIRPLANE_MODE: Spec = Spec {
    name: "setAirplaneMode",
    status: Status::Replayed,
    note: "cmd connectivity airplane-mode enable | disable (Android 11 and later)",
    own: &["value", "optional"],
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| airplane(given.needed()?).map(Some)),
    with_the_flow: false,
};

pub(in crate::maestro) const TOGGLE_AIRPLANE_MODE: Spec = Spec {
    name: "toggleAirplaneMode",
    status: Status::Replayed,
    note: "the other way from what cmd connectivity airplane-mode says",
    own: NO_ARGUMENT,
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        no_argument(given.arg)?;
        Ok(Some(Action::Command(Command::Airplane(Airplane { on: None }))))
    }),
    with_the_flow: false,
};

/// `setAirplaneMode: enabled | disabled` (or `{value}`).
fn airplane(arg: &MarkedYamlOwned) -> Result<Action, String> {
    let node = match arg.data.as_mapping() {
        Some(_) => {
            only_keys(arg, SET_AIRPLANE_MODE.own)?;
            field(arg, "value").ok_or_else(|| at(arg, "setAirplaneMode takes value"))?
        }
        None => arg,
    };
    let on = typed(node, true, || {
        match scalar(node).map(|v| v.to_ascii_lowercase()).as_deref() {
            Some("enabled" | "enable" | "true") => Ok(true),
            Some("disabled" | "disable" | "false") => Ok(false),
            _ => Err(at(node, "setAirplaneMode is enabled or disabled")),
        }
    })?;
    Ok(Action::Command(Command::Airplane(Airplane { on: Some(on) })))
}

/// `setAirplaneMode` (Some) or `toggleAirplaneMode` (None): `cmd connectivity airplane-mode`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Airplane {
    pub(crate) on: Option<bool>,
}

impl Run for Airplane {
    fn describe(&self) -> String {
        match self.on {
            Some(true) => "airplane mode on".into(),
            Some(false) => "airplane mode off".into(),
            None => "airplane mode toggled".into(),
        }
    }

    fn body(&self, _: &Aim) -> Vec<String> {
        vec![format!(
            "await airplane({});",
            self.on.map_or("null".into(), |on| on.to_string())
        )]
    }

    fn write(&self) -> String {
        match self.on {
            Some(on) => format!("- setAirplaneMode: {}\n", if on { "enabled" } else { "disabled" }),
            None => "- toggleAirplaneMode\n".into(),
        }
    }
}

/// The run: airplane mode on, off, or (null) the other way from now.
pub(super) const RUN: &str = r#"
async function airplane(on) {
  if (on === null) {
    on = (await shellChecked("cmd connectivity airplane-mode")).stdout.trim() !== "enabled";
  }
  await shellChecked(`cmd connectivity airplane-mode ${on ? "enable" : "disable"}`);
}
"#;
