//! The elements of a window dump that a model acts on, each with a label it can read: pure
//! functions over a parsed `UiTree`.
//!
//! An element matters if it is clickable, long-clickable, checkable, scrollable or focusable, or
//! has text or a content-desc. A tappable row with no text of its own takes its label from its
//! descendants' texts, so list rows are never unlabeled; a plain text inside such a row is then
//! left out, because the row already says it. Containers (scrollable or focusable only) keep just
//! their own label, so they do not repeat the whole screen.

use super::identity::{self, Identity};
use super::text::cut;
use super::uiautomator::{Bounds, UiNode, UiTree};

/// Longest label listed; longer ones end with `…` (only in the listing: identity reads the
/// whole label).
pub const MAX_LABEL_CHARS: usize = 60;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Element {
    /// `e1`, `e2`… in document order here; the server renumbers them by identity
    /// (`ui_refs`), so a ref keeps naming one element across readings.
    #[serde(rename = "ref")]
    pub reference: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub label: String,
    /// The class's short name: `Button`, `Switch`, `EditText`…
    #[serde(rename = "type")]
    pub kind: String,
    /// The resource-id without its `package:id/` prefix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The center, in device pixels: where a tap lands.
    pub at: [i32; 2],
    /// Only the set ones: checked, selected, disabled, password, scrollable, focused.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    #[serde(skip)]
    pub node: usize,
    #[serde(skip)]
    pub bounds: Bounds,
    #[serde(skip)]
    pub clickable: bool,
    /// What the element is (`identity`): its whole label, class, id and app.
    #[serde(skip)]
    #[schemars(skip)]
    pub identity: Identity,
    /// How many elements before it on its reading have the same identity.
    #[serde(skip)]
    pub twin: usize,
}

fn interactive(n: &UiNode) -> bool {
    ["clickable", "long-clickable", "checkable", "scrollable"]
        .iter()
        .any(|f| n.flag(f))
}

fn matters(n: &UiNode) -> bool {
    interactive(n) || n.flag("focusable") || !n.text().trim().is_empty() || !n.content_desc().trim().is_empty()
}

pub fn short_class(class: &str) -> String {
    class.rsplit(['.', '$']).next().unwrap_or(class).to_string()
}

fn short_id(id: &str) -> Option<String> {
    let id = id.trim();
    if id.is_empty() {
        return None;
    }
    Some(id.split_once(":id/").map_or(id, |(_, short)| short).to_string())
}

/// The node's own text or content-desc.
fn own_label(n: &UiNode) -> String {
    let text = n.text().trim();
    if !text.is_empty() {
        return text.to_string();
    }
    n.content_desc().trim().to_string()
}

/// The own labels (by `own`) of the node's descendants, in order, joined by ` · `.
fn descendant_label(tree: &UiTree, id: usize, own: fn(&UiNode) -> String) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut stack: Vec<usize> = tree.nodes[id].children.iter().rev().copied().collect();
    while let Some(i) = stack.pop() {
        let label = own(&tree.nodes[i]);
        if !label.is_empty() && !parts.contains(&label) {
            parts.push(label);
        }
        stack.extend(tree.nodes[i].children.iter().rev());
    }
    parts.join(" · ")
}

/// Own label, else the descendants' labels.
fn whole_label(tree: &UiTree, id: usize, own: fn(&UiNode) -> String) -> String {
    let label = own(&tree.nodes[id]);
    if label.is_empty() {
        descendant_label(tree, id, own)
    } else {
        label
    }
}

/// The full label: own text or desc, else the descendants' texts.
pub fn label_of(tree: &UiTree, id: usize) -> String {
    whole_label(tree, id, own_label)
}

/// The uncut label of node `id` as an element: something tappable speaks for its children; a
/// container's label would repeat them, so it has only its own.
fn element_label(tree: &UiTree, id: usize, own: fn(&UiNode) -> String) -> String {
    if tappable(&tree.nodes[id]) {
        whole_label(tree, id, own)
    } else {
        own(&tree.nodes[id])
    }
}

/// The label an element's identity holds (`identity`): its whole label, never cut (two rows that
/// differ after the listed chars are two elements), state left out (`identity::own_label`).
pub(super) fn identity_label(tree: &UiTree, node: usize) -> String {
    element_label(tree, node, identity::own_label)
}

/// The elements that matter, in document order, numbered `e1`…
pub fn elements(tree: &UiTree) -> Vec<Element> {
    let mut out = Vec::new();
    for (i, n) in tree.nodes.iter().enumerate() {
        if !matters(n) {
            continue;
        }
        let Some(bounds) = n.bounds() else { continue };
        if bounds.is_empty() {
            continue;
        }
        // A plain text inside an interactive ancestor: the ancestor's label already holds it.
        if !interactive(n) && !n.flag("focusable") && has_interactive_ancestor(tree, i) {
            continue;
        }
        // Listed cut; identity (`identity_label`) reads it whole.
        let label = cut(&element_label(tree, i, own_label), MAX_LABEL_CHARS);
        let mut flags = Vec::new();
        for (attr, name) in [
            ("checked", "checked"),
            ("selected", "selected"),
            ("password", "password"),
            ("scrollable", "scrollable"),
            ("focused", "focused"),
        ] {
            if n.flag(attr) {
                flags.push(name.to_string());
            }
        }
        if n.attr("enabled") == Some("false") {
            flags.push("disabled".into());
        }
        let (x, y) = bounds.center();
        out.push(Element {
            reference: String::new(),
            label,
            kind: short_class(n.class()),
            id: short_id(n.resource_id()),
            at: [x, y],
            flags,
            node: i,
            bounds,
            clickable: tappable(n),
            identity: Identity::of(tree, i),
            twin: 0,
        });
    }
    let mut seen: std::collections::HashMap<Identity, usize> = std::collections::HashMap::new();
    for (k, e) in out.iter_mut().enumerate() {
        e.reference = format!("e{}", k + 1);
        let count = seen.entry(e.identity.clone()).or_default();
        e.twin = *count;
        *count += 1;
    }
    out
}

fn has_interactive_ancestor(tree: &UiTree, id: usize) -> bool {
    let mut at = tree.nodes[id].parent;
    while let Some(p) = at {
        if interactive(&tree.nodes[p]) && !tree.nodes[p].flag("scrollable") {
            return true;
        }
        at = tree.nodes[p].parent;
    }
    false
}

/// What `find` looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// Text, content-desc, or the label taken from children.
    Text,
    ResourceId,
    ContentDesc,
    ClassName,
}

/// How a query matches, ignoring case (an exact-case match ranks first). Queries are kept as
/// given.
pub enum Matcher {
    Exact(String),
    Contains(String),
    Regex(regex::Regex),
}

/// The largest compiled regex `ui` takes.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

impl Matcher {
    /// A regex as `ui` reads one (case-insensitive, as a person reads a label), or why not.
    pub fn regex(pattern: &str) -> Result<Matcher, String> {
        regex::RegexBuilder::new(pattern)
            .case_insensitive(true)
            .size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map(Matcher::Regex)
            .map_err(|e| format!("not a valid regex: {e}"))
    }

    /// Whether `pattern` is a regex a Java engine reads (as Maestro's does) that `ui` cannot:
    /// look-around, a back-reference, or one past the size limit; why, if so. Decided from the
    /// parsers' own kinds of error, never their words.
    pub fn beyond_ui(pattern: &str) -> Option<String> {
        use regex_syntax::ast::ErrorKind;
        let error = Matcher::regex(pattern).err()?;
        let unsupported = match regex_syntax::ast::parse::Parser::new().parse(pattern) {
            Err(e) => matches!(
                e.kind(),
                ErrorKind::UnsupportedLookAround | ErrorKind::UnsupportedBackreference
            ),
            // It parses: what `ui` refused is its size.
            Ok(_) => matches!(
                regex::RegexBuilder::new(pattern)
                    .case_insensitive(true)
                    .size_limit(REGEX_SIZE_LIMIT)
                    .build(),
                Err(regex::Error::CompiledTooBig(_))
            ),
        };
        unsupported.then_some(error)
    }

    pub fn matches(&self, value: &str) -> bool {
        match self {
            Matcher::Exact(q) => value.trim().to_lowercase() == q.trim().to_lowercase(),
            Matcher::Contains(q) => value.to_lowercase().contains(&q.to_lowercase()),
            Matcher::Regex(r) => r.is_match(value),
        }
    }

    /// How `value` matches, if it does.
    pub fn rank(&self, value: &str) -> Option<Rank> {
        if !self.matches(value) {
            return None;
        }
        let lower = value.trim().to_lowercase();
        Some(match self {
            Matcher::Exact(q) | Matcher::Contains(q) if value.trim() == q.trim() => Rank::ExactCase,
            Matcher::Exact(_) => Rank::Exact,
            Matcher::Contains(q) if lower == q.trim().to_lowercase() => Rank::Exact,
            Matcher::Contains(q) if lower.starts_with(&q.trim().to_lowercase()) => Rank::Prefix,
            Matcher::Contains(_) | Matcher::Regex(_) => Rank::Substring,
        })
    }
}

/// How well a value matches: the lower the better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rank {
    /// Equal, letter case included.
    ExactCase,
    /// Equal but for letter case.
    Exact,
    Prefix,
    Substring,
}

/// A match and why it ranks where it does.
#[derive(Debug, Clone)]
pub struct Found {
    pub element: Element,
    pub rank: Rank,
    pub visible: bool,
    /// The match was on the target's own text or desc, not on a text inside it.
    pub direct: bool,
}

impl Found {
    pub fn exact(&self) -> bool {
        self.rank <= Rank::Exact
    }

    fn standing(&self) -> (Rank, bool, bool) {
        (self.rank, !self.visible, !self.direct)
    }
}

fn tappable(n: &UiNode) -> bool {
    n.flag("clickable") || n.flag("long-clickable") || n.flag("checkable")
}

/// Whether a tappable descendant of `id` has a label of its own (then `id` is a container of
/// rows, and its joined label speaks for none of them).
fn has_labelled_tappable_descendant(tree: &UiTree, id: usize) -> bool {
    let mut stack: Vec<usize> = tree.nodes[id].children.clone();
    while let Some(i) = stack.pop() {
        let n = &tree.nodes[i];
        if tappable(n) && !label_of(tree, i).is_empty() {
            return true;
        }
        stack.extend(n.children.iter().copied());
    }
    false
}

/// Matching targets, best first: exact, then prefix, then substring; visible before off-screen.
/// A text that is not itself tappable stands for its nearest tappable ancestor (the row a person
/// would tap); texts that lead to one target are one match. Only a row of its own (no labelled
/// tappable inside) matches by its children's joined texts, and an unlabelled scroll container
/// never matches, so a screen's containers do not pad the list.
pub fn find(tree: &UiTree, all: &[Element], field: Field, matcher: &Matcher, screen: Bounds) -> Vec<Found> {
    let values = |n: &UiNode| -> Vec<String> {
        match field {
            // A field's hint names it too (Maestro's `text` matches hints as well).
            Field::Text => vec![
                n.text().to_string(),
                n.content_desc().to_string(),
                n.attr("hint").unwrap_or_default().to_string(),
            ],
            Field::ResourceId => {
                let rid = n.resource_id();
                vec![rid.to_string(), short_id(rid).unwrap_or_default()]
            }
            Field::ContentDesc => vec![n.content_desc().to_string()],
            Field::ClassName => vec![n.class().to_string(), short_class(n.class())],
        }
    };
    let by_node = |node: usize| all.iter().find(|e| e.node == node);
    let mut found: Vec<Found> = Vec::new();
    for (i, n) in tree.nodes.iter().enumerate() {
        let mut rank = values(n)
            .iter()
            .filter(|v| !v.trim().is_empty())
            .filter_map(|v| matcher.rank(v))
            .min();
        // A row's joined label: any match for a row of its own; only the whole label (as the
        // dump lists it) for a row that holds labelled tappables, which speaks for none of them.
        if field == Field::Text && tappable(n) && n.text().trim().is_empty() && n.content_desc().trim().is_empty() {
            let joined = label_of(tree, i);
            let listed = cut(&joined, MAX_LABEL_CHARS);
            let joined_rank = if has_labelled_tappable_descendant(tree, i) {
                [joined.as_str(), listed.as_str()]
                    .into_iter()
                    .filter_map(|v| matcher.rank(v))
                    .filter(|r| *r <= Rank::Exact)
                    .min()
            } else {
                [joined.as_str(), listed.as_str()]
                    .into_iter()
                    .filter_map(|v| matcher.rank(v))
                    .min()
            };
            rank = rank.into_iter().chain(joined_rank).min();
        }
        let Some(rank) = rank else {
            continue;
        };
        // The element to act on: the node itself if tappable, else its nearest tappable ancestor,
        // else the node as it is listed (or as a plain text).
        let mut target = tappable(n).then(|| by_node(i).cloned()).flatten();
        let mut at = n.parent;
        while target.is_none()
            && let Some(p) = at
        {
            if tappable(&tree.nodes[p]) {
                target = by_node(p).cloned();
            }
            at = tree.nodes[p].parent;
        }
        let Some(target) = target.or_else(|| by_node(i).cloned()).or_else(|| element_for(tree, i)) else {
            continue;
        };
        if target.label.is_empty() && target.flags.iter().any(|f| f == "scrollable") {
            continue;
        }
        let visible = screen.contains(target.at[0], target.at[1]);
        let candidate = Found {
            direct: target.node == i,
            element: target,
            rank,
            visible,
        };
        match found.iter_mut().find(|f| f.element.node == candidate.element.node) {
            Some(seen) if candidate.standing() < seen.standing() => *seen = candidate,
            Some(_) => {}
            None => found.push(candidate),
        }
    }
    found.sort_by_key(|f| (f.standing(), !f.element.clickable));
    found
}

/// What a tap by text would act on: the one best target, or the tied best ones when there are
/// several (nothing when none matches).
pub fn best_target(found: &[Found]) -> Result<&Found, Vec<&Found>> {
    let Some(best) = found.first() else {
        return Err(Vec::new());
    };
    let tied: Vec<&Found> = found.iter().take_while(|f| f.standing() == best.standing()).collect();
    if tied.len() == 1 { Ok(best) } else { Err(tied) }
}

/// The element for node `node`: as listed, else as a plain element (a text inside a row); none
/// when it has no area to act on.
pub fn element_of(tree: &UiTree, all: &[Element], node: usize) -> Option<Element> {
    all.iter()
        .find(|e| e.node == node)
        .cloned()
        .or_else(|| element_for(tree, node))
}

/// An element for a node that is not in the list (a plain text inside nothing tappable).
fn element_for(tree: &UiTree, i: usize) -> Option<Element> {
    let n = &tree.nodes[i];
    let bounds = n.bounds().filter(|b| !b.is_empty())?;
    let (x, y) = bounds.center();
    Some(Element {
        reference: String::new(),
        label: cut(&label_of(tree, i), MAX_LABEL_CHARS),
        kind: short_class(n.class()),
        id: short_id(n.resource_id()),
        at: [x, y],
        flags: Vec::new(),
        node: i,
        bounds,
        clickable: false,
        identity: Identity::of(tree, i),
        twin: 0,
    })
}

/// Labels close to `query` (for "did you mean"): by shared words, then by edit distance.
pub fn closest<'a>(all: &'a [Element], query: &str, n: usize) -> Vec<&'a Element> {
    let q = query.to_lowercase();
    let mut scored: Vec<(f64, &Element)> = all
        .iter()
        .filter(|e| !e.label.is_empty())
        .map(|e| {
            let label = e.label.to_lowercase();
            let words = q.split_whitespace().filter(|w| label.contains(w)).count() as f64;
            (words + strsim::normalized_levenshtein(&q, &label), e)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().take(n).map(|(_, e)| e).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uiautomator::parse_ui_dump;

    /// What Java reads and `ui` cannot is told from what is no regex by the parsers' kinds of
    /// error: look-around, back-references and size are beyond `ui`; a broken pattern, a plain
    /// text or a valid regex is not.
    #[test]
    fn a_regex_beyond_ui_is_told_by_its_kind_of_error() {
        for beyond in ["(?=Log)in", "(?<!x)y", r"(a)\1", "a{1000}{1000}"] {
            assert!(Matcher::beyond_ui(beyond).is_some(), "{beyond}");
        }
        for not in ["[", "a(", "Log.*", "Network & internet"] {
            assert_eq!(Matcher::beyond_ui(not), None, "{not}");
        }
    }

    const ROW: &str = r#"<hierarchy rotation="0">
      <node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="p" clickable="false" bounds="[0,0][1080,2400]">
        <node index="0" text="" resource-id="p:id/row" class="android.widget.LinearLayout" package="p" clickable="true" bounds="[0,100][1080,300]">
          <node index="0" text="Network &amp; internet" resource-id="android:id/title" class="android.widget.TextView" package="p" clickable="false" bounds="[40,120][600,180]"/>
          <node index="1" text="Wi-Fi, hotspot" resource-id="android:id/summary" class="android.widget.TextView" package="p" clickable="false" bounds="[40,190][600,260]"/>
        </node>
        <node index="1" text="" content-desc="" resource-id="p:id/switch" class="android.widget.Switch" package="p" checkable="true" checked="true" clickable="true" bounds="[900,400][1000,460]"/>
      </node>
    </hierarchy>"#;

    #[test]
    fn a_row_takes_its_childrens_texts_and_they_are_not_listed_again() {
        let tree = parse_ui_dump(ROW).unwrap();
        let els = elements(&tree);
        assert_eq!(els.len(), 2, "{els:?}");
        assert_eq!(els[0].label, "Network & internet · Wi-Fi, hotspot");
        assert_eq!(
            (els[0].reference.as_str(), els[0].at, els[0].id.as_deref()),
            ("e1", [540, 200], Some("row"))
        );
        assert_eq!(
            (els[1].kind.as_str(), els[1].flags.clone()),
            ("Switch", vec!["checked".to_string()])
        );
    }

    #[test]
    fn find_by_text_returns_the_tappable_row_first() {
        let tree = parse_ui_dump(ROW).unwrap();
        let els = elements(&tree);
        let screen = Bounds::parse("[0,0][1080,2400]").unwrap();
        let found = find(
            &tree,
            &els,
            Field::Text,
            &Matcher::Exact("Network & internet".into()),
            screen,
        );
        assert_eq!(found[0].element.reference, "e1");
        assert!(found[0].exact());
        assert_eq!(found.len(), 1, "the title and the row are one target");
    }
}
