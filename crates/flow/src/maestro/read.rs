//! A Maestro flow read into steps, with a maintained YAML parser (`saphyr`). The commands read
//! are the ones `write` writes and a few more of the same kind; any other is refused with its
//! line.

use std::path::{Path, PathBuf};

use saphyr::{LoadableYamlNode, MarkedYamlOwned, YamlDataOwned};

use super::args::{erase, flag, no_argument, our_key, random_input, scalar_or_field, swipe};
use super::fields;
use super::rendered::{App, StepCheck};
use super::selectors::{command_selector, selector};
use super::yaml::{at, field, number, only_keys, required, scalar, string, typed, written};

use super::super::commands::Command;
use super::super::{Action, Expect, Selector, Step, When, same_block};

/// Flow files a `runFlow` may nest, and steps a flow may grow to once `repeat` and `runFlow` are
/// spelled out: a typo (`times: 1000000`) or a loop of files fails at once, with its line.
const MAX_DEPTH: usize = 8;
const MAX_STEPS: usize = 5000;
/// The longest `waitForAnimationToEnd` a flow may ask for (a typo fails at once).
const MAX_SETTLE_MS: u64 = 600_000;

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
///
/// `check` is the run's own check of each step (the tools' parse of the calls it makes), so a
/// flow the run would refuse is refused here, with its line, before any step runs.
pub fn parse_file(path: &Path, check: StepCheck) -> Result<(Option<String>, Vec<Step>), String> {
    let mut steps = Vec::new();
    let mut reader = Reader {
        check: Some(check),
        ..Reader::default()
    };
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

/// Reads `path` (and its subflows) as `parse_file` does, with the same `check`, but goes on past
/// a refused command, so a CI job's lint step lists them all.
pub fn check_file(path: &Path, check: StepCheck) -> Checked {
    let mut reader = Reader {
        refused: Some(Vec::new()),
        check: Some(check),
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
/// condition of the `runFlow {when}` block being read, the outermost flow's name, when checking
/// (`check_file`) the refusals so far, the run's check of each step, and whether the command
/// being read stands for one its step reads again rendered (`sampling`, `rendered.rs`).
#[derive(Default)]
pub(super) struct Reader {
    pub(super) files: Vec<PathBuf>,
    pub(super) when: Option<When>,
    name: Option<String>,
    refused: Option<Vec<String>>,
    notes: Vec<String>,
    pub(super) check: Option<StepCheck>,
    pub(super) sampling: bool,
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

    pub(super) fn file(
        &mut self,
        path: &Path,
        from: Option<&MarkedYamlOwned>,
        steps: &mut Vec<Step>,
    ) -> Result<(), String> {
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
        let mut docs = MarkedYamlOwned::load_from_str(text).map_err(|e| format!("not YAML: {e}"))?;
        docs.iter_mut().for_each(super::template::mark);
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
            super::template::compiles(header)?;
            let YamlDataOwned::Mapping(map) = &header.data else {
                return Err(at(header, "the header is a mapping with appId"));
            };
            for (key, value) in map {
                match scalar(key).as_deref() {
                    Some("appId") => {
                        string(value, "appId")?;
                        app_id = Some(value);
                    }
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
        let app_read = std::cell::Cell::new(false);
        let app = App {
            node: app_id,
            read: &app_read,
        };
        let mut body = Vec::new();
        if let Some(start) = on_start {
            self.commands(start, app, &mut body)?;
        }
        self.commands(commands, app, &mut body)?;
        if let Some(complete) = on_complete {
            let mut after = Vec::new();
            self.commands(complete, app, &mut after)?;
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
        app: App,
        steps: &mut Vec<Step>,
    ) -> Result<(), String> {
        written(commands, "commands", "the commands a flow runs, read with it")?;
        let list = match &commands.data {
            YamlDataOwned::Sequence(list) => list.as_slice(),
            // Only comments after `---` (steps Maestro cannot say): nothing to run.
            data if data.is_null() => &[],
            _ => return Err(at(commands, "the commands are a list (- launchApp, - tapOn: …)")),
        };
        for item in list {
            let before = steps.len();
            if let Err(e) = super::template::compiles(item)
                .and_then(|()| self.command(item, app, steps))
                .and_then(|()| self.checked(item, &steps[before..]))
            {
                steps.truncate(before);
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

    pub(super) fn command(&mut self, item: &MarkedYamlOwned, app: App, steps: &mut Vec<Step>) -> Result<(), String> {
        let whole = item;
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
            Some(o) => {
                written(o, "optional", "read with the flow (whether a failure fails it)")?;
                match scalar(o).as_deref() {
                    Some("true") => true,
                    Some("false") => false,
                    _ => return Err(at(o, "optional is true or false")),
                }
            }
            None => false,
        };
        // A command with a `${…}` (in its fields, or the header's appId it reads) is read now with
        // each one standing for a value of its type, and again, rendered, as its step runs.
        let templated = arg.is_some_and(super::template::holds_one) || app.node.is_some_and(super::template::marked);
        // (An assertion joins the step before it, its selector read as it is looked for.)
        if templated && !self.sampling && !super::rendered::read_with_the_flow(&name) && name != "assertVisible" {
            return self.later(&name, arg, whole, app, optional, steps);
        }
        let package = |arg: Option<&MarkedYamlOwned>| app.package(arg, item, &name);
        let action = match name.as_str() {
            "launchApp" => {
                let Some(map) = arg.filter(|a| a.data.as_mapping().is_some()) else {
                    let mut step = Step::new(Action::Launch { package: package(arg)? });
                    step.optional = optional;
                    step.when = self.when.clone();
                    steps.push(step);
                    return Ok(());
                };
                only_keys(map, fields::of(&name))?;
                let package = package(field(map, "appId"))?;
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
                        only_keys(map, fields::of(&name))?;
                        field(map, "timeout")
                            .map(|t| number(t, "timeout", MAX_SETTLE_MS))
                            .transpose()?
                    }
                    None => None,
                };
                Action::Settle { timeout_ms }
            }
            "stopApp" => Action::Stop { package: package(arg)? },
            "clearState" => Action::ClearData { package: package(arg)? },
            "inputText" => {
                let node = scalar_or_field(required(arg, item, &name)?, &name)?;
                let text = string(node, &name)?;
                Action::Type {
                    target: None,
                    // A step's text keeps a `${` as `\${` (its `${NAME}` is a secret's).
                    text: match super::template::marked(node) {
                        true => text,
                        false => super::template::escape(&text),
                    },
                    clear: false,
                    submit: false,
                }
            }
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
                let key = scalar_or_field(required(arg, item, &name)?, &name)?;
                let ours = typed(key, "ENTER".to_string(), || Ok(our_key(&string(key, &name)?)))?;
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
                only_keys(map, fields::of(&name))?;
                let timeout_ms = field(map, "timeout")
                    .map(|t| number(t, "timeout", u64::MAX))
                    .transpose()?;
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
                only_keys(map, fields::of(&name))?;
                let degrees = |key: &str, limit: f64| -> Result<f64, String> {
                    let node = field(map, key).ok_or_else(|| at(map, "setLocation takes latitude and longitude"))?;
                    typed(node, 0.0, || {
                        scalar(node)
                            .and_then(|s| s.trim().parse::<f64>().ok())
                            .filter(|d| (-limit..=limit).contains(d))
                            .ok_or_else(|| at(node, &format!("{key} is a number of degrees from -{limit} to {limit}")))
                    })
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
                let node = required(arg, item, &name)?;
                // What a step expects is looked for as it ends: a template, rendered then.
                let shown = match super::template::holds_one(node) {
                    true => Selector::Rendered(Box::new(self.rendered_selector(node, || command_selector(node))?)),
                    false => command_selector(node)?,
                };
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
                only_keys(map, fields::of(&name))?;
                // Decided as the flow runs: a condition, or times from a ${…}.
                let template = field(map, "times").is_some_and(super::template::marked);
                if field(map, "while").is_some() || template {
                    return self.repeat_block(map, app, steps);
                }
                let times = field(map, "times").ok_or_else(|| at(map, "repeat takes times and commands"))?;
                let times = scalar(times)
                    .and_then(|t| t.parse::<usize>().ok())
                    .ok_or_else(|| at(times, "times is a whole number"))?;
                let commands = field(map, "commands").ok_or_else(|| at(map, "repeat takes times and commands"))?;
                let mut body = Vec::new();
                self.commands(commands, app, &mut body)?;
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
                    written(arg, "runFlow", "a subflow read with the flow")?;
                    return self.run_file(&super::template::literal(&file), item, steps);
                }
                only_keys(arg, fields::of(&name))?;
                let mut inner = Vec::new();
                match field(arg, "when") {
                    Some(when) => self.conditional(when, arg, item, app, &mut inner)?,
                    None => self.block(arg, item, app, &mut inner)?,
                };
                // Its env holds for its steps only (over the subflow's own header env).
                let inner = self.with_env(arg, true, inner)?;
                steps.extend(self.optionally(optional, inner));
                return Ok(());
            }
            "runScript" | "evalScript" | "assertTrue" => {
                return self.script(&name, required(arg, item, &name)?, optional, steps);
            }
            "retry" => return self.retry_block(required(arg, item, &name)?, item, app, optional, steps),
            // Maestro's device commands (maestro/commands.rs).
            _ if let Some(action) =
                super::commands::read(&name, arg, item, app, self.files.last().and_then(|f| f.parent()))? =>
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
}
