//! `tapOn`, `doubleTapOn`, `longPressOn`: a plain tap or long press when no option is given (as
//! `flow export` writes them), else `Tap` with Maestro's options: its step line, its run
//! (`tapWith`) and its YAML. The long press's length is Maestro's, here only.

use saphyr::{MarkedYamlOwned, YamlDataOwned};

use super::super::args::flag;
use super::super::compat::Status;
use super::super::fields::{MAESTRO_KEYS, TAP_OPTIONS, TARGET};
use super::super::read::Reader;
use super::super::selectors::{element_target, target};
use super::super::write::target_fields;
use super::super::yaml::{at, field, integer, number, scalar, string, typed};
use super::{Given, Spec};
use crate::commands::{Aim, Command, Run};
use crate::{Action, Step, Target};
use android::relative_point::RelativePoint;

/// Maestro's long press on Android: `input swipe x y x y 3000`.
pub(crate) const LONG_PRESS_MS: u32 = 3000;
/// Maestro caps a tap's `waitToSettleTimeoutMs` here.
const MAX_SETTLE_MS: u64 = 30_000;
/// Presses one tap may repeat at most, and the longest pause between two.
const MAX_REPEAT: u32 = 100;
const MAX_DELAY_MS: u32 = 10_000;

const AIMED: &[&[&str]] = &[TARGET, TAP_OPTIONS, MAESTRO_KEYS];

pub(in crate::maestro) const TAP_ON: Spec = Spec {
    name: "tapOn",
    status: Status::Replayed,
    note: "any selector, as Maestro resolves it (text, id, index, enabled, checked, focused, selected, width, height, tolerance, below, above, leftOf, rightOf, childOf, containsChild, containsDescendants), or point; a point beside a selector is a place inside its element, as Maestro 2 places it (\"50%,90%\" of its size, \"25,75\" pixels from its top-left); label is a caption; repeat (the first press checked, the rest at its point), delay (100 ms), retryTapIfNoChange: true taps again when the screen did not change (absent, a replay taps once: Maestro's default taps again), waitToSettleTimeoutMs (at most 30 s), waitUntilVisible (a replay always waits)",
    own: &[],
    aimed: AIMED,
    read: Some(read),
    with_the_flow: false,
};

pub(in crate::maestro) const DOUBLE_TAP_ON: Spec = Spec {
    name: "doubleTapOn",
    note: "two presses 100 ms apart (delay), as tapOn",
    ..TAP_ON
};

pub(in crate::maestro) const LONG_PRESS_ON: Spec = Spec {
    name: "longPressOn",
    note: "a 3 s press, as Maestro's on Android; as tapOn (no repeat)",
    ..TAP_ON
};

fn read(_: &mut Reader, given: &Given, _: &mut Vec<Step>) -> Result<Option<Action>, String> {
    let arg = given.needed()?;
    tap(given.name, arg).map(Some)
}

/// A `point` beside a selector: where inside the element the tap lands (Maestro 2's
/// `TapOnElementCommand.relativePoint`, placed by `android::relative_point`); Maestro 1.39.10
/// tapped it on the screen and ignored the selector (`YamlFluentCommand.tapCommand`, line 743).
/// `None` when the point is the whole target (a share of the screen).
fn relative(arg: &MarkedYamlOwned) -> Result<Option<RelativePoint>, String> {
    let beside = ["id", "text"]
        .iter()
        .chain(MAESTRO_KEYS)
        .any(|k| field(arg, k).is_some());
    let Some(point) = field(arg, "point").filter(|_| beside) else {
        return Ok(None);
    };
    // A template is read again, rendered, as the step runs.
    typed(point, Some(RelativePoint::Percent([50, 50])), || {
        RelativePoint::parse(&string(point, "point")?)
            .map(Some)
            .map_err(|e| at(point, &format!("point {e}")))
    })
}

/// Maestro's options: `repeat` (1; 2 for `doubleTapOn`), `delay` between presses (100 ms),
/// `retryTapIfNoChange` (a replay taps once unless it is true), `waitToSettleTimeoutMs` (at most
/// 30 s).
fn tap(name: &str, arg: &MarkedYamlOwned) -> Result<Action, String> {
    let long = name == "longPressOn";
    let retry = flag(arg, "retryTapIfNoChange")?;
    // Maestro waits for the element whether or not this is set: so does a replay's tap.
    flag(arg, "waitUntilVisible")?;
    let within = relative(arg)?;
    let target = match within {
        Some(_) => element_target(&without(arg, &[TAP_OPTIONS, &["point"]].concat()))?,
        None => target(&without(arg, TAP_OPTIONS))?,
    };
    let timed = ["repeat", "delay", "waitToSettleTimeoutMs"];
    if name != "doubleTapOn" && !retry && within.is_none() && timed.iter().all(|o| field(arg, o).is_none()) {
        return Ok(match long {
            true => Action::LongPress {
                target,
                duration_ms: Some(LONG_PRESS_MS),
            },
            false => Action::Tap { target },
        });
    }
    let mut repeat = if name == "doubleTapOn" { 2 } else { 1 };
    if let Some(n) = field(arg, "repeat") {
        // Maestro takes 0 or less as one press.
        repeat = typed(n, repeat, || match integer(n).ok() {
            Some(n) if n <= 0 => Ok(1),
            Some(n) if n <= i64::from(MAX_REPEAT) => Ok(n as u32),
            _ => Err(at(n, &format!("repeat is a number of presses, up to {MAX_REPEAT}"))),
        })?;
    }
    if long && repeat > 1 {
        return Err(at(arg, "longPressOn takes no repeat: one long press"));
    }
    let delay_ms = match field(arg, "delay") {
        Some(d) => number(d, "delay", u64::from(MAX_DELAY_MS))? as u32,
        None => 100,
    };
    let settle_ms = match field(arg, "waitToSettleTimeoutMs") {
        Some(t) => Some(number(t, "waitToSettleTimeoutMs", u64::MAX)?.min(MAX_SETTLE_MS)),
        None => None,
    };
    Ok(Action::Command(Command::Tap(Tap {
        target,
        within,
        long,
        repeat,
        delay_ms,
        retry,
        settle_ms,
    })))
}

/// The mapping without `keys` (the command's options), for the selector reader.
fn without(node: &MarkedYamlOwned, keys: &[&str]) -> MarkedYamlOwned {
    let mut node = node.clone();
    if let YamlDataOwned::Mapping(map) = &mut node.data {
        map.retain(|k, _| !scalar(k).is_some_and(|k| keys.contains(&k.as_str())));
    }
    node
}

/// `tapOn` / `doubleTapOn` / `longPressOn` with Maestro's options: `repeat` presses `delay_ms`
/// apart (the first checked as a plain tap is, the rest at its point, as Maestro repeats a
/// tap), once more when `retry` and the screen did not change, then a wait of at most
/// `settle_ms` for the screen to settle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tap {
    pub(crate) target: Target,
    /// Where inside the element (Maestro's element-relative `point`); `None`: its centre.
    pub(crate) within: Option<RelativePoint>,
    pub(crate) long: bool,
    pub(crate) repeat: u32,
    pub(crate) delay_ms: u32,
    pub(crate) retry: bool,
    pub(crate) settle_ms: Option<u64>,
}

impl Tap {
    /// One press at `within` of `target`'s element, as a recording keeps a `ui` tap (or a long
    /// press: Maestro's, which has no length) given a `relativePoint`.
    pub fn within(target: Target, within: RelativePoint, long: bool) -> Tap {
        Tap {
            target,
            within: Some(within),
            long,
            repeat: 1,
            delay_ms: 100,
            retry: false,
            settle_ms: None,
        }
    }
}

impl Run for Tap {
    fn describe(&self) -> String {
        let Tap {
            target,
            within,
            long,
            repeat,
            retry,
            ..
        } = self;
        let verb = match (long, repeat) {
            (true, _) => "long-press".to_string(),
            (false, 1) => "tap".to_string(),
            (false, 2) => "double-tap".to_string(),
            (false, n) => format!("tap {n} times"),
        };
        let again = if *retry { ", again if nothing changed" } else { "" };
        let inside = within.map_or(String::new(), |p| format!(" at {} within it", p.written()));
        format!("{verb} {}{inside}{again}", target.selector.describe())
    }

    fn fragile(&self) -> bool {
        self.target.selector.fragile()
    }

    /// The script line (`tapWith`, below), given how `js` writes a selector and what a target
    /// recorded.
    fn body(&self, aim: &Aim) -> Vec<String> {
        let Tap {
            target,
            within,
            long,
            repeat,
            delay_ms,
            retry,
            settle_ms,
        } = self;
        let point = within.map_or("null".into(), |p| crate::quoted(&p.written()));
        let press = if *long {
            LONG_PRESS_MS.to_string()
        } else {
            "null".into()
        };
        vec![format!(
            "await tapWith({}, {}, {{ point: {point}, pressMs: {press}, repeat: {repeat}, delayMs: {delay_ms}, retry: {retry}, settleMs: {} }}, w);",
            (aim.selector)(&target.selector),
            (aim.recorded)(target),
            settle_ms.map_or("null".into(), |ms| ms.to_string())
        )]
    }

    fn write(&self) -> String {
        let Tap {
            target,
            within,
            long,
            repeat,
            delay_ms,
            retry,
            settle_ms,
        } = self;
        let name = if *long { "longPressOn" } else { "tapOn" };
        let mut out = format!("- {name}:\n{}", target_fields(target));
        if let Some(point) = within {
            out.push_str(&format!("    point: {}\n", crate::quoted(&point.written())));
        }
        if !*long {
            out.push_str(&format!("    repeat: {repeat}\n    delay: {delay_ms}\n"));
        }
        out.push_str(&format!("    retryTapIfNoChange: {retry}\n"));
        if let Some(ms) = settle_ms {
            out.push_str(&format!("    waitToSettleTimeoutMs: {ms}\n"));
        }
        out
    }
}

/// `tapWith`: the first press checked as any replayed tap (`acted`, one screen reading per
/// attempt), the repeats at its point `delayMs` apart; once more when nothing changed and
/// `retry`. A long press lasts `pressMs`, which `run` gives. A `point` within the element is
/// `ui`'s `relativePoint`: `ui` places it on the element the same reading resolved.
pub(super) const RUN: &str = r#"
async function tapWith(selector, recorded, o, warnings) {
  const at = o.point === null ? {} : { relativePoint: o.point };
  const act = o.pressMs !== null ? (a) => ui.longPress({ ...a, ...at, durationMs: o.pressMs })
    : (a) => ui.tap({ ...a, ...at });
  const first = await acted((a) => act({ ...a, observe: o.retry }), selector, recorded, warnings);
  const [x, y] = first.at.map(Math.round);
  for (let i = 1; i < o.repeat; i++) {
    await sleep(o.delayMs);
    await ui.tap({ x, y });
  }
  if (o.retry && first.observed && !first.observed.changed) {
    warnings.push("tapped again: the screen did not change");
    await acted(act, selector, recorded, warnings);
  }
  if (o.settleMs !== null) await Promise.race([settle(), sleep(o.settleMs)]);
}
"#;
