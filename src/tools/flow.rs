//! `flow`: what was done on a device, as a test to replay. Every acting call that worked is
//! recorded (`crate::flow::record`); `export` writes the recording as a droidmcp script or a
//! Maestro flow and answers with its path, a preview and a cacheId for the whole file; `reset`
//! starts a new recording.

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::service::RequestContext;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

use super::command::{self, Command, Deadline};
use super::{State, error, handles};
use crate::confine::Folder;
use crate::context::budget::{Budgeted, respond};
use crate::context::{Data, Kind};
use crate::flow::{self, Action};

/// Flow files kept in the flows folder at most: a client cannot fill the host's disk.
const MAX_FILES: usize = 200;
/// Step lines in the answer's preview: at most this many, and at most this many chars together
/// (the export answers within 600 chars however long the flow or its labels).
const PREVIEW_STEPS: usize = 12;
const PREVIEW_CHARS: usize = 200;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FlowArgs {
    pub operation: FlowOperation,
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub format: Option<Format>,
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FlowOperation {
    Export,
    Reset,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    #[default]
    Js,
    Maestro,
}

#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FlowOutput {
    pub operation: String,
    pub device: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<usize>,
    /// Steps that find their element by coordinates only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fragile: Option<usize>,
    /// Older steps the recording no longer holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped: Option<usize>,
    /// The whole file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Budgeted for FlowOutput {
    const KEY_FIELDS: &'static [&'static str] = &[
        "operation",
        "device",
        "path",
        "steps",
        "fragile",
        "dropped",
        "cacheId",
        "hint",
    ];
    const BULK_FIELDS: &'static [&'static str] = &["preview"];
    const KIND: Kind = Kind::Output;
}

/// One valid flow call, built from `FlowArgs` by `FlowCommand::parse`.
#[derive(Debug)]
pub struct FlowCommand {
    pub device: Option<String>,
    /// `None`: reset the recording.
    pub export: Option<Export>,
}

/// What an export writes: the format, and a checked file name (without its extension).
#[derive(Debug)]
pub struct Export {
    pub format: Format,
    pub name: String,
}

impl Command for FlowCommand {
    fn parse(args: JsonObject) -> Result<FlowCommand, String> {
        let args = command::parse("flow", args, |a: &FlowArgs| match a.operation {
            FlowOperation::Export => &["format", "name"],
            FlowOperation::Reset => &[],
        })?;
        let export = match args.operation {
            FlowOperation::Reset => None,
            FlowOperation::Export => Some(Export {
                format: args.format.unwrap_or_default(),
                name: flow::valid_name(args.name.as_deref().unwrap_or("flow"))?.to_string(),
            }),
        };
        Ok(FlowCommand {
            device: args.device,
            export,
        })
    }

    fn deadline(&self) -> Deadline {
        Deadline::SERVER
    }

    /// An export reads the recording and a reset empties it: the device is not touched.
    fn acts(&self) -> bool {
        false
    }

    fn device(&self) -> Option<&str> {
        self.device.as_deref()
    }

    async fn apply(self, state: Arc<State>, _ctx: RequestContext<RoleServer>) -> CallToolResult {
        apply(&state, self).await
    }
}

pub async fn apply(state: &State, command: FlowCommand) -> CallToolResult {
    let serial = match state.device(command.device.as_deref()).await {
        Ok(s) => s,
        Err(e) => return error(e.to_string()),
    };
    // With --state the recording is the one instances share (`handles::recording_in`).
    let shared = handles::recording_in(state, &serial).await;
    let output = match &command.export {
        None => {
            let cleared = state.flows.reset(&serial);
            Ok(FlowOutput {
                operation: "reset".into(),
                device: serial.clone(),
                steps: Some(0),
                hint: Some(format!("a new recording starts; the old one had {cleared} steps")),
                ..Default::default()
            })
        }
        Some(what) => export(state, &serial, what).await,
    };
    // An export may read the screen: the newest step's outcome.
    handles::recording_out(state, &serial, shared).await;
    let output = match output {
        Ok(output) => output,
        Err(e) => return error(e),
    };
    respond(&output, state.budget, &state.cache, "flow")
}

async fn export(state: &State, serial: &str, what: &Export) -> Result<FlowOutput, String> {
    let name = &what.name;
    // The last step's outcome is the screen now, if no reading came after it yet.
    // (A reading is handed to the recording as it is taken.)
    if !state.flows.screen_is_current(serial) {
        let _ = super::ui::read(state, serial).await;
    }
    let recording = state.flows.get(serial);
    if recording.steps.is_empty() {
        return Err(format!(
            "nothing is recorded on {serial} yet: acting calls that work (adb-app launch, ui tap, type, key, swipe, scroll, wait, adb-device emulator) are recorded as they happen"
        ));
    }
    let steps: Vec<flow::Step> = recording.steps.iter().cloned().collect();
    let format = what.format;
    let ext = match format {
        Format::Js => "js",
        Format::Maestro => "yaml",
    };
    let folder = flows_folder(state)?;
    let file = format!("{name}.{ext}");
    let fragile = recording.fragile();
    let mut header = vec![
        format!("droidmcp flow {name:?}: {} steps recorded on {serial}", steps.len()),
        format!("Replay: droidmcp replay {name}.{ext} --sim (or --device SERIAL); --junit report.xml for CI"),
    ];
    if fragile > 0 {
        header.push(format!(
            "{fragile} steps find their element by coordinates only (fragile): their lines say so"
        ));
    }
    let secrets: Vec<&str> = steps
        .iter()
        .filter_map(|s| match &s.action {
            Action::Type { text, .. } => flow::placeholder_name(text),
            _ => None,
        })
        .collect();
    if !secrets.is_empty() {
        header.push(format!(
            "Typed into password fields, left out: replay with --env {}",
            secrets
                .iter()
                .map(|n| format!("{n}=VALUE"))
                .collect::<Vec<_>>()
                .join(" --env ")
        ));
    }
    let unsaid = steps
        .iter()
        .filter(|s| matches!(&s.action, Action::Emulator { command } if flow::maestro::location(command).is_none()))
        .count();
    if matches!(format, Format::Maestro) && unsaid > 0 {
        header.push(format!(
            "{unsaid} emulator console steps have no Maestro command and are comments here: export format js to replay them"
        ));
    }
    if recording.dropped > 0 {
        header.push(format!(
            "{} older steps were dropped: the recording keeps the last {}",
            recording.dropped,
            flow::record::MAX_STEPS
        ));
    }
    let text = match format {
        Format::Js => flow::js::render(&steps, &header),
        Format::Maestro => flow::maestro::render(&steps, &header, &app_id(&steps)),
    };
    let path = write(&folder, &file, &text)?;
    let entry = state
        .cache
        .put(Kind::Output, format!("flow {name}.{ext} of {serial}"), Data::Text(text));
    let mut preview: Vec<String> = Vec::new();
    let mut chars = 0;
    for (i, step) in steps.iter().enumerate().take(PREVIEW_STEPS) {
        let line = crate::android::text::echoed(&format!("{} {}", i + 1, step.describe()));
        chars += line.chars().count();
        if chars > PREVIEW_CHARS && !preview.is_empty() {
            break;
        }
        preview.push(line);
    }
    if steps.len() > preview.len() {
        preview.push(format!("… {} more", steps.len() - preview.len()));
    }
    Ok(FlowOutput {
        operation: "export".into(),
        device: serial.to_string(),
        path: Some(path.display().to_string()),
        steps: Some(steps.len()),
        fragile: Some(fragile),
        dropped: (recording.dropped > 0).then_some(recording.dropped),
        cache_id: Some(entry.id.clone()),
        preview: Some(preview),
        // The path is in `path` already: the hint does not spend it twice.
        hint: Some("`droidmcp replay PATH` replays it; cache get {id: cacheId} shows the file".into()),
    })
}

/// The app a Maestro flow is about: the first one launched, else the one the first step was on.
fn app_id(steps: &[flow::Step]) -> String {
    steps
        .iter()
        .find_map(|s| match &s.action {
            Action::Launch { package } => Some(package.clone()),
            _ => None,
        })
        .or_else(|| {
            steps
                .iter()
                .find_map(|s| s.on.as_deref().or(s.expect.activity.as_deref()))
                .and_then(|a| a.split('/').next().map(str::to_string))
        })
        .unwrap_or_else(|| "unknown.app".into())
}

/// The principal's own flows folder, made private (0700) with the one above it:
/// `WORKSPACE/flows/PRINCIPAL` with `--workspace`, else `droidmcp-flows-UID/PRINCIPAL` in the
/// system's temp folder (it outlives the server, so the file can be committed after it ended).
/// Two principals never share a folder, so a name (the default `flow`) never collides.
fn flows_folder(state: &State) -> Result<Folder, String> {
    let base = match state.runs.workspace() {
        Some(workspace) => Folder::chosen(workspace)?.sub("flows")?,
        None => Folder::user_temp("flows")?,
    };
    base.principal(&state.principal)
}

/// Writes `folder/file` through the one door (0600, a link there refused), within the count.
fn write(folder: &Folder, file: &str, text: &str) -> Result<std::path::PathBuf, String> {
    let files = folder.list(&[])?;
    if !files.iter().any(|(name, _)| name == file) && files.len() >= MAX_FILES {
        return Err(format!(
            "{} already holds {} flows (at most {MAX_FILES}): export under a name used before, or remove old ones",
            folder.path().display(),
            files.len()
        ));
    }
    folder.write(&[file.to_string()], text.as_bytes())
}

/// The run's check of a step a replay reads from a flow: each call it makes with the flow's own
/// values (`flow::js::calls`) built by its tool's parse, the one the call meets as it runs; so
/// `replay --check` refuses, with the flow's line, what the run's tool would refuse.
pub fn replayable(step: &flow::Step) -> Result<(), String> {
    for call in flow::js::calls(step) {
        let built = match super::registry::find(call.tool) {
            Some(tool) => (tool.build)(call.args.clone()).map(drop),
            None => Ok(()),
        };
        built.map_err(|e| format!("{} {} would refuse it: {e}", call.tool, call.method))?;
    }
    Ok(())
}
