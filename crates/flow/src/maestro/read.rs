//! A Maestro flow read into steps, with a maintained YAML parser (`saphyr`). The commands read
//! are the ones `write` writes and a few more of the same kind; any other is refused with its
//! line.

use std::path::{Path, PathBuf};

use saphyr::{MarkedYamlOwned, YamlDataOwned};

use super::command::Given;
use super::rendered::{App, StepCheck};
use super::yaml::{at, field, scalar, string, written};

use super::super::{Action, Step, When};

/// Flow files a `runFlow` may nest, and steps a flow may grow to once `repeat` and `runFlow` are
/// spelled out: a typo (`times: 1000000`) or a loop of files fails at once, with its line.
const MAX_DEPTH: usize = 8;
pub(super) const MAX_STEPS: usize = 5000;

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

/// Whether the element a command acts on says `optional: true`, which Maestro takes as the
/// command's own (`MaestroCommand.elementSelector()`, read by `Orchestra.runCommand`: a failure
/// is then a warning): extendedWaitUntil's `visible` / `notVisible`, scrollUntilVisible's
/// `element`, swipe's `from` (a tap's and an assertion's selector is its argument, read above).
fn element_optional(name: &str, arg: Option<&MarkedYamlOwned>) -> Result<bool, String> {
    let keys: &[&str] = match name {
        "extendedWaitUntil" => &["visible", "notVisible"],
        "scrollUntilVisible" => &["element"],
        "swipe" => &["from"],
        _ => return Ok(false),
    };
    for key in keys {
        if let Some(o) = arg.and_then(|a| field(a, key)).and_then(|s| field(s, "optional")) {
            written(o, "optional", "read with the flow (whether a failure fails it)")?;
            if super::yaml::boolean(o).map_err(|()| at(o, "optional is true or false"))? {
                return Ok(true);
            }
        }
    }
    Ok(false)
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
        let mut docs = super::yaml::load(text)?;
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
                    // `url` is Maestro's other name for it (`YamlConfig`'s `@JsonAlias`).
                    Some("appId" | "url") => {
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
                super::yaml::boolean(o).map_err(|()| at(o, "optional is true or false"))?
            }
            None => false,
        } || element_optional(&name, arg)?;
        // A command with a `${…}` (in its fields, or the header's appId it reads) is read now with
        // each one standing for a value of its type, and again, rendered, as its step runs.
        let templated = arg.is_some_and(super::template::holds_one) || app.node.is_some_and(super::template::marked);
        // (An assertion joins the step before it, its selector read as it is looked for.)
        if templated && !self.sampling && !super::rendered::read_with_the_flow(&name) && name != "assertVisible" {
            return self.later(&name, arg, whole, app, optional, steps);
        }
        let spec = super::command::find(&name);
        let Some(read) = spec.and_then(|spec| spec.read) else {
            return Err(at(item, &super::compat::refusal(&name)));
        };
        let given = Given {
            name: &name,
            arg,
            item,
            app,
            optional,
        };
        if let Some(action) = read(self, &given, steps)? {
            steps.push(self.step(action, optional));
        }
        Ok(())
    }
}
