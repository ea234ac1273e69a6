//! What a ui operation answers (`UiOutput`, its budget's key and bulk fields) and what it hands
//! back to `apply` (`Done`: the answer, an image, the step to record, an `observe` to make).

use rmcp::model::ContentBlock;
use serde::Serialize;

use super::args::UiOperation;
use super::capture::FramePath;
use super::phone::PhoneState;
use super::read::{ReadError, Snapshot};
use super::web;
use crate::android::activity::Focus;
use crate::android::ui_elements::Element;
use crate::context::Kind;
use crate::context::budget::Budgeted;
use crate::flow;
use crate::tools::ErrorKind;

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
    /// screenshot: how the frame left the phone, `raw` (its link is fast enough: resized and
    /// encoded here) or `png` (encoded on the phone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame: Option<FramePath>,
    /// How a gesture reached the device: its input device, or `input` and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// A tap aimed by a reading this many ms old, not a fresh one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aimed_by_reading_ms: Option<u64>,
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
        "frame",
        "via",
        "aimedByReadingMs",
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

/// What an operation did: its answer, and for an acting one the step a recorded flow keeps of it
/// and the reading an `observe` compares the screen after it with. `apply` records the step once
/// the operation worked, then observes.
pub(super) struct Done {
    pub out: UiOutput,
    pub image: Option<ContentBlock>,
    pub step: Option<flow::Action>,
    pub observe: Option<Observe>,
}

/// An `observe` still to make: the reading before the action, and what the answer says when
/// nothing changed.
pub(super) struct Observe {
    pub before: Snapshot,
    pub unchanged: String,
}

impl Done {
    /// An answer that records nothing (a reading, a screenshot).
    pub(super) fn answer(out: UiOutput, image: Option<ContentBlock>) -> Done {
        Done {
            out,
            image,
            step: None,
            observe: None,
        }
    }
}

pub(super) type Outcome = Result<Done, Failed>;

/// Why a ui operation failed: the message a person reads and, where a caller steers by it, its
/// kind (`resolve::not_on_screen` sets the one there is).
#[derive(Debug)]
pub(super) struct Failed {
    pub message: String,
    pub kind: Option<ErrorKind>,
}

impl From<String> for Failed {
    fn from(message: String) -> Failed {
        Failed { message, kind: None }
    }
}

impl From<ReadError> for Failed {
    fn from(e: ReadError) -> Failed {
        String::from(e).into()
    }
}

impl From<&str> for Failed {
    fn from(message: &str) -> Failed {
        message.to_string().into()
    }
}

/// An operation's name on the wire (`long-press`).
pub(super) fn name_of(operation: UiOperation) -> String {
    serde_json::to_value(operation)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// An answer of `operation` on `serial`, to fill in.
pub(super) fn output(operation: UiOperation, serial: &str) -> UiOutput {
    UiOutput {
        operation: name_of(operation),
        device: serial.into(),
        ..Default::default()
    }
}
