//! A command with a `${…}` in it, as Maestro runs one: read with the flow, each template standing
//! for a value of its field's type (`yaml::typed`), so every written field is checked and the
//! step named; then, as its step runs, its templates rendered by the script (`runtime.js`'s
//! `rendered`, over `interp`) and the command read again by this same reader (`read_rendered`,
//! through the script's host), whose refusal fails the step. `--check` and the run read through
//! one reader and one check of each step (`StepCheck`), so what one refuses the other does.

use std::cell::Cell;

use saphyr::{MarkedYamlOwned, ScalarOwned, YamlDataOwned};
use serde_json::{Value, json};

use super::read::Reader;
use super::template::{decode, encode, holds_one, marked};
use super::yaml::{at, string};
use crate::{Action, Rendered, Selector, Step};

/// The run's own check of a step read from a flow: the tools' parse of each call the step makes
/// (`tools::flow::replayable`), given by the caller (a room above this one).
pub type StepCheck = fn(&Step) -> Result<(), String>;

/// Whether `command`'s fields are read with the flow (files read, blocks spelled out) or are the
/// script's own JavaScript (`command::Spec::with_the_flow`): never read again as they run; a
/// template in them is the script's (`runtime.js`) or refused where it stands (`yaml::written`).
pub(super) fn read_with_the_flow(command: &str) -> bool {
    super::command::find(command).is_some_and(|spec| spec.with_the_flow)
}

/// The flow's appId (the header's node), for a command that names no app; `read` says whether the
/// command read it (a template there makes the command one its step reads again).
#[derive(Clone, Copy)]
pub(super) struct App<'a> {
    pub(super) node: Option<&'a MarkedYamlOwned>,
    pub(super) read: &'a Cell<bool>,
}

impl App<'_> {
    /// The app `given` names, else the flow's.
    pub(super) fn package(
        self,
        given: Option<&MarkedYamlOwned>,
        item: &MarkedYamlOwned,
        command: &str,
    ) -> Result<String, String> {
        match given.filter(|a| !a.data.is_null()) {
            Some(given) => string(given, command),
            None => {
                let node = self
                    .node
                    .ok_or_else(|| at(item, "needs an app: give appId in the header"))?;
                self.read.set(true);
                string(node, "appId")
            }
        }
    }
}

impl Rendered {
    /// The command's value as written, when it is one text alone (`inputText: ${PASSWORD}`).
    pub fn value(&self) -> Option<&str> {
        self.arg.get("t").or_else(|| self.arg.get("v")).and_then(Value::as_str)
    }
}

impl Reader {
    /// A command that holds a template (or reads the header's templated appId): read now with
    /// samples (refusing what its written fields say), kept as the steps whose script reads it
    /// again, rendered, as they run.
    pub(super) fn later(
        &mut self,
        name: &str,
        arg: Option<&MarkedYamlOwned>,
        item: &MarkedYamlOwned,
        app: App,
        optional: bool,
        steps: &mut Vec<Step>,
    ) -> Result<(), String> {
        let templated = arg.is_some_and(holds_one);
        let read = Cell::new(false);
        let sampled = App {
            node: app.node,
            read: &read,
        };
        let before = steps.len();
        let mut now = Vec::new();
        super::template::took_sample();
        self.sampling = true;
        // A command with no template of its own reads into the flow's steps as any other does
        // (an assertion joins the step before it).
        let reading = self.command(item, sampled, if templated { &mut now } else { steps });
        self.sampling = false;
        let typed = super::template::took_sample();
        reading?;
        if read.get() {
            app.read.set(true);
        }
        let app_template = read.get() && app.node.is_some_and(marked);
        if !templated && !app_template {
            return Ok(());
        }
        if !templated {
            now = steps.split_off(before);
        }
        // A step each, as the command would make written so (read again, a template that gives
        // another number of steps runs them all in the first); one step, named as written, when a
        // template stands for a number, a point or a choice (it may decide the steps).
        if typed || now.is_empty() {
            now = vec![Step::new(Action::Check)];
        }
        let parts = now.len();
        for (part, mut sampled) in now.into_iter().enumerate() {
            sampled.when = None;
            let said = match typed {
                true => written_as(name, arg),
                false => sampled.describe(),
            };
            let rendered = Rendered {
                command: Some(name.to_string()),
                arg: arg.map_or(Value::Null, encode),
                app: match read.get() {
                    true => app.node.map(encode),
                    false => None,
                },
                said,
                file: self.file_name(),
                line: line(item),
                part: (part, parts),
            };
            let mut step = self.step(Action::Rendered(rendered), optional);
            step.expect = sampled.expect;
            steps.push(step);
        }
        Ok(())
    }

    /// A condition's selector with a template: read now with samples (`read`), again as it is
    /// looked for; named as read, or as written when a template stood for a field that is no text
    /// (its sample, an `index 0`, is no name the flow gave).
    pub(super) fn rendered_selector(
        &self,
        node: &MarkedYamlOwned,
        read: impl FnOnce() -> Result<Selector, String>,
    ) -> Result<Rendered, String> {
        let (shown, typed) = super::template::sampling(read);
        let said = match typed {
            true => as_written(&encode(node)),
            false => shown?.describe(),
        };
        Ok(Rendered {
            command: None,
            arg: encode(node),
            app: None,
            said,
            file: self.file_name(),
            line: node.span.start.line(),
            part: (0, 1),
        })
    }

    fn file_name(&self) -> String {
        self.files.last().map(|f| f.display().to_string()).unwrap_or_default()
    }

    /// `check` (the run's) of each step a command made (a block's were checked as its own
    /// commands were read), refused at the command's line.
    pub(super) fn checked(&self, item: &MarkedYamlOwned, steps: &[Step]) -> Result<(), String> {
        let Some(check) = self.check else {
            return Ok(());
        };
        let name = match &item.data {
            YamlDataOwned::Mapping(map) => map.keys().next().unwrap_or(item),
            _ => item,
        };
        for step in steps.iter().filter(|s| !matches!(s.action, Action::Block { .. })) {
            check(step).map_err(|e| at(name, &e))?;
        }
        Ok(())
    }
}

/// The replay script's host call as a step runs (`replay.read`): a command (or a condition's
/// selector) whose templates the script rendered, read by the reader that read the flow and
/// checked by `check`, as the script lines of each step it reads as (JSON; a selector: its value,
/// in JavaScript). A refusal
/// names the file, the line, and what each template gave.
pub fn read_rendered(request: &Value, check: StepCheck) -> Result<String, String> {
    let file = request.get("file").and_then(Value::as_str).unwrap_or_default();
    let named = |e: String| match file.is_empty() {
        true => e,
        false => format!("{file} {e}"),
    };
    let arg = request.get("arg").filter(|a| !a.is_null()).map(decode).transpose()?;
    let Some(name) = request.get("command").and_then(Value::as_str) else {
        let node = arg.ok_or("a selector to read")?;
        let selector = super::selectors::command_selector(&node).map_err(named)?;
        return Ok(crate::js::selector_value(&selector));
    };
    if read_with_the_flow(name) || super::compat::row(name).is_none() {
        return Err(format!(
            "{} is read with the flow, not as a step runs",
            android::text::echoed(name)
        ));
    }
    let app_node = request.get("app").filter(|a| !a.is_null()).map(decode).transpose()?;
    let read = Cell::new(false);
    let app = App {
        node: app_node.as_ref(),
        read: &read,
    };
    let line = request.get("line").and_then(Value::as_u64).unwrap_or_default() as usize;
    let item = item(name, arg, line);
    let mut reader = Reader::default();
    reader.check = Some(check);
    let mut steps = Vec::new();
    reader
        .command(&item, app, &mut steps)
        .and_then(|()| reader.checked(&item, &steps))
        .map_err(named)?;
    let each: Vec<String> = steps
        .iter()
        .map(|s| crate::js::lines(std::slice::from_ref(s)).join("\n"))
        .collect();
    Ok(serde_json::to_string(&each).unwrap_or_default())
}

/// A command as written, for its step's name: `tapOn point: ${output.tab}`.
fn written_as(name: &str, arg: Option<&MarkedYamlOwned>) -> String {
    match arg {
        Some(arg) => format!("{name} {}", as_written(&encode(arg))),
        None => name.to_string(),
    }
}

/// A field in `encode`'s form as written, its templates as they are: `text: OK, index: ${I}`.
fn as_written(encoded: &Value) -> String {
    fn text(value: &Value) -> String {
        match value {
            Value::String(s) => s.clone(),
            Value::Object(fields) => {
                let each: Vec<String> = fields.iter().map(|(k, v)| format!("{k}: {}", text(v))).collect();
                format!("{{{}}}", each.join(", "))
            }
            Value::Array(items) => format!("[{}]", items.iter().map(text).collect::<Vec<_>>().join(", ")),
            other => other.to_string(),
        }
    }
    match super::template::plain(encoded) {
        Value::Object(fields) => {
            let each: Vec<String> = fields.iter().map(|(k, v)| format!("{k}: {}", text(v))).collect();
            each.join(", ")
        }
        value => text(&value),
    }
}

/// The line of a command item (its name's: a mapping's own span has none).
fn line(item: &MarkedYamlOwned) -> usize {
    match &item.data {
        YamlDataOwned::Mapping(map) => map.keys().next().map_or(0, |k| k.span.start.line()),
        _ => item.span.start.line(),
    }
}

/// A flow's command item, `- NAME: ARG` (or `- NAME`), on `line`.
fn item(name: &str, arg: Option<MarkedYamlOwned>, line: usize) -> MarkedYamlOwned {
    let on_line = |data| {
        let mut node = MarkedYamlOwned::from(data);
        node.span.start = saphyr::Marker::new(0, line, 0);
        node
    };
    let key = on_line(YamlDataOwned::Value(ScalarOwned::String(name.to_string())));
    match arg {
        None => key,
        Some(arg) => {
            let mut map = saphyr::AnnotatedMapping::default();
            map.insert(key, arg);
            on_line(YamlDataOwned::Mapping(map))
        }
    }
}

/// What the script passes `replay.read` for `rendered` (`runtime.js` renders `arg` and `app`).
pub fn request(rendered: &Rendered) -> Value {
    json!({
        "command": rendered.command,
        "arg": rendered.arg,
        "app": rendered.app,
        "file": rendered.file,
        "line": rendered.line,
        "part": rendered.part.0,
        "parts": rendered.part.1,
    })
}
