//! Refs that name elements by identity, not by position in a list: a ref keeps working on every
//! later reading where exactly that element is still on the screen, and is refused once it is not.
//! A ref number is never given to another element, so an old ref can never tap something new.
//!
//! An element's identity is what a person would say makes it "the same thing": its app
//! (package), its class, its resource-id, where it sits (bounds), and its whole label, never
//! cut (the listing cuts labels to 60 chars; "…older than one year" and "…older than one hour"
//! are two elements). Only state leaves it: the checked, selected and focused flags (never part
//! of a label), an editable field's text (typing changes it; its hint names it), and the one
//! word a Switch or ToggleButton with no text of its own shows for its checked flag
//! (`identity_label`). Every other word is label: two single-choice dialogs put their rows at
//! the same place with the same id, and only the label tells "Light" from "Erase all data", or
//! "Off" from "On". A row that scrolls to another place, or a label that changes, is a new
//! element with a new ref. A web element (in a WebView's page) sits where its CSS selector
//! says, not at a box: the page scrolls and reflows under it, and a frame reloads.

use std::collections::{HashMap, HashSet};

use super::ui_elements::{Element, identity_label};
use super::uiautomator::{Bounds, UiTree};

/// Past this many identities, or this many bytes of labels (identities hold whole labels, and a
/// device may show huge ones), a book forgets every identity but those of the screen it just
/// read; numbers keep counting, so forgotten refs stay unknown.
const MAX_IDENTITIES: usize = 20_000;
const MAX_LABEL_BYTES: usize = 8 << 20;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Identity {
    package: String,
    class: String,
    resource_id: String,
    bounds: Bounds,
    label: String,
    /// A web element's CSS selector (the WebView's page, tools/ui/web.rs): where it sits in
    /// its document, which scrolling and a frame's reload keep, where its box moves.
    web_selector: String,
}

/// The attribute a web element's node carries: the CSS selector that finds it again.
pub const WEB_SELECTOR_ATTR: &str = "web-selector";

/// The identity of one element of `tree`.
pub fn identity(tree: &UiTree, element: &Element) -> Identity {
    let node = &tree.nodes[element.node];
    // A web page's text field (`web:textbox`, tools/ui/web.rs) is one too.
    let editable = node.class().ends_with("EditText") || node.class() == "web:textbox" || node.flag("password");
    // A field's text is what was typed into it: state. Its hint (a static attribute, where the
    // dump has it) is what it is called.
    let label = if editable {
        node.attr("hint").unwrap_or_default().trim().to_string()
    } else {
        identity_label(tree, element)
    };
    let web_selector = node.attr(WEB_SELECTOR_ATTR).unwrap_or_default().to_string();
    Identity {
        package: node.attr("package").unwrap_or_default().to_string(),
        class: node.class().to_string(),
        resource_id: node.resource_id().to_string(),
        // A page scrolls and reflows under its elements: a web element is where its selector
        // says, not where its box was.
        bounds: if web_selector.is_empty() {
            element.bounds
        } else {
            Bounds::default()
        },
        label,
        web_selector,
    }
}

/// One device's refs: identity ↔ number, across every reading of its screen.
#[derive(Debug, Clone, Default)]
pub struct RefBook {
    numbers: HashMap<Identity, u64>,
    next: u64,
    label_bytes: usize,
}

impl RefBook {
    /// Sets each element's `reference` to its identity's number, giving new identities the next
    /// numbers in document order. Two elements with one identity get the same ref, which
    /// `resolve` then refuses as not unique.
    pub fn number(&mut self, tree: &UiTree, elements: &mut [Element]) {
        for element in elements.iter_mut() {
            let identity = identity(tree, element);
            let number = match self.numbers.get(&identity) {
                Some(number) => *number,
                None => {
                    self.next += 1;
                    self.label_bytes += identity.label.len();
                    self.numbers.insert(identity, self.next);
                    self.next
                }
            };
            element.reference = format!("e{number}");
        }
        if self.numbers.len() > MAX_IDENTITIES || self.label_bytes > MAX_LABEL_BYTES {
            // Keep the refs just handed out: they are the ones the caller is about to use.
            let current: HashSet<u64> = elements.iter().filter_map(|e| parse_ref(&e.reference)).collect();
            self.numbers.retain(|_, number| current.contains(number));
            self.label_bytes = self.numbers.keys().map(|identity| identity.label.len()).sum();
        }
    }

    /// Whether `reference` was ever handed out by this book.
    pub fn knows(&self, reference: &str) -> bool {
        parse_ref(reference).is_some_and(|n| n >= 1 && n <= self.next)
    }
}

/// `e12` → 12. Anything else (e0, e-1, e99999999999999999999, x3) → None.
pub fn parse_ref(reference: &str) -> Option<u64> {
    let digits = reference.strip_prefix('e')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.starts_with('0') {
        return None;
    }
    digits.parse().ok()
}

/// What became of a ref on the current screen.
pub enum Resolved<'a> {
    One(&'a Element),
    Gone,
    Several(Vec<&'a Element>),
}

/// The elements of the current reading (numbered by the same book) that carry `reference`.
pub fn resolve<'a>(elements: &'a [Element], reference: &str) -> Resolved<'a> {
    let hits: Vec<&Element> = elements.iter().filter(|e| e.reference == reference).collect();
    match hits.as_slice() {
        [] => Resolved::Gone,
        [one] => Resolved::One(one),
        _ => Resolved::Several(hits),
    }
}

#[cfg(test)]
mod tests;
