//! The MCP server: the tool router (built from `tools::registry`: each call's typed command
//! built by its tool, then run under `guard`: a task of its own with a deadline, its answer
//! through the budget), the instructions, the long calls as MCP tasks, and the resources (cache
//! entries, the script API, skills, and the device panel's through `panel/`). Each tool lives in
//! `tools/` (a file, or a folder for the bigger ones: app/, device/, ui/).
//!
//! Tools take a raw object rather than rmcp's `Parameters<T>` on purpose: a call that cannot be
//! built must be an `isError` result saying which field to change, not a JSON-RPC error, and the
//! budget may cut any answer.

use std::sync::Arc;

use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, CreateTaskResult, DiscoverResult,
    GetTaskParams, GetTaskResult, Implementation, InitializeRequestParams, InitializeResult, JsonObject,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskExit, TaskOptions};
use rmcp::{ErrorData, RoleServer, ServerHandler, tool_handler};

use crate::context::budget::{fit_text, page_of, resource_uri};
use crate::tools::command::Deadline;
use crate::tools::registry::{self, Grant, Scope, TOOLS, Tool};
use crate::tools::{self, State};

mod guard;
use guard::{Call, MAX_ERROR_CHARS, guard};

const INSTRUCTIONS: &str = "droidmcp drives Android devices. Answers are sized for your context: \
any answer over the budget (default 4000 chars) holds its key fields, a preview and a cacheId. \
`cache get {id, offset, limit, filter}` pages the full data behind any cacheId (`prefix` on properties). \
Start with adb-device list or adb-device properties; pass `device` when several are online.";

#[derive(Clone)]
pub struct DroidMcp {
    states: States,
    tool_router: ToolRouter<DroidMcp>,
}

/// Whose state a call reaches: the one state of stdio and `call`, or over HTTP the state of
/// the principal the request's token names (the token check puts it in the request).
#[derive(Clone)]
enum States {
    One(Arc<State>),
    ByPrincipal(Arc<crate::principals::Principals>),
}

impl DroidMcp {
    pub fn new(state: Arc<State>) -> DroidMcp {
        DroidMcp {
            states: States::One(state),
            tool_router: router(),
        }
    }

    pub fn for_principals(principals: Arc<crate::principals::Principals>) -> DroidMcp {
        DroidMcp {
            states: States::ByPrincipal(principals),
            tool_router: router(),
        }
    }

    /// The state this request reaches.
    fn state(&self, ctx: &RequestContext<RoleServer>) -> Arc<State> {
        use crate::principals::{LOCAL, Principal};
        match &self.states {
            States::One(state) => state.clone(),
            States::ByPrincipal(principals) => {
                let principal = ctx
                    .extensions
                    .get::<axum::http::request::Parts>()
                    .and_then(|parts| parts.extensions.get::<Principal>())
                    .cloned()
                    .unwrap_or_else(|| Principal(LOCAL.into()));
                principals.state(&principal)
            }
        }
    }
}

/// rmcp's router, one route per tool of the registry: tools/list, and each call to `dispatch`.
fn router() -> ToolRouter<DroidMcp> {
    let mut router = ToolRouter::new();
    for tool in TOOLS {
        router.add_route(ToolRoute::new_dyn(
            tool.listed(),
            move |call: ToolCallContext<'_, DroidMcp>| {
                Box::pin(async move {
                    let args = call.arguments.unwrap_or_default();
                    Ok(CallToolResponse::Complete(
                        call.service.dispatch(tool, call.request_context, args).await,
                    ))
                })
            },
        ));
    }
    router
}

impl DroidMcp {
    /// One tool call: its typed command is built (a call that cannot be built is refused with
    /// what to change), then run under the guard, with the deadline the command sets, unless it
    /// acts on a device another holds (`registry::Built::run`, `tools::leases`).
    async fn dispatch(&self, tool: &Tool, ctx: RequestContext<RoleServer>, args: JsonObject) -> CallToolResult {
        let state = self.state(&ctx);
        match (tool.build)(args) {
            Ok(command) => {
                let call = self.call(&ctx, &state, command.deadline);
                let by_panel = crate::panel::by_panel(&ctx.meta);
                let mut answer = guard(call, command.run(tool, state.clone(), ctx, by_panel)).await;
                // Its entries reach the other instances before its answer reaches the client.
                if let Err(note) = tools::handles::publish(&state).await {
                    answer.content.push(rmcp::model::ContentBlock::text(note));
                }
                answer
            }
            Err(refused) => {
                let call = self.call(&ctx, &state, Deadline::SERVER);
                guard(call, async move { tools::error(refused) }).await
            }
        }
    }

    fn call(&self, ctx: &RequestContext<RoleServer>, state: &State, deadline: Deadline) -> Call {
        let version = ctx.protocol_version();
        Call {
            cancel: ctx.ct.clone(),
            limit: call_limit(state, deadline),
            own_timeout: matches!(deadline, Deadline::Within { timeout: Some(_), .. }),
            links: version.is_none_or(|v| v.to_string().as_str() >= "2025-06-18"),
            budget: state.budget,
        }
    }
}

/// How long a whole call may run: its own `timeoutMs`, else the server's `--timeout-ms`, plus a
/// grace so that a device command's own timeout, which names the command, fires first, plus how
/// long its gesture lasts on the device. Waits bound themselves by their `timeoutMs`, and install
/// by the APK's size.
fn call_limit(state: &State, deadline: Deadline) -> Option<std::time::Duration> {
    match deadline {
        Deadline::Own => None,
        Deadline::Within { timeout, gesture } => Some(
            timeout
                .unwrap_or(state.adb.timeout())
                .saturating_add(CALL_GRACE)
                .saturating_add(gesture),
        ),
    }
}

/// The script API's resources: URI, MIME type, description.
const API_RESOURCES: &[(&str, &str, &str)] = &[
    (
        "droidmcp://api/droidmcp.d.ts",
        "application/typescript",
        "The script tool's API, typed: every namespace, operation and argument",
    ),
    (
        "droidmcp://api/examples.md",
        "text/markdown",
        "Short worked scripts for the script tool",
    ),
];

/// A listed resource's description is cut to this many chars (an entry's `about` may quote a
/// long command); `resources/list` takes this many for what surrounds its items.
const DESCRIPTION_CHARS: usize = 200;
const LIST_ROOM: usize = 100;

/// Saved skills are resources `droidmcp://skills/NAME`.
const SKILL_URI: &str = "droidmcp://skills/";

fn api_resource(uri: &str) -> Option<String> {
    match uri {
        "droidmcp://api/droidmcp.d.ts" => Some(crate::script::api::declarations(&tools::script::namespaces())),
        "droidmcp://api/examples.md" => Some(crate::script::api::EXAMPLES.to_string()),
        _ => None,
    }
}

/// See `call_limit`: inside the 500 ms the reliability suite allows past a timeout.
const CALL_GRACE: std::time::Duration = std::time::Duration::from_millis(300);

/// Whether a call may run long enough to be a task for a client that takes tasks (a script run,
/// a wait, an install), as its typed command says; a call that cannot be built is not one.
fn runs_long(request: &CallToolRequestParams) -> bool {
    registry::find(&request.name)
        .and_then(|tool| (tool.build)(request.arguments.clone().unwrap_or_default()).ok())
        .is_some_and(|command| command.runs_long)
}

/// How long a finished task's result stays to be polled, and how often to poll.
const TASK_TTL_MS: u64 = 3_600_000;
const TASK_POLL_MS: u64 = 500;

#[tool_handler(router = self.tool_router)]
impl ServerHandler for DroidMcp {
    /// A long call from a client that declared the Tasks extension runs as a task of the
    /// caller's principal (polled with tasks/get, stopped with tasks/cancel); every other call
    /// answers as it always did.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // The device panel's own tool (crate::panel), under the guard as every call; its
        // take-over pause is checked in `dispatch`, once the call's command is built.
        let state = self.state(&context);
        if let Some(work) = crate::panel::intercept(state.clone(), &request.name, request.arguments.clone()) {
            let call = self.call(&context, &state, Deadline::SERVER);
            // A person's take-over acts on the device.
            if let Some(refused) = registry::Grant::refusal(Grant::of(&context).as_ref(), &request.name, Scope::Act) {
                return Ok(CallToolResponse::Complete(
                    guard(call, async move { tools::error(refused) }).await,
                ));
            }
            return Ok(CallToolResponse::Complete(guard(call, work).await));
        }
        let takes_tasks = context.client_capabilities().is_some_and(|c| c.supports_tasks());
        if !(takes_tasks && runs_long(&request)) {
            let call = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
            return self.tool_router.call(call).await;
        }
        let tasks = self.state(&context).tasks.0.clone();
        let this = self.clone();
        let options = TaskOptions::new()
            .with_ttl_ms(TASK_TTL_MS)
            .with_poll_interval_ms(TASK_POLL_MS);
        let task = tasks.spawn(options, move |task| {
            Box::pin(async move {
                // The task outlives its request: it is stopped by tasks/cancel, not by the
                // request's end.
                let mut context = context;
                context.ct = tokio_util::sync::CancellationToken::new();
                let stop = context.ct.clone();
                let call = rmcp::handler::server::tool::ToolCallContext::new(&this, request, context);
                tokio::select! {
                    _ = task.cancelled() => {
                        stop.cancel();
                        Err(TaskExit::Cancelled)
                    }
                    answer = this.tool_router.call(call) => match answer? {
                        CallToolResponse::Complete(result) => Ok(result),
                        _ => Err(TaskExit::Error(ErrorData::internal_error("the call did not complete", None))),
                    },
                }
            })
        });
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(
            self.state(&context).tasks.0.get_task(&request.task_id)?,
        ))
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.state(&context).tasks.0.cancel_task(&request.task_id)
    }

    /// tools/list as the macro makes it; a client that offers MCP Apps also gets the device
    /// panel's links and its tool (crate::panel).
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let grant = registry::Grant::of(&context);
        let mut tools = self.tool_router.list_all();
        if let Some(grant) = &grant {
            // Each principal sees what its token may call (an operation of it, at least).
            tools.retain(|listed| {
                registry::find(&listed.name).is_some_and(|tool| tool.scopes().iter().any(|s| grant.allows(*s)))
            });
        }
        let mut listed = crate::panel::list_tools(tools, &context);
        if grant.is_some_and(|g| Scope::ALL.iter().any(|s| !g.allows(*s))) && listed.cache_scope.is_some() {
            // Another principal's list differs: no intermediary serves this one to it.
            listed.cache_scope = Some(rmcp::model::CacheScope::Private);
        }
        Ok(listed)
    }

    /// The default handshake, declaring MCP Apps to a client that offers it.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        crate::panel::declare(&mut result.capabilities, Some(&request.capabilities));
        Ok(result)
    }

    /// The same for MCP 2026-07-28's `server/discover`.
    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        let mut info = self.get_info();
        crate::panel::declare(&mut info.capabilities, context.client_capabilities().as_ref());
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            info,
        ))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_tasks()
                .build(),
        )
        .with_server_info(Implementation::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    /// Paged: each page fits the budget like any answer (descriptions by their head), and
    /// `nextCursor` leads on; with many cache entries and skills the list is long.
    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let state = self.state(&context);
        let api = API_RESOURCES.iter().map(|(uri, mime, about)| {
            let text = api_resource(uri).unwrap_or_default();
            Resource::new(uri.to_string(), uri.rsplit('/').next().unwrap_or(uri).to_string())
                .with_description(about.to_string())
                .with_mime_type(mime.to_string())
                .with_size(text.len() as u64)
        });
        let about = |text: &str| fit_text(text, DESCRIPTION_CHARS);
        let entries = state.cache.entries();
        let cached = entries.iter().map(|e| {
            Resource::new(resource_uri(&e.id), e.id.clone())
                .with_description(about(&e.about))
                .with_mime_type(e.data.mime())
                .with_size(e.served_bytes as u64)
        });
        let skills = tools::handles::skills(&state)
            .await
            .map_err(|e| ErrorData::internal_error(fit_text(&e, MAX_ERROR_CHARS), None))?;
        let skills = skills.into_iter().map(|skill| {
            Resource::new(format!("{SKILL_URI}{}", skill.name), skill.name.clone())
                .with_description(about(&format!("skill: {}", skill.description)))
                .with_mime_type("text/javascript")
                .with_size(skill.chars as u64)
        });
        let panel = crate::panel::offered(context.client_capabilities().as_ref()).then(crate::panel::resource);
        let resources: Vec<Resource> = api.chain(skills).chain(cached).chain(panel).collect();
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let (page, next) =
            page_of(&resources, cursor, state.budget, LIST_ROOM).map_err(|e| ErrorData::invalid_params(e, None))?;
        let mut result = ListResourcesResult::with_all_items(page);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let template = ResourceTemplate::new("droidmcp://cache/{id}", "cache entry")
            .with_description("The whole data behind a cacheId, as JSON (maps, lists) or plain text");
        let panel = crate::panel::offered(context.client_capabilities().as_ref()).then(crate::panel::template);
        Ok(ListResourceTemplatesResult::with_all_items(
            std::iter::once(template).chain(panel).collect(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let state = self.state(&context);
        if let Some(answer) = crate::panel::read(&state, &request.uri).await {
            return answer.map(Into::into);
        }
        if let Some((uri, mime, _)) = API_RESOURCES.iter().find(|(uri, ..)| *uri == request.uri) {
            let text = api_resource(uri).unwrap_or_default();
            let contents = ResourceContents::text(text, uri.to_string()).with_mime_type(mime.to_string());
            return Ok(ReadResourceResult::new(vec![contents]).into());
        }
        if let Some(name) = request.uri.strip_prefix(SKILL_URI) {
            let code = tools::handles::skill(&state, name)
                .await
                .map_err(|e| ErrorData::resource_not_found(fit_text(&e, MAX_ERROR_CHARS), None))?;
            let contents = ResourceContents::text(code, request.uri.clone()).with_mime_type("text/javascript");
            return Ok(ReadResourceResult::new(vec![contents]).into());
        }
        let Some(id) = request.uri.strip_prefix("droidmcp://cache/") else {
            return Err(ErrorData::resource_not_found(
                format!(
                    "{} is not a droidmcp resource; they look like droidmcp://cache/ID, droidmcp://skills/NAME or droidmcp://api/droidmcp.d.ts",
                    crate::android::text::echoed(&request.uri)
                ),
                None,
            ));
        };
        if let Err(why) = tools::handles::find(&state, id).await {
            return Err(ErrorData::resource_not_found(fit_text(&why, MAX_ERROR_CHARS), None));
        }
        let entry = state
            .cache
            .get(id)
            .map_err(|e| ErrorData::resource_not_found(fit_text(&e.to_string(), MAX_ERROR_CHARS), None))?;
        // The contents go whole: resources/read is the way to an entry longer than any answer.
        let contents =
            ResourceContents::text(entry.data.full_text(), request.uri.clone()).with_mime_type(entry.data.mime());
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

/// Runs one tool call through the real MCP protocol, in-process over a pipe: what
/// `droidmcp call` prints is exactly what a client would receive.
pub async fn call_once(server: DroidMcp, tool: &str, arguments: JsonObject) -> anyhow::Result<CallToolResult> {
    use rmcp::ServiceExt;
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    let server_task = tokio::spawn(async move {
        let running = server.serve(server_end).await?;
        running.waiting().await?;
        anyhow::Ok(())
    });
    let client = ().serve(client_end).await?;
    let result = client
        .call_tool(rmcp::model::CallToolRequestParams::new(tool.to_string()).with_arguments(arguments))
        .await?;
    client.cancel().await?;
    server_task.abort();
    Ok(result)
}
