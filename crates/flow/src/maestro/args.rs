//! The arguments of single Maestro commands (a swipe's points, a key's name, an erase's count,
//! an option's true or false), read from saphyr's nodes, each error naming its line.

use saphyr::MarkedYamlOwned;

use super::fields;
use super::selectors::spot;
use super::template::marked;
use super::yaml::{at, field, key, number, only_keys, scalar, string, typed};

use super::super::{Action, Selector};

/// Characters an `eraseText: N` deletes at most (one DEL each).
const MAX_ERASE: u32 = 1000;

/// A command's one value, given alone (`inputText: ada`) or as its mapping's `name`
/// (`inputText: {text: ada}`; nothing else there but `label` and, where the caller reads it,
/// `optional`).
pub(super) fn scalar_or_field<'a>(arg: &'a MarkedYamlOwned, command: &str) -> Result<&'a MarkedYamlOwned, String> {
    if arg.data.as_mapping().is_none() {
        return Ok(arg);
    }
    only_keys(arg, fields::of(command))?;
    let name = fields::of(command).first().copied().unwrap_or_default();
    field(arg, name).ok_or_else(|| at(arg, &format!("takes {name}")))
}

/// A `true`/`false` option (absent: false).
pub(super) fn flag(map: &MarkedYamlOwned, name: &str) -> Result<bool, String> {
    match field(map, name) {
        None => Ok(false),
        // A template stands for `true`: the reading it samples reads all the option asks for
        // (the flow's app, for openLink's autoVerify).
        Some(value) => typed(value, true, || match scalar(value).as_deref() {
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            _ => Err(at(value, &format!("{name} is true or false"))),
        }),
    }
}

/// A command that takes no argument (`- back`) may still say `optional: true`; nothing else.
pub(super) fn no_argument(arg: Option<&MarkedYamlOwned>) -> Result<(), String> {
    match arg.filter(|a| !a.data.is_null()) {
        Some(arg) => only_keys(arg, fields::NO_ARGUMENT),
        None => Ok(()),
    }
}

/// `eraseText` empties the focused field; `eraseText: N` (or `{charactersToErase: N}`) deletes N
/// characters, as Maestro does.
pub(super) fn erase(arg: Option<&MarkedYamlOwned>) -> Result<Action, String> {
    let count = match arg.filter(|a| !a.data.is_null()) {
        None => None,
        Some(map) if map.data.as_mapping().is_some() => {
            only_keys(map, fields::of("eraseText"))?;
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
    typed(count, Action::Erase { chars: 1 }, || {
        match scalar(count).and_then(|c| c.trim().parse::<u32>().ok()) {
            Some(chars @ 1..=MAX_ERASE) => Ok(Action::Erase { chars }),
            _ => Err(at(
                count,
                &format!("eraseText takes a number of characters, 1 to {MAX_ERASE} (none empties the field)"),
            )),
        }
    })
}

pub(super) fn swipe(arg: &MarkedYamlOwned) -> Result<Action, String> {
    only_keys(arg, fields::of("swipe"))?;
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
                from: Selector::Maestro(super::selectors::element(name, from)?),
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

pub(super) fn direction(node: &MarkedYamlOwned) -> Result<String, String> {
    typed(node, "down".to_string(), || {
        let d = string(node, "direction")?.to_ascii_lowercase();
        match d.as_str() {
            "up" | "down" | "left" | "right" => Ok(d),
            _ => Err(at(node, "direction is UP, DOWN, LEFT or RIGHT")),
        }
    })
}

/// Maestro's key names (its KeyCode list, matched ignoring case) as ours (`android::keys`);
/// any other name is taken as an Android key name or code.
pub(super) fn our_key(name: &str) -> String {
    let ours = match name.to_ascii_lowercase().as_str() {
        "home" => "HOME",
        "back" => "BACK",
        "enter" => "ENTER",
        "backspace" => "DEL",
        "tab" => "TAB",
        "escape" => "ESCAPE",
        "volume up" => "VOLUME_UP",
        "volume down" => "VOLUME_DOWN",
        "power" | "lock" => "POWER",
        "remote dpad up" => "DPAD_UP",
        "remote dpad down" => "DPAD_DOWN",
        "remote dpad left" => "DPAD_LEFT",
        "remote dpad right" => "DPAD_RIGHT",
        "remote dpad center" => "DPAD_CENTER",
        "remote media play pause" => "MEDIA_PLAY_PAUSE",
        "remote media stop" => "MEDIA_STOP",
        "remote media next" => "MEDIA_NEXT",
        "remote media previous" => "MEDIA_PREVIOUS",
        "remote media rewind" => "MEDIA_REWIND",
        "remote media fast forward" => "MEDIA_FAST_FORWARD",
        "remote system navigation up" => "SYSTEM_NAVIGATION_UP",
        "remote system navigation down" => "SYSTEM_NAVIGATION_DOWN",
        "remote button a" => "BUTTON_A",
        "remote button b" => "BUTTON_B",
        "remote menu" => "MENU",
        "tv input" => "TV_INPUT",
        _ => return name.to_string(),
    };
    ours.into()
}

/// What Maestro's `inputRandomText` / `Number` / `Email` / `PersonName` type: drawn as the flow
/// is read (a replay reads its flow each run), in Maestro's shapes: `length` letters and digits
/// (8 by default), digits not starting with 0, `first_last_NNNN@domain`, "First Last".
pub(super) fn random_input(command: &str, arg: Option<&MarkedYamlOwned>) -> Result<String, String> {
    use rand::Rng;
    const FIRST: [&str; 10] = [
        "Ada", "Grace", "Alan", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Radia", "Donald",
    ];
    const LAST: [&str; 10] = [
        "Lovelace", "Hopper", "Turing", "Torvalds", "Hamilton", "Ritchie", "Liskov", "Thompson", "Perlman", "Knuth",
    ];
    const DOMAINS: [&str; 6] = [
        "gmail.com",
        "yahoo.com",
        "hotmail.com",
        "aol.com",
        "msn.com",
        "outlook.com",
    ];
    let takes_length = matches!(command, "inputRandomText" | "inputRandomNumber");
    let length = match arg.filter(|a| !a.data.is_null()) {
        Some(map) if takes_length => {
            only_keys(map, fields::of(command))?;
            match field(map, "length") {
                Some(n) => typed(n, 8, || match scalar(n).and_then(|s| s.trim().parse::<i64>().ok()) {
                    // Maestro takes 0 or less as its default.
                    Some(n) if n <= 0 => Ok(8),
                    Some(n @ 1..=1000) => Ok(n as usize),
                    _ => Err(at(n, "length is a number of characters, up to 1000")),
                })?,
                None => 8,
            }
        }
        Some(map) => {
            only_keys(map, fields::of(command))?;
            8
        }
        None => 8,
    };
    let mut rng = rand::rng();
    let mut pick = |list: &[&str]| list[rng.random_range(0..list.len())].to_string();
    Ok(match command {
        "inputRandomText" => rand::rng()
            .sample_iter(rand::distr::Alphanumeric)
            .take(length)
            .map(char::from)
            .collect(),
        "inputRandomNumber" => {
            let mut rng = rand::rng();
            (0..length)
                .map(|i| char::from(b'0' + rng.random_range(u8::from(i == 0)..10)))
                .collect()
        }
        "inputRandomEmail" => {
            let (first, last, domain) = (pick(&FIRST), pick(&LAST), pick(&DOMAINS));
            let number: u32 = rand::rng().random_range(1000..10_000);
            format!("{first}_{last}_{number}@{domain}").to_lowercase()
        }
        _ => format!("{} {}", pick(&FIRST), pick(&LAST)),
    })
}
