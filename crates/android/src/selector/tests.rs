//! Maestro's selectors on made-up screens and on every real capture (properties over generated screens).

use std::cell::Cell;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use super::*;
use crate::uiautomator::parse_ui_dump;

fn sel(json: &str) -> ElementSelector {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"))
}

/// The texts (else content-descs, else class) of what `json` finds, in order.
fn found(tree: &UiTree, screen: [u32; 2], json: &str) -> Vec<String> {
    find_nodes(tree, screen, &sel(json))
        .into_iter()
        .map(|n| {
            let node = &tree.nodes[n];
            [node.text(), node.content_desc(), node.class()]
                .into_iter()
                .find(|v| !v.is_empty())
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

/// `../shared/device-captures/NAME`, parsed, when the captures are there (testkit's one skip
/// rule: a skip locally, a failure under CI).
fn capture(name: &str) -> Option<UiTree> {
    let path = testkit::captures_dir()?.join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some(parse_ui_dump(&text).unwrap())
}

const SETTINGS: &str = "uiautomator_settings-homepage-recyclerview_com.android.settings_phone-1080x2400.xml";
const PHONE: [u32; 2] = [1080, 2400];

#[test]
fn text_and_id_read_as_maestro_reads_them_on_a_real_settings_screen() {
    let Some(tree) = capture(SETTINGS) else { return };
    let first = |json: &str| found(&tree, PHONE, json).into_iter().next();
    // A whole-text regex, case ignored; the text itself (not the row holding it) is found.
    assert_eq!(
        first(r#"{"text": "network & INTERNET"}"#).as_deref(),
        Some("Network & internet")
    );
    assert_eq!(first(r#"{"text": "Network.*"}"#).as_deref(), Some("Network & internet"));
    // Whole string: a part is no match.
    assert_eq!(first(r#"{"text": "Network"}"#), None);
    // The content-desc counts as text.
    assert_eq!(
        first(r#"{"text": "search settings"}"#).as_deref(),
        Some("Search settings")
    );
    // No valid regex: the text itself.
    assert_eq!(
        first(r#"{"text": "abha**2@gmail.com"}"#).as_deref(),
        Some("abha**2@gmail.com")
    );
    // An id whole or after its last `/`; a regex too.
    let titles = found(&tree, PHONE, r#"{"id": "title"}"#);
    assert_eq!(titles.len(), 5, "{titles:?}");
    assert_eq!(found(&tree, PHONE, r#"{"id": "android:id/TI.*"}"#), titles);
    assert_eq!(
        first(r#"{"id": "search_action_bar"}"#).as_deref(),
        Some("android.view.ViewGroup")
    );
    // Keys together must all hold.
    assert_eq!(
        first(r#"{"id": "title", "text": "Bluetooth.*"}"#).as_deref(),
        Some("Bluetooth & devices")
    );
    assert_eq!(first(r#"{"text": "Network & internet", "enabled": false}"#), None);
    assert_eq!(
        first(
            r#"{"text": "Network & internet", "enabled": true, "checked": false, "focused": false, "selected": false}"#
        )
        .as_deref(),
        Some("Network & internet")
    );
}

#[test]
fn index_relations_and_size_follow_maestros_order_on_a_real_settings_screen() {
    let Some(tree) = capture(SETTINGS) else { return };
    let first = |json: &str| found(&tree, PHONE, json).into_iter().next();
    // index: by position, top then left, from 0; text as a number too.
    assert_eq!(
        first(r#"{"id": "title", "index": 2}"#).as_deref(),
        Some("Bluetooth & devices")
    );
    assert_eq!(
        first(r#"{"id": "title", "index": "2.0"}"#).as_deref(),
        Some("Bluetooth & devices")
    );
    assert_eq!(first(r#"{"id": "title", "index": 9}"#), None);
    assert_eq!(first(r#"{"id": "title", "index": -1}"#), None);
    // With a text key, its order leads: the first title below the anchor's top.
    assert_eq!(
        first(r#"{"id": "title", "below": {"text": "Network & internet"}}"#).as_deref(),
        Some("Bluetooth & devices")
    );
    assert_eq!(
        first(r#"{"id": "title", "above": {"text": "Network & internet"}}"#).as_deref(),
        Some("abha**2@gmail.com")
    );
    // A relation alone: nearest first, clickable first (the next row, not its own summary).
    let below = found(&tree, PHONE, r#"{"below": {"text": "Network & internet"}}"#);
    let row = find_nodes(&tree, PHONE, &sel(r#"{"below": {"text": "Network & internet"}}"#))[0];
    assert!(tree.nodes[row].flag("clickable"), "{below:?}");
    assert_eq!(
        tree.nodes[row].bounds().map(|b| b.top),
        Some(1524),
        "the Bluetooth row: {below:?}"
    );
    // childOf: inside the element found; containsDescendants: something inside matches each.
    assert_eq!(
        first(r#"{"id": "title", "childOf": {"containsDescendants": [{"text": "Bluetooth.*"}, {"id": "summary"}]}}"#)
            .as_deref(),
        Some("Bluetooth & devices")
    );
    // containsChild: the direct parent of the child found.
    let parent = find_nodes(
        &tree,
        PHONE,
        &sel(r#"{"containsChild": {"text": "Display & brightness"}}"#),
    );
    let title = find_nodes(&tree, PHONE, &sel(r#"{"text": "Display & brightness"}"#))[0];
    assert_eq!(parent.len(), 1);
    assert_eq!(tree.nodes[title].parent, Some(parent[0]));
    // Size within tolerance: Network's title is 388×63, Bluetooth's 414×63.
    assert_eq!(
        found(&tree, PHONE, r#"{"id": "title", "width": 388, "height": 63}"#),
        ["Network & internet"]
    );
    assert_eq!(
        found(&tree, PHONE, r#"{"id": "title", "width": 400, "tolerance": 14}"#),
        ["Network & internet", "Bluetooth & devices"]
    );
}

/// On every real capture, each text and each id on the screen Maestro sees finds an element
/// that shows it (escaped, so it is that text), the first of them clickable when any is; and
/// index 0 of an id is its topmost holder.
#[test]
fn every_text_and_id_of_every_real_capture_finds_what_shows_it() {
    let Some(dir) = testkit::captures_dir() else { return };
    let entries = std::fs::read_dir(&dir).unwrap();
    let (mut screens, mut looked) = (0, 0);
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !(name.starts_with("uiautomator_") || name.starts_with("appium-")) {
            continue;
        }
        let tree = parse_ui_dump(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let size = name.rsplit('_').next().unwrap().trim_end_matches(".xml");
        let screen: Vec<u32> = size
            .rsplit('-')
            .next()
            .unwrap()
            .split('x')
            .map(|n| n.parse().unwrap())
            .collect();
        let screen = [screen[0], screen[1]];
        let view = View::new(&tree, screen);
        screens += 1;
        for &n in &view.all {
            let node = &tree.nodes[n];
            for (key, value) in [("text", node.text()), ("id", node.resource_id())] {
                if value.trim().is_empty() {
                    continue;
                }
                looked += 1;
                let selector = match key {
                    "text" => ElementSelector {
                        text: Some(regex::escape(value)),
                        ..Default::default()
                    },
                    _ => ElementSelector {
                        id: Some(regex::escape(value)),
                        ..Default::default()
                    },
                };
                let got = find_nodes(&tree, screen, &selector);
                assert!(!got.is_empty(), "{name}: {key} {value:?} finds nothing");
                for &g in &got {
                    let shown = &tree.nodes[g];
                    let same = |v: &str| v.to_lowercase() == value.to_lowercase();
                    let shows = match key {
                        "text" => [shown.text(), shown.content_desc()].into_iter().any(same),
                        _ => same(shown.resource_id()),
                    };
                    assert!(shows, "{name}: {key} {value:?} found node {g}, which does not show it");
                }
                let clickable = got.iter().any(|&g| tree.nodes[g].flag("clickable"));
                assert_eq!(
                    tree.nodes[got[0]].flag("clickable"),
                    clickable,
                    "{name}: {key} {value:?}"
                );
                if key == "id" {
                    let top = got
                        .iter()
                        .filter_map(|&g| tree.nodes[g].bounds())
                        .map(|b| (b.top, b.left))
                        .min();
                    let first = find_nodes(
                        &tree,
                        screen,
                        &ElementSelector {
                            index: Some(Index::At(0)),
                            ..selector
                        },
                    );
                    assert_eq!(
                        first
                            .first()
                            .and_then(|&g| tree.nodes[g].bounds())
                            .map(|b| (b.top, b.left)),
                        top
                    );
                }
            }
        }
    }
    eprintln!("{screens} real screens, {looked} texts and ids looked up");
    assert!(screens >= 10, "{screens} captures");
}

/// Rows of a list that each hold a title and the same "Delete" button, lower in the row.
fn rows(n: usize) -> UiTree {
    let mut xml = String::from(
        r#"<hierarchy rotation="0"><node text="" class="android.widget.FrameLayout" bounds="[0,0][1080,2400]">"#,
    );
    for i in 0..n {
        let top = 200 + i as i32 * 300;
        xml.push_str(&format!(
            r#"<node text="" class="android.widget.LinearLayout" bounds="[0,{top}][1080,{}]"><node text="Row {}" class="android.widget.TextView" bounds="[40,{}][600,{}]"/><node text="Delete" resource-id="p:id/delete" class="android.widget.Button" clickable="true" bounds="[800,{}][1040,{}]"/></node>"#,
            top + 300,
            i + 1,
            top + 20,
            top + 100,
            top + 120,
            top + 260
        ));
    }
    xml.push_str("</node></hierarchy>");
    parse_ui_dump(&xml).unwrap()
}

#[test]
fn the_same_button_in_each_row_is_told_apart_by_a_relation() {
    let tree = rows(6);
    let delete_below = |row: usize| {
        let n = find_nodes(
            &tree,
            PHONE,
            &sel(&format!(r#"{{"text": "Delete", "below": {{"text": "Row {row}"}}}}"#)),
        )[0];
        tree.nodes[n].bounds().unwrap().top
    };
    for row in 1..=6 {
        assert_eq!(delete_below(row), 200 + (row as i32 - 1) * 300 + 120, "row {row}");
    }
    // Rows past the bottom edge are not on the screen Maestro sees.
    let long = rows(12);
    assert_eq!(found(&long, PHONE, r#"{"text": "Delete"}"#).len(), 7);
    assert!(found(&long, PHONE, r#"{"text": "Row 12"}"#).is_empty());
}

// Generated screens: nested nodes with a few texts, ids, flags and boxes, some off the screen.

#[derive(Debug, Clone)]
struct Gen {
    text: usize,
    id: usize,
    flags: [bool; 5],
    bounds: [i32; 4],
    children: Vec<Gen>,
}

const TEXTS: [&str; 5] = ["", "Row 1", "Row 2", "Delete", "delete"];
const IDS: [&str; 4] = ["", "p:id/row", "p:id/delete", "q:id/delete"];
const FLAGS: [&str; 5] = ["clickable", "enabled", "checked", "focused", "selected"];

fn gen_node() -> impl Strategy<Value = Gen> {
    let leaf = (
        0..TEXTS.len(),
        0..IDS.len(),
        any::<[bool; 5]>(),
        (-300i32..1300, -300i32..2700, 0i32..600, 0i32..400),
    )
        .prop_map(|(text, id, flags, (x, y, w, h))| Gen {
            text,
            id,
            flags,
            bounds: [x, y, x + w, y + h],
            children: Vec::new(),
        });
    leaf.prop_recursive(3, 24, 4, |inner| {
        (inner.clone(), prop::collection::vec(inner, 0..4)).prop_map(|(mut node, children)| {
            node.children = children;
            node
        })
    })
}

fn xml(node: &Gen, out: &mut String) {
    let [l, t, r, b] = node.bounds;
    out.push_str(&format!(
        r#"<node text="{}" resource-id="{}" class="android.widget.View" bounds="[{l},{t}][{r},{b}]""#,
        TEXTS[node.text], IDS[node.id]
    ));
    for (flag, on) in FLAGS.iter().zip(node.flags) {
        out.push_str(&format!(r#" {flag}="{on}""#));
    }
    out.push('>');
    for child in &node.children {
        xml(child, out);
    }
    out.push_str("</node>");
}

fn tree_of(roots: &[Gen]) -> UiTree {
    let mut out = String::from(r#"<hierarchy rotation="0">"#);
    for root in roots {
        xml(root, &mut out);
    }
    out.push_str("</hierarchy>");
    parse_ui_dump(&out).unwrap()
}

fn simple() -> impl Strategy<Value = ElementSelector> {
    (
        prop::option::of(prop::sample::select(vec![
            "Row 1",
            "Row.*",
            "DELETE",
            "Delete|Row 2",
            "(unclosed",
        ])),
        prop::option::of(prop::sample::select(vec!["delete", "p:id/row", ".*"])),
        prop::option::of(any::<bool>()),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(text, id, enabled, checked)| ElementSelector {
            text: text.map(str::to_string),
            id: id.map(str::to_string),
            enabled,
            checked,
            ..Default::default()
        })
}

fn run_generated(
    name: &str,
    test: impl Fn(&UiTree, &View, &ElementSelector, &ElementSelector) -> Result<(), TestCaseError>,
) {
    let mut runner = TestRunner::new(Config::with_cases(256));
    let cases = Cell::new(0);
    runner
        .run(
            &(prop::collection::vec(gen_node(), 1..3), simple(), simple()),
            |(roots, a, b)| {
                cases.set(cases.get() + 1);
                let tree = tree_of(&roots);
                let view = View::new(&tree, PHONE);
                test(&tree, &view, &a, &b)
            },
        )
        .unwrap();
    eprintln!("{name}: {} cases", cases.get());
}

/// Whether node `n` itself has what the simple selector asks (its text, id and flags).
fn holds(view: &View, n: usize, s: &ElementSelector) -> bool {
    let node = &view.tree.nodes[n];
    let flags = [("enabled", s.enabled), ("checked", s.checked)]
        .into_iter()
        .all(|(f, want)| want.is_none_or(|w| node.flag(f) == w));
    flags && texts(view, n, s) == (s.text.is_some(), s.id.is_some())
}

/// Whether node `n` matches the selector's text, and its id (each `false` when not given).
fn texts(view: &View, n: usize, s: &ElementSelector) -> (bool, bool) {
    let node = &view.tree.nodes[n];
    let text = s.text.as_deref().is_some_and(|t| {
        let p = Pattern::new(t);
        [node.attr("text"), node.attr("content-desc")]
            .into_iter()
            .flatten()
            .any(|v| p.text(v))
    });
    let id = s.id.as_deref().is_some_and(|i| Pattern::new(i).id(node.resource_id()));
    (text, id)
}

#[test]
fn generated_every_match_holds_and_every_innermost_holder_matches() {
    run_generated("predicates", |tree, view, a, _| {
        let got = find_nodes(tree, PHONE, a);
        for &n in &got {
            prop_assert!(view.kept[n], "{n} is off the screen Maestro sees");
            prop_assert!(holds(view, n, a), "{n} does not hold {a:?}");
        }
        // A node that holds it, with no child matching its text or id, is found as itself.
        for &n in &view.all {
            if holds(view, n, a) && !view.children(n).any(|k| texts(view, k, a) != (false, false)) {
                prop_assert!(got.contains(&n), "{n} holds {a:?} and is not found: {got:?}");
            }
        }
        // Clickable first.
        let clickable: Vec<bool> = got.iter().map(|&n| view.flag(n, "clickable")).collect();
        prop_assert!(clickable.windows(2).all(|w| w[0] >= w[1]), "{clickable:?}");
        Ok(())
    });
}

#[test]
fn generated_index_is_the_nth_by_position() {
    run_generated("index", |tree, view, a, _| {
        let all = find_nodes(tree, PHONE, a);
        let mut at: Vec<(i32, i32)> = all
            .iter()
            .map(|&n| view.bounds(n).map_or((i32::MAX, i32::MAX), |b| (b.top, b.left)))
            .collect();
        at.sort();
        for i in 0..all.len() + 1 {
            let nth = find_nodes(
                tree,
                PHONE,
                &ElementSelector {
                    index: Some(Index::At(i as i64)),
                    ..a.clone()
                },
            );
            let place = nth
                .first()
                .map(|&n| view.bounds(n).map_or((i32::MAX, i32::MAX), |b| (b.top, b.left)));
            prop_assert_eq!(place, at.get(i).copied(), "index {}", i);
        }
        Ok(())
    });
}

#[test]
fn generated_relations_keep_what_is_beside_an_anchor_nearest_first() {
    run_generated("relations", |tree, view, a, b| {
        let anchors: Vec<Bounds> = find_nodes(tree, PHONE, b)
            .into_iter()
            .filter_map(|n| view.bounds(n))
            .collect();
        type Side = fn(&Bounds, &Bounds) -> bool;
        let sides: [(&str, Side); 4] = [
            ("below", |it, o| it.top > o.top),
            ("above", |it, o| it.top < o.top),
            ("leftOf", |it, o| it.left < o.left),
            ("rightOf", |it, o| it.left > o.left),
        ];
        for (name, side) in sides {
            let mut s = ElementSelector::default();
            let anchor = Some(Box::new(b.clone()));
            match name {
                "below" => s.below = anchor,
                "above" => s.above = anchor,
                "leftOf" => s.left_of = anchor,
                _ => s.right_of = anchor,
            }
            let got = find_nodes(tree, PHONE, &s);
            let beside = |n: usize| view.bounds(n).is_some_and(|nb| anchors.iter().any(|a| side(&nb, a)));
            let expected: HashSet<usize> = view.all.iter().copied().filter(|&n| beside(n)).collect();
            prop_assert_eq!(got.iter().copied().collect::<HashSet<_>>(), expected, "{}", name);
            prop_assert_eq!(
                got.len(),
                got.iter().collect::<HashSet<_>>().len(),
                "{} repeats a node",
                name
            );
            // Nearest first, among the clickable and among the rest.
            let nearest = |n: usize| {
                let nb = view.bounds(n).unwrap();
                anchors
                    .iter()
                    .filter(|a| side(&nb, a))
                    .map(|a| distance(&nb, a))
                    .fold(f64::INFINITY, f64::min)
            };
            for clickable in [true, false] {
                let d: Vec<f64> = got
                    .iter()
                    .copied()
                    .filter(|&n| view.flag(n, "clickable") == clickable)
                    .map(nearest)
                    .collect();
                prop_assert!(
                    d.windows(2).all(|w| w[0] <= w[1]),
                    "{} not nearest first: {:?}",
                    name,
                    d
                );
            }
            // With another key, every match holds both.
            let both = find_nodes(
                tree,
                PHONE,
                &ElementSelector {
                    below: Some(Box::new(b.clone())),
                    ..a.clone()
                },
            );
            for n in both {
                prop_assert!(
                    holds(view, n, a) && view.bounds(n).is_some_and(|nb| anchors.iter().any(|x| nb.top > x.top))
                );
            }
        }
        Ok(())
    });
}

#[test]
fn generated_child_of_and_contains_child_name_the_element_they_find() {
    run_generated("childOf, containsChild", |tree, view, a, b| {
        let parent = find_nodes(tree, PHONE, b)
            .first()
            .copied()
            .filter(|&n| view.bounds(n).is_some());
        let inside = find_nodes(
            tree,
            PHONE,
            &ElementSelector {
                child_of: Some(Box::new(b.clone())),
                ..a.clone()
            },
        );
        match parent {
            Some(p) => {
                for &n in &inside {
                    prop_assert!(tree.is_within(n, p), "{n} is not inside {p}");
                }
            }
            None => prop_assert!(inside.is_empty()),
        }
        let holders = find_nodes(
            tree,
            PHONE,
            &ElementSelector {
                contains_child: Some(Box::new(b.clone())),
                ..Default::default()
            },
        );
        match parent {
            Some(child) => {
                let expected: Vec<usize> = tree.nodes[child].parent.filter(|p| view.kept[*p]).into_iter().collect();
                prop_assert_eq!(holders, expected);
            }
            None => prop_assert!(holders.is_empty()),
        }
        Ok(())
    });
}
