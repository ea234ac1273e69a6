//! `ui`: what is on the screen (a compact, paged element list), finding an element, acting on
//! it (tap, long press, swipe, type, key), and screenshots as JPEG image blocks with a tap grid.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use base64::Engine;
use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use rmcp::service::RequestContext;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{State, error, parse_args};
use crate::adb::quote;
use crate::android::activity::Focus;
use crate::android::keys::key_code;
use crate::android::selector::{ElementSelector, find_nodes};
use crate::android::ui_elements::{
    Element, Field, Found, Matcher, Rank, best_target, closest, element_of, elements, find,
};
use crate::android::ui_refs::{Resolved, parse_ref, resolve};
use crate::android::uiautomator::{Bounds, UiTree, parse_ui_dump};
use crate::context::budget::{Budgeted, respond};
use crate::context::{Data, Kind};
use crate::image::grid::{self, Position};

mod act;
mod capture;
mod ime;
mod phone;
pub use phone::PhoneState;
mod read;
mod resolve;
mod wait;
mod web;

use act::*;
use capture::*;
use phone::*;
use read::*;
use resolve::*;
use wait::*;

pub use act::input_text;

/// Reads the screen once, for what is kept of it (refs, a recorded step's outcome).
pub async fn look(state: &State, serial: &str) -> Result<(), String> {
    read_screen(state, serial, false)
        .await
        .map(|_| ())
        .map_err(String::from)
}

/// What the device panel shows (`crate::panel`): a fresh reading, its refs numbered and
/// remembered as a dump's, and the screen as base64 JPEG (longest side `max_size`), in the
/// device's turn so that a frame never races a tap.
/// How an answer names the phone's state in a reading (asleep, locked, the keyboard, a dialog…)
/// and the way forward; `None` when the phone is simply ready.
pub fn phone_state(snapshot: &Snapshot) -> Option<phone::PhoneState> {
    phone::describe(&snapshot.state, &snapshot.elements)
}

pub async fn view(state: &State, serial: &str, max_size: u32) -> Result<(Snapshot, Shot, String), String> {
    let _turn = state.device_turn(serial, "the device panel's frame").await?;
    let snapshot = read_screen(state, serial, true).await?;
    let (shot, block) = capture(state, serial, max_size, false, None).await?;
    let jpeg = block.as_image().map(|i| i.data.clone()).unwrap_or_default();
    Ok((snapshot, shot, jpeg))
}

/// How long a call's gesture lasts on the device (`act::gesture_ms`), from its raw arguments:
/// the server's deadline for the call allows for it before the arguments are parsed.
pub fn gesture_ms_of(args: &JsonObject) -> u64 {
    let operation = args
        .get("operation")
        .cloned()
        .and_then(|o| serde_json::from_value(o).ok());
    let duration = args
        .get("durationMs")
        .and_then(|d| d.as_u64())
        .map(|d| d.min(u64::from(u32::MAX)) as u32);
    operation.map_or(0, |op| act::gesture_ms(op, duration))
}

const DEFAULT_LIMIT: u64 = 40;
const MAX_LIMIT: u64 = 200;
const MAX_MATCHES: usize = 5;
const JPEG_QUALITY: u8 = 70;
const DEFAULT_MAX_SIZE: u32 = 1000;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UiArgs {
    pub operation: UiOperation,
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub limit: Option<u64>,
    #[serde(default)]
    pub offset: Option<u64>,
    #[serde(default)]
    pub filter: Option<String>,
    /// Text, desc or label.
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub resource_id: Option<String>,
    #[serde(default)]
    pub content_desc: Option<String>,
    #[serde(default)]
    pub class_name: Option<String>,
    /// Default contains.
    #[serde(default, rename = "match")]
    pub matching: Option<MatchKind>,
    /// Maestro's {text, id, index, below…}.
    #[serde(default)]
    #[schemars(with = "Option<Value>", extend("type" = "object"))]
    pub selector: Option<ElementSelector>,
    #[serde(default)]
    pub grid: Option<bool>,
    #[serde(default)]
    pub x: Option<i32>,
    #[serde(default)]
    pub y: Option<i32>,
    #[serde(default)]
    pub space: Option<Space>,
    #[serde(default, rename = "ref")]
    pub reference: Option<String>,
    #[serde(default)]
    pub grid_cell: Option<u32>,
    #[serde(default)]
    pub grid_position: Option<Position>,
    #[serde(default)]
    pub from: Option<[i32; 2]>,
    #[serde(default)]
    pub to: Option<[i32; 2]>,
    #[serde(default)]
    pub direction: Option<Direction>,
    /// swipe: % of screen.
    #[serde(default)]
    pub distance: Option<u32>,
    #[serde(default)]
    pub duration_ms: Option<u32>,
    #[serde(default)]
    pub clear: Option<bool>,
    #[serde(default)]
    pub submit: Option<bool>,
    /// key: BACK, HOME, ENTER, DEL… or a code.
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub max_size: Option<u32>,
    #[serde(default)]
    pub annotate: Option<bool>,
    #[serde(default)]
    pub gone: Option<bool>,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub observe: Option<bool>,
    /// tap, long-press: what a replayed flow's recording saw of the element (flow/verify.rs);
    /// the call acts only on that element. Left out of tools/list: flows pass it, not models.
    #[serde(default)]
    #[schemars(skip)]
    pub recorded: Option<crate::flow::Recorded>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum UiOperation {
    Dump,
    Find,
    Tap,
    LongPress,
    Swipe,
    Type,
    Key,
    Scroll,
    Wait,
    Screenshot,
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MatchKind {
    Exact,
    Contains,
    Regex,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Space {
    Device,
    Image,
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Up,
    Down,
    Left,
    Right,
}

#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UiOutput {
    pub operation: String,
    pub device: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focused: Option<Focus>,
    /// The phone's state when it is not simply ready, and what to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<PhoneState>,
    /// Device pixels: the display, whatever window is dumped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen: Option<[u32; 2]>,
    /// The dumped window, when it is not the whole screen (a dialog or popup): left, top, right,
    /// bottom in device pixels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<[i32; 4]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elements: Option<Vec<Element>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<Vec<Element>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_id: Option<String>,
    /// Where an action landed, in device pixels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<[i32; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<Element>,
    /// screenshot: the image's size and the device pixels per image pixel.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<[u32; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<Observed>,
    /// The page in the WebView on the screen (dump, find): its elements are among the others.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub web: Option<web::WebPage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Budgeted for UiOutput {
    const KEY_FIELDS: &'static [&'static str] = &[
        "operation",
        "device",
        "focused",
        "state",
        "screen",
        "window",
        "count",
        "totalCount",
        "hasMore",
        "nextOffset",
        "cacheId",
        "at",
        "target",
        "image",
        "scale",
        "observed",
        "web",
    ];
    const BULK_FIELDS: &'static [&'static str] = &["elements", "matches"];
    const KIND: Kind = Kind::Ui;
}

#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
pub struct Observed {
    pub changed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focused: Option<Focus>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub appeared: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disappeared: Vec<String>,
}

/// One reading of the screen, kept per device so refs can be checked and changes observed.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub tree: UiTree,
    pub elements: Vec<Element>,
    pub focused: Option<Focus>,
    pub screen: [u32; 2],
    /// The dumped window's bounds when it is smaller than the screen (a dialog, a popup).
    pub window: Option<Bounds>,
    pub signature: u64,
    /// Asleep, locked, the keyboard, a system dialog, or ready (`phone.rs` names it).
    pub state: crate::android::screen_state::ScreenState,
    /// The page of a WebView on the screen, read through DevTools (`web.rs`).
    pub web: Option<web::WebPage>,
}

/// The last screenshot's geometry, to map image pixels back to the device.
#[derive(Debug, Clone, Copy)]
pub struct Shot {
    pub image: [u32; 2],
    pub screen: [u32; 2],
    /// Every pixel black: the screen is off (or a secure window hides it).
    pub dark: bool,
}

type Outcome = Result<(UiOutput, Option<ContentBlock>), String>;

/// The fields each operation takes, besides `operation` and `device`. `UiArgs` is one flat wire
/// form (one compact schema in tools/list); this table keeps a field that does not apply from
/// being silently ignored.
fn fields_of(operation: UiOperation) -> &'static [&'static str] {
    match operation {
        UiOperation::Dump => &["limit", "offset", "filter"],
        UiOperation::Find => &[
            "text",
            "resourceId",
            "contentDesc",
            "className",
            "match",
            "selector",
            "grid",
        ],
        UiOperation::Tap => &[
            "ref",
            "text",
            "resourceId",
            "contentDesc",
            "className",
            "match",
            "selector",
            "x",
            "y",
            "space",
            "gridCell",
            "gridPosition",
            "observe",
            "recorded",
        ],
        UiOperation::LongPress => &[
            "ref",
            "text",
            "resourceId",
            "contentDesc",
            "className",
            "match",
            "selector",
            "x",
            "y",
            "space",
            "gridCell",
            "gridPosition",
            "durationMs",
            "observe",
            "recorded",
        ],
        UiOperation::Swipe => &["from", "to", "direction", "distance", "durationMs", "observe"],
        UiOperation::Type => &["text", "ref", "clear", "submit", "observe"],
        UiOperation::Key => &["name", "observe"],
        UiOperation::Scroll => &[
            "direction",
            "text",
            "resourceId",
            "contentDesc",
            "className",
            "match",
            "selector",
            "observe",
        ],
        UiOperation::Wait => &[
            "text",
            "resourceId",
            "contentDesc",
            "className",
            "match",
            "selector",
            "gone",
            "timeoutMs",
        ],
        UiOperation::Screenshot => &["grid", "annotate", "maxSize"],
    }
}

/// Refuses fields the operation does not take, and more than one target for an action.
fn check_fields(args: &UiArgs, given: &[String]) -> Result<(), String> {
    let name = output(args.operation, "").operation;
    super::check_fields(&format!("ui {name}"), given, fields_of(args.operation))?;
    if matches!(args.operation, UiOperation::Tap | UiOperation::LongPress) {
        let targets = [
            args.reference.is_some(),
            args.text.is_some()
                || args.selector.is_some()
                || args.resource_id.is_some()
                || args.content_desc.is_some()
                || args.class_name.is_some(),
            args.x.is_some() || args.y.is_some(),
            args.grid_cell.is_some(),
        ];
        if targets.iter().filter(|t| **t).count() > 1 {
            return Err(format!(
                "ui {name} takes one target: ref, a text query, x and y, or gridCell; this call gave several"
            ));
        }
    }
    Ok(())
}

pub async fn run(state: &State, args: JsonObject, ctx: RequestContext<RoleServer>) -> CallToolResult {
    let given: Vec<String> = args.keys().cloned().collect();
    let args: UiArgs = match parse_args("ui", args) {
        Ok(a) => a,
        Err(e) => return error(e),
    };
    if let Err(e) = check_fields(&args, &given) {
        return error(e);
    }
    if args.operation == UiOperation::Type
        && args.text.as_deref().is_some_and(str::is_empty)
        && !args.clear.unwrap_or(false)
        && !args.submit.unwrap_or(false)
    {
        return error(
            "type needs non-empty `text` (or `clear: true` to empty the field, `submit: true` to press ENTER)",
        );
    }
    let serial = match state.device(args.device.as_deref()).await {
        Ok(s) => s,
        Err(e) => return e.into(),
    };
    // Actions and screenshots on one device take turns, so a screenshot never races a tap;
    // reads (dump, find, wait) and other devices go on in parallel.
    let _turn = match args.operation {
        UiOperation::Dump | UiOperation::Find | UiOperation::Wait => None,
        operation => {
            let what = format!(
                "ui {}",
                serde_json::to_value(operation)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            );
            match state.device_turn(&serial, &what).await {
                Ok(turn) => Some(turn),
                Err(e) => return error(e),
            }
        }
    };
    let outcome = match args.operation {
        UiOperation::Dump => dump(state, &serial, &args).await,
        UiOperation::Find => find_op(state, &serial, &args).await,
        UiOperation::Screenshot => screenshot_op(state, &serial, &args).await,
        UiOperation::Scroll => scroll(state, &serial, &args).await,
        UiOperation::Wait => wait(state, &serial, &args, &ctx).await,
        action => act(state, &serial, action, &args).await,
    };
    match outcome {
        Ok((output, image)) => {
            let mut result = respond(
                &output,
                state.budget,
                &state.cache,
                &format!("ui {} on {serial}", output.operation),
            );
            result.content.extend(image);
            result
        }
        Err(message) => error(message),
    }
}

fn output(operation: UiOperation, serial: &str) -> UiOutput {
    let name = serde_json::to_value(operation)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string));
    UiOutput {
        operation: name.unwrap_or_default(),
        device: serial.into(),
        ..Default::default()
    }
}
