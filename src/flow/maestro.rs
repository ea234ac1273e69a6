//! A flow as a Maestro flow (`appId`, then `launchApp`, `tapOn`, `inputText`, `pressKey`, …),
//! and a Maestro flow read back into steps (with a maintained YAML parser, `saphyr`). The
//! commands read are the ones written, and a few more of the same kind; any other is refused
//! with its line.

use saphyr::{LoadableYamlNode, MarkedYamlOwned, ScalarOwned, YamlDataOwned};

use super::{Action, Expect, Selector, Step, Target, one_line, quoted};

/// The flow file: a header (comments, `appId`), `---`, one command per line group.
pub fn render(steps: &[Step], header: &[String], app_id: &str) -> String {
    let mut out = String::new();
    for line in header {
        out.push_str(&format!("# {}\n", one_line(line)));
    }
    out.push_str(&format!("appId: {}\n---\n", quoted(app_id)));
    for (i, step) in steps.iter().enumerate() {
        out.push_str(&format!("# {} {}", i + 1, one_line(&step.describe())));
        if let Some(on) = &step.on {
            out.push_str(&format!(", on {}", one_line(on)));
        }
        out.push('\n');
        for command in commands(step, app_id) {
            out.push_str(&command);
        }
        if let Some(activity) = &step.expect.activity {
            out.push_str(&format!("# reached {}\n", one_line(activity)));
        }
        for s in &step.expect.visible {
            out.push_str(&format!("- assertVisible:\n{}", selector_fields(s, "    ")));
        }
    }
    out
}

fn commands(step: &Step, app_id: &str) -> Vec<String> {
    let app = |package: &str, command: &str| {
        if package == app_id {
            format!("- {command}\n")
        } else {
            format!("- {command}: {}\n", quoted(package))
        }
    };
    match &step.action {
        Action::Launch { package } => vec![if package == app_id {
            "- launchApp\n".into()
        } else {
            format!("- launchApp:\n    appId: {}\n", quoted(package))
        }],
        Action::Stop { package } => vec![app(package, "stopApp")],
        Action::ClearData { package } => vec![app(package, "clearState")],
        Action::Install { path } => vec![format!(
            "# droidmcp installed {} here; Maestro does not install: install it before the flow\n",
            one_line(path)
        )],
        Action::Tap { target } => vec![format!("- tapOn:\n{}", target_fields(target))],
        Action::LongPress { target, .. } => vec![format!("- longPressOn:\n{}", target_fields(target))],
        Action::Type {
            target,
            text,
            clear,
            submit,
        } => {
            let mut out: Vec<String> = target
                .iter()
                .map(|t| format!("- tapOn:\n{}", target_fields(t)))
                .collect();
            if *clear {
                out.push("- eraseText\n".into());
            }
            if !text.is_empty() {
                out.push(format!("- inputText: {}\n", quoted(text)));
            }
            if *submit {
                out.push("- pressKey: Enter\n".into());
            }
            out
        }
        Action::Key { name } if name.eq_ignore_ascii_case("BACK") => vec!["- back\n".into()],
        Action::Key { name } => vec![format!("- pressKey: {}\n", quoted(&maestro_key(name)))],
        Action::Swipe { from, to, duration_ms } => vec![format!(
            "- swipe:\n    start: \"{}, {}\"\n    end: \"{}, {}\"\n{}",
            from[0],
            from[1],
            to[0],
            to[1],
            duration_ms.map_or(String::new(), |d| format!("    duration: {d}\n"))
        )],
        Action::SwipeToward { direction } => vec![format!("- swipe:\n    direction: {}\n", direction.to_uppercase())],
        Action::Scroll { direction, until: None } if direction == "down" => vec!["- scroll\n".into()],
        // Maestro's scroll only goes down: another way is the swipe that does it.
        Action::Scroll { direction, until: None } => vec![format!(
            "- swipe:\n    direction: {}\n",
            finger_for_scroll(direction).to_uppercase()
        )],
        Action::Scroll {
            direction,
            until: Some(s),
        } => vec![format!(
            "- scrollUntilVisible:\n    element:\n{}    direction: {}\n",
            selector_fields(s, "      "),
            direction.to_uppercase()
        )],
        Action::Wait {
            selector,
            gone,
            timeout_ms,
        } => vec![format!(
            "- extendedWaitUntil:\n    {}:\n{}{}",
            if *gone { "notVisible" } else { "visible" },
            selector_fields(selector, "      "),
            timeout_ms.map_or(String::new(), |t| format!("    timeout: {t}\n"))
        )],
        Action::Emulator { command } => vec![match location(command) {
            Some((longitude, latitude)) => {
                format!("- setLocation:\n    latitude: {latitude}\n    longitude: {longitude}\n")
            }
            None => format!(
                "# droidmcp sent the emulator console `{}` here; Maestro has no console command: replay the js export to keep it\n",
                one_line(command)
            ),
        }],
        Action::Check => Vec::new(),
    }
}

/// `geo fix LON LAT` (nothing more): the one console command Maestro says, as `setLocation`.
pub fn location(command: &str) -> Option<(f64, f64)> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let [geo, fix, lon, lat] = words.as_slice() else {
        return None;
    };
    let (longitude, latitude) = (lon.parse::<f64>().ok()?, lat.parse::<f64>().ok()?);
    let valid = geo.eq_ignore_ascii_case("geo")
        && fix.eq_ignore_ascii_case("fix")
        && (-180.0..=180.0).contains(&longitude)
        && (-90.0..=90.0).contains(&latitude);
    valid.then_some((longitude, latitude))
}

/// The finger's direction that scrolls the content `direction`.
fn finger_for_scroll(direction: &str) -> &'static str {
    match direction {
        "up" => "down",
        "left" => "right",
        "right" => "left",
        _ => "up",
    }
}

/// A selector's fields, one per line at `indent`. Maestro matches `text` as a regular
/// expression: a label is written escaped so it matches itself.
fn selector_fields(s: &Selector, indent: &str) -> String {
    match s {
        Selector::ResourceId(v) => format!("{indent}id: {}\n", quoted(v)),
        Selector::Text(v) => format!("{indent}text: {}\n", quoted(&escaped(v))),
        // Maestro's `text` matches content-desc as well (accessibility text).
        Selector::ContentDesc(v) => format!("{indent}text: {}\n", quoted(&escaped(v))),
        Selector::Point([x, y]) => format!("{indent}point: \"{x}, {y}\"\n"),
    }
}

/// Text as a regular expression matching only itself: the metacharacters get a backslash
/// (Java's regex, Maestro's, takes one before any non-letter), nothing else does, so most labels
/// read as written.
fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A target's selector, and its label (Maestro's `label` names a command in its reports; a
/// replay heals by it) unless the selector is that very text.
fn target_fields(t: &Target) -> String {
    let mut out = selector_fields(&t.selector, "    ");
    if let Some(label) = &t.label
        && t.selector != Selector::Text(label.clone())
    {
        out.push_str(&format!("    label: {}\n", quoted(label)));
    }
    out
}

/// Our key names as Maestro writes them.
fn maestro_key(name: &str) -> String {
    match name.to_ascii_uppercase().as_str() {
        "HOME" => "Home".into(),
        "ENTER" => "Enter".into(),
        "DEL" => "Backspace".into(),
        "TAB" => "Tab".into(),
        "VOLUME_UP" => "Volume Up".into(),
        "VOLUME_DOWN" => "Volume Down".into(),
        "POWER" => "Power".into(),
        _ => name.to_string(),
    }
}

/// A Maestro flow read into steps. `assertVisible` after a command is that step's expectation;
/// before any, a `Check` step. Errors name the line.
pub fn parse(text: &str) -> Result<Vec<Step>, String> {
    let docs = MarkedYamlOwned::load_from_str(text).map_err(|e| format!("not YAML: {e}"))?;
    let (header, commands) = match docs.as_slice() {
        [commands] => (None, commands),
        [header, commands] => (Some(header), commands),
        [] => return Err("the flow is empty: an appId header, ---, then a list of commands".into()),
        _ => {
            return Err(format!(
                "{} YAML documents: a flow has a header (appId), ---, and its commands",
                docs.len()
            ));
        }
    };
    let mut app_id = None;
    if let Some(header) = header {
        let YamlDataOwned::Mapping(map) = &header.data else {
            return Err(at(header, "the header is a mapping with appId"));
        };
        for (key, value) in map {
            match scalar(key).as_deref() {
                Some("appId") => app_id = Some(string(value, "appId")?),
                Some("name" | "tags") => {}
                _ => return Err(at(key, "this header key is not supported (appId, name, tags are)")),
            }
        }
    }
    let YamlDataOwned::Sequence(list) = &commands.data else {
        return Err(at(commands, "the commands are a list (- launchApp, - tapOn: …)"));
    };
    let mut steps: Vec<Step> = Vec::new();
    for item in list {
        // `item` is the command's name (its span is the line; a mapping's own span is not).
        let (name, arg, item) = match &item.data {
            YamlDataOwned::Mapping(map) if map.len() == 1 => {
                let (k, v) = map.iter().next().expect("one entry");
                (scalar(k).unwrap_or_default(), Some(v), k)
            }
            _ => match scalar(item) {
                Some(name) => (name, None, item),
                None => return Err(at(item, "a command is a name, or a name with its arguments")),
            },
        };
        let app = |arg: Option<&MarkedYamlOwned>| -> Result<String, String> {
            match arg.filter(|a| !a.data.is_null()) {
                Some(a) => string(a, &name),
                None => app_id
                    .clone()
                    .ok_or_else(|| at(item, "needs an app: give appId in the header")),
            }
        };
        let action = match name.as_str() {
            "launchApp" => {
                let package = match arg.filter(|a| a.data.as_mapping().is_some()) {
                    Some(map) => {
                        only_keys(map, &["appId"])?;
                        app(field(map, "appId"))?
                    }
                    None => app(arg)?,
                };
                Action::Launch { package }
            }
            "stopApp" => Action::Stop { package: app(arg)? },
            "clearState" => Action::ClearData { package: app(arg)? },
            "tapOn" | "longPressOn" => {
                let target = target(required(arg, item, &name)?)?;
                if name == "tapOn" {
                    Action::Tap { target }
                } else {
                    Action::LongPress {
                        target,
                        duration_ms: None,
                    }
                }
            }
            "inputText" => Action::Type {
                target: None,
                text: string(required(arg, item, &name)?, &name)?,
                clear: false,
                submit: false,
            },
            "eraseText" => Action::Type {
                target: None,
                text: String::new(),
                clear: true,
                submit: false,
            },
            "back" => Action::Key { name: "BACK".into() },
            "pressKey" => Action::Key {
                name: our_key(&string(required(arg, item, &name)?, &name)?),
            },
            "scroll" => Action::Scroll {
                direction: "down".into(),
                until: None,
            },
            "swipe" => swipe(required(arg, item, &name)?)?,
            "scrollUntilVisible" => {
                let map = required(arg, item, &name)?;
                only_keys(map, &["element", "direction", "timeout"])?;
                let element = field(map, "element").ok_or_else(|| at(map, "scrollUntilVisible needs element"))?;
                let direction = match field(map, "direction") {
                    Some(d) => direction(d)?,
                    None => "down".into(),
                };
                Action::Scroll {
                    direction,
                    until: Some(selector(element)?),
                }
            }
            "extendedWaitUntil" => {
                let map = required(arg, item, &name)?;
                only_keys(map, &["visible", "notVisible", "timeout"])?;
                let timeout_ms = field(map, "timeout").map(|t| number(t, "timeout")).transpose()?;
                let (sel, gone) = match (field(map, "visible"), field(map, "notVisible")) {
                    (Some(s), None) => (s, false),
                    (None, Some(s)) => (s, true),
                    _ => return Err(at(map, "extendedWaitUntil takes visible or notVisible")),
                };
                Action::Wait {
                    selector: selector(sel)?,
                    gone,
                    timeout_ms,
                }
            }
            "setLocation" => {
                let map = required(arg, item, &name)?;
                only_keys(map, &["latitude", "longitude"])?;
                let degrees = |key: &str, limit: f64| -> Result<f64, String> {
                    let node = field(map, key).ok_or_else(|| at(map, "setLocation takes latitude and longitude"))?;
                    scalar(node)
                        .and_then(|s| s.trim().parse::<f64>().ok())
                        .filter(|d| (-limit..=limit).contains(d))
                        .ok_or_else(|| at(node, &format!("{key} is a number of degrees from -{limit} to {limit}")))
                };
                let (latitude, longitude) = (degrees("latitude", 90.0)?, degrees("longitude", 180.0)?);
                Action::Emulator {
                    command: format!("geo fix {longitude} {latitude}"),
                }
            }
            "assertNotVisible" => Action::Wait {
                selector: selector(required(arg, item, &name)?)?,
                gone: true,
                timeout_ms: None,
            },
            "assertVisible" => {
                let shown = selector(required(arg, item, &name)?)?;
                match steps.last_mut() {
                    Some(last) => last.expect.visible.push(shown),
                    None => {
                        let mut step = Step::new(Action::Check);
                        step.expect = Expect {
                            activity: None,
                            visible: vec![shown],
                        };
                        steps.push(step);
                    }
                }
                continue;
            }
            _ => {
                return Err(at(
                    item,
                    &format!(
                        "`{}` is not a command droidmcp replays (launchApp, stopApp, clearState, tapOn, longPressOn, inputText, eraseText, pressKey, back, swipe, scroll, scrollUntilVisible, extendedWaitUntil, assertVisible, assertNotVisible, setLocation)",
                        crate::adb::cut(&name)
                    ),
                ));
            }
        };
        steps.push(Step::new(action));
    }
    Ok(steps)
}

fn swipe(arg: &MarkedYamlOwned) -> Result<Action, String> {
    only_keys(arg, &["start", "end", "duration", "direction"])?;
    if let Some(d) = field(arg, "direction") {
        return Ok(Action::SwipeToward {
            direction: direction(d)?,
        });
    }
    let (Some(start), Some(end)) = (field(arg, "start"), field(arg, "end")) else {
        return Err(at(arg, "swipe takes start and end (\"x, y\" in pixels), or direction"));
    };
    let duration_ms = field(arg, "duration")
        .map(|d| number(d, "duration").map(|n| n.min(u64::from(u32::MAX)) as u32))
        .transpose()?;
    Ok(Action::Swipe {
        from: point(start)?,
        to: point(end)?,
        duration_ms,
    })
}

/// What `tapOn` and `longPressOn` point at: a selector, and the `label` a replay heals by.
fn target(node: &MarkedYamlOwned) -> Result<Target, String> {
    let label = field(node, "label").map(|l| string(l, "label")).transpose()?;
    let selector = selector_in(node, &["id", "text", "point", "label"])?;
    // A label that is the selector's own text heals nothing.
    let label = label.filter(|l| selector != Selector::Text(l.clone()));
    Ok(Target { selector, label })
}

fn selector(node: &MarkedYamlOwned) -> Result<Selector, String> {
    selector_in(node, &["id", "text", "point"])
}

fn selector_in(node: &MarkedYamlOwned, allowed: &[&str]) -> Result<Selector, String> {
    if let Some(text) = scalar(node) {
        return Ok(Selector::Text(literal(&text)));
    }
    only_keys(node, allowed)?;
    let keys = ["id", "text", "point"];
    let given: Vec<&str> = keys.into_iter().filter(|k| field(node, k).is_some()).collect();
    match given.as_slice() {
        ["id"] => Ok(Selector::ResourceId(string(field(node, "id").expect("given"), "id")?)),
        ["text"] => Ok(Selector::Text(literal(&string(
            field(node, "text").expect("given"),
            "text",
        )?))),
        ["point"] => Ok(Selector::Point(point(field(node, "point").expect("given"))?)),
        _ => Err(at(node, "a selector takes one of id, text, point")),
    }
}

/// Maestro's `text` is a regular expression; droidmcp replays the literal text it stands for
/// (an escaped label, as `render` writes it, loses its escapes).
fn literal(pattern: &str) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// `"540, 1200"`: device pixels (percentages are refused).
fn point(node: &MarkedYamlOwned) -> Result<[i32; 2], String> {
    let text = string(node, "point")?;
    let parts: Vec<Option<i32>> = text.split(',').map(|p| p.trim().parse().ok()).collect();
    match parts.as_slice() {
        [Some(x), Some(y)] => Ok([*x, *y]),
        _ => Err(at(node, "a point is \"x, y\" in device pixels")),
    }
}

fn direction(node: &MarkedYamlOwned) -> Result<String, String> {
    let d = string(node, "direction")?.to_ascii_lowercase();
    match d.as_str() {
        "up" | "down" | "left" | "right" => Ok(d),
        _ => Err(at(node, "direction is UP, DOWN, LEFT or RIGHT")),
    }
}

/// Maestro's key names as ours.
fn our_key(name: &str) -> String {
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

fn required<'a>(
    arg: Option<&'a MarkedYamlOwned>,
    item: &MarkedYamlOwned,
    name: &str,
) -> Result<&'a MarkedYamlOwned, String> {
    arg.filter(|a| !a.data.is_null())
        .ok_or_else(|| at(item, &format!("{name} needs an argument")))
}

fn field<'a>(node: &'a MarkedYamlOwned, key: &str) -> Option<&'a MarkedYamlOwned> {
    node.data
        .as_mapping()?
        .iter()
        .find(|(k, _)| scalar(k).as_deref() == Some(key))
        .map(|(_, v)| v)
}

fn only_keys(node: &MarkedYamlOwned, allowed: &[&str]) -> Result<(), String> {
    let Some(map) = node.data.as_mapping() else {
        return Err(at(node, &format!("expected a mapping with {}", allowed.join(", "))));
    };
    for (key, _) in map {
        let name = scalar(key).unwrap_or_default();
        if !allowed.contains(&name.as_str()) {
            return Err(at(
                key,
                &format!(
                    "`{}` is not supported here ({} are)",
                    crate::adb::cut(&name),
                    allowed.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// A scalar as text (numbers and booleans as written).
fn scalar(node: &MarkedYamlOwned) -> Option<String> {
    match &node.data {
        YamlDataOwned::Value(ScalarOwned::String(s)) => Some(s.clone()),
        YamlDataOwned::Value(ScalarOwned::Integer(i)) => Some(i.to_string()),
        YamlDataOwned::Value(ScalarOwned::FloatingPoint(f)) => Some(f.to_string()),
        YamlDataOwned::Value(ScalarOwned::Boolean(b)) => Some(b.to_string()),
        YamlDataOwned::Representation(s, _, _) => Some(s.clone()),
        _ => None,
    }
}

fn string(node: &MarkedYamlOwned, what: &str) -> Result<String, String> {
    scalar(node).ok_or_else(|| at(node, &format!("{what} is a text")))
}

fn number(node: &MarkedYamlOwned, what: &str) -> Result<u64, String> {
    scalar(node)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| at(node, &format!("{what} is a number of ms")))
}

/// A message that names the line it is about.
fn at(node: &MarkedYamlOwned, message: &str) -> String {
    format!("line {}: {message}", node.span.start.line())
}
