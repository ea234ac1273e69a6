//! `extendedWaitUntil`: a wait for `visible` to show or `notVisible` to go, at most `timeout`.

use super::super::compat::Status;
use super::super::read::Reader;
use super::super::selectors::selector;
use super::super::yaml::{at, field, number, only_keys};
use super::{Given, Spec};
use crate::{Action, Step};

pub(in crate::maestro) const EXTENDED_WAIT_UNTIL: Spec = Spec {
    name: "extendedWaitUntil",
    status: Status::Replayed,
    note: "visible or notVisible, timeout",
    own: &["visible", "notVisible", "timeout", "optional"],
    aimed: &[],
    read: Some(read),
    with_the_flow: false,
};

fn read(_: &mut Reader, given: &Given, _: &mut Vec<Step>) -> Result<Option<Action>, String> {
    let map = given.needed()?;
    only_keys(map, EXTENDED_WAIT_UNTIL.own)?;
    let timeout_ms = field(map, "timeout")
        .map(|t| number(t, "timeout", u64::MAX))
        .transpose()?;
    let (sel, gone) = match (field(map, "visible"), field(map, "notVisible")) {
        (Some(s), None) => (s, false),
        (None, Some(s)) => (s, true),
        _ => return Err(at(map, "extendedWaitUntil takes visible or notVisible")),
    };
    Ok(Some(Action::Wait {
        selector: selector(sel)?,
        gone,
        timeout_ms,
    }))
}
