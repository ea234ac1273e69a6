//! Verify before act: what a recording saw of the element a step acted on (its whole label,
//! class and resource-id: its `android::identity::Identity`), and the one check `ui tap` (and
//! long-press) makes with it on the element it resolved, before it touches the device. A
//! replayed step carries it as `recorded`; the element found by its selector, by its point, by
//! its ref or by healing is acted on only when it is that element.

use serde::Deserialize;

use android::ui_elements::Element;
use android::uiautomator::UiTree;

/// What the recording saw of a step's element; each part given must hold on the element found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recorded {
    /// Its whole label as its identity holds it (a row's title and summary; a field's
    /// content-desc or hint, never its text), as `selector_for` keeps it.
    #[serde(default)]
    pub label: Option<String>,
    /// Its class's short name (`Button`).
    #[serde(default)]
    pub class: Option<String>,
    /// Its full resource-id.
    #[serde(default)]
    pub id: Option<String>,
}

/// Refuses `element` when it is not the one recorded, naming both; `what` says how it was found
/// (`resourceId "android:id/button1"`, `the point (540, 1200)`). The element's identity decides
/// (`Identity::is`): its whole label, class and id, state left out only where the identity
/// leaves it out. A label with no class beside it is a selector a person wrote (a Maestro `id`
/// with its `text`, a text a replay healed by): as Maestro reads it, it holds too on an element
/// that shows that text (`shows`).
pub fn check(tree: &UiTree, element: &Element, recorded: &Recorded, what: &str) -> Result<(), String> {
    let identity = &element.identity;
    let written = recorded.class.is_none()
        && recorded
            .label
            .as_deref()
            .is_some_and(|text| shows(tree, element.node, text));
    let label = recorded.label.as_deref().filter(|_| !written);
    if identity.is(label, recorded.class.as_deref(), recorded.id.as_deref()) {
        return Ok(());
    }
    let describe = |label: &str, class: Option<&str>, id: Option<&str>| {
        let mut out = format!("{:?}", android::text::echoed(label));
        let more: Vec<&str> = [class, id].into_iter().flatten().filter(|s| !s.is_empty()).collect();
        if !more.is_empty() {
            out.push_str(&format!(" ({})", more.join(" ")));
        }
        out
    };
    Err(format!(
        "{what} is now {}, not the recorded {}; nothing was done. The screen changed under the flow: check it (ui dump), then record the step again",
        describe(&identity.label, Some(&identity.kind()), Some(&identity.resource_id)),
        describe(
            recorded.label.as_deref().unwrap_or(&identity.label),
            recorded.class.as_deref(),
            recorded.id.as_deref()
        ),
    ))
}

/// Whether node `node` shows `text` as a replay reads a literal Maestro `text`: its own text,
/// content-desc or hint, or a text inside it (a row that shows a title is what a tap on the
/// title taps).
fn shows(tree: &UiTree, node: usize, text: &str) -> bool {
    let n = &tree.nodes[node];
    let own = [n.text(), n.content_desc(), n.attr("hint").unwrap_or_default()].map(str::to_string);
    own.into_iter()
        .chain(super::texts_within(tree, node))
        .any(|shown| !shown.trim().is_empty() && shown.trim() == text.trim())
}

/// The element a tap at `at` lands on: the smallest tappable element under it.
pub fn under(elements: &[Element], at: [i32; 2]) -> Option<&Element> {
    elements
        .iter()
        .filter(|e| e.clickable && e.bounds.contains(at[0], at[1]))
        .min_by_key(|e| i64::from(e.bounds.right - e.bounds.left) * i64::from(e.bounds.bottom - e.bounds.top))
}
