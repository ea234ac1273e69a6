//! A Maestro flow read into steps, with a maintained YAML parser (`saphyr`). The commands read
//! are the ones `write` writes and a few more of the same kind; any other is refused with its
//! line.

use std::path::{Path, PathBuf};

use saphyr::{LoadableYamlNode, MarkedYamlOwned, YamlDataOwned};

use super::yaml::{at, field, key, number, only_keys, required, scalar, string};

use super::super::{Action, Expect, Selector, Step, Target, When, same_block};

/// Flow files a `runFlow` may nest, and steps a flow may grow to once `repeat` and `runFlow` are
/// spelled out: a typo (`times: 1000000`) or a loop of files fails at once, with its line.
const MAX_DEPTH: usize = 8;
const MAX_STEPS: usize = 5000;

/// A Maestro flow read into steps. `assertVisible` after a command is that step's expectation;
/// before any, a `Check` step. `repeat {times}` and inline `runFlow {commands}` are spelled out;
/// `runFlow: FILE` needs the flow's own file (`parse_file`). Errors name the line.
pub fn parse(text: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    Reader::default().flow(text, &mut steps)?;
    Ok(steps)
}

/// A Maestro flow file read into steps; `runFlow: FILE` reads FILE beside the flow naming it.
/// Errors name the file and the line.
pub fn parse_file(path: &Path) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    Reader::default().file(path, None, &mut steps)?;
    Ok(steps)
}

/// The files being read, outermost first (to find a `runFlow`'s file and to refuse a loop), and
/// the condition of the `runFlow {when}` block being read.
#[derive(Default)]
struct Reader {
    files: Vec<PathBuf>,
    when: Option<When>,
}

impl Reader {
    fn file(&mut self, path: &Path, from: Option<&MarkedYamlOwned>, steps: &mut Vec<Step>) -> Result<(), String> {
        let named = |message: String| match from {
            Some(node) => at(node, &message),
            None => message,
        };
        // Messages name the file as written; it is found beside the flow that names it.
        let written = path.display();
        let full = match self.files.last().and_then(|f| f.parent()) {
            Some(folder) if path.is_relative() => folder.join(path),
            _ => path.to_path_buf(),
        };
        let real = full
            .canonicalize()
            .map_err(|e| named(format!("cannot read {written}: {e}")))?;
        if self.files.contains(&real) {
            return Err(named(format!(
                "runFlow {written} runs a flow that is already running (a loop)"
            )));
        }
        if self.files.len() > MAX_DEPTH {
            return Err(named(format!("runFlow nests more than {MAX_DEPTH} flows deep")));
        }
        let text = std::fs::read_to_string(&real).map_err(|e| named(format!("cannot read {written}: {e}")))?;
        self.files.push(real);
        let read = self.flow(&text, steps);
        self.files.pop();
        read.map_err(|e| match from {
            Some(node) => at(node, &format!("in {written}: {e}")),
            None => format!("{written}: {e}"),
        })
    }

    fn flow(&mut self, text: &str, steps: &mut Vec<Step>) -> Result<(), String> {
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
        self.commands(commands, app_id.as_deref(), steps)
    }

    fn commands(
        &mut self,
        commands: &MarkedYamlOwned,
        app_id: Option<&str>,
        steps: &mut Vec<Step>,
    ) -> Result<(), String> {
        let list = match &commands.data {
            YamlDataOwned::Sequence(list) => list.as_slice(),
            // Only comments after `---` (steps Maestro cannot say): nothing to run.
            data if data.is_null() => &[],
            _ => return Err(at(commands, "the commands are a list (- launchApp, - tapOn: …)")),
        };
        for item in list {
            self.command(item, app_id, steps)?;
            if steps.len() > MAX_STEPS {
                return Err(at(
                    item,
                    &format!("the flow grows past {MAX_STEPS} steps here (repeat and runFlow spelled out)"),
                ));
            }
        }
        Ok(())
    }

    fn command(&mut self, item: &MarkedYamlOwned, app_id: Option<&str>, steps: &mut Vec<Step>) -> Result<(), String> {
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
        // Maestro's `optional: true`: the step may fail without failing the flow.
        let optional = match arg.and_then(|a| field(a, "optional")) {
            Some(o) => match scalar(o).as_deref() {
                Some("true") => true,
                Some("false") => false,
                _ => return Err(at(o, "optional is true or false")),
            },
            None => false,
        };
        let app = |arg: Option<&MarkedYamlOwned>| -> Result<String, String> {
            match arg.filter(|a| !a.data.is_null()) {
                Some(a) => string(a, &name),
                None => app_id
                    .map(str::to_string)
                    .ok_or_else(|| at(item, "needs an app: give appId in the header")),
            }
        };
        let action = match name.as_str() {
            "launchApp" => {
                let package = match arg.filter(|a| a.data.as_mapping().is_some()) {
                    Some(map) => {
                        only_keys(map, &["appId", "optional"])?;
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
                only_keys(map, &["element", "direction", "timeout", "optional"])?;
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
                only_keys(map, &["visible", "notVisible", "timeout", "optional"])?;
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
                only_keys(map, &["latitude", "longitude", "optional"])?;
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
                selector: command_selector(required(arg, item, &name)?)?,
                gone: true,
                timeout_ms: None,
            },
            "assertVisible" => {
                let shown = command_selector(required(arg, item, &name)?)?;
                match steps.last_mut() {
                    // An assertion after an optional step is not optional; one after a
                    // conditional block is not conditional.
                    Some(last) if !optional && !last.optional && same_block(&last.when, &self.when) => {
                        last.expect.visible.push(shown)
                    }
                    _ => {
                        let mut step = Step::new(Action::Check);
                        step.optional = optional;
                        step.when = self.when.clone();
                        step.expect = Expect {
                            activity: None,
                            visible: vec![shown],
                        };
                        steps.push(step);
                    }
                }
                return Ok(());
            }
            "repeat" => {
                let map = required(arg, item, &name)?;
                only_keys(map, &["times", "commands", "while", "label"])?;
                if let Some(condition) = key(map, "while") {
                    return Err(at(
                        condition,
                        "repeat while is not replayed (its condition is read as the flow runs): give times",
                    ));
                }
                let times = field(map, "times").ok_or_else(|| at(map, "repeat takes times and commands"))?;
                let times = scalar(times)
                    .and_then(|t| t.parse::<usize>().ok())
                    .ok_or_else(|| at(times, "times is a whole number"))?;
                let commands = field(map, "commands").ok_or_else(|| at(map, "repeat takes times and commands"))?;
                let mut body = Vec::new();
                self.commands(commands, app_id, &mut body)?;
                for _ in 0..times {
                    if steps.len() + body.len() > MAX_STEPS {
                        return Err(at(item, &format!("repeat grows the flow past {MAX_STEPS} steps")));
                    }
                    steps.extend(body.iter().cloned());
                }
                return Ok(());
            }
            "runFlow" => {
                let arg = required(arg, item, &name)?;
                if let Some(file) = scalar(arg) {
                    return self.run_file(&file, item, steps);
                }
                only_keys(arg, &["file", "commands", "env", "when", "label"])?;
                if let Some(env) = key(arg, "env") {
                    return Err(at(
                        env,
                        "runFlow env is not replayed: give the values to droidmcp replay with --env NAME=VALUE",
                    ));
                }
                return match field(arg, "when") {
                    Some(when) => self.conditional(when, arg, item, app_id, steps),
                    None => self.block(arg, item, app_id, steps),
                };
            }
            _ => {
                return Err(at(
                    item,
                    &format!(
                        "`{}` is not a command droidmcp replays (launchApp, stopApp, clearState, tapOn, longPressOn, inputText, eraseText, pressKey, back, swipe, scroll, scrollUntilVisible, extendedWaitUntil, assertVisible, assertNotVisible, setLocation, repeat, runFlow)",
                        crate::adb::cut(&name)
                    ),
                ));
            }
        };
        let mut step = Step::new(action);
        step.optional = optional;
        step.when = self.when.clone();
        steps.push(step);
        Ok(())
    }

    /// A `runFlow {when, file | commands}`: its steps carry the condition, the first one opening
    /// the block. A block for another platform has no steps here.
    fn conditional(
        &mut self,
        when: &MarkedYamlOwned,
        arg: &MarkedYamlOwned,
        item: &MarkedYamlOwned,
        app_id: Option<&str>,
        steps: &mut Vec<Step>,
    ) -> Result<(), String> {
        only_keys(when, &["visible", "notVisible", "platform", "true"])?;
        if let Some(script) = key(when, "true") {
            return Err(at(
                script,
                "runFlow when true (a JavaScript condition) is not replayed: use visible or notVisible",
            ));
        }
        if self.when.is_some() {
            return Err(at(when, "a runFlow when inside another runFlow when is not replayed"));
        }
        if let Some(platform) = field(when, "platform")
            && !string(platform, "platform")?.eq_ignore_ascii_case("android")
        {
            return Ok(());
        }
        let shown = |name: &str| -> Result<Option<Selector>, String> {
            let Some(node) = field(when, name) else {
                return Ok(None);
            };
            match selector(node)? {
                s if s.fragile() => Err(at(
                    key(when, name).unwrap_or(node),
                    &format!("{name} is an id or a text, not a point"),
                )),
                s => Ok(Some(s)),
            }
        };
        let condition = When {
            visible: shown("visible")?,
            not_visible: shown("notVisible")?,
            opens: false,
        };
        let mut block = Vec::new();
        if condition.visible.is_some() || condition.not_visible.is_some() {
            self.when = Some(condition);
        }
        let read = self.block(arg, item, app_id, &mut block);
        self.when = None;
        read?;
        if let Some(opening) = block.first_mut().and_then(|s| s.when.as_mut()) {
            opening.opens = true;
        }
        steps.extend(block);
        Ok(())
    }

    /// What a `runFlow` mapping runs: its file, or its commands.
    fn block(
        &mut self,
        arg: &MarkedYamlOwned,
        item: &MarkedYamlOwned,
        app_id: Option<&str>,
        steps: &mut Vec<Step>,
    ) -> Result<(), String> {
        match (field(arg, "file"), field(arg, "commands")) {
            (Some(file), None) => self.run_file(&string(file, "file")?, item, steps),
            (None, Some(commands)) => self.commands(commands, app_id, steps),
            _ => Err(at(arg, "runFlow takes file or commands")),
        }
    }

    fn run_file(&mut self, file: &str, item: &MarkedYamlOwned, steps: &mut Vec<Step>) -> Result<(), String> {
        if self.files.is_empty() {
            return Err(at(
                item,
                "runFlow FILE reads a file beside the flow: replay the flow's file (droidmcp replay FLOW.yaml)",
            ));
        }
        self.file(Path::new(file), Some(item), steps)
    }
}

fn swipe(arg: &MarkedYamlOwned) -> Result<Action, String> {
    only_keys(arg, &["start", "end", "duration", "direction", "optional"])?;
    if let Some(d) = field(arg, "direction") {
        return Ok(Action::SwipeToward {
            direction: direction(d)?,
        });
    }
    let (Some(start), Some(end)) = (field(arg, "start"), field(arg, "end")) else {
        return Err(at(
            arg,
            "swipe takes start and end (\"x, y\" in pixels or \"x%, y%\" of the screen), or direction",
        ));
    };
    let duration_ms = field(arg, "duration")
        .map(|d| number(d, "duration").map(|n| n.min(u64::from(u32::MAX)) as u32))
        .transpose()?;
    match (spot(start)?, spot(end)?) {
        (Selector::Point(from), Selector::Point(to)) => Ok(Action::Swipe { from, to, duration_ms }),
        (Selector::Percent(from), Selector::Percent(to)) => Ok(Action::SwipePercent { from, to, duration_ms }),
        _ => Err(at(arg, "start and end are both pixels or both percentages")),
    }
}

/// What `tapOn` and `longPressOn` point at: a selector, and the `label` a replay heals by.
fn target(node: &MarkedYamlOwned) -> Result<Target, String> {
    let label = field(node, "label").map(|l| string(l, "label")).transpose()?;
    let selector = selector_in(node, &["id", "text", "point", "label", "optional"])?;
    // A label that is the selector's own text heals nothing.
    let label = label.filter(|l| selector != Selector::Text(l.clone()));
    Ok(Target { selector, label })
}

fn selector(node: &MarkedYamlOwned) -> Result<Selector, String> {
    selector_in(node, &["id", "text", "point"])
}

/// A selector that is a command's whole argument (`assertVisible: {text, optional}`).
fn command_selector(node: &MarkedYamlOwned) -> Result<Selector, String> {
    selector_in(node, &["id", "text", "point", "optional"])
}

fn selector_in(node: &MarkedYamlOwned, allowed: &[&str]) -> Result<Selector, String> {
    if let Some(text) = scalar(node) {
        return text_selector(node, &text);
    }
    only_keys(node, allowed)?;
    let keys = ["id", "text", "point"];
    let given: Vec<&str> = keys.into_iter().filter(|k| field(node, k).is_some()).collect();
    match given.as_slice() {
        ["id"] => Ok(Selector::ResourceId(string(field(node, "id").expect("given"), "id")?)),
        ["text"] => {
            let text = field(node, "text").expect("given");
            text_selector(text, &string(text, "text")?)
        }
        ["point"] => spot(field(node, "point").expect("given")),
        _ => Err(at(node, "a selector takes one of id, text, point")),
    }
}

/// Maestro's `text` is a regular expression over an element's whole text. One whose every
/// metacharacter is escaped (as `write` escapes a label) is that literal text, and replays as a
/// text target (waited for, healed); any other is a pattern, matched as Maestro matches it, and
/// checked here so a pattern `ui` cannot read fails at once with its line.
fn text_selector(node: &MarkedYamlOwned, pattern: &str) -> Result<Selector, String> {
    let mut literal = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        let escaped = match c {
            '\\' => chars.next(),
            c if !super::write::REGEX_SPECIAL.contains(c) => {
                literal.push(c);
                continue;
            }
            _ => None,
        };
        match escaped {
            Some(next) if super::write::REGEX_SPECIAL.contains(next) => literal.push(next),
            // A metacharacter, or a class such as `\d`: a pattern.
            _ => {
                crate::android::ui_elements::Matcher::regex(&crate::flow::whole_text_regex(pattern))
                    .map_err(|e| at(node, &format!("text {pattern:?} is {e}")))?;
                return Ok(Selector::Pattern(pattern.to_string()));
            }
        }
    }
    Ok(Selector::Text(literal))
}

/// `"540, 1200"`: device pixels (percentages are refused).
fn spot(node: &MarkedYamlOwned) -> Result<Selector, String> {
    let text = string(node, "point")?;
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let percent = |p: &str| {
        p.strip_suffix('%')
            .and_then(|n| n.trim().parse::<u32>().ok())
            .filter(|n| *n <= 100)
    };
    match parts.as_slice() {
        [x, y] if x.ends_with('%') || y.ends_with('%') => match (percent(x), percent(y)) {
            (Some(x), Some(y)) => Ok(Selector::Percent([x, y])),
            _ => Err(at(node, "a point in percent is \"x%, y%\", each 0 to 100")),
        },
        [x, y] => match (x.parse(), y.parse()) {
            (Ok(x), Ok(y)) => Ok(Selector::Point([x, y])),
            _ => Err(at(
                node,
                "a point is \"x, y\" in device pixels, or \"x%, y%\" of the screen",
            )),
        },
        _ => Err(at(
            node,
            "a point is \"x, y\" in device pixels, or \"x%, y%\" of the screen",
        )),
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
