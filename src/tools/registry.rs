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
    /// The scope a call needs (`Tool::scope`): read, or act when its command acts, unless
    /// every call or an operation needs an admin one.
    pub scope: Scoping,
}

/// What an OAuth token may let its bearer do (RFC 6749 scopes; `--oauth-*`, docs/http.md).
/// A request without one (stdio, `call`, a static token) may do everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// Reading: screens, lists, logs, the cache, flows' exports, script runs.
    Read,
    /// Changing a device: taps, typing, launching, waking.
    Act,
    /// `adb-shell`: any command on the device.
    Shell,
    /// Installing and uninstalling apps.
    Install,
    /// The emulator console.
    Emulator,
}

impl Scope {
    pub const ALL: [Scope; 5] = [Scope::Read, Scope::Act, Scope::Shell, Scope::Install, Scope::Emulator];

    /// Its name after the configured prefix (`droidmcp:` by default).
    pub fn name(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Act => "act",
            Scope::Shell => "shell",
            Scope::Install => "install",
            Scope::Emulator => "emulator",
        }
    }

    pub fn named(name: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// How a tool's calls map to scopes.
pub enum Scoping {
    /// Read, or act when the command acts (`Command::acts`).
    ByActs,
    /// Every call needs this one.
    Every(Scope),
    /// These operations need an admin scope; the others read or act.
    Admin(&'static [(&'static str, Scope)]),
}

/// What a request may do, put in its extensions beside its `Principal` by the token check;
/// absent, everything. `prefix` is how its scopes are spelled on the wire (`droidmcp:shell`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub scopes: Vec<Scope>,
    pub prefix: Arc<str>,
}

impl Grant {
    pub fn allows(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope)
    }

    /// A scope as the token names it.
    pub fn wire(&self, scope: Scope) -> String {
        format!("{}{}", self.prefix, scope.name())
    }

    /// The grant a request carries (`None`: everything), found where the HTTP layer put it.
    pub fn of(ctx: &RequestContext<RoleServer>) -> Option<Grant> {
        ctx.extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Grant>())
            .cloned()
    }

    /// Why a call needing `scope` is refused, or `None` when it may run.
    pub fn refusal(grant: Option<&Grant>, tool: &str, scope: Scope) -> Option<String> {
        let grant = grant.filter(|g| !g.allows(scope))?;
        Some(format!(
            "{tool} here needs the scope `{}`, which this token was not granted (it holds: {}); ask the authorization server for a token with it",
            grant.wire(scope),
            match grant.scopes.is_empty() {
                true => "none".to_string(),
                false => grant
                    .scopes
                    .iter()
                    .map(|s| format!("`{}`", grant.wire(*s)))
                    .collect::<Vec<_>>()
                    .join(", "),
            }
        ))
    }
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
    /// Whether it acts (`Command::acts`): refused on a device another holds (`leases::refusal`),
    /// and what decides its scope with the operation it was called with (`Tool::scope`).
    pub acts: bool,
    operation: String,
    run: Runner,
}

type Runner = Box<dyn FnOnce(Arc<State>, RequestContext<RoleServer>, bool) -> Running + Send>;
type Running = Pin<Box<dyn Future<Output = CallToolResult> + Send>>;

impl Built {
    /// Applies the command, unless the request's token lacks the scope it needs (`Tool::scope`)
    /// or it acts on a device another holds (`leases::refusal`; `by_panel`: the panel's own
    /// call, a person's). The server's calls and a script's run here.
    pub fn run(
        self,
        tool: &Tool,
        state: Arc<State>,
        ctx: RequestContext<RoleServer>,
        by_panel: bool,
    ) -> Pin<Box<dyn Future<Output = CallToolResult> + Send>> {
        let scope = self.scope(tool);
        if let Some(refused) = Grant::refusal(Grant::of(&ctx).as_ref(), tool.name, scope) {
            return Box::pin(async move { super::error(refused) });
        }
        (self.run)(state, ctx, by_panel)
    }

    /// The scope it needs (`tool`: the one that built it).
    pub fn scope(&self, tool: &Tool) -> Scope {
        tool.scope(&self.operation, self.acts)
    }
}

/// `Tool::build` for the tool whose command is `C`.
fn built<C: Command>(args: JsonObject) -> Result<Built, String> {
    let operation = super::command::operation_name(&args);
    let command = C::parse(args)?;
    let acts = super::leases::acts(&command);
    Ok(Built {
        deadline: command.deadline(),
        runs_long: command.runs_long(),
        acts,
        operation,
        run: Box::new(move |state, ctx, by_panel| {
            Box::pin(async move {
                if let Some(refused) = super::leases::refusal(&state, &command, by_panel).await {
                    return refused;
                }
                // Counted while it runs: a reading taken before it no longer aims a tap
                // (`ui/resolve.rs`'s `aim_reading`).
                let _acting = acts.then(|| state.acting());
                command.apply(state, ctx).await
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
        scope: Scoping::Admin(DEVICE_ADMIN),
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
        scope: Scoping::Admin(APP_ADMIN),
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
        scope: Scoping::ByActs,
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
        scope: Scoping::ByActs,
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
        scope: Scoping::Every(Scope::Shell),
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
        scope: Scoping::ByActs,
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
        scope: Scoping::ByActs,
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
        scope: Scoping::ByActs,
    },
];

/// Admin operations: installing software and the emulator console.
const APP_ADMIN: &[(&str, Scope)] = &[("install", Scope::Install), ("uninstall", Scope::Install)];
const DEVICE_ADMIN: &[(&str, Scope)] = &[("emulator", Scope::Emulator)];

/// The tool named `name`.
pub fn find(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().find(|tool| tool.name == name)
}

impl Tool {
    /// The scope a call with this operation needs (`acts`: whether its command acts).
    pub fn scope(&self, operation: &str, acts: bool) -> Scope {
        let plain = if acts { Scope::Act } else { Scope::Read };
        match self.scope {
            Scoping::ByActs => plain,
            Scoping::Every(scope) => scope,
            Scoping::Admin(admin) => admin
                .iter()
                .find(|(op, _)| *op == operation)
                .map_or(plain, |(_, scope)| *scope),
        }
    }

    /// Every scope some call of it may need: tools/list shows it to a grant holding one.
    pub fn scopes(&self) -> Vec<Scope> {
        match self.scope {
            Scoping::ByActs => vec![Scope::Read, Scope::Act],
            Scoping::Every(scope) => vec![scope],
            Scoping::Admin(admin) => [Scope::Read, Scope::Act]
                .into_iter()
                .chain(admin.iter().map(|(_, s)| *s))
                .collect(),
        }
    }

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

#[cfg(test)]
mod tests {
    use super::{Scope, Scoping, TOOLS};

    /// Every operation of every tool (from its input schema's enum) has one scope, and every
    /// admin operation the registry names is one the tool has (a misspelt one would leave an
    /// install or the emulator console at `act`).
    #[test]
    fn every_operation_of_every_tool_has_a_scope() {
        let mut cases = 0;
        let mut by_scope = std::collections::BTreeMap::<&str, Vec<String>>::new();
        for tool in TOOLS {
            let input = serde_json::Value::Object((*(tool.input)()).clone());
            let operations: Vec<String> = input["properties"]["operation"]["enum"]
                .as_array()
                .map(|ops| ops.iter().filter_map(|o| o.as_str().map(str::to_string)).collect())
                .unwrap_or_default();
            assert!(!operations.is_empty(), "{}: no operation enum", tool.name);
            if let Scoping::Admin(admin) = tool.scope {
                for (op, _) in admin {
                    assert!(operations.iter().any(|o| o == op), "{}: no operation {op}", tool.name);
                }
            }
            for op in &operations {
                for acts in [false, true] {
                    let scope = tool.scope(op, acts);
                    assert!(tool.scopes().contains(&scope), "{} {op}", tool.name);
                    cases += 1;
                    by_scope
                        .entry(scope.name())
                        .or_default()
                        .push(format!("{} {op}", tool.name));
                }
            }
        }
        assert_eq!(
            TOOLS
                .iter()
                .find(|t| t.name == "adb-shell")
                .unwrap()
                .scope("run", false),
            Scope::Shell
        );
        println!("{cases} (tool, operation, acts) cases scoped: {by_scope:?}");
    }
}
