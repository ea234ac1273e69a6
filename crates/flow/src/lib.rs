//! Record and replay: what an assistant does on a device, kept as steps with stable selectors
//! and the outcome each step was seen to have, exported as a droidmcp script (`js`) or a Maestro
//! flow (`maestro`), and replayed by `droidmcp replay` (`replay`). One model (`Step`) for both
//! formats: a Maestro file is read into steps and replayed through the same script as a `.js`.

pub mod commands;
pub mod control;
pub mod js;
pub mod maestro;
pub mod record;
/// The generated steps the formats' round trips use (and, with `test-support`, the replay's).
#[cfg(any(test, feature = "test-support"))]
pub mod tests;
pub mod verify;
pub mod workspace;

use android::identity::is_field;
use android::ui_elements::{Element, Field, Matcher, best_target, find};
use android::uiautomator::{Bounds, UiTree};

pub use control::{Control, Js, Rendered};
pub use record::{Recording, Recordings};
pub use verify::Recorded;

/// How a step finds its element again on another run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Selector {
    /// The full resource-id (`com.android.settings:id/search_action_bar`).
    ResourceId(String),
    /// Text, content-desc or the label a row takes from its children.
    Text(String),
    ContentDesc(String),
    /// Device pixels: recorded only where no selector names the element alone. Fragile.
    Point([i32; 2]),
    /// Percent of the screen's width and height (a Maestro `point: "50%, 90%"`). Fragile.
    Percent([u32; 2]),
    /// A condition's selector with a `${…}` in it, read again, rendered, as it is looked for.
    #[serde(skip)]
    Rendered(Box<Rendered>),
    /// A Maestro `text` that is a regular expression (`Log.*`): at replay, `ui`'s regex match of
    /// an element's whole text (or that very text).
    Pattern(String),
    /// A Maestro selector beyond one id or text (index, flags, size, relations, id with a
    /// pattern): `ui` resolves it as Maestro does (`android::selector`).
    #[serde(skip)]
    Maestro(android::selector::ElementSelector),
}

/// The regex `ui` matches a Maestro text pattern with: as Maestro does, over an element's whole
/// text (dot matching newlines too, case ignored as `ui` ignores it), or equal to the pattern.
pub fn whole_text_regex(pattern: &str) -> String {
    format!("(?s)^(?:{pattern})$|^{}$", regex::escape(pattern))
}

impl Selector {
    pub fn fragile(&self) -> bool {
        matches!(self, Selector::Point(_) | Selector::Percent(_))
    }

    /// `resourceId "…"`, `text "…"`: how a report names it.
    pub fn describe(&self) -> String {
        match self {
            Selector::ResourceId(v) => format!("resourceId {v:?}"),
            Selector::Text(v) => format!("text {v:?}"),
            Selector::ContentDesc(v) => format!("contentDesc {v:?}"),
            Selector::Point([x, y]) => format!("point ({x}, {y}), fragile"),
            Selector::Percent([x, y]) => format!("point ({x}%, {y}%), fragile"),
            Selector::Rendered(r) => r.said.clone(),
            Selector::Pattern(v) => format!("text matching {v:?}"),
            Selector::Maestro(m) => m.describe(),
        }
    }
}

/// An element to act on: its selector, and what the recording saw of it: its label (its name; a
/// step whose selector no longer matches is healed by a label that matches exactly one element),
/// class and resource-id. A replay acts only on an element that has each of them (`verify`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Target {
    pub selector: Selector,
    pub label: Option<String>,
    pub class: Option<String>,
    pub id: Option<String>,
}

impl Target {
    /// A target known by its selector alone (a hand-written one, a bare point).
    pub fn bare(selector: Selector) -> Target {
        Target {
            selector,
            label: None,
            class: None,
            id: None,
        }
    }

    /// What a replayed step passes `ui` to check before it acts (`None`: nothing was recorded).
    pub fn checks(&self) -> Option<Recorded> {
        let recorded = Recorded {
            label: self.label.clone(),
            class: self.class.clone(),
            id: self.id.clone(),
        };
        (recorded != Recorded::default()).then_some(recorded)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Action {
    Launch {
        package: String,
    },
    Stop {
        package: String,
    },
    ClearData {
        package: String,
    },
    /// An APK from the host (Maestro has no such command: its flow says to install first).
    Install {
        path: String,
    },
    Tap {
        target: Target,
    },
    LongPress {
        target: Target,
        duration_ms: Option<u32>,
    },
    /// Typed into `target` (tapped first), else into the focused field.
    Type {
        target: Option<Target>,
        text: String,
        clear: bool,
        submit: bool,
    },
    Key {
        name: String,
    },
    Swipe {
        from: [i32; 2],
        to: [i32; 2],
        duration_ms: Option<u32>,
    },
    /// A swipe between two points given in percent of the screen (Maestro's `"50%, 90%"`).
    SwipePercent {
        from: [u32; 2],
        to: [u32; 2],
        duration_ms: Option<u32>,
    },
    /// A finger moving `direction` (up, down, left, right) across the screen.
    SwipeToward {
        direction: String,
        duration_ms: Option<u32>,
    },
    /// A finger moving `direction` from an element's centre to a tenth of the screen from that
    /// edge (Maestro's `swipe: {from, direction}`).
    SwipeFrom {
        from: Selector,
        direction: String,
        duration_ms: Option<u32>,
    },
    /// Deletes this many characters in the focused field (a Maestro `eraseText: N`).
    Erase {
        chars: u32,
    },
    /// Scrolls `direction` (once, or until `until` shows).
    Scroll {
        direction: String,
        until: Option<Selector>,
    },
    Wait {
        selector: Selector,
        gone: bool,
        timeout_ms: Option<u64>,
    },
    /// Only what must be on the screen (a Maestro `assertVisible` with no action before it).
    Check,
    /// Waits for the screen to settle (a reading waits until the app is idle), at most
    /// `timeout_ms` (Maestro's `waitForAnimationToEnd`, 15 s by default), and goes on either way.
    Settle {
        timeout_ms: Option<u64>,
    },
    /// One emulator console line that sets what the device senses (`power capacity 17`,
    /// `geo fix LON LAT`, `sms send …`). Maestro's `setLocation` is a `geo fix`.
    Emulator {
        command: String,
    },
    /// A Maestro device command a recording never makes (`commands.rs`, each in its file in
    /// `maestro/command/`).
    #[serde(skip)]
    Command(commands::Command),
    /// JavaScript a Maestro flow runs (`runScript`, `evalScript`, `assertTrue`).
    #[serde(skip)]
    Script(Js),
    /// A Maestro command with a `${…}` in it, read again, rendered, as its step runs.
    #[serde(skip)]
    Rendered(Rendered),
    /// Steps that run under a rule decided as the flow runs (variables, repeat, retry,
    /// onFlowComplete): not a step of its own, its steps are.
    #[serde(skip)]
    Block {
        control: Control,
        body: Vec<Step>,
    },
}

/// What the recording saw after a step: the activity in front, and up to `MAX_VISIBLE` labels
/// that appeared. A replay waits for each and checks the activity.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Expect {
    pub activity: Option<String>,
    pub visible: Vec<Selector>,
}

/// Labels a step's outcome asserts at most: enough to tell the screen, few enough to survive
/// small changes of the app.
pub const MAX_VISIBLE: usize = 2;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Step {
    pub action: Action,
    pub expect: Expect,
    /// `package/activity` the step was taken on, when known (for its comment).
    pub on: Option<String>,
    /// A step that may fail without failing the flow (Maestro's `optional: true`); a replay
    /// reports its failure as a warning.
    pub optional: bool,
    /// The condition of the Maestro `runFlow {when}` block the step is in, if any.
    pub when: Option<When>,
}

/// A `runFlow {when}` block's condition: each selector given shows (`visible`) or does not
/// (`not_visible`). A block's steps are consecutive; its first (`opens`) reads the condition once,
/// as the block starts, and the rest follow that reading.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct When {
    pub visible: Option<Selector>,
    pub not_visible: Option<Selector>,
    /// Maestro's `true`: a template whose value is true (not blank, false, undefined, null, 0).
    pub script: Option<String>,
    pub opens: bool,
}

impl When {
    /// `if text "Allow" shows`: how a report names it.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(s) = &self.visible {
            parts.push(format!("{} shows", s.describe()));
        }
        if let Some(s) = &self.not_visible {
            parts.push(format!("{} does not show", s.describe()));
        }
        if let Some(script) = &self.script {
            parts.push(format!("{script:?} is true"));
        }
        format!("if {}", parts.join(" and "))
    }
}

/// Whether two steps' conditions put them in one block (or both outside any): the same
/// condition, whichever step of its block carries it.
pub fn same_block(a: &Option<When>, b: &Option<When>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.visible == b.visible && a.not_visible == b.not_visible && a.script == b.script,
        _ => false,
    }
}

impl Step {
    pub fn new(action: Action) -> Step {
        Step {
            action,
            expect: Expect::default(),
            on: None,
            optional: false,
            when: None,
        }
    }

    /// One line saying what the step does: `tap text "Network & internet"`, and its block's
    /// condition (`, if text "Allow" shows`).
    pub fn describe(&self) -> String {
        match &self.when {
            Some(when) => format!("{}, {}", self.describe_action(), when.describe()),
            None => self.describe_action(),
        }
    }

    fn describe_action(&self) -> String {
        let target = |t: &Target| t.selector.describe();
        match &self.action {
            Action::Launch { package } => format!("launch {package}"),
            Action::Stop { package } => format!("stop {package}"),
            Action::ClearData { package } => format!("clear data of {package}"),
            Action::Install { path } => format!("install {path}"),
            Action::Tap { target: t } => format!("tap {}", target(t)),
            Action::LongPress { target: t, .. } => format!("long-press {}", target(t)),
            Action::Type { target: t, text, .. } => match t {
                Some(t) => format!("type {text:?} into {}", target(t)),
                None => format!("type {text:?}"),
            },
            Action::Key { name } => format!("key {name}"),
            Action::Swipe { from, to, .. } => format!("swipe {from:?} to {to:?}"),
            Action::SwipePercent { from, to, .. } => {
                format!("swipe ({}%, {}%) to ({}%, {}%)", from[0], from[1], to[0], to[1])
            }
            Action::SwipeToward { direction, .. } => format!("swipe {direction}"),
            Action::SwipeFrom { from, direction, .. } => format!("swipe {direction} from {}", from.describe()),
            Action::Erase { chars: 1 } => "erase 1 character".into(),
            Action::Erase { chars } => format!("erase {chars} characters"),
            Action::Scroll { direction, until } => match until {
                Some(s) => format!("scroll {direction} until {}", s.describe()),
                None => format!("scroll {direction}"),
            },
            Action::Wait {
                selector, gone: false, ..
            } => format!("wait for {}", selector.describe()),
            Action::Wait {
                selector, gone: true, ..
            } => format!("wait until {} is gone", selector.describe()),
            Action::Emulator { command } => format!("emulator {command:?}"),
            Action::Command(command) => command.describe(),
            Action::Settle { timeout_ms: None } => "wait for the screen to settle".into(),
            Action::Settle { timeout_ms: Some(ms) } => format!("wait for the screen to settle, at most {ms} ms"),
            Action::Script(js) => js.describe(),
            Action::Rendered(r) => r.said.clone(),
            Action::Block { control, .. } => control.describe(),
            Action::Check => {
                let shown: Vec<String> = self.expect.visible.iter().map(Selector::describe).collect();
                format!("check {}", shown.join(", "))
            }
        }
    }

    /// Whether the step's target is found by coordinates only.
    pub fn fragile(&self) -> bool {
        match &self.action {
            Action::Tap { target } | Action::LongPress { target, .. } => target.selector.fragile(),
            Action::Type { target: Some(t), .. } => t.selector.fragile(),
            Action::Swipe { .. } | Action::SwipePercent { .. } => true,
            Action::Command(command) => command.fragile(),
            _ => false,
        }
    }
}

/// The selector that finds `target` again: the first that names it alone (resolves to this very
/// element on this screen the way a tap resolves it: exact match, the best target) of its
/// resource-id, its own text or content-desc or the first of its children's (a row's title, not
/// its changing summary), its identity's label (a row's whole label; a field's content-desc or
/// hint or a web element's accessible name, never a field's text: what was typed), and its
/// content-desc; its point only when none does. A framework id (`android:id/button1`: every dialog's first button) or an id
/// several elements share names no element alone, so it is never the selector. What it keeps of
/// the element for the check before acting (and healing) is its identity (`android::identity`):
/// whole label, class and resource-id.
pub fn selector_for(tree: &UiTree, elements: &[Element], screen: Bounds, target: &Element) -> Target {
    let identity = &target.identity;
    let node = &tree.nodes[target.node];
    let id = identity.resource_id.clone();
    let shared = tree.nodes.iter().filter(|n| n.resource_id().trim() == id).count() > 1;
    let mut candidates = Vec::new();
    if !id.starts_with("android:id/") && !shared {
        candidates.push((Field::ResourceId, id.clone()));
    }
    candidates.extend(texts_within(tree, target.node).into_iter().map(|t| (Field::Text, t)));
    candidates.push((Field::Text, identity.label.clone()));
    candidates.push((Field::ContentDesc, node.content_desc().to_string()));
    let kept = |selector| Target {
        selector,
        // Even an empty one: a label-less switch that later shows a word of its own is another.
        label: Some(identity.label.clone()),
        class: Some(identity.kind()),
        id: (!id.is_empty()).then(|| id.clone()),
    };
    for (field, value) in candidates {
        if value.trim().is_empty() || value.trim() != value {
            continue;
        }
        let found = find(tree, elements, field, &Matcher::Exact(value.clone()), screen);
        if best_target(&found).is_ok_and(|one| one.element.node == target.node) {
            return kept(match field {
                Field::ResourceId => Selector::ResourceId(value),
                Field::Text => Selector::Text(value),
                _ => Selector::ContentDesc(value),
            });
        }
    }
    kept(Selector::Point(target.at))
}

/// The texts and content-descs of a node and the nodes inside it, in document order (a few); a
/// field's text (what was typed) is none of them.
pub fn texts_within(tree: &UiTree, node: usize) -> Vec<String> {
    let inside = |mut i: usize| loop {
        if i == node {
            return true;
        }
        match tree.nodes[i].parent {
            Some(p) => i = p,
            None => return false,
        }
    };
    tree.nodes
        .iter()
        .enumerate()
        .skip(node)
        .filter(|(i, _)| inside(*i))
        .flat_map(|(_, n)| {
            let text = if is_field(n) {
                String::new()
            } else {
                n.text().to_string()
            };
            [text, n.content_desc().to_string()]
        })
        .filter(|t| !t.trim().is_empty())
        .take(6)
        .collect()
}

/// Whether the screen shows `element` as a password field.
pub fn is_password(element: &Element) -> bool {
    element.flags.iter().any(|f| f == "password")
}

/// `NAME` for a `${NAME}` from any words (a resource-id, a field's content-desc): letters and
/// digits upper-cased, runs of anything else one `_`, starting with a letter (`SECRET_…` else),
/// at most 48 chars; `SECRET` when nothing is left.
pub fn placeholder_word(words: &str) -> String {
    let mut name = String::new();
    for c in words.chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c.to_ascii_uppercase());
        } else if !name.is_empty() && !name.ends_with('_') {
            name.push('_');
        }
    }
    let name = name.trim_end_matches('_');
    let name = match name.chars().next() {
        None => "SECRET".to_string(),
        Some(c) if c.is_ascii_alphabetic() => name.to_string(),
        Some(_) => format!("SECRET_{name}"),
    };
    name.chars()
        .take(48)
        .collect::<String>()
        .trim_end_matches('_')
        .to_string()
}

/// The NAME of a `${NAME}` placeholder.
pub fn placeholder_name(text: &str) -> Option<&str> {
    let name = text.strip_prefix("${")?.strip_suffix('}')?;
    let mut chars = name.chars();
    (chars.next().is_some_and(|c| c.is_ascii_alphabetic()) && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then_some(name)
}

/// A string literal for both formats: JSON's syntax is a JavaScript literal and a YAML
/// double-quoted scalar; the characters either reads as a line break (NEL, U+2028, U+2029 for
/// YAML 1.1 and older JavaScript) are escaped as well, so no text ends a literal early.
pub(crate) fn quoted(s: &str) -> String {
    literal(s)
}

/// Any value as a literal both formats read, as `quoted` writes strings (JSON is a JavaScript
/// literal and a YAML flow value).
pub(crate) fn literal<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value)
        .unwrap_or_else(|_| "null".into())
        .replace('\u{85}', "\\u0085")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// Text for a comment (`//` or `#`): one line. A label that ended the comment would run as code.
pub(crate) fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// A file name's stem for a flow: letters, digits, `_` and `-`, 1 to 64 of them.
pub fn valid_name(name: &str) -> Result<&str, String> {
    let ok =
        !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    ok.then_some(name).ok_or_else(|| {
        format!(
            "`name` {:?} is not a flow name: 1 to 64 letters, digits, _ or -",
            android::text::echoed(name)
        )
    })
}
