//! `script`: code mode. One JavaScript run composes many tool calls inside the sandbox
//! (`crate::script::sandbox`); the tools answer it with their full data, and only what the
//! script prints comes back, through the same budget as every tool.

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::service::RequestContext;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{State, error, parse_args};
use crate::context::Kind;
use crate::context::budget::{Budgeted, respond, unbudgeted};
use crate::script::sandbox::{self, Host, HostFuture, Limits};

/// Default and largest wall-clock time of one run.
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Largest script, in chars.
const MAX_CODE_CHARS: usize = 100_000;
/// Runs at once per server: each may hold its memory limit (64 MiB).
pub const MAX_CONCURRENT_RUNS: usize = 4;

/// The server's run slots.
fn slots() -> &'static tokio::sync::Semaphore {
    static SLOTS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(MAX_CONCURRENT_RUNS);
    &SLOTS
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScriptArgs {
    pub operation: ScriptOperation,
    /// JavaScript; top-level await. device, app, ui, logcat, shell, cache: ns.op(args) resolves
    /// to the tool's full data (op in camelCase: app.clearData). console.log is the answer.
    pub code: String,
    /// Default 60000.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ScriptOperation {
    Run,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScriptOutput {
    pub operation: String,
    pub ok: bool,
    /// What the script printed.
    pub output: String,
    /// The uncaught error (message, line, column) or the limit the run hit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub call_count: usize,
    /// One line per tool call: tool operation ms ok|error.
    pub calls: Vec<String>,
}

impl Budgeted for ScriptOutput {
    const KEY_FIELDS: &'static [&'static str] = &["operation", "ok", "error", "callCount"];
    const BULK_FIELDS: &'static [&'static str] = &["output", "calls"];
    const KIND: Kind = Kind::Output;
}

/// The tools, as the sandbox calls them: full data, no budget.
struct ToolHost {
    state: Arc<State>,
    ctx: RequestContext<RoleServer>,
}

impl Host for ToolHost {
    fn call(&self, tool: String, arguments: Value) -> HostFuture {
        let (state, ctx) = (self.state.clone(), self.ctx.clone());
        Box::pin(unbudgeted(async move {
            let Value::Object(args) = arguments else {
                return Err("a tool's arguments are an object".to_string());
            };
            let result = match tool.as_str() {
                "adb-device" => super::device::run(&state, args, ctx).await,
                "adb-app" => super::app::run(&state, args, ctx).await,
                "adb-logcat" => super::logcat::run(&state, args).await,
                "adb-shell" => super::shell::run(&state, args).await,
                "ui" => super::ui::run(&state, args, ctx).await,
                "cache" => super::cache::run(&state, args),
                other => return Err(format!("no tool named {other}")),
            };
            full_data(result)
        }))
    }
}

/// A tool's answer as the script sees it: its structured data, or its error message.
fn full_data(result: CallToolResult) -> Result<Value, String> {
    let text = || {
        result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    if result.is_error == Some(true) {
        return Err(text());
    }
    match &result.structured_content {
        Some(value) => Ok(value.clone()),
        None => Ok(serde_json::from_str(&text()).unwrap_or(Value::String(text()))),
    }
}

/// How long the server lets a `script` call run: its own `timeoutMs`, else the default.
pub fn timeout(args: &JsonObject) -> Duration {
    let ms = args
        .get("timeoutMs")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_TIMEOUT_MS);
    Duration::from_millis(ms.min(MAX_TIMEOUT_MS))
}

pub async fn run(state: Arc<State>, args: JsonObject, ctx: RequestContext<RoleServer>) -> CallToolResult {
    let args: ScriptArgs = match parse_args("script", args) {
        Ok(a) => a,
        Err(e) => return error(e),
    };
    let ScriptOperation::Run = args.operation;
    let timeout_ms = args.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
    if timeout_ms == 0 || timeout_ms > MAX_TIMEOUT_MS {
        return error(format!(
            "timeoutMs must be between 1 and {MAX_TIMEOUT_MS}; got {timeout_ms}"
        ));
    }
    let size = args.code.chars().count();
    if args.code.trim().is_empty() || size > MAX_CODE_CHARS {
        return error(format!(
            "`code` must be a script of 1 to {MAX_CODE_CHARS} chars; got {size}"
        ));
    }
    let Ok(_slot) = slots().try_acquire() else {
        return error(format!(
            "{MAX_CONCURRENT_RUNS} scripts are already running on this server, its limit; wait for one to end"
        ));
    };
    let limits = Limits {
        timeout: Duration::from_millis(timeout_ms),
        ..Limits::default()
    };
    let budget = state.budget;
    let cache = state.clone();
    let outcome = sandbox::run(&args.code, &limits, Arc::new(ToolHost { state, ctx })).await;
    let calls = outcome
        .calls
        .iter()
        .map(|c| {
            format!(
                "{} {} {} ms {}",
                c.tool,
                c.operation,
                c.ms,
                if c.ok { "ok" } else { "error" }
            )
        })
        .collect();
    let output = ScriptOutput {
        operation: "run".into(),
        ok: outcome.error.is_none(),
        output: outcome.output,
        error: outcome.error,
        call_count: outcome.calls.len(),
        calls,
    };
    let failed = !output.ok;
    let mut result = respond(&output, budget, &cache.cache, "script run");
    if failed {
        result.is_error = Some(true);
    }
    result
}
