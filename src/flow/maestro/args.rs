//! The arguments of single Maestro commands (a swipe's points, a key's name, an erase's count,
//! an option's true or false), read from saphyr's nodes, each error naming its line.

use saphyr::MarkedYamlOwned;

use super::selectors::spot;
use super::yaml::{at, field, key, number, only_keys, scalar, string};

use super::super::{Action, Selector};

/// Characters an `eraseText: N` deletes at most (one DEL each).
const MAX_ERASE: u32 = 1000;

/// A command's one value, given alone (`inputText: ada`) or as its mapping's `name`
/// (`inputText: {text: ada}`; nothing else there but `label` and, where the caller reads it,
/// `optional`).
pub(super) fn scalar_or_field<'a>(arg: &'a MarkedYamlOwned, name: &str) -> Result<&'a MarkedYamlOwned, String> {
    if arg.data.as_mapping().is_none() {
        return Ok(arg);
    }
    only_keys(arg, &[name, "optional"])?;
    field(arg, name).ok_or_else(|| at(arg, &format!("takes {name}")))
}

/// A `true`/`false` option (absent: false).
pub(super) fn flag(map: &MarkedYamlOwned, name: &str) -> Result<bool, String> {
    match field(map, name) {
        None => Ok(false),
        Some(value) => match scalar(value).as_deref() {
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            _ => Err(at(value, &format!("{name} is true or false"))),
        },
    }
}

/// A command that takes no argument (`- back`) may still say `optional: true`; nothing else.
pub(super) fn no_argument(arg: Option<&MarkedYamlOwned>) -> Result<(), String> {
    match arg.filter(|a| !a.data.is_null()) {
        Some(arg) => only_keys(arg, &["optional"]),
        None => Ok(()),
    }
}

/// `eraseText` empties the focused field; `eraseText: N` (or `{charactersToErase: N}`) deletes N
/// characters, as Maestro does.
pub(super) fn erase(arg: Option<&MarkedYamlOwned>) -> Result<Action, String> {
    let count = match arg.filter(|a| !a.data.is_null()) {
        None => None,
        Some(map) if map.data.as_mapping().is_some() => {
            only_keys(map, &["charactersToErase", "optional"])?;
            field(map, "charactersToErase")
        }
        Some(count) => Some(count),
    };
    let Some(count) = count else {
        return Ok(Action::Type {
            target: None,
            text: String::new(),
            clear: true,
            submit: false,
        });
    };
    match scalar(count).and_then(|c| c.parse::<u32>().ok()) {
        Some(chars @ 1..=MAX_ERASE) => Ok(Action::Erase { chars }),
        _ => Err(at(
            count,
            &format!("eraseText takes a number of characters, 1 to {MAX_ERASE} (none empties the field)"),
        )),
    }
}

pub(super) fn swipe(arg: &MarkedYamlOwned) -> Result<Action, String> {
    only_keys(arg, &["start", "end", "duration", "direction", "optional"])?;
    // A swipe lasts what `ui swipe` can ask the device for; Maestro's default is its own.
    let duration_ms = match field(arg, "duration") {
        Some(d) => match number(d, "duration")? {
            ms @ 50..=10_000 => Some(ms as u32),
            _ => return Err(at(d, "duration is 50 to 10000 ms")),
        },
        None => None,
    };
    if let Some(d) = field(arg, "direction") {
        if let Some(point) = key(arg, "start").or(key(arg, "end")) {
            return Err(at(point, "swipe takes direction, or start and end, not both"));
        }
        return Ok(Action::SwipeToward {
            direction: direction(d)?,
            duration_ms,
        });
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
        _ => Err(at(arg, "start and end are both pixels or both percentages")),
    }
}

pub(super) fn direction(node: &MarkedYamlOwned) -> Result<String, String> {
    let d = string(node, "direction")?.to_ascii_lowercase();
    match d.as_str() {
        "up" | "down" | "left" | "right" => Ok(d),
        _ => Err(at(node, "direction is UP, DOWN, LEFT or RIGHT")),
    }
}

/// Maestro's key names as ours.
pub(super) fn our_key(name: &str) -> String {
    match name.to_ascii_lowercase().as_str() {
        "home" => "HOME".into(),
        "back" => "BACK".into(),
        "enter" => "ENTER".into(),
        "backspace" => "DEL".into(),
        "tab" => "TAB".into(),
        "volume up" => "VOLUME_UP".into(),
        "volume down" => "VOLUME_DOWN".into(),
        "power" | "lock" => "POWER".into(),
        _ => name.to_string(),
    }
}
