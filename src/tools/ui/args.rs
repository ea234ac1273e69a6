//! `ui`'s wire form: the one flat object of arguments (one compact schema in tools/list) and the
//! fields each operation takes; `command.rs` builds the typed command from it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::android::selector::ElementSelector;
use crate::image::grid::Position;

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
    /// tap, long-press: where inside the ref's or query's element (Maestro's element-relative
    /// point: "50%,90%" of it, "25,75" px from its top-left). Left out of tools/list (its
    /// budget): flows pass it; a model taps a spot by x and y.
    #[serde(default)]
    #[schemars(skip)]
    pub relative_point: Option<String>,
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

/// The fields each operation takes, besides `operation` and `device`. `UiArgs` is one flat wire
/// form (one compact schema in tools/list); this table keeps a field that does not apply from
/// being silently ignored.
pub fn fields_of(operation: UiOperation) -> &'static [&'static str] {
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
            "relativePoint",
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
            "relativePoint",
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
