//! `ui`: what is on the screen (a compact, paged element list), finding and waiting for an
//! element, acting on it (tap, long press, swipe, type, key, scroll), and screenshots as JPEG
//! image blocks with a tap grid. A call is built into a `UiCommand` (`command.rs`), then
//! `apply` runs it; an acting operation returns the step it took, which `finish` records once
//! it worked.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use base64::Engine;
use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use rmcp::service::RequestContext;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{State, error};
use crate::android::activity::Focus;
use crate::android::keys::key_code;
use crate::android::selector::{ElementSelector, find_nodes};
use crate::android::text::quote;
use crate::android::ui_elements::{
    Element, Field, Found, Matcher, Rank, best_target, closest, element_of, elements, find,
};
use crate::android::ui_refs::{Resolved, resolve};
use crate::android::uiautomator::{Bounds, UiTree, parse_ui_dump};
use crate::context::budget::{Budgeted, respond};
use crate::context::{Data, Kind};
use crate::flow;
use crate::image::grid::{self, Position};

pub(super) mod act;
mod capture;
pub mod command;
mod ime;
mod phone;
pub use phone::PhoneState;
mod read;
mod resolve;
#[cfg(test)]
mod tests;
mod wait;
mod web;

use act::*;
use capture::*;
pub use command::{ContentDirection, FingerDirection, Query, SwipePath, Target, Typing, UiAction, UiCommand};
use phone::*;
use read::*;
use resolve::*;
use wait::*;

pub use act::input_text;
pub use read::read;

/// How an answer names the phone's state in a reading (asleep, locked, the keyboard, a dialog…)
/// and the way forward; `None` when the phone is simply ready.
pub fn phone_state(snapshot: &Snapshot) -> Option<phone::PhoneState> {
    phone::describe(&snapshot.state, &snapshot.elements)
}

/// What the device panel shows (`crate::panel`): a fresh reading, its refs numbered and
/// remembered as a dump's, and the screen as base64 JPEG (longest side `max_size`), in the
/// device's turn so that a frame never races a tap.
pub async fn view(state: &State, serial: &str, max_size: u32) -> Result<(Snapshot, Shot, String), String> {
    let _turn = state.device_turn(serial, "the device panel's frame").await?;
    let snapshot = read_current(state, serial).await?;
    let (shot, block) = capture(state, serial, max_size, false, None).await?;
    let jpeg = block.as_image().map(|i| i.data.clone()).unwrap_or_default();
    Ok((snapshot, shot, jpeg))
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
    pub direction: Option<WireDirection>,
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

// `direction` as the wire spells it: a swipe reads it as the finger's (`FingerDirection`), a
// scroll as the content's (`ContentDirection`).
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WireDirection {
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

/// The fields each operation takes, besides `operation` and `device`. `UiArgs` is one flat wire
/// form (one compact schema in tools/list); this table keeps a field that does not apply from
/// being silently ignored.
pub(super) fn fields_of(operation: UiOperation) -> &'static [&'static str] {
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

/// What an operation did: its answer, and for an acting one the step a recorded flow keeps of it
/// and the reading an `observe` compares the screen after it with. `apply` records the step once
/// the operation worked, then observes.
pub(super) struct Done {
    out: UiOutput,
    image: Option<ContentBlock>,
    step: Option<flow::Action>,
    observe: Option<Observe>,
}

/// An `observe` still to make: the reading before the action, and what the answer says when
/// nothing changed.
pub(super) struct Observe {
    before: Snapshot,
    unchanged: String,
}

impl Done {
    /// An answer that records nothing (a reading, a screenshot).
    fn answer(out: UiOutput, image: Option<ContentBlock>) -> Done {
        Done {
            out,
            image,
            step: None,
            observe: None,
        }
    }
}

type Outcome = Result<Done, String>;

pub async fn apply(state: &State, command: UiCommand, ctx: RequestContext<RoleServer>) -> CallToolResult {
    let serial = match state.device(command.device.as_deref()).await {
        Ok(s) => s,
        Err(e) => return error(e.to_string()),
    };
    let action = &command.action;
    // Actions and screenshots on one device take turns, so a screenshot never races a tap;
    // reads (dump, find, wait) and other devices go on in parallel.
    let _turn = match action {
        UiAction::Dump { .. } | UiAction::Find { .. } | UiAction::Wait { .. } => None,
        _ => match state
            .device_turn(&serial, &format!("ui {}", name_of(action.operation())))
            .await
        {
            Ok(turn) => Some(turn),
            Err(e) => return error(e),
        },
    };
    let outcome = match action {
        UiAction::Dump { limit, offset, filter } => dump(state, &serial, *limit, *offset, filter.as_deref()).await,
        UiAction::Find { query, grid } => find_op(state, &serial, query, *grid).await,
        UiAction::Screenshot {
            grid,
            annotate,
            max_size,
        } => screenshot_op(state, &serial, *grid, *annotate, *max_size).await,
        UiAction::Scroll { toward, until, observe } => scroll(state, &serial, *toward, until.as_ref(), *observe).await,
        UiAction::Wait {
            query,
            gone,
            timeout,
            timeout_ms,
        } => wait(state, &serial, query, *gone, *timeout, *timeout_ms, &ctx).await,
        _ => act(state, &serial, action).await,
    };
    match finish(state, &serial, outcome).await {
        Ok(done) => {
            let mut result = respond(
                &done.out,
                state.budget,
                &state.cache,
                &format!("ui {} on {serial}", done.out.operation),
            );
            result.content.extend(done.image);
            result
        }
        Err(message) => error(message),
    }
}

/// After an operation worked: the step it took is recorded (the one place ui records), then
/// the screen after it is read for an `observe`; that reading is the step's outcome.
async fn finish(state: &State, serial: &str, outcome: Outcome) -> Outcome {
    let mut done = outcome?;
    if let Some(step) = done.step.take() {
        state.flows.record(serial, step);
    }
    if let Some(Observe { before, unchanged }) = done.observe.take() {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let after = read_current(state, serial).await?;
        let seen = observed(&before, &after);
        if !seen.changed {
            done.out.hint = Some(unchanged);
        }
        done.out.observed = Some(seen);
        done.out.focused = after.focused.clone();
        done.out.state = describe(&after.state, &after.elements);
    }
    Ok(done)
}

/// An operation's name on the wire (`long-press`).
fn name_of(operation: UiOperation) -> String {
    serde_json::to_value(operation)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn output(operation: UiOperation, serial: &str) -> UiOutput {
    UiOutput {
        operation: name_of(operation),
        device: serial.into(),
        ..Default::default()
    }
}
