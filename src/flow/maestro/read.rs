//! A Maestro flow read into steps, with a maintained YAML parser (`saphyr`). The commands read
//! are the ones `write` writes and a few more of the same kind; any other is refused with its
//! line.

use saphyr::{LoadableYamlNode, MarkedYamlOwned, ScalarOwned, YamlDataOwned};

use super::super::{Action, Expect, Selector, Step, Target};

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
