//! `waitForAnimationToEnd`: a screen reading (it waits until the app is idle), at most `timeout`.

use super::super::compat::Status;
use super::super::read::Reader;
use super::super::yaml::{field, number, only_keys};
use super::{Given, Spec};
use crate::{Action, Step};

/// The longest `waitForAnimationToEnd` a flow may ask for (a typo fails at once).
const MAX_SETTLE_MS: u64 = 600_000;

pub(in crate::maestro) const WAIT_FOR_ANIMATION_TO_END: Spec = Spec {
    name: "waitForAnimationToEnd",
    status: Status::Replayed,
    note: "a screen reading (it waits until the app is idle), at most timeout",
    own: &["timeout", "optional"],
    aimed: &[],
    read: Some(read),
    with_the_flow: false,
};

fn read(_: &mut Reader, given: &Given, _: &mut Vec<Step>) -> Result<Option<Action>, String> {
    let timeout_ms = match given.arg.filter(|a| !a.data.is_null()) {
        Some(map) => {
            only_keys(map, WAIT_FOR_ANIMATION_TO_END.own)?;
            field(map, "timeout")
                .map(|t| number(t, "timeout", MAX_SETTLE_MS))
                .transpose()?
        }
        None => None,
    };
    Ok(Some(Action::Settle { timeout_ms }))
}
