//! A Maestro flow read into steps, with a maintained YAML parser (`saphyr`). The commands read
//! are the ones `write` writes and a few more of the same kind; any other is refused with its
//! line.

use std::path::{Path, PathBuf};

use saphyr::{LoadableYamlNode, MarkedYamlOwned, YamlDataOwned};

use super::args::{erase, flag, no_argument, our_key, random_input, scalar_or_field, swipe};
use super::selectors::{command_selector, selector};
use super::yaml::{at, field, number, only_keys, required, scalar, string};

use super::super::commands::Command;
use super::super::{Action, Expect, Step, When, same_block};

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

/// A Maestro flow file read into steps, and the flow's `name` from its header (a replay reports
/// it by that name); `runFlow: FILE` reads FILE beside the flow naming it. Errors name the file
/// and the line.
pub fn parse_file(path: &Path) -> Result<(Option<String>, Vec<Step>), String> {
    let mut steps = Vec::new();
    let mut reader = Reader::default();
    reader.file(path, None, &mut steps)?;
    for note in &reader.notes {
        tracing::warn!(target: "droidmcp::flow::maestro::read", "{note}");
    }
    Ok((reader.name, steps))
}

/// A flow file read without a device (`droidmcp replay --check`): its name, the steps that
/// would run, and every command refused (`FILE line N: why`), not only the first.
#[derive(Debug, Default)]
pub struct Checked {
    pub name: Option<String>,
    pub steps: Vec<Step>,
    pub refused: Vec<String>,
    /// What Maestro reads and ignores, so a replay ignores it too (`FILE line N: why`).
    pub notes: Vec<String>,
}

/// Reads `path` (and its subflows) as `parse_file` does, but goes on past a refused command,
/// so a CI job's lint step lists them all.
pub fn check_file(path: &Path) -> Checked {
    let mut reader = Reader {
        refused: Some(Vec::new()),
        ..Reader::default()
    };
    let mut steps = Vec::new();
    let unread = reader.file(path, None, &mut steps).err();
    let mut refused: Vec<String> = Vec::new();
    // A subflow run twice is refused once.
    for r in reader.refused.unwrap_or_default().into_iter().chain(unread) {
        if !refused.contains(&r) {
            refused.push(r);
        }
    }
    Checked {
        name: reader.name,
        steps,
        refused,
        notes: reader.notes,
    }
}

/// The files being read, outermost first (to find a `runFlow`'s file and to refuse a loop), the
/// condition of the `runFlow {when}` block being read, the outermost flow's name, and when
/// checking (`check_file`), the refusals so far.
#[derive(Default)]
pub(super) struct Reader {
    pub(super) files: Vec<PathBuf>,
    pub(super) when: Option<When>,
    name: Option<String>,
    refused: Option<Vec<String>>,
    notes: Vec<String>,
}

impl Reader {
    /// A refusal: kept, naming the file being read, when checking (reading goes on); else the
    /// error that ends the reading.
    fn refuse(&mut self, error: String) -> Result<(), String> {
        let file = self.files.last().map(|f| f.display().to_string());
        match (&mut self.refused, file) {
            (Some(refused), Some(file)) if error.starts_with("line ") => {
                refused.push(format!("{file} {error}"));
                Ok(())
            }
            (Some(refused), _) => {
                refused.push(error);
                Ok(())
            }
            (None, _) => Err(error),
        }
    }

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
        let (mut on_start, mut on_complete) = (None, None);
        if let Some(header) = header {
            let YamlDataOwned::Mapping(map) = &header.data else {
                return Err(at(header, "the header is a mapping with appId"));
            };
            for (key, value) in map {
                match scalar(key).as_deref() {
                    Some("appId") => app_id = Some(string(value, "appId")?),
                    // The report's name for the flow (a subflow's is its own business).
                    Some("name") if self.files.len() <= 1 => self.name = Some(string(value, "name")?),
                    Some("name") => {}
                    // Tags choose which flows a Maestro run takes; a replay runs the files it is
                    // given, as `maestro test FILE` does.
                    Some("tags") => {}
                    // Maestro's JavaScript engine (GraalJS or Rhino); a replay's is QuickJS, the
                    // code-mode sandbox's, whichever is named.
                    Some("jsEngine") => {
                        string(value, "jsEngine")?;
                    }
                    // Maestro reads an Android WebView through Chrome DevTools with it; a
                    // replay's `ui` always reads a debuggable one so.
                    Some("androidWebViewHierarchy") => {
                        string(value, "androidWebViewHierarchy")?;
                    }
                    // Runs before the flow's commands; when it fails they do not run, as
                    // Maestro does.
                    Some("onFlowStart") => on_start = Some(value),
                    // Runs after the flow's commands, even after a failure, as Maestro does.
                    Some("onFlowComplete") => on_complete = Some(value),
                    // Read below (`with_env`).
                    Some("env") => {}
                    // Maestro keeps any other header key for its plugins and ignores it; so
                    // does a replay, saying so (a misspelt hook would otherwise never run).
                    other => {
                        let file = self.files.last().map(|f| f.display().to_string()).unwrap_or_default();
                        let hint = if other == Some("onFlowEnd") {
                            " (onFlowComplete runs after the flow)"
                        } else {
                            ""
                        };
                        let (key_node, name) = (key, other.unwrap_or("a header key that is not a name"));
                        self.notes.push(format!(
                            "{file} {}",
                            at(key_node, &format!("`{name}` is no Maestro header key: Maestro ignores it, and so does the replay{hint}"))
                        ));
                    }
                }
            }
        }
        let mut body = Vec::new();
        if let Some(start) = on_start {
            self.commands(start, app_id.as_deref(), &mut body)?;
        }
        self.commands(commands, app_id.as_deref(), &mut body)?;
        if let Some(complete) = on_complete {
            let mut after = Vec::new();
            self.commands(complete, app_id.as_deref(), &mut after)?;
            let control = crate::Control::Complete { after };
            body = vec![self.step(Action::Block { control, body }, false)];
        }
        match header {
            Some(header) => steps.extend(self.with_env(header, false, body)?),
            None => steps.extend(body),
        }
        Ok(())
    }

    pub(super) fn commands(
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
            if let Err(e) = self.command(item, app_id, steps) {
                self.refuse(e)?;
            }
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
            // Two keys where Maestro takes one (`- tapOn: OK` with `optional: true` beside it):
            // Maestro refuses the unknown field; say where it goes. The first key has the line.
            YamlDataOwned::Mapping(map) if map.len() > 1 => {
                let keys: Vec<String> = map.keys().map(|k| scalar(k).unwrap_or_default()).collect();
                let first = map.keys().next().expect("two entries");
                return Err(at(
                    first,
                    &format!(
                        "a command is one name with its arguments, and this item has {}: `{}`; an option such as `optional` goes under the command ({}: {{…, {}: …}}), as Maestro reads it",
                        keys.len(),
                        keys.join("`, `"),
                        keys[0],
                        keys.get(1).map_or("optional", String::as_str)
                    ),
                ));
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
                let Some(map) = arg.filter(|a| a.data.as_mapping().is_some()) else {
                    let mut step = Step::new(Action::Launch { package: app(arg)? });
                    step.optional = optional;
                    step.when = self.when.clone();
                    steps.push(step);
                    return Ok(());
                };
                only_keys(
                    map,
                    &[
                        "appId",
                        "optional",
                        "clearState",
                        "stopApp",
                        "clearKeychain",
                        "permissions",
                        "arguments",
                    ],
                )?;
                let package = app(field(map, "appId"))?;
                // As Maestro orders them: the data cleared, the app stopped, then launched
                // (clearKeychain is iOS's; Android has none to clear).
                // Permissions after the data is cleared, before the app stops (Maestro's order).
                let permissions = super::commands::permissions(map, &package)?;
                for (option, action) in [
                    (
                        "clearState",
                        Some(Action::ClearData {
                            package: package.clone(),
                        }),
                    ),
                    ("permissions", permissions),
                    (
                        "stopApp",
                        Some(Action::Stop {
                            package: package.clone(),
                        }),
                    ),
                ] {
                    let given = match option {
                        "permissions" => action.is_some(),
                        _ => flag(map, option)?,
                    };
                    if let (true, Some(action)) = (given, action) {
                        let mut step = Step::new(action);
                        step.optional = optional;
                        step.when = self.when.clone();
                        steps.push(step);
                    }
                }
                flag(map, "clearKeychain")?;
                match super::commands::arguments(map)? {
                    Some(arguments) => Action::Command(Command::LaunchWith { package, arguments }),
                    None => Action::Launch { package },
                }
            }
            "hideKeyboard" => {
                // What Maestro sends on Android to hide it.
                no_argument(arg)?;
                Action::Key { name: "BACK".into() }
            }
            "waitForAnimationToEnd" => {
                let timeout_ms = match arg.filter(|a| !a.data.is_null()) {
                    Some(map) => {
                        only_keys(map, &["timeout", "optional"])?;
                        field(map, "timeout").map(|t| number(t, "timeout")).transpose()?
                    }
                    None => None,
                };
                Action::Settle { timeout_ms }
            }
            "stopApp" => Action::Stop { package: app(arg)? },
            "clearState" => Action::ClearData { package: app(arg)? },
            "inputText" => Action::Type {
                target: None,
                text: string(scalar_or_field(required(arg, item, &name)?, "text")?, &name)?,
                clear: false,
                submit: false,
            },
            "eraseText" => erase(arg)?,
            "inputRandomText" | "inputRandomNumber" | "inputRandomEmail" | "inputRandomPersonName" => Action::Type {
                target: None,
                text: random_input(&name, arg)?,
                clear: false,
                submit: false,
            },
            "back" => {
                no_argument(arg)?;
                Action::Key { name: "BACK".into() }
            }
            "pressKey" => {
                let key = scalar_or_field(required(arg, item, &name)?, "key")?;
                let ours = our_key(&string(key, &name)?);
                // Checked here, so a key the device cannot be sent fails with its line.
                if android::keys::key_code(&ours).is_none() {
                    return Err(at(
                        key,
                        &format!(
                            "pressKey {:?} is none of Maestro's key names (Enter, Back, Home, Remote Dpad Up, Remote Media Play Pause, TV Input…) nor an Android key name or code",
                            android::text::echoed(&ours)
                        ),
                    ));
                }
                Action::Key { name: ours }
            }
            "scroll" => {
                no_argument(arg)?;
                Action::Scroll {
                    direction: "down".into(),
                    until: None,
                }
            }
            "swipe" => swipe(required(arg, item, &name)?)?,
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
                    Some(last)
                        if !optional
                            && !last.optional
                            && same_block(&last.when, &self.when)
                            && !matches!(last.action, Action::Block { .. }) =>
                    {
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
                only_keys(map, &["times", "commands", "while"])?;
                // Decided as the flow runs: a condition, or times from a ${…}.
                let template = field(map, "times").and_then(scalar).is_some_and(|t| t.contains("${"));
                if field(map, "while").is_some() || template {
                    return self.repeat_block(map, app_id, steps);
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
                only_keys(arg, &["file", "commands", "env", "when", "optional"])?;
                let mut inner = Vec::new();
                match field(arg, "when") {
                    Some(when) => self.conditional(when, arg, item, app_id, &mut inner)?,
                    None => self.block(arg, item, app_id, &mut inner)?,
                };
                // Its env holds for its steps only (over the subflow's own header env).
                let inner = self.with_env(arg, true, inner)?;
                steps.extend(self.optionally(optional, inner));
                return Ok(());
            }
            "runScript" | "evalScript" | "assertTrue" => {
                return self.script(&name, required(arg, item, &name)?, optional, steps);
            }
            "retry" => return self.retry_block(required(arg, item, &name)?, item, app_id, optional, steps),
            // Maestro's device commands (maestro/commands.rs).
            _ if let Some(action) =
                super::commands::read(&name, arg, item, app_id, self.files.last().and_then(|f| f.parent()))? =>
            {
                action
            }
            _ => return Err(at(item, &super::compat::refusal(&name))),
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
        let Some(condition) = self.condition(when)? else {
            // A block for another platform has no steps here.
            return Ok(());
        };
        let mut block = Vec::new();
        // Inside another block's condition: a block of its own, its condition read as it starts.
        if self.when.is_some() {
            self.block(arg, item, app_id, &mut block)?;
            let control = crate::Control::If { condition };
            steps.push(self.step(Action::Block { control, body: block }, false));
            return Ok(());
        }
        if condition.visible.is_some() || condition.not_visible.is_some() || condition.script.is_some() {
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
    pub(super) fn block(
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
