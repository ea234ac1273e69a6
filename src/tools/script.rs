//! `script`: code mode. One JavaScript run composes many tool calls inside the sandbox
//! (`crate::script::sandbox`); the tools answer it with their full data, and only what the
//! script prints comes back, through the same budget as every tool.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, JsonObject, ProgressToken};
use rmcp::service::RequestContext;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::command::{self, Command, Deadline, Range};
use super::registry::{self, TOOLS};
use super::{State, code_of, error, handles};
use crate::context::Kind;
use crate::context::budget::{Budgeted, respond, unbudgeted};
use crate::script::api::Namespace;
use crate::script::runs::{Run, RunInfo};
use crate::script::sandbox::{self, Host, HostFuture, Limits, Thrown};
use crate::script::skills::SkillInfo;

/// Default and largest wall-clock time of one run.
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Largest script, in chars.
const MAX_CODE_CHARS: usize = 100_000;
/// Runs at once per server: each may hold its memory limit (64 MiB).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScriptArgs {
    pub operation: ScriptOperation,
    /// run: JS, top-level await; ns.op(args) gives a tool's full data.
    #[serde(default)]
    pub code: Option<String>,
    /// run: a saved skill, not code.
    #[serde(default)]
    pub skill: Option<String>,
    /// run: `args`.
    #[serde(default)]
    pub args: Option<Value>,
    /// run: default 60000.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// clear: a runId.
    #[serde(default)]
    pub id: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ScriptOperation {
    Run,
    List,
    Clear,
}

#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScriptOutput {
    pub operation: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    /// The run's workspace; its tool answers are RUNID/results/NNN-ns-op.json for cache get.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// What the script printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// The uncaught error (message, line, column) or the limit the run hit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_count: Option<usize>,
    /// One line per tool call: NNN (its saved result) tool operation ms ok|error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls: Option<Vec<String>>,
    /// list: the folder holding runs/ and skills/.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<Vec<RunInfo>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<SkillInfo>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cleared: Option<String>,
}

impl Budgeted for ScriptOutput {
    const KEY_FIELDS: &'static [&'static str] = &["operation", "ok", "runId", "error", "callCount"];
    const BULK_FIELDS: &'static [&'static str] = &["output", "calls", "runs"];
    const KIND: Kind = Kind::Output;
}

/// The tools, as the sandbox calls them: full data, no budget; each answer also saved in the
/// run's folder. `workspace.*` and `skills.*` are the run's files and the shared skills.
struct ToolHost {
    state: Arc<State>,
    /// The run's request, without its progress token: the tools a script calls report nothing
    /// of their own (their progress would not count the run's).
    ctx: RequestContext<RoleServer>,
    run: Arc<Run>,
    /// The client's progress token: each call that ends is one step of progress, its line the
    /// message.
    progress: Option<ProgressToken>,
    ended: Arc<AtomicUsize>,
}

/// Every tool a script can call (`registry::TOOLS` with a namespace), with the same schemas
/// `tools/list` shows for it.
pub fn namespaces() -> Vec<Namespace> {
    TOOLS
        .iter()
        .filter_map(|tool| {
            Some(Namespace {
                name: tool.namespace?,
                tool: tool.name,
                input: (*(tool.input)()).clone(),
                output: (*(tool.output)()).clone(),
            })
        })
        .collect()
}

impl Host for ToolHost {
    fn namespaces(&self) -> Vec<Namespace> {
        namespaces()
    }

    fn call(&self, index: usize, tool: String, arguments: Value) -> HostFuture {
        let (state, ctx, run) = (self.state.clone(), self.ctx.clone(), self.run.clone());
        let (progress, ended, peer) = (self.progress.clone(), self.ended.clone(), self.ctx.peer.clone());
        Box::pin(unbudgeted(async move {
            let Value::Object(args) = arguments else {
                return Err("a tool's arguments are an object".into());
            };
            let operation = command::operation_name(&args);
            // Built and run as the server runs a call (a script's calls are never the panel's).
            let result = match registry::find(&tool).filter(|t| t.namespace.is_some()) {
                None => return Err(format!("no tool named {tool}").into()),
                Some(found) => match (found.build)(args) {
                    Ok(command) => command.run(found, state.clone(), ctx, false).await,
                    Err(e) => error(e),
                },
            };
            let answer = full_data(result);
            let saved = match &answer {
                Ok(value) => value.clone(),
                Err(thrown) => thrown.answer(),
            };
            run.save_result(index, &tool, &operation, &saved);
            if let Some(token) = progress {
                let ended = ended.fetch_add(1, Ordering::Relaxed) + 1;
                let line = format!(
                    "{:03} {tool} {operation} {}",
                    index + 1,
                    if answer.is_ok() { "ok" } else { "error" }
                );
                let note = crate::context::budget::progress(token, ended as f64, None, &line, state.budget);
                let _ = peer.notify_progress(note).await;
            }
            answer
        }))
    }

    /// Only a replay given `--allow-network` lets a script's `http` out (a flow's script reaching
    /// the network is the user's choice); an assistant's `script run` never does.
    fn http(&self, request: Value, timeout: std::time::Duration) -> HostFuture {
        let allowed = self.state.runs.limits().network;
        Box::pin(async move {
            if !allowed {
                return Err(
                    "http: a script reaches the network only in a replay run with --allow-network (droidmcp replay --allow-network FLOW)"
                        .into(),
                );
            }
            crate::script::sandbox::fetch(request, timeout)
                .await
                .map_err(Thrown::from)
        })
    }

    fn local(&self, operation: String, arguments: Value) -> HostFuture {
        let (state, run) = (self.state.clone(), self.run.clone());
        Box::pin(async move {
            let text = |key: &str| {
                arguments
                    .get(key)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            let listing = |files: Vec<(String, u64)>| {
                Value::Array(
                    files
                        .into_iter()
                        .map(|(path, bytes)| serde_json::json!({"path": path, "bytes": bytes}))
                        .collect(),
                )
            };
            let answer: Result<Value, String> = match operation.as_str() {
                "workspace.read" => run.read(&text("path")).map(Value::String),
                "workspace.write" => run
                    .write(&text("path"), &text("text"))
                    .map(|n| serde_json::json!({"bytes": n})),
                "workspace.list" => run.list(arguments.get("dir").and_then(Value::as_str)).map(listing),
                "skills.save" => handles::save_skill(&state, &text("name"), &text("code"), &text("description"))
                    .await
                    .map(|s| serde_json::to_value(s).unwrap_or_default()),
                "skills.list" => handles::skills(&state)
                    .await
                    .map(|s| serde_json::to_value(s).unwrap_or_default()),
                "skills.load" => handles::skill(&state, &text("name")).await.map(Value::String),
                "skills.remove" => handles::remove_skill(&state, &text("name"))
                    .await
                    .map(|()| serde_json::json!({"removed": text("name")})),
                "replay.read" => {
                    crate::flow::maestro::read_rendered(&arguments, super::flow::replayable).map(Value::String)
                }
                other => Err(format!("{other} is not available")),
            };
            answer.map_err(Thrown::from)
        })
    }
}

/// A tool's answer as the script sees it: its structured data, or its error (message and code).
fn full_data(result: CallToolResult) -> Result<Value, Thrown> {
    let text = || {
        result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    if result.is_error == Some(true) {
        return Err(Thrown {
            message: text(),
            code: code_of(&result),
        });
    }
    match &result.structured_content {
        Some(value) => Ok(value.clone()),
        None => Ok(serde_json::from_str(&text()).unwrap_or(Value::String(text()))),
    }
}

/// One valid script call, built from `ScriptArgs` by `ScriptCommand::parse`.
#[derive(Debug)]
pub enum ScriptCommand {
    Run(RunScript),
    List,
    /// A run's id.
    Clear(String),
}

/// What a run runs, with what, for how long.
#[derive(Debug)]
pub struct RunScript {
    pub source: Source,
    /// An object: the script reads it as `args`.
    pub args: Value,
    pub timeout: Duration,
}

#[derive(Debug)]
pub enum Source {
    Code(String),
    /// A saved skill's name.
    Skill(String),
}

const TIMEOUT: Range = Range::new("timeoutMs", 1, MAX_TIMEOUT_MS);

impl Command for ScriptCommand {
    fn parse(args: JsonObject) -> Result<ScriptCommand, String> {
        let args = command::parse("script", args, |a: &ScriptArgs| match a.operation {
            ScriptOperation::Run => &["code", "skill", "args", "timeoutMs"],
            ScriptOperation::List => &[],
            ScriptOperation::Clear => &["id"],
        })?;
        Ok(match args.operation {
            ScriptOperation::Run => {
                let timeout = TIMEOUT.check_ms(args.timeout_ms, DEFAULT_TIMEOUT_MS)?;
                let source = match (args.code, args.skill) {
                    (Some(code), None) => Source::Code(code),
                    (None, Some(skill)) => Source::Skill(skill),
                    _ => {
                        return Err(
                            "script run takes `code` (JavaScript) or `skill` (a saved skill's name), one of them"
                                .into(),
                        );
                    }
                };
                let script_args = args.args.unwrap_or_else(|| Value::Object(Default::default()));
                if !script_args.is_object() {
                    return Err(
                        "`args` is an object, e.g. {\"package\": \"com.android.settings\"}; the script reads it as `args`"
                            .into(),
                    );
                }
                ScriptCommand::Run(RunScript {
                    source,
                    args: script_args,
                    timeout,
                })
            }
            ScriptOperation::List => ScriptCommand::List,
            ScriptOperation::Clear => match args.id {
                Some(id) => ScriptCommand::Clear(id),
                None => return Err("script clear needs `id`: a runId (script list shows them)".into()),
            },
        })
    }

    /// A run bounds itself by its timeoutMs; the guard stops it shortly after.
    fn deadline(&self) -> Deadline {
        match self {
            ScriptCommand::Run(run) => Deadline::within(run.timeout),
            _ => Deadline::within(Duration::from_millis(DEFAULT_TIMEOUT_MS)),
        }
    }

    fn runs_long(&self) -> bool {
        matches!(self, ScriptCommand::Run(_))
    }

    /// A run is not refused as a whole: each tool call it makes is checked on its own.
    fn acts(&self) -> bool {
        false
    }

    fn device(&self) -> Option<&str> {
        None
    }

    async fn apply(self, state: Arc<State>, ctx: RequestContext<RoleServer>) -> CallToolResult {
        apply(state, self, ctx).await
    }
}

pub async fn apply(state: Arc<State>, command: ScriptCommand, ctx: RequestContext<RoleServer>) -> CallToolResult {
    let output = match command {
        ScriptCommand::Run(run) => return run_script(state, run, ctx).await,
        ScriptCommand::List => ScriptOutput {
            operation: "list".into(),
            folder: state.runs.folder().ok().map(|f| f.display().to_string()),
            runs: Some(handles::runs(&state).await),
            skills: Some(match handles::skills(&state).await {
                Ok(skills) => skills,
                Err(e) => return error(format!("could not list the skills: {e}")),
            }),
            ..Default::default()
        },
        ScriptCommand::Clear(id) => {
            if let Err(e) = handles::clear_run(&state, &id).await {
                return error(e);
            }
            ScriptOutput {
                operation: "clear".into(),
                cleared: Some(id),
                ..Default::default()
            }
        }
    };
    respond(&output, state.budget, &state.cache, "script listing")
}

async fn run_script(state: Arc<State>, what: RunScript, ctx: RequestContext<RoleServer>) -> CallToolResult {
    if state.handles.is_some() {
        // Listing drops this instance's copies of skills another instance removed: the run's
        // `workspace.read("skills/…")` reads this folder.
        let _ = handles::skills(&state).await;
    }
    let code = match what.source {
        Source::Code(code) => code,
        Source::Skill(skill) => match handles::skill(&state, &skill).await {
            Ok(code) => code,
            Err(e) => return error(e),
        },
    };
    let size = code.chars().count();
    if code.trim().is_empty() || size > MAX_CODE_CHARS {
        return error(format!(
            "`code` must be a script of 1 to {MAX_CODE_CHARS} chars; got {size}"
        ));
    }
    let script_args = what.args;
    // Held by the run's thread until the script has really stopped.
    let slot = match state.runs.slot() {
        Ok(slot) => slot,
        Err(e) => return error(e),
    };
    let run = match state.runs.start() {
        Ok(run) => Arc::new(run),
        Err(e) => return error(e),
    };
    handles::run_started(&state, &run.id).await;
    let limits = Limits {
        timeout: what.timeout,
        max_calls: state.runs.limits().max_calls,
        ..Limits::default()
    };
    let progress = ctx.meta.get_progress_token();
    let mut ctx = ctx;
    ctx.meta.0.0.remove("progressToken");
    let host = Arc::new(ToolHost {
        state: state.clone(),
        ctx,
        run: run.clone(),
        progress,
        ended: Arc::new(AtomicUsize::new(0)),
    });
    let outcome = sandbox::run(&code, &script_args, &limits, host, slot).await;
    handles::run_ended(&state, &run).await;
    let calls = outcome
        .calls
        .iter()
        .map(|c| {
            let unsaved = run
                .unsaved(c.index)
                .map(|why| format!(" (answer not saved: {why})"))
                .unwrap_or_default();
            format!(
                "{:03} {} {} {} ms {}{unsaved}",
                c.index + 1,
                c.tool,
                c.operation,
                c.ms,
                if c.ok { "ok" } else { "error" }
            )
        })
        .collect();
    let unsaved = outcome.calls.iter().filter(|c| run.unsaved(c.index).is_some()).count();
    let note = (unsaved > 0).then(|| {
        format!(
            "{unsaved} tool answers were not saved in the run's folder (their call lines say why); the quota is {} MiB a run",
            state.runs.limits().quota_bytes >> 20
        )
    });
    let output = ScriptOutput {
        operation: "run".into(),
        ok: Some(outcome.error.is_none()),
        run_id: Some(run.id.clone()),
        output: Some(outcome.output),
        error: outcome.error,
        note,
        call_count: Some(outcome.calls.len()),
        calls: Some(calls),
        ..Default::default()
    };
    let failed = output.ok == Some(false);
    let mut result = respond(&output, state.budget, &state.cache, "script run");
    if failed {
        result.is_error = Some(true);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::namespaces;
    use crate::script::api::{declarations, function_name};

    #[test]
    fn declarations_type_every_operation_and_argument() {
        let dts = declarations(&namespaces());
        assert!(dts.contains("declare const ui: {\n"));
        assert!(dts.contains("  longPress(args?: UiArgs): Promise<UiAnswer>;\n"));
        assert!(dts.contains("  clearData(args?: AppArgs): Promise<AppAnswer>;\n"));
        assert!(dts.contains("interface ShellArgs {"));
        assert!(dts.contains("  command?: string;\n"), "{dts}");
        assert!(
            dts.contains("  operation: string;\n"),
            "a field every answer has is not optional"
        );
        assert!(dts.contains("  exitCode: number | null;\n"), "{dts}");
        assert_eq!(function_name("clear-data"), "clearData");
        println!("droidmcp.d.ts: {} chars", dts.chars().count());
    }
}
