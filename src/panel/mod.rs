//! The device panel: an MCP App (the `io.modelcontextprotocol/ui` extension, SEP-1865) that
//! shows a person the phone the assistant drives, inside the chat (docs/panel.md).
//!
//! - `ui://droidmcp/device` is one self-contained HTML page (`device.html`, compiled in; no CDN,
//!   no build step) that speaks the app side of the extension itself: JSON-RPC over postMessage
//!   with its host (`ui/initialize`, `tools/call` and `resources/read` through the host, the
//!   host's tool-input and tool-result notifications).
//! - A client that offers the extension sees it declared in the capabilities, the resource in
//!   resources/list, `_meta.ui.resourceUri` on `ui` and `flow` in tools/list, and the panel's
//!   own app-only tool (`device-panel`: take over, release). Any other client sees exactly what
//!   it saw before.
//! - Frames come through `droidmcp://device/{serial}/screen` (the elements as JSON, then the
//!   screen as a JPEG blob), read by the panel, never through the model's context.
//! - Take-over: a person's hold is a lease (`tools::leases`, the store every principal shares,
//!   for `tools::leases::PANEL_TTL`, renewed by the panel's acting calls): while it lives, the
//!   assistant's acting calls on the device, and anyone else's, are refused with a message saying
//!   so, unless the call carries the panel's `_meta` marker (`by_panel`) and comes from the same
//!   principal. A hold is refused while another principal leases the device. Within one
//!   principal a UX pause, not a security boundary: the panel and the assistant reach the server
//!   through the same client.

use std::sync::Arc;

use rmcp::model::{
    CacheScope, CallToolResult, ClientCapabilities, JsonObject, ListToolsResult, MetaObject, ProtocolVersion,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, ResultType, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

use crate::state::Taken;
use crate::tools::{State, leases};

/// The MCP Apps extension's id, in client and server capabilities.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// An MCP App's HTML.
pub const MIME: &str = "text/html;profile=mcp-app";
pub const URI: &str = "ui://droidmcp/device";
/// The panel's own tool, for the app only (`_meta.ui.visibility: ["app"]`): take over, release.
pub const TOOL: &str = "device-panel";
/// The `_meta` key the panel's calls carry: they go through while a person holds the device.
pub const MARKER: &str = "droidmcp/panel";
const HTML: &str = include_str!("device.html");
/// `droidmcp://device/{serial}/screen`; the serial percent-encoded, `-` for the default device.
const SCREEN_PREFIX: &str = "droidmcp://device/";
const SCREEN_SUFFIX: &str = "/screen";
/// The longest side of a panel frame: sharp enough to read labels, ~30-60 KB of JPEG.
const FRAME_SIZE: u32 = 800;
/// The recorded steps a frame lists, newest last.
const LAST_STEPS: usize = 8;
/// The tools that show the screen, and so open the panel.
const LINKED: &[&str] = &["ui", "flow"];

/// Whether the client offers the extension with the panel's MIME type (or without a list).
pub fn offered(capabilities: Option<&ClientCapabilities>) -> bool {
    let Some(settings) = capabilities
        .and_then(|c| c.extensions.as_ref())
        .and_then(|e| e.get(EXTENSION))
    else {
        return false;
    };
    match settings.get("mimeTypes").and_then(Value::as_array) {
        Some(types) => types.iter().any(|t| t.as_str() == Some(MIME)),
        None => true,
    }
}

/// Declares the extension in the server's capabilities, for a client that offers it.
pub fn declare(capabilities: &mut ServerCapabilities, client: Option<&ClientCapabilities>) {
    if offered(client) {
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(EXTENSION.into(), JsonObject::new());
    }
}

fn meta(value: Value) -> MetaObject {
    match value {
        Value::Object(map) => MetaObject(map),
        _ => MetaObject(JsonObject::new()),
    }
}

/// tools/list, as rmcp's `#[tool_handler]` makes it; for a client that offers the extension,
/// with the panel linked (`link_tools`).
pub fn list_tools(mut tools: Vec<Tool>, context: &RequestContext<RoleServer>) -> ListToolsResult {
    let modern = context
        .protocol_version()
        .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
    if offered(context.client_capabilities().as_ref()) {
        link_tools(&mut tools);
    }
    ListToolsResult {
        result_type: Some(ResultType::COMPLETE),
        tools,
        meta: None,
        next_cursor: None,
        ttl_ms: modern.then_some(0),
        cache_scope: modern.then_some(CacheScope::Public),
    }
}

/// The tools that show the screen link the panel, and the panel's own tool joins (hidden from
/// the model by `visibility`).
fn link_tools(tools: &mut Vec<Tool>) {
    for tool in tools.iter_mut().filter(|t| LINKED.contains(&t.name.as_ref())) {
        let mut m = tool.meta.take().unwrap_or_else(|| meta(json!({})));
        m.0.insert("ui".into(), json!({ "resourceUri": URI }));
        tool.meta = Some(m);
    }
    let schema = json!({
        "type": "object",
        "properties": {
            "operation": {"enum": ["hold", "release"]},
            "device": {"type": "string"}
        },
        "required": ["operation"],
        "additionalProperties": false
    });
    let Value::Object(schema) = schema else { unreachable!() };
    let mut tool = Tool::new(
        TOOL,
        "The device panel's take-over switch: hold pauses the assistant's acting calls on the device until release",
        Arc::new(schema),
    );
    tool.meta = Some(meta(json!({"ui": {"resourceUri": URI, "visibility": ["app"]}})));
    tools.push(tool);
}

/// The panel in resources/list, with the host settings the extension reads from `_meta.ui`:
/// it loads nothing from outside (frames come as data through the host).
pub fn resource() -> Resource {
    Resource::new(URI, "device panel")
        .with_description("The phone's live screen with its refs, the last actions, take-over and export")
        .with_mime_type(MIME)
        .with_size(HTML.len() as u64)
        .with_meta(ui_meta())
}

fn ui_meta() -> MetaObject {
    meta(json!({"ui": {"csp": {"connectDomains": [], "resourceDomains": []}, "prefersBorder": true}}))
}

pub fn template() -> ResourceTemplate {
    ResourceTemplate::new(format!("{SCREEN_PREFIX}{{serial}}{SCREEN_SUFFIX}"), "device screen")
        .with_description(
            "What the device panel shows: the elements (refs, labels, boxes), the focused app and the last recorded actions as JSON, then the screen as a JPEG. Serial percent-encoded, - for the default device",
        )
}

/// Answers a resources/read of the panel or of a device's screen; `None` for any other URI.
pub async fn read(state: &State, uri: &str) -> Option<Result<ReadResourceResult, ErrorData>> {
    if uri == URI {
        let html = ResourceContents::text(HTML, URI)
            .with_mime_type(MIME)
            .with_meta(ui_meta());
        return Some(Ok(ReadResourceResult::new(vec![html])));
    }
    let serial = uri.strip_prefix(SCREEN_PREFIX)?.strip_suffix(SCREEN_SUFFIX)?;
    Some(screen(state, uri, serial).await)
}

async fn screen(state: &State, uri: &str, encoded: &str) -> Result<ReadResourceResult, ErrorData> {
    let requested = match encoded {
        "-" => None,
        other => Some(percent_decode(other).map_err(|e| ErrorData::invalid_params(e, None))?),
    };
    let serial = state
        .device(requested.as_deref())
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    let (snapshot, shot, jpeg) = crate::tools::ui::view(state, &serial, FRAME_SIZE)
        .await
        .map_err(|e| ErrorData::internal_error(format!("could not read the screen of {serial}: {e}"), None))?;
    let elements: Vec<Value> = snapshot
        .elements
        .iter()
        .map(|e| {
            let b = e.bounds;
            json!({"ref": e.reference, "label": e.label, "type": e.kind, "box": [b.left, b.top, b.right, b.bottom]})
        })
        .collect();
    let leased = match state.leases.list().await {
        Ok(leases) if !leases.is_empty() => match crate::tools::leases::key(state, &serial).await {
            Ok(key) => leases.into_iter().find(|l| l.device == key),
            Err(_) => None,
        },
        _ => None,
    };
    let recording = state.flows.get(&serial);
    let first = recording.steps.len().saturating_sub(LAST_STEPS);
    let steps: Vec<Value> = recording
        .steps
        .iter()
        .enumerate()
        .skip(first)
        .map(|(i, s)| {
            let mut saw: Vec<String> = s.expect.visible.iter().map(|v| v.describe()).collect();
            saw.extend(s.expect.activity.clone());
            json!({"n": recording.dropped + i + 1, "step": s.describe(), "saw": saw.join(", ")})
        })
        .collect();
    let view = json!({
        "device": serial,
        "focused": snapshot.focused,
        "state": crate::tools::ui::phone_state(&snapshot),
        "screen": shot.screen,
        "image": shot.image,
        "elements": elements,
        "steps": steps,
        "recorded": recording.steps.len() + recording.dropped,
        "held": leased.as_ref().is_some_and(|l| l.holder.person && *l.holder.principal == *state.principal),
        "leasedTo": leased.as_ref().map(crate::tools::leases::who),
        "until": leased.as_ref().map(crate::tools::leases::until),
    });
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(view.to_string(), uri).with_mime_type("application/json"),
        ResourceContents::blob(jpeg, uri).with_mime_type("image/jpeg"),
    ]))
}

/// `%XX` escapes to bytes; the result must be UTF-8.
fn percent_decode(text: &str) -> Result<String, String> {
    let bad = || format!("{text:?} is not a percent-encoded serial (encodeURIComponent of it)");
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'%' {
            let hex = tail
                .get(..2)
                .and_then(|h| std::str::from_utf8(h).ok())
                .ok_or_else(bad)?;
            bytes.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
            rest = &tail[2..];
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    String::from_utf8(bytes).map_err(|_| bad())
}

/// The panel's own tool, taken before routing: its work, which the server runs under the guard
/// every call passes (deadline, a panic as isError, the budget); `None` for any other tool,
/// which is routed as usual (its lease check, `tools::leases::refusal`, runs once its
/// command is built).
pub fn intercept(
    state: Arc<State>,
    tool: &str,
    args: Option<JsonObject>,
) -> Option<impl Future<Output = CallToolResult> + Send + 'static> {
    (tool == TOOL).then_some(async move { hold(&state, &args.unwrap_or_default()).await })
}

/// Whether a call is the panel's own (its `_meta` marker): it goes through while a person
/// holds the device.
pub fn by_panel(meta: &JsonObject) -> bool {
    meta.get(MARKER).is_some_and(|m| m == &Value::Bool(true))
}

/// `device-panel`'s wire arguments, read by the tools' one parse (`tools::command::parse`).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct HoldArgs {
    #[serde(default)]
    operation: Option<String>,
    #[serde(default)]
    device: Option<String>,
}

/// `device-panel {operation: hold | release, device?}`.
async fn hold(state: &State, args: &JsonObject) -> CallToolResult {
    let args: HoldArgs = match crate::tools::command::parse(TOOL, args.clone(), |_| &[]) {
        Ok(args) => args,
        Err(e) => return crate::tools::error(e),
    };
    let held = match args.operation.as_deref() {
        Some("hold") => true,
        Some("release") => false,
        other => {
            return crate::tools::error(format!(
                "{TOOL} takes operation \"hold\" or \"release\"; got {}",
                other.map_or("none".to_string(), |o| format!("{:?}", crate::android::text::echoed(o)))
            ));
        }
    };
    let serial = match state.device(args.device.as_deref()).await {
        Ok(s) => s,
        Err(e) => return crate::tools::error(e.to_string()),
    };
    // A hold is a lease held by a person (`tools::leases`): one rule for both.
    let person = leases::holder(state, true);
    let key = match leases::key(state, &serial).await {
        Ok(key) => key,
        Err(e) => return crate::tools::error(format!("{e}; nothing changed")),
    };
    let ttl = leases::PANEL_TTL.as_millis() as u64;
    let outcome = match held {
        true => state.leases.take(&key, &person, ttl).await.map(Some),
        false => state.leases.release(&key, &person).await,
    };
    let until = match outcome {
        Ok(Some(Taken::Yours(lease))) => held.then(|| leases::until(&lease)),
        Ok(None) => None,
        Ok(Some(Taken::Theirs(lease))) => return crate::tools::error(leases::refused(&serial, &lease, &person)),
        Err(e) => return crate::tools::error(format!("could not reach the device leases ({e}); nothing changed")),
    };
    let hint = match held {
        true => "the assistant's acting calls on this device, and anyone else's, are refused until release",
        false => "the assistant may act on this device again",
    };
    CallToolResult::structured(
        json!({"operation": if held { "hold" } else { "release" }, "device": serial, "held": held, "until": until, "hint": hint}),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{ClientCapabilities, EXTENSION, MIME, Value, offered, percent_decode};

    #[test]
    fn serials_are_percent_decoded_and_bad_escapes_refused() {
        assert_eq!(percent_decode("127.0.0.1%3A5555").unwrap(), "127.0.0.1:5555");
        assert_eq!(percent_decode("lab%2Femulator-5554").unwrap(), "lab/emulator-5554");
        assert!(percent_decode("bad%2").unwrap_err().contains("percent-encoded"));
        assert!(percent_decode("bad%zz").is_err());
        assert!(percent_decode("%ff").is_err());
    }

    /// JavaScript's encodeURIComponent, which the panel uses for a serial in a screen URI.
    fn encode_uri_component(text: &str) -> String {
        let keep = |b: u8| b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b);
        text.bytes()
            .map(|b| {
                if keep(b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    }

    #[test]
    fn any_serial_the_panel_encodes_decodes_to_itself() {
        let cases = std::cell::Cell::new(0);
        let mut runner = proptest::test_runner::TestRunner::default();
        runner
            .run(&"\\PC{0,40}", |serial| {
                cases.set(cases.get() + 1);
                proptest::prop_assert_eq!(percent_decode(&encode_uri_component(&serial)).unwrap(), serial);
                Ok(())
            })
            .unwrap();
        eprintln!("{} cases", cases.get());
    }

    #[test]
    fn the_extension_is_offered_only_with_its_mime_type_or_no_list() {
        let caps = |settings: Value| -> ClientCapabilities {
            serde_json::from_value(json!({"extensions": {EXTENSION: settings}})).unwrap()
        };
        assert!(offered(Some(&caps(json!({"mimeTypes": [MIME]})))));
        assert!(offered(Some(&caps(json!({})))));
        assert!(!offered(Some(&caps(json!({"mimeTypes": ["text/html"]})))));
        assert!(!offered(Some(&ClientCapabilities::default())));
        assert!(!offered(None));
    }
}
