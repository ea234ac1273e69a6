//! `setOrientation`: auto-rotate off, then the display turned as the flow says.

use saphyr::MarkedYamlOwned;

use super::super::compat::Status;
use super::super::read::Reader;
use super::super::yaml::{at, field, only_keys, string, typed};
use super::{Given, Spec};
use crate::commands::{Aim, Command, Run};
use crate::{Action, Step};

pub(in crate::maestro) const SET_ORIENTATION: Spec = Spec {
    name: "setOrientation",
    status: Status::Replayed,
    note: "PORTRAIT, LANDSCAPE_LEFT, LANDSCAPE_RIGHT, UPSIDE_DOWN: auto-rotate off (settings put system accelerometer_rotation 0), then settings put system user_rotation 0 to 3",
    own: &["orientation", "optional"],
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| orientation(given.needed()?).map(Some)),
    with_the_flow: false,
};

/// `setOrientation: PORTRAIT | LANDSCAPE_LEFT | LANDSCAPE_RIGHT | UPSIDE_DOWN` (or
/// `{orientation}`), case and `_` ignored as Maestro ignores them (`landscapeLeft`).
fn orientation(arg: &MarkedYamlOwned) -> Result<Action, String> {
    let node = match arg.data.as_mapping() {
        Some(_) => {
            only_keys(arg, SET_ORIENTATION.own)?;
            field(arg, "orientation").ok_or_else(|| at(arg, "setOrientation takes orientation"))?
        }
        None => arg,
    };
    let turns = typed(node, 0, || {
        let given = string(node, "orientation")?;
        let plain = |s: &str| s.replace('_', "").to_ascii_lowercase();
        ORIENTATIONS
            .iter()
            .position(|o| plain(o) == plain(&given))
            .ok_or_else(|| {
                at(
                    node,
                    "setOrientation is PORTRAIT, LANDSCAPE_LEFT, LANDSCAPE_RIGHT or UPSIDE_DOWN",
                )
            })
    })?;
    Ok(Action::Command(Command::Orientation(Orientation {
        turns: turns as u8,
    })))
}

/// Maestro's orientations by the quarter turns Android's `user_rotation` counts.
const ORIENTATIONS: [&str; 4] = ["PORTRAIT", "LANDSCAPE_LEFT", "UPSIDE_DOWN", "LANDSCAPE_RIGHT"];

/// `setOrientation`: auto-rotate off, then the display turned a quarter `turns` times (0
/// portrait, 1 landscape left, 2 upside down, 3 landscape right), as Maestro sets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Orientation {
    pub(crate) turns: u8,
}

impl Run for Orientation {
    fn describe(&self) -> String {
        format!("orientation {}", ORIENTATIONS[usize::from(self.turns % 4)])
    }

    fn body(&self, _: &Aim) -> Vec<String> {
        vec![
            "await shellChecked(\"settings put system accelerometer_rotation 0\");".into(),
            format!(
                "await shellChecked(\"settings put system user_rotation {}\");",
                self.turns % 4
            ),
        ]
    }

    fn write(&self) -> String {
        format!("- setOrientation: {}\n", ORIENTATIONS[usize::from(self.turns % 4)])
    }
}
