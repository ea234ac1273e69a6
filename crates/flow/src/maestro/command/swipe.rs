//! `swipe`: a direction, or start and end (pixels or percent), or from an element with a
//! direction; its duration.

use super::super::args::direction;
use super::super::compat::Status;
use super::super::read::Reader;
use super::super::selectors::spot;
use super::super::template::marked;
use super::super::yaml::{at, field, key, number, only_keys};
use super::{Given, Spec};
use crate::{Action, Selector, Step};
use saphyr::MarkedYamlOwned;

pub(in crate::maestro) const SWIPE: Spec = Spec {
    name: "swipe",
    status: Status::Replayed,
    note: "waitToSettleTimeoutMs read (a replay's step waits for the screen to settle after it); direction, or start and end, or from (any selector) with direction; duration",
    own: &[
        "start",
        "end",
        "duration",
        "direction",
        "from",
        "waitToSettleTimeoutMs",
        "optional",
    ],
    aimed: &[],
    read: Some(read),
    with_the_flow: false,
};

fn read(_: &mut Reader, given: &Given, _: &mut Vec<Step>) -> Result<Option<Action>, String> {
    swipe(given.needed()?).map(Some)
}

fn swipe(arg: &MarkedYamlOwned) -> Result<Action, String> {
    only_keys(arg, SWIPE.own)?;
    settle_bound(arg)?;
    // A swipe lasts what `ui swipe` can ask the device for; Maestro's default is its own.
    let duration_ms = match field(arg, "duration") {
        Some(d) => match number(d, "duration", 10_000).map_err(|_| at(d, "duration is 50 to 10000 ms"))? {
            _ if marked(d) => Some(400),
            ms @ 50..=10_000 => Some(ms as u32),
            _ => return Err(at(d, "duration is 50 to 10000 ms")),
        },
        None => None,
    };
    if let Some(d) = field(arg, "direction") {
        if let Some(point) = key(arg, "start").or(key(arg, "end")) {
            return Err(at(point, "swipe takes direction, or start and end, not both"));
        }
        // From an element's centre (`from: {id: sheet_handle}`), as Maestro swipes on one.
        // Resolved as Maestro resolves it, so an id or a text is that very node, not its row.
        if let (Some(name), Some(from)) = (key(arg, "from"), field(arg, "from")) {
            return Ok(Action::SwipeFrom {
                from: Selector::Maestro(super::super::selectors::element(name, from)?),
                direction: direction(d)?,
                duration_ms,
            });
        }
        return Ok(Action::SwipeToward {
            direction: direction(d)?,
            duration_ms,
        });
    }
    if let Some(from) = key(arg, "from") {
        return Err(at(from, "swipe from an element takes its direction"));
    }
    let (Some(start), Some(end)) = (field(arg, "start"), field(arg, "end")) else {
        return Err(at(
            arg,
            "swipe takes start and end (\"x, y\" in pixels or \"x%, y%\" of the screen), or direction",
        ));
    };
    match (spot(start)?, spot(end)?) {
        (Selector::Point(from), Selector::Point(to)) => Ok(Action::Swipe { from, to, duration_ms }),
        (Selector::Percent(from), Selector::Percent(to)) => Ok(Action::SwipePercent { from, to, duration_ms }),
        // Whichever a template gives, the step reads its swipe again rendered.
        (from, to) if marked(start) || marked(end) => Ok(Action::Swipe {
            from: corner(&from),
            to: corner(&to),
            duration_ms,
        }),
        _ => Err(at(arg, "start and end are both pixels or both percentages")),
    }
}

/// A point of a swipe one of whose ends a template gives: its pixels, or none.
fn corner(point: &Selector) -> [i32; 2] {
    match point {
        Selector::Point(p) => *p,
        _ => [0, 0],
    }
}

/// Maestro's `waitToSettleTimeoutMs` (a swipe's, a scrollUntilVisible's): how long it waits for
/// the screen to settle after. Read and checked; a replay's step waits for the screen to settle
/// after it in any case (`settle`, at most the step's timeout).
pub(super) fn settle_bound(arg: &MarkedYamlOwned) -> Result<(), String> {
    match field(arg, "waitToSettleTimeoutMs") {
        Some(t) => number(t, "waitToSettleTimeoutMs", u64::MAX).map(|_| ()),
        None => Ok(()),
    }
}
