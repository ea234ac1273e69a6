//! The one table of tools: each tool's name, description, schemas, hints, code-mode namespace,
//! and its typed command (`Command`: parse, deadline, whether it acts or runs long, apply).
//! Everything that needs the list reads it here: tools/list and dispatch (`server.rs` builds its
//! router from it), the task decision, the take-over check and the run (`Built::run`), code mode
//! (`script.rs`: its namespaces and calls), `replay --check` (`flow::replayable`), and the tests
//! that walk tools/list. A tool is added by a row here and its files.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, JsonObject, Tool as Listed, ToolAnnotations};
use rmcp::service::RequestContext;

use super::State;
use super::command::{Command, Deadline};
use crate::context::schema::{input_schema, output_schema};

/// A tool, as tools/list shows it and as a call reaches it.
pub struct Tool {
    pub name: &'static str,
    /// The global a script calls it by (`None`: a script cannot call it).
    pub namespace: Option<&'static str>,
    /// What a model reads of it in tools/list, every turn: short.
    pub description: &'static str,
    pub hints: Hints,
    pub input: fn() -> Arc<JsonObject>,
    pub output: fn() -> Arc<JsonObject>,
    /// Its typed command built from the wire (`Command::parse`), ready to run.
    pub build: fn(JsonObject) -> Result<Built, String>,
}

/// The annotations a tool states (readOnlyHint stays unsaid: false).
pub struct Hints {
    pub destructive: bool,
    /// Said only where it holds.
    pub idempotent: bool,
    pub open_world: bool,
}

/// A tool call whose command was built: what the server decides before it runs (its deadline,
/// whether it is a task), and the run.
pub struct Built {
    pub deadline: Deadline,
    pub runs_long: bool,
    /// Whether it acts (`Command::acts`): refused on a device another holds (`leases::refusal`).
    pub acts: bool,
    run: Runner,
}

type Runner = Box<dyn FnOnce(Arc<State>, RequestContext<RoleServer>, bool) -> Running + Send>;
type Running = Pin<Box<dyn Future<Output = CallToolResult> + Send>>;

impl Built {
    /// Applies the command, unless it acts on a device another holds (`leases::refusal`;
    /// `by_panel`: the panel's own call, a person's). The server's calls and a script's
    /// run here.
    pub fn run(
        self,
        state: Arc<State>,
        ctx: RequestContext<RoleServer>,
        by_panel: bool,
    ) -> impl Future<Output = CallToolResult> + Send {
        (self.run)(state, ctx, by_panel)
    }
}

/// `Tool::build` for the tool whose command is `C`.
fn built<C: Command>(args: JsonObject) -> Result<Built, String> {
    let command = C::parse(args)?;
    Ok(Built {
        deadline: command.deadline(),
        runs_long: command.runs_long(),
        acts: super::leases::acts(&command),
        run: Box::new(move |state, ctx, by_panel| {
            Box::pin(async move {
                match super::leases::refusal(&state, &command, by_panel).await {
                    Some(refused) => refused,
                    None => command.apply(state, ctx).await,
                }
            })
        }),
    })
}

/// Every tool, in the order code mode lists its namespaces (tools/list sorts them by name).
pub const TOOLS: &[Tool] = &[
    Tool {
        name: "adb-device",
        namespace: Some("device"),
        description: "Devices. wait: boot. lease: yours alone until release or ttlSecs unused.",
        hints: Hints {
            destructive: false,
            idempotent: false,
            open_world: false,
        },
        input: input_schema::<super::device::DeviceArgs>,
        output: output_schema::<super::device::DeviceOutput>,
        build: built::<super::device::DeviceCommand>,
    },
    Tool {
        name: "adb-app",
        namespace: Some("app"),
        description: "Apps: list (paged); the others act on one package.",
        hints: Hints {
            destructive: true,
            idempotent: false,
            open_world: false,
        },
        input: input_schema::<super::app::AppArgs>,
        output: output_schema::<super::app::AppOutput>,
        build: built::<super::app::AppCommand>,
    },
    Tool {
        name: "ui",
        namespace: Some("ui"),
        description: "Screen: dump (refs), act, screenshot (JPEG+grid).",
        hints: Hints {
            destructive: true,
            idempotent: false,
            open_world: false,
        },
        input: input_schema::<super::ui::UiArgs>,
        output: output_schema::<super::ui::UiOutput>,
        build: built::<super::ui::UiCommand>,
    },
    Tool {
        name: "adb-logcat",
        namespace: Some("logcat"),
        description: "Log: read (counts, crashes, last lines; filters), clear.",
        hints: Hints {
            destructive: true,
            idempotent: false,
            open_world: false,
        },
        input: input_schema::<super::logcat::LogcatArgs>,
        output: output_schema::<super::logcat::LogcatOutput>,
        build: built::<super::logcat::LogcatCommand>,
    },
    Tool {
        name: "adb-shell",
        namespace: Some("shell"),
        description: "Shell command: exit code, stdout, stderr (long: head, tail, cacheId).",
        hints: Hints {
            destructive: true,
            idempotent: false,
            open_world: true,
        },
        input: input_schema::<super::shell::ShellArgs>,
        output: output_schema::<super::shell::ShellOutput>,
        build: built::<super::shell::ShellCommand>,
    },
    Tool {
        name: "cache",
        namespace: Some("cache"),
        description: "Data behind a cacheId: get pages it (filter, prefix).",
        hints: Hints {
            destructive: true,
            idempotent: true,
            open_world: false,
        },
        input: input_schema::<super::cache::CacheArgs>,
        output: output_schema::<super::cache::CacheOutput>,
        build: built::<super::cache::CacheCommand>,
    },
    Tool {
        name: "flow",
        namespace: Some("flow"),
        description: "Recorded actions as tests: export to replay; reset.",
        hints: Hints {
            destructive: false,
            idempotent: false,
            open_world: false,
        },
        input: input_schema::<super::flow::FlowArgs>,
        output: output_schema::<super::flow::FlowOutput>,
        build: built::<super::flow::FlowCommand>,
    },
    Tool {
        name: "script",
        // A script does not start another.
        namespace: None,
        description: "Code mode: JS calling these tools in a sandbox; only what it prints returns.\nAPI: droidmcp://api/droidmcp.d.ts.",
        hints: Hints {
            destructive: true,
            idempotent: false,
            open_world: true,
        },
        input: input_schema::<super::script::ScriptArgs>,
        output: output_schema::<super::script::ScriptOutput>,
        build: built::<super::script::ScriptCommand>,
    },
];

/// The tool named `name`.
pub fn find(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|tool| tool.name == name)
}

impl Tool {
    /// How tools/list shows it.
    pub fn listed(&self) -> Listed {
        let mut hints = ToolAnnotations::new()
            .destructive(self.hints.destructive)
            .open_world(self.hints.open_world);
        if self.hints.idempotent {
            hints = hints.idempotent(true);
        }
        Listed::new(self.name, self.description, (self.input)())
            .with_raw_output_schema((self.output)())
            .with_annotations(hints)
    }
}
