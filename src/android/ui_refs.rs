//! Refs that name elements by identity, not by position in a list: a ref keeps working on every
//! later reading where exactly that element is still on the screen, and is refused once it is not.
//! A ref number is never given to another element, so an old ref can never tap something new.
//!
//! An element's identity is what a person would say makes it "the same thing": its app
//! (package), its class, its resource-id, where it sits (bounds), and its label. Only what is
//! state leaves it: an editable field's text (typing changes it), the checked and selected
//! flags (never part of the label), and the ON/OFF words an older switch shows as its text. A
//! checkable row keeps its label: two single-choice dialogs put their rows at the same place
//! with the same id, and only the label tells "Light" from "Erase all data". A row that scrolls
//! to another place, or a label that changes, is a new element with a new ref.

use std::collections::HashMap;

use super::ui_elements::Element;
use super::uiautomator::{Bounds, UiTree};

/// Past this many identities a book starts over; numbers keep counting, so old refs stay unknown.
const MAX_IDENTITIES: usize = 20_000;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Identity {
    package: String,
    class: String,
    resource_id: String,
    bounds: Bounds,
    label: String,
}

/// The identity of one element of `tree`.
pub fn identity(tree: &UiTree, element: &Element) -> Identity {
    let node = &tree.nodes[element.node];
    let editable = node.class().ends_with("EditText") || node.flag("password");
    let label = if editable {
        String::new()
    } else if node.flag("checkable") {
        without_state_words(&element.label)
    } else {
        element.label.clone()
    };
    Identity {
        package: node.attr("package").unwrap_or_default().to_string(),
        class: node.class().to_string(),
        resource_id: node.resource_id().to_string(),
        bounds: element.bounds,
        label,
    }
}

/// A checkable's label without the parts that only say its state (`Wi‑Fi · ON` → `Wi‑Fi`).
fn without_state_words(label: &str) -> String {
    label
        .split(" · ")
        .filter(|part| !["on", "off"].contains(&part.trim().to_lowercase().as_str()))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// One device's refs: identity ↔ number, across every reading of its screen.
#[derive(Debug, Clone, Default)]
pub struct RefBook {
    numbers: HashMap<Identity, u64>,
    next: u64,
}

impl RefBook {
    /// Sets each element's `reference` to its identity's number, giving new identities the next
    /// numbers in document order. Two elements with one identity get the same ref, which
    /// `resolve` then refuses as not unique.
    pub fn number(&mut self, tree: &UiTree, elements: &mut [Element]) {
        if self.numbers.len() > MAX_IDENTITIES {
            self.numbers.clear();
        }
        for element in elements.iter_mut() {
            let next = &mut self.next;
            let number = *self.numbers.entry(identity(tree, element)).or_insert_with(|| {
                *next += 1;
                *next
            });
            element.reference = format!("e{number}");
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
mod tests {
    use super::*;
    use crate::android::ui_elements::elements;
    use crate::android::uiautomator::parse_ui_dump;

    fn screen(field_one: &str, checked: bool, title: &str) -> UiTree {
        parse_ui_dump(&format!(
            r#"<hierarchy rotation="0">
      <node index="0" text="" class="android.widget.FrameLayout" package="p" bounds="[0,0][1080,2400]">
        <node index="0" text="{title}" class="android.widget.TextView" package="p" bounds="[40,40][600,100]"/>
        <node index="1" text="{field_one}" resource-id="p:id/user" class="android.widget.EditText" package="p" clickable="true" focusable="true" bounds="[40,200][1040,300]"/>
        <node index="2" text="" resource-id="p:id/pass" class="android.widget.EditText" package="p" clickable="true" focusable="true" password="true" bounds="[40,400][1040,500]"/>
        <node index="3" text="" resource-id="p:id/remember" class="android.widget.Switch" package="p" checkable="true" checked="{checked}" clickable="true" bounds="[900,600][1000,660]"/>
        <node index="4" text="Sign in" resource-id="p:id/go" class="android.widget.Button" package="p" clickable="true" bounds="[40,800][1040,900]"/>
      </node>
    </hierarchy>"#
        ))
        .unwrap()
    }

    fn numbered(book: &mut RefBook, tree: &UiTree) -> Vec<Element> {
        let mut els = elements(tree);
        book.number(tree, &mut els);
        els
    }

    fn ref_of<'a>(els: &'a [Element], label: &str, kind: &str) -> &'a str {
        &els.iter()
            .find(|e| e.label == label && e.kind == kind)
            .unwrap()
            .reference
    }

    #[test]
    fn refs_survive_typing_and_toggling_and_keep_their_numbers() {
        let mut book = RefBook::default();
        let before = numbered(&mut book, &screen("", false, "Login"));
        let pass = before
            .iter()
            .find(|e| e.id.as_deref() == Some("pass"))
            .unwrap()
            .reference
            .clone();
        let go = ref_of(&before, "Sign in", "Button").to_string();
        let after = numbered(&mut book, &screen("alice", true, "Login"));
        assert!(matches!(resolve(&after, &pass), Resolved::One(e) if e.id.as_deref() == Some("pass")));
        assert!(matches!(resolve(&after, &go), Resolved::One(e) if e.label == "Sign in"));
        let user = |els: &[Element]| {
            els.iter()
                .find(|e| e.id.as_deref() == Some("user"))
                .unwrap()
                .reference
                .clone()
        };
        let switch = |els: &[Element]| els.iter().find(|e| e.kind == "Switch").unwrap().reference.clone();
        assert_eq!(user(&before), user(&after), "typing keeps the field's ref");
        assert_eq!(switch(&before), switch(&after), "a flipped switch keeps its ref");
    }

    #[test]
    fn a_ref_never_names_another_element_and_numbers_are_never_reused() {
        let mut book = RefBook::default();
        let login = numbered(&mut book, &screen("", false, "Login"));
        let title = ref_of(&login, "Login", "TextView").to_string();
        // Another screen with an element at the very same place, labelled differently.
        let other = numbered(&mut book, &screen("", false, "Welcome"));
        assert!(matches!(resolve(&other, &title), Resolved::Gone));
        let welcome = ref_of(&other, "Welcome", "TextView");
        assert_ne!(welcome, title);
        assert!(book.knows(&title) && book.knows(welcome));
        assert!(!book.knows("e999"));
    }

    /// A single-choice dialog as AlertDialog lays it out: rows are `CheckedTextView`s with the
    /// id `android:id/text1`, at the same places in every such dialog.
    fn dialog(title: &str, rows: &[(&str, bool)]) -> UiTree {
        let mut xml = format!(
            r#"<hierarchy rotation="0"><node index="0" text="" class="android.widget.FrameLayout" package="com.android.settings" bounds="[0,0][1080,2400]"><node index="0" text="{title}" resource-id="android:id/alertTitle" class="android.widget.TextView" package="com.android.settings" bounds="[77,820][1003,930]"/><node index="1" text="" resource-id="android:id/select_dialog_listview" class="android.widget.ListView" package="com.android.settings" bounds="[77,950][1003,1400]">"#
        );
        for (i, (label, checked)) in rows.iter().enumerate() {
            let top = 950 + 144 * i;
            xml.push_str(&format!(
                r#"<node index="{i}" text="{label}" resource-id="android:id/text1" class="android.widget.CheckedTextView" package="com.android.settings" checkable="true" checked="{checked}" clickable="true" bounds="[77,{top}][1003,{}]"/>"#,
                top + 144
            ));
        }
        xml.push_str("</node></node></hierarchy>");
        parse_ui_dump(&xml).unwrap()
    }

    #[test]
    fn a_row_of_one_dialog_is_refused_on_the_next_dialog_at_the_same_place() {
        let mut book = RefBook::default();
        let theme = numbered(&mut book, &dialog("Choose theme", &[("Light", true), ("Dark", false)]));
        let light = ref_of(&theme, "Light", "CheckedTextView").to_string();
        let reset = numbered(
            &mut book,
            &dialog("Reset options", &[("Erase all data", false), ("Reset Wi-Fi", false)]),
        );
        assert!(
            matches!(resolve(&reset, &light), Resolved::Gone),
            "Light must not become Erase all data"
        );
        // Choosing another row changes state, not identity: the ref stays.
        let chosen = numbered(&mut book, &dialog("Choose theme", &[("Light", false), ("Dark", true)]));
        assert!(matches!(resolve(&chosen, &light), Resolved::One(e) if e.label == "Light"));
    }

    #[test]
    fn an_old_switch_showing_on_or_off_keeps_its_ref() {
        assert_eq!(without_state_words("Wi-Fi · ON"), "Wi-Fi");
        assert_eq!(without_state_words("OFF"), "");
        assert_eq!(without_state_words("Only · Online"), "Only · Online");
    }

    proptest::proptest! {
        /// Two generated dialogs (rows at the same places with the same ids, labels drawn from a
        /// small set so they often coincide, any checked states): every ref of the first that
        /// resolves on the second names an element with the same label, class and id.
        #[test]
        fn a_ref_never_resolves_to_an_element_with_another_label(
            first in proptest::collection::vec((0usize..6, proptest::bool::ANY), 1..6),
            second in proptest::collection::vec((0usize..6, proptest::bool::ANY), 1..6),
            same_title in proptest::bool::ANY,
        ) {
            const LABELS: [&str; 6] = ["Light", "Dark", "Erase all data", "Reset Wi-Fi", "ON", "Wi-Fi · OFF"];
            let rows = |spec: &[(usize, bool)]| spec.iter().map(|(l, c)| (LABELS[*l], *c)).collect::<Vec<_>>();
            let a_tree = dialog("Choose", &rows(&first));
            let b_tree = dialog(if same_title { "Choose" } else { "Reset" }, &rows(&second));
            let mut book = RefBook::default();
            let a = numbered(&mut book, &a_tree);
            let b = numbered(&mut book, &b_tree);
            for element in &a {
                if let Resolved::One(found) = resolve(&b, &element.reference) {
                    let state_free = |e: &Element| without_state_words(&e.label);
                    proptest::prop_assert_eq!(state_free(found), state_free(element));
                    proptest::prop_assert_eq!(&found.kind, &element.kind);
                    proptest::prop_assert_eq!(&found.id, &element.id);
                }
            }
        }
    }

    #[test]
    fn ref_syntax_is_strict() {
        assert_eq!(parse_ref("e12"), Some(12));
        for bad in ["e0", "e-1", "e", "12", "x3", "e01", "e99999999999999999999", "e1 "] {
            assert_eq!(parse_ref(bad), None, "{bad}");
        }
    }
}
