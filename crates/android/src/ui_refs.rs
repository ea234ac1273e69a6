//! Refs that name elements by identity, not by position in a list: a ref keeps working on every
//! later reading where exactly that element is still on the screen, and is refused once it is not.
//! A ref number is never given to another element, so an old ref can never tap something new.
//!
//! A ref's identity is its element's (`identity::Identity`: app, class, resource-id and whole
//! label, state left out) at the place it sits (bounds): two single-choice dialogs put their
//! rows at the same place with the same id, and only the label tells "Light" from "Erase all
//! data", or "Off" from "On". A row that scrolls to another place, or a label that changes, is a
//! new element with a new ref. A web element (in a WebView's page) sits where its CSS selector
//! says (part of its identity), not at a box: the page scrolls and reflows under it, and a frame
//! reloads.

use std::collections::{HashMap, HashSet};

use super::identity::Identity;
use super::ui_elements::Element;
use super::uiautomator::Bounds;

/// Past this many identities, or this many bytes of labels (identities hold whole labels, and a
/// device may show huge ones), a book forgets every identity but those of the screen it just
/// read; numbers keep counting, so forgotten refs stay unknown.
const MAX_IDENTITIES: usize = 20_000;
const MAX_LABEL_BYTES: usize = 8 << 20;

/// What a ref names: an identity at its place (none for a web element: its selector places it).
type Placed = (Identity, Bounds);

/// One device's refs: identity ↔ number, across every reading of its screen. It is written out
/// whole (JSON, its identities as a list) for instances that share it (`--state`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RefBook {
    #[serde(with = "placed_list")]
    numbers: HashMap<Placed, u64>,
    next: u64,
    label_bytes: usize,
}

impl RefBook {
    /// Sets each element's `reference` to its identity's number, giving new identities the next
    /// numbers in document order. Two elements with one identity get the same ref, which
    /// `resolve` then refuses as not unique.
    pub fn number(&mut self, elements: &mut [Element]) {
        for element in elements.iter_mut() {
            let place = match element.identity.web_selector.is_empty() {
                true => element.bounds,
                false => Bounds::default(),
            };
            let placed = (element.identity.clone(), place);
            let number = match self.numbers.get(&placed) {
                Some(number) => *number,
                None => {
                    self.next += 1;
                    self.label_bytes += placed.0.label.len();
                    self.numbers.insert(placed, self.next);
                    self.next
                }
            };
            element.reference = format!("e{number}");
        }
        if self.numbers.len() > MAX_IDENTITIES || self.label_bytes > MAX_LABEL_BYTES {
            // Keep the refs just handed out: they are the ones the caller is about to use.
            let current: HashSet<u64> = elements.iter().filter_map(|e| parse_ref(&e.reference)).collect();
            self.numbers.retain(|_, number| current.contains(number));
            self.label_bytes = self.numbers.keys().map(|(identity, _)| identity.label.len()).sum();
        }
    }

    /// Whether `reference` was ever handed out by this book.
    pub fn knows(&self, reference: &str) -> bool {
        parse_ref(reference).is_some_and(|n| n >= 1 && n <= self.next)
    }
}

/// A book's map as a list of pairs (JSON's keys are strings; an identity is not).
mod placed_list {
    use std::collections::HashMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::Placed;

    pub fn serialize<S: Serializer>(numbers: &HashMap<Placed, u64>, to: S) -> Result<S::Ok, S::Error> {
        let mut pairs: Vec<(&Placed, &u64)> = numbers.iter().collect();
        pairs.sort_by_key(|(_, number)| **number);
        pairs.serialize(to)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(from: D) -> Result<HashMap<Placed, u64>, D::Error> {
        Ok(Vec::<(Placed, u64)>::deserialize(from)?.into_iter().collect())
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
