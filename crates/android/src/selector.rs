//! Maestro's element selectors as Maestro (1.39, `Filters.kt` and `Orchestra.buildFilter`) reads
//! them on Android: pure functions over a parsed `UiTree`, no I/O.
//!
//! The screen is what Maestro sees: nodes less than 10% on the screen (with nothing on it inside
//! them) are left out. Each key given is one filter over the candidates, and all must hold: their
//! results are intersected, in the order of the first key's (text, id, size, below, above, leftOf,
//! rightOf, containsChild, containsDescendants, enabled, selected, checked, focused). Then `index`
//! takes the Nth by position (top, then left), or else clickable nodes come first. The first node
//! left is the one Maestro acts on. One difference, on purpose: a `childOf` inside a relation's
//! selector holds here too (Maestro 1.39 looks `childOf` up only at the top and ignores it below,
//! which would silently drop a key the flow gives).

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::ui_elements::Matcher;
use super::uiautomator::{Bounds, UiTree};

/// A Maestro selector (`tapOn: {text: Delete, below: {text: "Row 3"}}`). `text` and `id` are
/// regular expressions over the whole value (case ignored; a text that is no valid regex, or that
/// equals the value, matches itself); the relational keys hold selectors of their own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ElementSelector {
    /// The text, content-desc or hint text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The resource-id, whole or after its last `/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The Nth match (from 0) by position: top, then left. Maestro reads it as a number in text.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "index")]
    #[schemars(with = "Option<i64>")]
    pub index: Option<Index>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focused: Option<bool>,
    /// Device pixels, within `tolerance` (0 by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<i32>,
    /// Top edge below (above) the anchor's top edge; nearest (by centers) first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub below: Option<Box<ElementSelector>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub above: Option<Box<ElementSelector>>,
    /// Left edge left (right) of the anchor's left edge; nearest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_of: Option<Box<ElementSelector>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub right_of: Option<Box<ElementSelector>>,
    /// Inside the element this finds (itself included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_of: Option<Box<ElementSelector>>,
    /// The element this finds (on the whole screen) is one of its direct children.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains_child: Option<Box<ElementSelector>>,
    /// Each of these matches something inside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains_descendants: Option<Vec<ElementSelector>>,
}

/// Which match `index` takes: its place, from 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Index {
    At(i64),
}

impl std::fmt::Display for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Index::At(i) => write!(f, "{i}"),
        }
    }
}

/// Maestro's `index` is text read as a number (`"2"`, `2.0`, or what a `${…}` gave), cut to a
/// whole number.
fn index<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Index>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Given {
        Number(f64),
        Text(String),
    }
    let number = match Given::deserialize(d)? {
        Given::Number(n) => n,
        Given::Text(t) => t.trim().parse::<f64>().map_err(|_| {
            serde::de::Error::custom(format!(
                "index {:?} is not a number: give the match's place from 0 (by position: top, then left)",
                crate::text::cut(&t, 40)
            ))
        })?,
    };
    if !number.is_finite() {
        return Err(serde::de::Error::custom("index is a whole number from 0"));
    }
    Ok(Some(Index::At(number.trunc() as i64)))
}

impl ElementSelector {
    /// `text "Delete", below (text "Row 3")`: how a message names it.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let quoted = |v: &str| format!("{:?}", crate::text::cut(v, 60));
        if let Some(t) = &self.text {
            parts.push(format!("text {}", quoted(t)));
        }
        if let Some(i) = &self.id {
            parts.push(format!("id {}", quoted(i)));
        }
        for (name, value) in [
            ("enabled", self.enabled),
            ("selected", self.selected),
            ("checked", self.checked),
            ("focused", self.focused),
        ] {
            if let Some(v) = value {
                parts.push(format!("{name} {v}"));
            }
        }
        for (name, value) in [
            ("width", self.width),
            ("height", self.height),
            ("tolerance", self.tolerance),
        ] {
            if let Some(v) = value {
                parts.push(format!("{name} {v}"));
            }
        }
        for (name, nested) in self.relations() {
            parts.push(format!("{name} ({})", nested.describe()));
        }
        if let Some(all) = &self.contains_descendants {
            let each: Vec<String> = all.iter().map(ElementSelector::describe).collect();
            parts.push(format!("containsDescendants ({})", each.join("; ")));
        }
        if let Some(i) = &self.index {
            parts.push(format!("index {i}"));
        }
        if parts.is_empty() {
            return "any element".into();
        }
        parts.join(", ")
    }

    /// The nested selectors that name one element each, by key.
    fn relations(&self) -> Vec<(&'static str, &ElementSelector)> {
        [
            ("below", &self.below),
            ("above", &self.above),
            ("leftOf", &self.left_of),
            ("rightOf", &self.right_of),
            ("childOf", &self.child_of),
            ("containsChild", &self.contains_child),
        ]
        .into_iter()
        .filter_map(|(name, s)| s.as_deref().map(|s| (name, s)))
        .collect()
    }

    /// The text fields, nested ones included (what a flow's `${…}` may fill in).
    pub fn texts(&self) -> Vec<&str> {
        let mut out: Vec<&str> = [&self.text, &self.id]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        for (_, nested) in self.relations() {
            out.extend(nested.texts());
        }
        for nested in self.contains_descendants.iter().flatten() {
            out.extend(nested.texts());
        }
        out
    }
}

/// The nodes `selector` matches on a screen of `screen` device pixels, in Maestro's order: the
/// first is the one Maestro acts on. Empty when none matches.
pub fn find_nodes(tree: &UiTree, screen: [u32; 2], selector: &ElementSelector) -> Vec<usize> {
    let view = View::new(tree, screen);
    let compiled = Compiled::new(selector);
    view.filter(&view.all, &compiled)
}

/// A regex as Maestro compiles a selector's text or id: case ignored, `.` matching newlines, `^`
/// and `$` at lines, matched against the whole value; one that does not compile is its own text.
struct Pattern {
    regex: Option<Matcher>,
    source: String,
}

impl Pattern {
    fn new(source: &str) -> Pattern {
        let flags = "(?sm)";
        // Checked alone first: wrapped, `a)|(b` would read as something else.
        let regex = match Matcher::regex(&format!("{flags}{source}")) {
            Ok(_) => Matcher::regex(&format!(r"{flags}\A(?:{source})\z")).ok(),
            Err(_) => None,
        };
        let regex = regex.or_else(|| Matcher::regex(&format!(r"{flags}\A{}\z", regex::escape(source))).ok());
        Pattern {
            regex,
            source: source.to_string(),
        }
    }

    fn whole(&self, value: &str) -> bool {
        self.regex.as_ref().is_some_and(|r| r.matches(value))
    }

    /// A text matches the regex, or is the pattern itself; also with its line breaks as spaces.
    fn text(&self, value: &str) -> bool {
        let flat = value.replace('\n', " ");
        [value, flat.as_str()]
            .into_iter()
            .any(|v| self.whole(v) || self.source == v)
    }

    /// An id matches whole, or after its last `/` (`login` for `com.app:id/login`).
    fn id(&self, value: &str) -> bool {
        self.whole(value) || self.whole(value.rsplit('/').next().unwrap_or(value))
    }
}

/// A selector with its regexes built once (a relation is evaluated many times).
struct Compiled<'a> {
    selector: &'a ElementSelector,
    text: Option<Pattern>,
    id: Option<Pattern>,
    relations: Vec<(&'static str, Compiled<'a>)>,
    descendants: Vec<Compiled<'a>>,
}

impl<'a> Compiled<'a> {
    fn new(selector: &'a ElementSelector) -> Compiled<'a> {
        Compiled {
            selector,
            text: selector.text.as_deref().map(Pattern::new),
            id: selector.id.as_deref().map(Pattern::new),
            relations: selector
                .relations()
                .into_iter()
                .map(|(name, s)| (name, Compiled::new(s)))
                .collect(),
            descendants: selector
                .contains_descendants
                .iter()
                .flatten()
                .map(Compiled::new)
                .collect(),
        }
    }

    fn relation(&self, name: &str) -> Option<&Compiled<'a>> {
        self.relations.iter().find(|(n, _)| *n == name).map(|(_, c)| c)
    }
}

/// The screen as Maestro sees it: the nodes kept (in document order) and each one's kept
/// children.
struct View<'t> {
    tree: &'t UiTree,
    kept: Vec<bool>,
    all: Vec<usize>,
}

impl<'t> View<'t> {
    fn new(tree: &'t UiTree, screen: [u32; 2]) -> View<'t> {
        let n = tree.nodes.len();
        let mut kept = vec![false; n];
        // Children come after their parent in document order: decide them first.
        for i in (0..n).rev() {
            let node = &tree.nodes[i];
            let shown = visible_share(node.bounds(), screen);
            kept[i] = shown.is_nan() || shown >= 0.1 || node.children.iter().any(|&c| kept[c]);
        }
        // A toast is kept whole, wherever it is.
        for i in 0..n {
            if tree.nodes[i].class() == "android.widget.Toast" {
                let mut stack = vec![i];
                while let Some(j) = stack.pop() {
                    kept[j] = true;
                    stack.extend(tree.nodes[j].children.iter().copied());
                }
            }
        }
        // Nothing on the screen: Maestro keeps the whole tree.
        if !kept.iter().any(|k| *k) {
            kept = vec![true; n];
        }
        let all = (0..n).filter(|&i| kept[i]).collect();
        View { tree, kept, all }
    }

    fn children(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        self.tree.nodes[node].children.iter().copied().filter(|&c| self.kept[c])
    }

    fn bounds(&self, node: usize) -> Option<Bounds> {
        self.tree.nodes[node].bounds()
    }

    fn flag(&self, node: usize, name: &str) -> bool {
        self.tree.nodes[node].flag(name)
    }

    /// `nodes` that match `c`, in Maestro's order.
    fn filter(&self, nodes: &[usize], c: &Compiled) -> Vec<usize> {
        let s = c.selector;
        // Inside the element `childOf` finds on the whole screen (itself included).
        let within: Vec<usize>;
        let nodes = match c.relation("childOf") {
            Some(parent) => {
                let Some(parent) = self.first(&self.filter(&self.all, parent)) else {
                    return Vec::new();
                };
                within = nodes
                    .iter()
                    .copied()
                    .filter(|&n| self.tree.is_within(n, parent))
                    .collect();
                &within[..]
            }
            None => nodes,
        };
        let mut results: Vec<Vec<usize>> = Vec::new();
        if let Some(p) = &c.text {
            results.push(self.deepest(nodes, &|n| {
                let node = &self.tree.nodes[n];
                ["text", "hintText", "content-desc"]
                    .into_iter()
                    .filter_map(|a| node.attr(a))
                    .any(|v| p.text(v))
            }));
        }
        if let Some(p) = &c.id {
            results.push(self.deepest(nodes, &|n| {
                self.tree.nodes[n].attr("resource-id").is_some_and(|v| p.id(v))
            }));
        }
        if s.width.is_some() || s.height.is_some() {
            let tolerance = s.tolerance.unwrap_or(0).unsigned_abs();
            let near = |want: Option<i32>, got: i32| want.is_none_or(|w| w.abs_diff(got) <= tolerance);
            results.push(
                nodes
                    .iter()
                    .copied()
                    .filter(|&n| {
                        self.bounds(n)
                            .is_some_and(|b| near(s.width, b.width()) && near(s.height, b.height()))
                    })
                    .collect(),
            );
        }
        type Beside = fn(&Bounds, &Bounds) -> bool;
        let sides: [(&str, Beside); 4] = [
            ("below", |it, other| it.top > other.top),
            ("above", |it, other| it.top < other.top),
            ("leftOf", |it, other| it.left < other.left),
            ("rightOf", |it, other| it.left > other.left),
        ];
        for (name, beside) in sides {
            if let Some(anchor) = c.relation(name) {
                results.push(self.relative(nodes, anchor, beside));
            }
        }
        if let Some(child) = c.relation("containsChild") {
            // Found on the whole screen, as Maestro looks it up.
            results.push(match self.first(&self.filter(&self.all, child)) {
                Some(child) => nodes
                    .iter()
                    .copied()
                    .filter(|&n| self.children(n).any(|k| k == child))
                    .collect(),
                None => Vec::new(),
            });
        }
        if !c.descendants.is_empty() {
            results.push(
                nodes
                    .iter()
                    .copied()
                    .filter(|&n| {
                        c.descendants
                            .iter()
                            .all(|d| self.children(n).any(|k| self.matches_within(k, d)))
                    })
                    .collect(),
            );
        }
        for (name, want) in [
            ("enabled", s.enabled),
            ("selected", s.selected),
            ("checked", s.checked),
            ("focused", s.focused),
        ] {
            if let Some(want) = want {
                results.push(nodes.iter().copied().filter(|&n| self.flag(n, name) == want).collect());
            }
        }
        let mut out = intersect(nodes, results);
        match &s.index {
            Some(Index::At(i)) => {
                let at = |n: usize| self.bounds(n).map_or((i32::MAX, i32::MAX), |b| (b.top, b.left));
                out.sort_by_key(|&n| at(n));
                usize::try_from(*i)
                    .ok()
                    .and_then(|i| out.get(i).copied())
                    .into_iter()
                    .collect()
            }
            None => {
                out.sort_by_key(|&n| !self.flag(n, "clickable"));
                out
            }
        }
    }

    /// The first node with bounds (Maestro's lookup of one element).
    fn first(&self, found: &[usize]) -> Option<usize> {
        found.first().copied().filter(|&n| self.bounds(n).is_some())
    }

    /// Each match replaced by its deepest matching descendant, through matching children.
    fn deepest(&self, nodes: &[usize], matches: &dyn Fn(usize) -> bool) -> Vec<usize> {
        nodes
            .iter()
            .copied()
            .filter(|&n| matches(n))
            .map(|n| {
                let children: Vec<usize> = self.children(n).collect();
                self.deepest(&children, matches).last().copied().unwrap_or(n)
            })
            .collect()
    }

    /// `nodes` beside an anchor (found among the same nodes), nearest (by centers) first.
    fn relative(&self, nodes: &[usize], anchor: &Compiled, beside: fn(&Bounds, &Bounds) -> bool) -> Vec<usize> {
        let anchors: Vec<Bounds> = self
            .filter(nodes, anchor)
            .into_iter()
            .filter_map(|a| self.bounds(a))
            .collect();
        let mut pairs: Vec<(usize, f64)> = Vec::new();
        for &n in nodes {
            let Some(b) = self.bounds(n) else { continue };
            for a in anchors.iter().filter(|a| beside(&b, a)) {
                pairs.push((n, distance(&b, a)));
            }
        }
        pairs.sort_by(|x, y| x.1.total_cmp(&y.1));
        pairs.into_iter().map(|(n, _)| n).collect()
    }

    /// Whether `node` alone, or something inside it, matches `c`.
    fn matches_within(&self, node: usize, c: &Compiled) -> bool {
        !self.filter(&[node], c).is_empty() || self.children(node).any(|k| self.matches_within(k, c))
    }
}

/// The nodes every result holds, in the first result's order, once each; all of `nodes` when no
/// key was given.
fn intersect(nodes: &[usize], results: Vec<Vec<usize>>) -> Vec<usize> {
    let mut results = results.into_iter();
    let Some(first) = results.next() else {
        return nodes.to_vec();
    };
    let others: Vec<HashSet<usize>> = results.map(|r| r.into_iter().collect()).collect();
    let mut seen = HashSet::new();
    first
        .into_iter()
        .filter(|n| seen.insert(*n) && others.iter().all(|o| o.contains(n)))
        .collect()
}

/// How much of `bounds` is on a `screen`-sized display (Maestro's `getVisiblePercentage`): 0 for
/// none or no bounds; a zero-area box reads as not-a-number, which Maestro keeps.
fn visible_share(bounds: Option<Bounds>, screen: [u32; 2]) -> f64 {
    let Some(b) = bounds else { return 0.0 };
    let (w, h) = (i64::from(screen[0]), i64::from(screen[1]));
    let (x, y, bw, bh) = (
        i64::from(b.left),
        i64::from(b.top),
        i64::from(b.width()),
        i64::from(b.height()),
    );
    if bw == 0 && bh == 0 {
        return 0.0;
    }
    if x <= 0 && y <= 0 && x + bw >= w && y + bh >= h {
        return 1.0;
    }
    let seen_x = 0.max((x + bw).min(w) - x.max(0));
    let seen_y = 0.max((y + bh).min(h) - y.max(0));
    (seen_x * seen_y) as f64 / (bw * bh) as f64
}

/// The distance between two boxes' centers, Maestro's way (left + width / 2).
fn distance(a: &Bounds, b: &Bounds) -> f64 {
    let center = |b: &Bounds| (f64::from(b.left + b.width() / 2), f64::from(b.top + b.height() / 2));
    let ((ax, ay), (bx, by)) = (center(a), center(b));
    ((ax - bx).powi(2) + (ay - by).powi(2)).sqrt()
}

#[cfg(test)]
mod tests;
