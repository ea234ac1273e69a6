//! Maestro's device commands and their options (`flow::commands::Command`), read from a flow
//! and written back: `scrollUntilVisible` with its options, `takeScreenshot`, a tap's options
//! (`repeat`, `delay`, `retryTapIfNoChange`, `waitToSettleTimeoutMs`, and `doubleTapOn`),
//! `launchApp`'s `permissions` and `arguments`, `setPermissions` and `openLink`. Defaults are
//! Maestro 1.39's (`/work/maestro-corpus/SEMANTICS.md` notes where each comes from).

use saphyr::{MarkedYamlOwned, ScalarOwned, YamlDataOwned};

use super::args::{direction, flag, no_argument, scalar_or_field};
use super::fields;
use super::rendered::App;
use super::selectors::{command_selector, selector, target};
use super::template::marked;
use super::yaml::{at, field, number, only_keys, required, scalar, string, typed, written};

use super::super::Action;
use super::super::commands::{Command, Extra};

/// Maestro's `scrollUntilVisible` timeout when none is given, and its swipe speed.
const SCROLL_TIMEOUT_MS: u64 = 20_000;
const SCROLL_SPEED: u32 = 40;
/// The longest wait a flow may ask for (a typo such as `timeout: 2000000` fails at once).
const MAX_WAIT_MS: u64 = 600_000;
/// Maestro caps a tap's `waitToSettleTimeoutMs` here.
const MAX_SETTLE_MS: u64 = 30_000;
/// Presses one tap may repeat at most, and the longest pause between two.
const MAX_REPEAT: u32 = 100;
const MAX_DELAY_MS: u32 = 10_000;

/// Maestro's long press on Android: `input swipe x y x y 3000`.
pub(crate) const LONG_PRESS_MS: u32 = 3000;

/// Maestro's device commands, read: the step's action, or `None` for a command not of this file.
/// `app` is the header's, `base` the folder of the flow being read.
pub(super) fn read(
    name: &str,
    arg: Option<&MarkedYamlOwned>,
    item: &MarkedYamlOwned,
    app: App,
    base: Option<&std::path::Path>,
) -> Result<Option<Action>, String> {
    let needed = || required(arg, item, name);
    Ok(Some(match name {
        "tapOn" | "doubleTapOn" | "longPressOn" => tap(name, needed()?)?,
        "scrollUntilVisible" => scroll_until(needed()?)?,
        "takeScreenshot" => screenshot(needed()?)?,
        "startRecording" => recording(needed()?)?,
        "stopRecording" => {
            no_argument(arg)?;
            Action::Command(Command::StopRecording)
        }
        "openLink" => open_link(needed()?, app)?,
        "setPermissions" => {
            let map = needed()?;
            only_keys(map, fields::of(name))?;
            permissions(map, &app.package(field(map, "appId"), item, name)?)?
                .ok_or_else(|| at(map, "setPermissions takes permissions"))?
        }
        "clearKeychain" => {
            no_argument(arg)?;
            Action::Command(Command::Nothing {
                said: "clearKeychain: nothing to do on Android (the keychain is iOS's)".into(),
            })
        }
        "copyTextFrom" => Action::Command(Command::CopyText {
            selector: command_selector(needed()?)?,
        }),
        "pasteText" => {
            no_argument(arg)?;
            Action::Command(Command::Paste)
        }
        "setClipboard" => Action::Command(Command::SetClipboard {
            text: string(scalar_or_field(needed()?, name)?, name)?,
        }),
        "killApp" => Action::Command(Command::Kill {
            package: app.package(arg, item, name)?,
        }),
        "setAirplaneMode" => airplane(needed()?)?,
        "toggleAirplaneMode" => {
            no_argument(arg)?;
            Action::Command(Command::Airplane { on: None })
        }
        "travel" => travel(needed()?)?,
        "setOrientation" => orientation(needed()?)?,
        "addMedia" => add_media(needed()?, base)?,
        _ => return Ok(None),
    }))
}

/// `scrollUntilVisible`: with none of Maestro's options, the scroll `ui scroll` makes (at most 8
/// swipes, or to the end of the list); with any, Maestro's loop (`Command::ScrollUntil`).
pub(super) fn scroll_until(map: &MarkedYamlOwned) -> Result<Action, String> {
    only_keys(map, fields::of("scrollUntilVisible"))?;
    let element = field(map, "element").ok_or_else(|| at(map, "scrollUntilVisible needs element"))?;
    let selector = selector(element)?;
    let direction = match field(map, "direction") {
        Some(d) => direction(d)?,
        None => "down".into(),
    };
    let options = ["timeout", "speed", "visibilityPercentage", "centerElement"];
    if options.iter().all(|o| field(map, o).is_none()) {
        return Ok(Action::Scroll {
            direction,
            until: Some(selector),
        });
    }
    let timeout_ms = match field(map, "timeout") {
        Some(t) => number(t, "timeout", MAX_WAIT_MS)?,
        None => SCROLL_TIMEOUT_MS,
    };
    let percent = |name: &str, default: u32| -> Result<u32, String> {
        match field(map, name) {
            None => Ok(default),
            Some(n) => typed(n, default, || {
                scalar(n)
                    .and_then(|s| s.trim().parse::<u32>().ok())
                    .filter(|n| *n <= 100)
                    .ok_or_else(|| at(n, &format!("{name} is 0 to 100")))
            }),
        }
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
    // Read and checked; an element counts as shown when its centre is on the screen, which is
    // what Maestro's own check comes to for any value below 100 (its integer division).
    percent("visibilityPercentage", 100)?;
    Ok(Action::Command(Command::ScrollUntil {
        selector,
        direction,
        timeout_ms,
        speed,
        center: flag(map, "centerElement")?,
    }))
}

/// `takeScreenshot: NAME` (or `{path: NAME}`): NAME.png beside the report, as Maestro appends
/// `.png` to the path it is given. A relative path of plain names: it lands in the report's folder.
pub(super) fn screenshot(arg: &MarkedYamlOwned) -> Result<Action, String> {
    let name = file_name(arg, "takeScreenshot", ".png")?;
    Ok(Action::Command(Command::Screenshot { name }))
}

/// `startRecording: NAME` (or `{path: NAME}`): NAME.mp4 beside the report, as takeScreenshot's.
pub(super) fn recording(arg: &MarkedYamlOwned) -> Result<Action, String> {
    let name = file_name(arg, "startRecording", ".mp4")?;
    Ok(Action::Command(Command::StartRecording { name }))
}

/// The name a command's file takes (`path`, its `extension` appended as Maestro appends it): a
/// path inside the report's folder, as the one door takes it (`confine::relative`: plain names,
/// `/` between folders); an absolute path or a `..` is refused, so a flow a third party wrote
/// writes nowhere else.
fn file_name(arg: &MarkedYamlOwned, command: &str, extension: &str) -> Result<String, String> {
    let node = match arg.data.as_mapping() {
        Some(_) => {
            only_keys(arg, fields::of(command))?;
            field(arg, "path").ok_or_else(|| at(arg, &format!("{command} takes path")))?
        }
        None => arg,
    };
    let name = string(node, command)?;
    let name = name.strip_suffix(extension).unwrap_or(&name).to_string();
    // A template's name is held to the door's rules as its step reads it again, rendered.
    if marked(node) {
        return Ok(name);
    }
    if let Err(e) = confine::relative(&format!("{name}{extension}")) {
        return Err(at(
            node,
            &format!("{command}: {e}; the file lands in the report's folder"),
        ));
    }
    Ok(name)
}

/// `tapOn`, `doubleTapOn`, `longPressOn`: a plain tap or long press when no option is given (as
/// `flow export` writes them), else `Command::Tap` with Maestro's options: `repeat` (1; 2 for
/// `doubleTapOn`), `delay` between presses (100 ms), `retryTapIfNoChange` (a replay taps once
/// unless it is true), `waitToSettleTimeoutMs` (at most 30 s).
pub(super) fn tap(name: &str, arg: &MarkedYamlOwned) -> Result<Action, String> {
    let long = name == "longPressOn";
    let retry = flag(arg, "retryTapIfNoChange")?;
    // Maestro waits for the element whether or not this is set: so does a replay's tap.
    flag(arg, "waitUntilVisible")?;
    let target = target(&without(arg, fields::TAP_OPTIONS))?;
    let timed = ["repeat", "delay", "waitToSettleTimeoutMs"];
    if name != "doubleTapOn" && !retry && timed.iter().all(|o| field(arg, o).is_none()) {
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
        repeat = typed(n, repeat, || {
            match scalar(n).and_then(|s| s.trim().parse::<i64>().ok()) {
                Some(n) if n <= 0 => Ok(1),
                Some(n) if n <= i64::from(MAX_REPEAT) => Ok(n as u32),
                _ => Err(at(n, &format!("repeat is a number of presses, up to {MAX_REPEAT}"))),
            }
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
    Ok(Action::Command(Command::Tap {
        target,
        long,
        repeat,
        delay_ms,
        retry,
        settle_ms,
    }))
}

/// The mapping without `keys` (the command's options), for the selector reader.
fn without(node: &MarkedYamlOwned, keys: &[&str]) -> MarkedYamlOwned {
    let mut node = node.clone();
    if let YamlDataOwned::Mapping(map) = &mut node.data {
        map.retain(|k, _| !scalar(k).is_some_and(|k| keys.contains(&k.as_str())));
    }
    node
}

/// `launchApp {permissions}`, `setPermissions {appId, permissions}`: each name `allow` (grant)
/// or `deny` / `unset` (revoke), as Maestro does on Android.
pub(super) fn permissions(map: &MarkedYamlOwned, package: &str) -> Result<Option<Action>, String> {
    let Some(node) = field(map, "permissions") else {
        return Ok(None);
    };
    let Some(entries) = node.data.as_mapping() else {
        return Err(at(node, "permissions is a mapping: NAME: allow | deny | unset"));
    };
    let mut set = Vec::new();
    for (name, value) in entries {
        let name = string(name, "a permission")?;
        let allow = typed(value, true, || match scalar(value).as_deref() {
            Some("allow") => Ok(true),
            Some("deny" | "unset") => Ok(false),
            _ => Err(at(value, &format!("{name} is allow, deny or unset"))),
        })?;
        set.push((name, allow));
    }
    Ok(Some(Action::Command(Command::Permissions {
        package: package.to_string(),
        set,
    })))
}

/// `launchApp {arguments}`: each value an intent extra of its YAML type (text, true/false,
/// whole number, number).
pub(super) fn arguments(map: &MarkedYamlOwned) -> Result<Option<Vec<(String, Extra)>>, String> {
    let Some(node) = field(map, "arguments") else {
        return Ok(None);
    };
    let Some(entries) = node.data.as_mapping() else {
        return Err(at(node, "arguments is a mapping: NAME: VALUE"));
    };
    let mut out = Vec::new();
    for (name, value) in entries {
        let extra = match &value.data {
            YamlDataOwned::Value(ScalarOwned::Boolean(b)) => Extra::Flag(*b),
            YamlDataOwned::Value(ScalarOwned::Integer(i)) => Extra::Int(*i),
            YamlDataOwned::Value(ScalarOwned::FloatingPoint(f)) => Extra::Float(f.into_inner()),
            _ => Extra::Text(string(value, "an argument")?),
        };
        out.push((string(name, "an argument's name")?, extra));
    }
    Ok(Some(out))
}

/// `openLink: LINK` or `{link, autoVerify, browser}`.
pub(super) fn open_link(arg: &MarkedYamlOwned, app: App) -> Result<Action, String> {
    let (link, verify, browser) = match arg.data.as_mapping() {
        Some(_) => {
            only_keys(arg, fields::of("openLink"))?;
            let link = field(arg, "link").ok_or_else(|| at(arg, "openLink takes link"))?;
            (link, flag(arg, "autoVerify")?, flag(arg, "browser")?)
        }
        None => (arg, false, false),
    };
    let package = match (verify, app.node) {
        (true, None) => {
            return Err(at(
                arg,
                "autoVerify opens the link in the flow's app: give appId in the header",
            ));
        }
        (true, Some(_)) => Some(app.package(None, arg, "openLink")?),
        (false, _) => None,
    };
    Ok(Action::Command(Command::OpenLink {
        link: string(link, "link")?,
        package,
        browser,
    }))
}

/// `setAirplaneMode: enabled | disabled` (or `{value}`).
pub(super) fn airplane(arg: &MarkedYamlOwned) -> Result<Action, String> {
    let node = match arg.data.as_mapping() {
        Some(_) => {
            only_keys(arg, fields::of("setAirplaneMode"))?;
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
    Ok(Action::Command(Command::Airplane { on: Some(on) }))
}

/// `travel {points: ["LAT, LON", …], speed}`: one point or more, `speed` in m/s (Maestro's
/// default 4.0).
pub(super) fn travel(map: &MarkedYamlOwned) -> Result<Action, String> {
    only_keys(map, fields::of("travel"))?;
    let list = field(map, "points")
        .and_then(|p| p.data.as_sequence())
        .ok_or_else(|| at(map, "travel takes points: a list of \"latitude, longitude\""))?;
    let mut points = Vec::new();
    for point in list {
        let (lat, lon) = typed(point, (0.0, 0.0), || {
            let text = string(point, "a point")?;
            let parts: Vec<Option<f64>> = text.split(',').map(|p| p.trim().parse::<f64>().ok()).collect();
            match parts.as_slice() {
                [Some(lat), Some(lon)] if lat.abs() <= 90.0 && lon.abs() <= 180.0 => Ok((*lat, *lon)),
                _ => Err(at(point, "a point is \"latitude, longitude\" in degrees")),
            }
        })?;
        points.push((lat.to_string(), lon.to_string()));
    }
    if points.is_empty() {
        return Err(at(map, "travel goes through one point at least"));
    }
    let speed = match field(map, "speed") {
        Some(n) => typed(n, 4.0, || {
            scalar(n)
                .and_then(|s| s.trim().parse::<f64>().ok())
                .filter(|v| *v > 0.0 && *v <= 1000.0)
                .ok_or_else(|| at(n, "speed is in m/s, above 0, up to 1000"))
        })?,
        None => 4.0,
    };
    Ok(Action::Command(Command::Travel {
        points,
        speed: speed.to_string(),
    }))
}

/// `addMedia: [FILE, …]` (or `{files: […]}`): each an image or a video beside the flow (`base`,
/// its folder), opened now through the one door (no link followed) and checked by its first
/// bytes, so a missing, linked or mislabelled one fails with its line.
pub(super) fn add_media(arg: &MarkedYamlOwned, base: Option<&std::path::Path>) -> Result<Action, String> {
    let list = match arg.data.as_mapping() {
        Some(_) => {
            only_keys(arg, fields::of("addMedia"))?;
            field(arg, "files").ok_or_else(|| at(arg, "addMedia takes files"))?
        }
        None => arg,
    };
    let items = list
        .data
        .as_sequence()
        .ok_or_else(|| at(list, "addMedia takes a list of files"))?;
    // The flow's folder: its path as the person gave it, links in it followed; below it, none.
    let folder = base.unwrap_or(std::path::Path::new(""));
    let beside = confine::Folder::chosen(folder).map_err(|e| at(list, &format!("addMedia: {e}")))?;
    let mut files = Vec::new();
    for item in items {
        written(item, "addMedia", "a file pushed to the device before the run")?;
        let given = string(item, "a file")?;
        // The one check, as the flow is read (`--check` and a run alike): a file beside the
        // flow or in a folder below it, never `../` or an absolute path.
        let parts = confine::inside(&given).map_err(|e| at(item, &format!("addMedia: {e}")))?;
        let path = std::path::Path::new(&given);
        let known = ["png", "jpg", "jpeg", "gif", "webp", "mp4", "mov", "3gp", "webm", "mkv"];
        let extension = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
        if !extension.is_some_and(|e| known.contains(&e.as_str())) {
            return Err(at(
                item,
                &format!("addMedia {given:?} is no image or video ({})", known.join(", ")),
            ));
        }
        let cannot = |e: String| at(item, &format!("addMedia cannot read {given}: {e}"));
        let (mut file, _) = beside.open_existing(&parts).map_err(cannot)?;
        crate::commands::check_media(&given, &mut file).map_err(|e| at(item, &format!("addMedia: {e}")))?;
        files.push(given);
    }
    if files.is_empty() {
        return Err(at(list, "addMedia takes one file at least"));
    }
    Ok(Action::Command(Command::AddMedia {
        folder: folder.display().to_string(),
        files,
    }))
}

/// `setOrientation: PORTRAIT | LANDSCAPE_LEFT | LANDSCAPE_RIGHT | UPSIDE_DOWN` (or
/// `{orientation}`), case and `_` ignored as Maestro ignores them (`landscapeLeft`).
pub(super) fn orientation(arg: &MarkedYamlOwned) -> Result<Action, String> {
    let node = match arg.data.as_mapping() {
        Some(_) => {
            only_keys(arg, fields::of("setOrientation"))?;
            field(arg, "orientation").ok_or_else(|| at(arg, "setOrientation takes orientation"))?
        }
        None => arg,
    };
    let turns = typed(node, 0, || {
        let given = string(node, "orientation")?;
        let plain = |s: &str| s.replace('_', "").to_ascii_lowercase();
        crate::commands::ORIENTATIONS
            .iter()
            .position(|o| plain(o) == plain(&given))
            .ok_or_else(|| {
                at(
                    node,
                    "setOrientation is PORTRAIT, LANDSCAPE_LEFT, LANDSCAPE_RIGHT or UPSIDE_DOWN",
                )
            })
    })?;
    Ok(Action::Command(Command::Orientation { turns: turns as u8 }))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use proptest::prelude::*;
    use proptest::test_runner::TestRunner;

    use super::super::super::tests::{selector, target, text};
    use super::super::super::{Step, commands};
    use super::super::{parse, render};
    use super::*;

    /// Generated device commands, written as a Maestro flow, read back as the same commands (a
    /// content-desc becomes a text, and a long press or tap whose options are all the defaults
    /// reads as a plain one: both fixpoints after one round).
    #[test]
    fn generated_commands_read_back_as_written() {
        let cases = AtomicUsize::new(0);
        let strategy = (
            proptest::collection::vec(commands::generated(selector().boxed(), target().boxed()), 1..6),
            text(),
        );
        let result = TestRunner::default().run(&strategy, |(generated, app)| {
            cases.fetch_add(1, Ordering::Relaxed);
            let steps: Vec<Step> = generated
                .iter()
                .cloned()
                .map(|c| Step::new(Action::Command(c)))
                .collect();
            let written = render(&steps, &[], &app);
            let read = parse(&written).map_err(|e| TestCaseError::fail(format!("{e}\n{written}")))?;
            prop_assert_eq!(read.len(), steps.len(), "{}", written);
            let again = parse(&render(&read, &[], &app)).map_err(TestCaseError::fail)?;
            prop_assert_eq!(&read, &again);
            for (step, command) in read.iter().zip(&generated) {
                let kept = matches!(
                    (&step.action, command),
                    (Action::Command(Command::OpenLink { link: a, .. }), Command::OpenLink { link: b, .. }) if a == b
                ) || matches!(
                    (&step.action, command),
                    (Action::Command(Command::Screenshot { name: a }), Command::Screenshot { name: b }) if a == b
                ) || !matches!(command, Command::OpenLink { .. } | Command::Screenshot { .. });
                prop_assert!(kept, "{:?} read as {:?}", command, step.action);
            }
            Ok(())
        });
        eprintln!("{} cases", cases.load(Ordering::Relaxed));
        if let Err(e) = result {
            panic!("{e}");
        }
    }
}
