//! What an element is: the one identity every part of droidmcp compares. Refs (`ui_refs`: an
//! identity at its place), verify before act (`flow::verify`: the element found against the one
//! a step recorded), the recording's selectors and the fields it keeps secret (`flow`), web
//! elements (the `web:<role>` nodes `tools/ui/web.rs` merges into a dump) and the device panel
//! (by refs) all read `Element::identity`, made here once per reading.
//!
//! An element is its app (package), its class, its resource-id and its whole label, never cut
//! (the listing cuts labels to 60 chars; "…older than one year" and "…older than one hour" are
//! two elements; a row is its title and its summary). Only state leaves the label:
//! - a field's text, which is what was typed (or a revealed password): a field is named by its
//!   content-desc, else its hint;
//! - a web element's value: it is named by its accessible name (the dump's `hint`);
//! - the one word a two-state widget (a Switch, a ToggleButton) with no text of its own shows
//!   for its checked flag, and only when the word agrees with the flag (`state_word`). A dialog's
//!   row reading "Off", a summary reading "On", a checkbox captioned "ON" while unchecked: labels
//!   like any other, so "Off" never stands for "On".
//!
//! A control with no label of its own (a row's unlabelled checkbox, an icon button) is named as
//! a person names it, by its row: "the checkbox of Row B" (`row_label`). So a look-alike that
//! takes its place (Row C's checkbox, after the list refreshed) is another element.

use super::ui_elements::{Element, short_class};
use super::uiautomator::{UiNode, UiTree};

#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Identity {
    pub package: String,
    /// The full class (`android.widget.Button`, `web:button`).
    pub class: String,
    /// The full resource-id, or empty.
    pub resource_id: String,
    /// The whole label, state left out (above).
    pub label: String,
    /// A web element's CSS selector (`tools/ui/web.rs`): where it sits in its document, which
    /// scrolling and a frame's reload keep where its box moves; empty for any other.
    pub web_selector: String,
}

/// The attribute a web element's node carries: the CSS selector that finds it again.
pub const WEB_SELECTOR_ATTR: &str = "web-selector";

impl Identity {
    /// The identity of node `node` of `tree` as an element.
    pub fn of(tree: &UiTree, node: usize) -> Identity {
        let n = &tree.nodes[node];
        let own = super::ui_elements::identity_label(tree, node);
        Identity {
            package: n.attr("package").unwrap_or_default().to_string(),
            class: n.class().to_string(),
            resource_id: n.resource_id().trim().to_string(),
            label: if own.is_empty() { row_label(tree, node) } else { own },
            web_selector: n.attr(WEB_SELECTOR_ATTR).unwrap_or_default().to_string(),
        }
    }

    /// The class's short name (`Button`), as elements list it and a recording keeps it.
    pub fn kind(&self) -> String {
        short_class(&self.class)
    }

    /// Whether this is the element a step recorded: each part it recorded is this one's (the
    /// label whole, the class by its short name, the resource-id in full). A part not recorded
    /// is not compared.
    pub fn is(&self, label: Option<&str>, class: Option<&str>, id: Option<&str>) -> bool {
        label.is_none_or(|l| l.trim() == self.label.trim())
            && class.is_none_or(|c| c == self.kind())
            && id.is_none_or(|i| i.trim() == self.resource_id)
    }
}

/// A text field: what it shows is what was typed (an EditText, a web text box or list box, or
/// anything shown as a password).
pub fn is_field(n: &UiNode) -> bool {
    field_class(n.class()) || n.flag("password")
}

/// Whether elements of `class` are text fields (`is_field`).
pub fn field_class(class: &str) -> bool {
    class.ends_with("EditText")
        || matches!(
            class,
            "web:textbox" | "web:searchbox" | "web:combobox" | "web:spinbutton"
        )
}

/// A node of a web page merged into the dump (`tools/ui/web.rs`).
pub fn is_web(n: &UiNode) -> bool {
    n.class().starts_with("web:")
}

/// A node's own label as identity reads it (`ui_elements` joins a row's from its children's):
/// a web node's accessible name; a field's content-desc, else its hint (a static attribute,
/// where the dump has it), never its text; a two-state widget's content-desc when its text is
/// only its state word; else its text, else its content-desc.
pub(super) fn own_label(n: &UiNode) -> String {
    let desc = n.content_desc().trim();
    let hint = n.attr("hint").unwrap_or_default().trim();
    if is_web(n) {
        hint.to_string()
    } else if is_field(n) {
        if desc.is_empty() { hint } else { desc }.to_string()
    } else if state_word(n) {
        desc.to_string()
    } else if !n.text().trim().is_empty() {
        n.text().trim().to_string()
    } else {
        desc.to_string()
    }
}

/// The label a control with none of its own takes, as a person names it ("the checkbox of Row
/// B"): the own labels (`own_label`), in document order, of the nodes under its nearest ancestor
/// that holds any level with it (a box sharing some of its height: its row, whether the row is a
/// layout of its own or a line of a flat screen). Only a leaf takes one (a container's label
/// would repeat what is beside it), never a field (its name is its content-desc or hint; two
/// unnamed fields are told apart by order, `FieldKey`) nor a web element (its selector places
/// it). Empty when nothing is level with it.
fn row_label(tree: &UiTree, node: usize) -> String {
    let n = &tree.nodes[node];
    let Some(own) = n.bounds().filter(|b| !b.is_empty()) else {
        return String::new();
    };
    if !n.children.is_empty() || is_field(n) || is_web(n) {
        return String::new();
    }
    let level = |i: usize| {
        tree.nodes[i]
            .bounds()
            .is_some_and(|b| !b.is_empty() && b.top < own.bottom && own.top < b.bottom)
    };
    // Up from the node; at each ancestor, only the branches not looked at yet.
    let (mut from, mut at) = (node, n.parent);
    while let Some(parent) = at {
        let mut found: Vec<(usize, String)> = Vec::new();
        let mut stack: Vec<usize> = tree.nodes[parent]
            .children
            .iter()
            .copied()
            .filter(|c| *c != from)
            .collect();
        while let Some(i) = stack.pop() {
            stack.extend(tree.nodes[i].children.iter().copied());
            let label = own_label(&tree.nodes[i]);
            if !label.is_empty() && level(i) {
                found.push((i, label));
            }
        }
        if !found.is_empty() {
            found.sort();
            let mut parts: Vec<String> = Vec::new();
            for (_, label) in found {
                if !parts.contains(&label) {
                    parts.push(label);
                }
            }
            return parts.join(" · ");
        }
        (from, at) = (parent, tree.nodes[parent].parent);
    }
    String::new()
}

/// Whether `n`'s own text is only the word its checked flag shows: a two-state widget (a
/// checkable Switch or ToggleButton, Android's or a web page's) whose text is "On" or "Off"
/// (any case) agreeing with `checked`.
pub fn state_word(n: &UiNode) -> bool {
    let class = short_class(n.class());
    let two_state =
        n.flag("checkable") && (class.contains("Switch") || class.ends_with("ToggleButton") || class == "web:switch");
    let word = if n.flag("checked") { "on" } else { "off" };
    two_state && n.text().trim().eq_ignore_ascii_case(word)
}

/// A field as the recording knows it across readings: its identity, and how many elements
/// before it on its reading have the same one (two unnamed fields of one form are two fields,
/// wherever the keyboard pushes them).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct FieldKey {
    pub identity: Identity,
    pub twin: usize,
}

impl FieldKey {
    pub fn of(element: &Element) -> FieldKey {
        FieldKey {
            identity: element.identity.clone(),
            twin: element.twin,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ui_elements::elements;
    use crate::uiautomator::parse_ui_dump;

    /// The identity labels of a screen's elements, by class: `body` inside a full-screen frame.
    fn labels(body: &str) -> Vec<(String, String)> {
        let xml = format!(
            r#"<hierarchy rotation="0"><node index="0" text="" class="android.widget.FrameLayout" package="p" bounds="[0,0][1080,2400]">{body}</node></hierarchy>"#
        );
        elements(&parse_ui_dump(&xml).unwrap())
            .into_iter()
            .map(|e| (e.kind, e.identity.label))
            .collect()
    }

    fn title(text: &str, top: i32) -> String {
        format!(
            r#"<node index="0" text="{text}" class="android.widget.TextView" package="p" bounds="[60,{top}][700,{}]"/>"#,
            top + 100
        )
    }

    fn check(top: i32) -> String {
        format!(
            r#"<node index="1" text="" resource-id="p:id/select" class="android.widget.CheckBox" package="p" checkable="true" clickable="true" bounds="[880,{}][1000,{}]"/>"#,
            top + 10,
            top + 90
        )
    }

    /// An unlabelled control is named by its row, whether the row is a layout of its own or a
    /// line of a flat screen; a field, a labelled control and one with nothing level keep theirs.
    #[test]
    fn an_unlabelled_control_is_named_by_its_row() {
        let row = |text: &str, top: i32| {
            format!(
                r#"<node index="0" text="" class="android.widget.LinearLayout" package="p" bounds="[0,{top}][1080,{}]">{}<node index="1" text="" class="android.widget.TextView" package="p" bounds="[60,{}][700,{}]"/>{}</node>"#,
                top + 100,
                title(text, top),
                top + 50,
                top + 100,
                check(top)
            )
        };
        let checkboxes = |body: &str| -> Vec<String> {
            labels(body)
                .into_iter()
                .filter(|(kind, _)| kind == "CheckBox")
                .map(|(_, label)| label)
                .collect()
        };
        assert_eq!(
            checkboxes(&(row("Row A", 400) + &row("Row B", 600))),
            ["Row A", "Row B"]
        );
        let flat = title("Row A", 400) + &check(400) + &title("Row B", 600) + &check(600);
        assert_eq!(checkboxes(&flat), ["Row A", "Row B"]);
        // Nothing level with it: no label, as before.
        assert_eq!(checkboxes(&(title("Row A", 400) + &check(800))), [""]);
        // A labelled control keeps its own; an unnamed field is named by nothing beside it.
        let own = r#"<node index="1" text="Remember me" class="android.widget.CheckBox" package="p" checkable="true" clickable="true" bounds="[880,410][1000,490]"/>"#;
        assert_eq!(checkboxes(&(title("Row A", 400) + own)), ["Remember me"]);
        let field = r#"<node index="1" text="typed" class="android.widget.EditText" package="p" clickable="true" bounds="[700,410][1000,490]"/>"#;
        let listed = labels(&(title("Row A", 400) + field));
        assert_eq!(listed[1], ("EditText".to_string(), String::new()));
    }
}
