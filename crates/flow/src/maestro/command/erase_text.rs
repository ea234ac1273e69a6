//! `eraseText`: the focused field emptied; `eraseText: N` (or `{charactersToErase: N}`) deletes
//! N characters, as Maestro does.

use super::super::compat::Status;
use super::super::read::Reader;
use super::super::yaml::{at, field, integer, only_keys, typed};
use super::{Given, Spec};
use crate::{Action, Step};

/// Characters an `eraseText: N` deletes at most (one DEL each).
const MAX_ERASE: u32 = 1000;

pub(in crate::maestro) const ERASE_TEXT: Spec = Spec {
    name: "eraseText",
    status: Status::Replayed,
    note: "N characters, or the whole field",
    own: &["charactersToErase", "optional"],
    aimed: &[],
    read: Some(read),
    with_the_flow: false,
};

fn read(_: &mut Reader, given: &Given, _: &mut Vec<Step>) -> Result<Option<Action>, String> {
    let count = match given.arg.filter(|a| !a.data.is_null()) {
        None => None,
        Some(map) if map.data.as_mapping().is_some() => {
            only_keys(map, ERASE_TEXT.own)?;
            field(map, "charactersToErase")
        }
        Some(count) => Some(count),
    };
    let Some(count) = count else {
        return Ok(Some(Action::Type {
            target: None,
            text: String::new(),
            clear: true,
            submit: false,
        }));
    };
    typed(count, Action::Erase { chars: 1 }, || {
        match integer(count).ok().and_then(|c| u32::try_from(c).ok()) {
            Some(chars @ 1..=MAX_ERASE) => Ok(Action::Erase { chars }),
            _ => Err(at(
                count,
                &format!("eraseText takes a number of characters, 1 to {MAX_ERASE} (none empties the field)"),
            )),
        }
    })
    .map(Some)
}
