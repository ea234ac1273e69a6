//! `scrollUntilVisible`: with none of Maestro's options, the scroll `ui scroll` makes (at most 8
//! swipes, or to the end of the list); with any, Maestro's loop (`ScrollUntil`), which
//! runs here (`scrollUntil`) and nowhere else. The swipe's length for a speed is computed here
//! once, in Rust; the loop of looks and swipes once, in the JavaScript below.

use super::super::args::{direction, flag};
use super::super::compat::Status;
use super::super::read::Reader;
use super::super::selectors::selector;
use super::super::write::selector_fields;
use super::super::yaml::{at, field, integer, number, only_keys, scalar, typed};
use super::{Given, Spec};
use crate::commands::{Aim, Command, Run};
use crate::{Action, Selector, Step, quoted as lit};

/// Maestro's `scrollUntilVisible` timeout when none is given, and its swipe speed.
const SCROLL_TIMEOUT_MS: u64 = 20_000;
const SCROLL_SPEED: u32 = 40;
/// The longest wait a flow may ask for (a typo such as `timeout: 2000000` fails at once).
const MAX_WAIT_MS: u64 = 600_000;
/// The shortest swipe the device is asked for.
const MIN_SWIPE_MS: i64 = 50;

pub(in crate::maestro) const SCROLL_UNTIL_VISIBLE: Spec = Spec {
    name: "scrollUntilVisible",
    status: Status::Replayed,
    note: "element, direction, waitToSettleTimeoutMs (read: a replay's step waits for the screen to settle after it); with timeout (20 s), speed (40: a swipe of 1000 × (100 − speed) / 100 + 1 ms, 40 over 100, at least 50 on the device), visibilityPercentage (read: an element shows when its centre is on the screen, what Maestro's check comes to below 100) or centerElement (at most 4 swipes towards the middle), Maestro's loop of looks and swipes; with none, ui scroll's (at most 8 swipes, or to the list's end)",
    own: &[
        "element",
        "direction",
        "timeout",
        "speed",
        "visibilityPercentage",
        "centerElement",
        "optional",
        "waitToSettleTimeoutMs",
    ],
    aimed: &[],
    read: Some(read),
    with_the_flow: false,
};

fn read(_: &mut Reader, given: &Given, _: &mut Vec<Step>) -> Result<Option<Action>, String> {
    let map = given.needed()?;
    only_keys(map, SCROLL_UNTIL_VISIBLE.own)?;
    super::swipe::settle_bound(map)?;
    let element = field(map, "element").ok_or_else(|| at(map, "scrollUntilVisible needs element"))?;
    let selector = selector(element)?;
    let direction = match field(map, "direction") {
        Some(d) => direction(d)?,
        None => "down".into(),
    };
    let options = ["timeout", "speed", "visibilityPercentage", "centerElement"];
    if options.iter().all(|o| field(map, o).is_none()) {
        return Ok(Some(Action::Scroll {
            direction,
            until: Some(selector),
        }));
    }
    let timeout_ms = match field(map, "timeout") {
        Some(t) => number(t, "timeout", MAX_WAIT_MS)?,
        None => SCROLL_TIMEOUT_MS,
    };
    // Maestro takes a speed over 100 too: its swipe then lasts 40 ms.
    let speed = match field(map, "speed") {
        None => SCROLL_SPEED,
        Some(n) => typed(n, SCROLL_SPEED, || {
            scalar(n)
                .and_then(|s| s.trim().parse::<u32>().ok())
                .filter(|n| *n <= 100_000)
                .ok_or_else(|| at(n, "speed is a whole number, 0 to 100 (more swipes in 40 ms)"))
        })?,
    };
    // Read and checked (Maestro's Int, held to 0..100 as Maestro holds it); an element counts as
    // shown when its centre is on the screen, which is what Maestro's own check comes to for any
    // value below 100 (its integer division).
    if let Some(n) = field(map, "visibilityPercentage") {
        typed(n, 100, || {
            integer(n)
                .map(|n| n.clamp(0, 100))
                .map_err(|()| at(n, "visibilityPercentage is a whole number, 0 to 100"))
        })?;
    }
    Ok(Some(Action::Command(Command::ScrollUntil(ScrollUntil {
        selector,
        direction,
        timeout_ms,
        speed,
        center: flag(map, "centerElement")?,
    }))))
}

/// Maestro's swipe time for a speed: 1000 × (100 − speed) / 100 + 1 ms, 40 ms where that comes
/// out negative; the device is asked for 50 ms at least.
fn swipe_ms(speed: u32) -> i64 {
    let maestro = match 100i64 - i64::from(speed) {
        left if left < 0 => 40,
        left => 1000 * left / 100 + 1,
    };
    maestro.max(MIN_SWIPE_MS)
}

/// Maestro's `scrollUntilVisible` with its options: looks for the element, and swipes from the
/// screen's centre against `direction` (the content moves that way) until it shows, at most
/// `timeout_ms`; each swipe lasts what `speed` (0 to 100) makes of it, as Maestro computes.
/// `center`: then swipes it towards the middle, at most 4 times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScrollUntil {
    pub(crate) selector: Selector,
    pub(crate) direction: String,
    pub(crate) timeout_ms: u64,
    pub(crate) speed: u32,
    pub(crate) center: bool,
}

impl Run for ScrollUntil {
    fn describe(&self) -> String {
        let ScrollUntil {
            selector,
            direction,
            timeout_ms,
            center,
            ..
        } = self;
        format!(
            "scroll {direction} until {} shows{}, at most {timeout_ms} ms",
            selector.describe(),
            if *center { " centred" } else { "" }
        )
    }

    /// The script line (`scrollUntil`, below), given how `js` writes a selector.
    fn body(&self, aim: &Aim) -> Vec<String> {
        let ScrollUntil {
            selector: s,
            direction,
            timeout_ms,
            speed,
            center,
        } = self;
        vec![format!(
            "await scrollUntil({}, {}, {timeout_ms}, {}, {center}, w);",
            (aim.selector)(s),
            lit(direction),
            swipe_ms(*speed)
        )]
    }

    fn write(&self) -> String {
        let ScrollUntil {
            selector,
            direction,
            timeout_ms,
            speed,
            center,
        } = self;
        format!(
            "- scrollUntilVisible:\n    element:\n{}    direction: {}\n    timeout: {timeout_ms}\n    speed: {speed}\n    centerElement: {center}\n",
            selector_fields(selector, "      "),
            direction.to_uppercase()
        )
    }
}

/// Maestro's loop: look, swipe from the centre against the direction the content moves, until
/// the element shows or the time is up; centred, at most 4 swipes more.
pub(super) const RUN: &str = r#"
// Where the element shows now, or null: looked for half a second, and on the screen.
async function shownAt(selector, [w, h]) {
  const found = await lookFor({ match: "exact", ...selector }, 500);
  if (found === null) return null;
  const [x, y] = found.target.at;
  return x >= 0 && y >= 0 && x < w && y < h ? [x, y] : null;
}

async function scrollUntil(selector, direction, timeoutMs, swipeMs, centre, warnings) {
  const screen = (await ui.dump({ limit: 1 })).screen;
  const finger = { down: "up", up: "down", left: "right", right: "left" }[direction];
  const middle = [Math.round(screen[0] / 2), Math.round(screen[1] / 2)];
  const started = Date.now();
  let swipes = 0;
  for (;;) {
    const at = await shownAt(selector, screen);
    if (at !== null) {
      if (centre) await centred(selector, at, direction, screen, middle, swipeMs);
      if (swipes > 0) warnings.push(`shown after ${swipes} swipes`);
      return;
    }
    if (Date.now() - started >= timeoutMs) {
      throw new Error(`${JSON.stringify(selector)} did not show after ${swipes} swipes (${timeoutMs} ms)`);
    }
    await ui.swipe({ ...towards(middle, finger, screen), durationMs: swipeMs });
    swipes++;
  }
}

// Swipes the element towards the middle of the screen until it is within a tenth of it.
async function centred(selector, at, direction, screen, middle, swipeMs) {
  const axis = direction === "up" || direction === "down" ? 1 : 0;
  for (let i = 0; i < 4 && at !== null && Math.abs(at[axis] - middle[axis]) > screen[axis] / 10; i++) {
    const to = axis === 1 ? [at[0], middle[1]] : [middle[0], at[1]];
    await ui.swipe({ from: at, to, durationMs: swipeMs });
    at = await shownAt(selector, screen);
  }
}
"#;
