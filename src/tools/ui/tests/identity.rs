//! One element identity: generated screen pairs (a recorded screen, then one where labels moved
//! between places and ids, summaries changed, switches and choices flipped, fields were typed
//! into, a slot went), with On/Off rows and switches, same-title rows with other summaries,
//! shared, framework and missing ids, fields told apart by content-desc, unlabelled checkboxes
//! named by their rows (a row layout of their own, or a line of a flat screen), and web elements. A
//! ref, a recorded step (the script export, the Maestro export read back, a Maestro text written
//! by hand) acts only on the element with the recorded identity (or, written by hand, what
//! Maestro says), through `ui`'s own resolution.

use std::cell::Cell;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::Value;

use super::{Found, by_ref, reading, recorded_tap, replayed, screen_xml, web_element};
use crate::android::identity::Identity;
use crate::android::ui_elements::Element;
use crate::android::ui_refs::RefBook;
use crate::flow::{Action, Recording, Selector, Step, Target, maestro};
use crate::tools::ui::Snapshot;

const LABELS: [&str; 9] = [
    "OK",
    "Delete everything",
    "On",
    "Off",
    "ON",
    "OFF",
    "Erase all data",
    "Light",
    "Remote wipe",
];
const SUMMARIES: [&str; 4] = ["Wi-Fi, hotspot", "Connected", "Off", ""];
const IDS: [&str; 5] = ["android:id/button1", "p:id/shared", "p:id/a", "p:id/b", ""];
const DESCS: [&str; 3] = ["", "Email input", "Password input"];

/// One slot of a screen, at its index's place with its id.
#[derive(Debug, Clone)]
struct Slot {
    kind: Kind,
    label: usize,
    id: usize,
    summary: usize,
    checked: bool,
    desc: usize,
    typed: usize,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// A button showing its label.
    Button,
    /// A settings row: a clickable layout whose title is the label, with a summary.
    Row,
    /// A Switch whose own text is the label (a state word agreeing with `checked` or not).
    Switch,
    /// A single-choice dialog's row (CheckedTextView).
    Choice,
    /// An EditText named by its content-desc (or nothing), its text what was typed.
    Field,
    /// A web button named by the label; a web text box named by the content-desc's words.
    WebButton,
    WebField,
    /// An unlabelled CheckBox (with the slot's id) in a row layout whose title is the label.
    RowCheck,
    /// The same, title and CheckBox side by side in the frame (no row layout).
    LineCheck,
}

fn slot() -> impl Strategy<Value = Slot> {
    let kind = prop_oneof![
        Just(Kind::Button),
        Just(Kind::Row),
        Just(Kind::Switch),
        Just(Kind::Choice),
        Just(Kind::Field),
        Just(Kind::WebButton),
        Just(Kind::WebField),
        Just(Kind::RowCheck),
        Just(Kind::LineCheck),
    ];
    (
        kind,
        0..LABELS.len(),
        0..IDS.len(),
        0..SUMMARIES.len(),
        any::<bool>(),
        0..DESCS.len(),
        0..3usize,
    )
        .prop_map(|(kind, label, id, summary, checked, desc, typed)| Slot {
            kind,
            label,
            id,
            summary,
            checked,
            desc,
            typed,
        })
}

/// A screen of slots: the native ones in the frame, the web ones on the WebView's page.
fn screen(slots: &[Slot]) -> (String, Vec<Value>) {
    let mut body = String::new();
    let mut page = Vec::new();
    for (i, s) in slots.iter().enumerate() {
        let (label, id, desc) = (LABELS[s.label], IDS[s.id], DESCS[s.desc]);
        let (top, bottom) = (100 + 160 * i, 240 + 160 * i);
        let bounds = format!("[40,{top}][1040,{bottom}]");
        let checked = s.checked;
        let typed = ["", "ada", "hunter2"][s.typed];
        body.push_str(&match s.kind {
            Kind::Button => format!(
                r#"<node index="{i}" text="{label}" resource-id="{id}" class="android.widget.Button" package="p" clickable="true" bounds="{bounds}"/>"#
            ),
            Kind::Row => format!(
                r#"<node index="{i}" text="" resource-id="{id}" class="android.widget.LinearLayout" package="p" clickable="true" bounds="{bounds}"><node index="0" text="{label}" resource-id="android:id/title" class="android.widget.TextView" package="p" bounds="[60,{top}][1000,{}]"/><node index="1" text="{}" resource-id="android:id/summary" class="android.widget.TextView" package="p" bounds="[60,{}][1000,{bottom}]"/></node>"#,
                top + 70,
                SUMMARIES[s.summary],
                top + 70
            ),
            Kind::Switch => format!(
                r#"<node index="{i}" text="{label}" resource-id="{id}" class="android.widget.Switch" package="p" checkable="true" checked="{checked}" clickable="true" bounds="{bounds}"/>"#
            ),
            Kind::Choice => format!(
                r#"<node index="{i}" text="{label}" resource-id="{id}" class="android.widget.CheckedTextView" package="p" checkable="true" checked="{checked}" clickable="true" bounds="{bounds}"/>"#
            ),
            Kind::Field => format!(
                r#"<node index="{i}" text="{typed}" resource-id="{id}" content-desc="{desc}" class="android.widget.EditText" package="p" clickable="true" focusable="true" bounds="{bounds}"/>"#
            ),
            Kind::RowCheck | Kind::LineCheck => {
                let title = format!(
                    r#"<node index="0" text="{label}" class="android.widget.TextView" package="p" bounds="[60,{top}][800,{bottom}]"/>"#
                );
                let check = format!(
                    r#"<node index="1" text="" resource-id="{id}" class="android.widget.CheckBox" package="p" checkable="true" checked="{checked}" clickable="true" bounds="[880,{}][1000,{}]"/>"#,
                    top + 20,
                    bottom - 20
                );
                match s.kind {
                    Kind::RowCheck => format!(
                        r#"<node index="{i}" text="" class="android.widget.LinearLayout" package="p" bounds="{bounds}">{title}{check}</node>"#
                    ),
                    _ => title + &check,
                }
            }
            Kind::WebButton | Kind::WebField => {
                let (role, name, value) = match s.kind {
                    Kind::WebButton => ("button", label, ""),
                    _ => ("textbox", desc, typed),
                };
                page.push(web_element(role, name, value, false, i, false));
                String::new()
            }
        });
    }
    (screen_xml(&body), page)
}

/// The target a Maestro flow gives back for a tap: written by `flow export`, read again.
fn through_maestro(target: &Target) -> Target {
    tap_of(&maestro::render(
        &[Step::new(Action::Tap { target: target.clone() })],
        &[],
        "p",
    ))
}

/// The target of a `tapOn` written by hand with a literal `text` (escaped as a regex).
fn by_hand_text(text: &str) -> Target {
    let escaped: String = text
        .chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$".contains(c);
            special.then_some('\\').into_iter().chain([c])
        })
        .collect();
    tap_of(&format!(
        "appId: p\n---\n- tapOn:\n    text: {}\n",
        serde_json::to_string(&escaped).unwrap()
    ))
}

fn tap_of(flow: &str) -> Target {
    match maestro::parse(flow).unwrap().remove(0).action {
        Action::Tap { target } => target,
        other => panic!("{other:?}"),
    }
}

/// What an element shows as a replay reads a Maestro `text` (`ui`'s exact match, letter case
/// aside): its own text, content-desc or hint, or a text inside it (a row's title).
fn shows(snap: &Snapshot, element: &Element, text: &str) -> bool {
    let hint = snap.tree.nodes[element.node]
        .attr("hint")
        .unwrap_or_default()
        .to_string();
    crate::flow::texts_within(&snap.tree, element.node)
        .iter()
        .chain([&element.identity.label, &hint])
        .any(|t| t.trim().to_lowercase() == text.trim().to_lowercase())
}

/// Counts of what the generated cases covered.
#[derive(Default)]
struct Covered {
    pairs: Cell<usize>,
    replays: Cell<usize>,
    acted: Cell<usize>,
    refused: Cell<usize>,
    healed: Cell<usize>,
    bare: Cell<usize>,
    refs_kept: Cell<usize>,
    refs_refused: Cell<usize>,
    state_words: Cell<usize>,
    summaries_changed: Cell<usize>,
    shared_ids: Cell<usize>,
    no_ids: Cell<usize>,
    web: Cell<usize>,
    row_checks: Cell<usize>,
}

fn bump(c: &Cell<usize>) {
    c.set(c.get() + 1);
}

#[test]
fn a_ref_or_a_recorded_step_acts_only_on_the_element_with_its_identity() {
    let covered = Covered::default();
    let mut runner = TestRunner::new(Config {
        failure_persistence: None,
        ..Config::with_cases(384)
    });
    let pairs = (
        proptest::collection::vec(slot(), 2..7),
        proptest::collection::vec(any::<u32>(), 7),
        proptest::collection::vec((any::<bool>(), 0..SUMMARIES.len(), 0..3usize), 7),
        proptest::option::of(0usize..7),
    );
    let result = runner.run(&pairs, |(before, order, changes, gone)| {
        bump(&covered.pairs);
        // Labels move to other places and ids; summaries change, switches and choices flip
        // (a switch's state word follows its flag when it was one), fields are typed into.
        let mut moved: Vec<usize> = (0..before.len()).collect();
        moved.sort_by_key(|i| order[*i]);
        let mut after: Vec<Slot> = before
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let (flip, summary, typed) = changes[i];
                let mut label = before[moved[i]].label;
                if flip && s.kind == Kind::Switch && matches!(LABELS[label], "On" | "Off" | "ON" | "OFF") {
                    label = match LABELS[label] {
                        "On" => 3,
                        "Off" => 2,
                        "ON" => 5,
                        _ => 4,
                    };
                }
                Slot {
                    label,
                    summary,
                    typed,
                    checked: s.checked != flip,
                    ..s.clone()
                }
            })
            .collect();
        if let Some(g) = gone.filter(|g| *g < after.len()) {
            after.remove(g);
        }
        let recording = Recording::default();
        let mut book = RefBook::default();
        let (a_xml, a_page) = screen(&before);
        let (b_xml, b_page) = screen(&after);
        let a = reading(&a_xml, &a_page, &mut book, &recording);
        let b = reading(&b_xml, &b_page, &mut book, &recording);
        for element in a.elements.iter().filter(|e| e.clickable) {
            let node = &a.tree.nodes[element.node];
            let id = element.identity.resource_id.as_str();
            if crate::android::identity::state_word(node) {
                bump(&covered.state_words);
            }
            if element.identity.class.starts_with("web:") {
                bump(&covered.web);
            }
            if element.kind == "CheckBox" {
                // Unlabelled, it is named by its row: "the checkbox of OK".
                prop_assert!(element.label.is_empty() && !element.identity.label.is_empty());
                bump(&covered.row_checks);
            }
            if id.is_empty() {
                bump(&covered.no_ids);
            } else if a.tree.nodes.iter().filter(|n| n.resource_id() == id).count() > 1 {
                bump(&covered.shared_ids);
            }

            // A ref: its element, at its place, or refused.
            let there: Vec<&Element> = b
                .elements
                .iter()
                .filter(|e| e.identity == element.identity && e.bounds == element.bounds)
                .collect();
            match by_ref(&b, &element.reference) {
                Ok(found) => {
                    prop_assert_eq!(&found.identity, &element.identity);
                    prop_assert_eq!(found.bounds, element.bounds);
                    bump(&covered.refs_kept);
                }
                Err(e) => {
                    prop_assert!(
                        there.len() != 1,
                        "ref {} refused ({e}) though {:?} is there",
                        element.reference,
                        there
                    );
                    bump(&covered.refs_refused);
                }
            }

            // Recorded as `ui` records a tap on it: a selector that names it alone, a point only
            // when none does, and on the screen it was recorded on it acts on it.
            let recorded = recorded_tap(&a, element, &recording);
            if !id.is_empty()
                && !id.starts_with("android:id/")
                && a.tree.nodes.iter().filter(|n| n.resource_id() == id).count() == 1
            {
                prop_assert_eq!(&recorded.selector, &Selector::ResourceId(id.to_string()));
            }
            let desc = node.content_desc();
            let desc_unique = !desc.is_empty()
                && a.tree
                    .nodes
                    .iter()
                    .filter(|n| [n.text(), n.content_desc(), n.attr("hint").unwrap_or_default()].contains(&desc))
                    .count()
                    == 1;
            prop_assert!(
                !(desc_unique && recorded.selector.fragile()),
                "{recorded:?} for {element:?}"
            );
            let (here, _) = replayed(&a, &recorded).expect("a recorded tap is verified");
            prop_assert_eq!(
                here.map(|e| e.node).ok(),
                Some(element.node),
                "{:?} on its own screen",
                recorded
            );

            let label = recorded.label.clone();
            let summary_changed = element.identity.class.ends_with("LinearLayout")
                && b.elements.iter().any(|e| {
                    e.identity.class == element.identity.class
                        && e.identity.label != element.identity.label
                        && e.identity.label.split(" · ").next() == element.identity.label.split(" · ").next()
                });
            if summary_changed {
                bump(&covered.summaries_changed);
            }
            let written = [(recorded.clone(), false), (through_maestro(&recorded), true)];
            for (target, from_maestro) in written {
                bump(&covered.replays);
                let Some((outcome, how)) = replayed(&b, &target) else {
                    // A bare point in a Maestro flow: tapped wherever it is, as Maestro taps it.
                    bump(&covered.bare);
                    continue;
                };
                let Ok(acted) = outcome else {
                    bump(&covered.refused);
                    continue;
                };
                bump(&covered.acted);
                let identity: &Identity = &acted.identity;
                let said = format!("{target:?} recorded on {element:?} acted on {acted:?} ({how:?})");
                match (&target.selector, from_maestro, how) {
                    // Healed: the one element with the recorded label (and class, where kept).
                    (_, _, Found::Healed) => {
                        let label = target.label.as_deref();
                        prop_assert!(
                            identity.is(label, target.class.as_deref(), None)
                                || (target.class.is_none() && shows(&b, &acted, label.unwrap_or_default())),
                            "{}",
                            said
                        );
                        bump(&covered.healed);
                    }
                    // The script export carries the whole identity.
                    (_, false, _) => prop_assert!(
                        identity.is(label.as_deref(), recorded.class.as_deref(), recorded.id.as_deref()),
                        "{}",
                        said
                    ),
                    // A Maestro point: whatever is under it, as Maestro taps it.
                    (Selector::Point(at), true, _) => prop_assert!(acted.bounds.contains(at[0], at[1]), "{}", said),
                    // A Maestro id with its text: that id, and that text or that whole label.
                    (Selector::ResourceId(rid), true, _) => {
                        prop_assert_eq!(&identity.resource_id, rid, "{}", said);
                        if let Some(text) = &target.label {
                            prop_assert!(shows(&b, &acted, text), "{}", said);
                        }
                    }
                    // A Maestro text: an element showing it.
                    (Selector::Text(text), true, _) => prop_assert!(shows(&b, &acted, text), "{}", said),
                    (other, true, _) => return Err(TestCaseError::fail(format!("not written: {other:?}"))),
                }
            }
            // A text written by hand: an element that shows it, never another.
            if let Some(label) = &label {
                bump(&covered.replays);
                match replayed(&b, &by_hand_text(label)) {
                    Some((Ok(acted), _)) => {
                        prop_assert!(shows(&b, &acted, label), "{label:?} acted on {acted:?}");
                        bump(&covered.acted);
                    }
                    _ => bump(&covered.refused),
                }
            }
        }
        Ok(())
    });
    let n = |c: &Cell<usize>| c.get();
    println!(
        "{} cases (screen pairs): {} replayed taps, {} acted on the recorded identity (or, by hand, on what Maestro reads; {} of them healed by the label), {} refused, {} bare Maestro points; refs {} kept, {} refused; covered {} switches showing a state word, {} rows whose summary changed, {} elements with shared ids, {} with none, {} web elements, {} unlabelled checkboxes named by their rows",
        n(&covered.pairs),
        n(&covered.replays),
        n(&covered.acted),
        n(&covered.healed),
        n(&covered.refused),
        n(&covered.bare),
        n(&covered.refs_kept),
        n(&covered.refs_refused),
        n(&covered.state_words),
        n(&covered.summaries_changed),
        n(&covered.shared_ids),
        n(&covered.no_ids),
        n(&covered.web),
        n(&covered.row_checks),
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    for c in [
        &covered.acted,
        &covered.refused,
        &covered.state_words,
        &covered.summaries_changed,
        &covered.shared_ids,
        &covered.no_ids,
        &covered.web,
        &covered.row_checks,
        &covered.refs_kept,
        &covered.refs_refused,
    ] {
        assert!(c.get() > 0, "a kind of case was never generated");
    }
}

/// The two the issue names, by hand: a row whose title stays but whose summary changed, and a
/// choice reading "On" where "Off" was recorded, are refused before anything is touched.
#[test]
fn a_title_alone_or_an_off_for_an_on_is_not_the_recorded_element() {
    let row = |summary: &str| {
        format!(
            r#"<node index="0" text="" resource-id="p:id/row" class="android.widget.LinearLayout" package="p" clickable="true" bounds="[40,100][1040,240]"><node index="0" text="Remote wipe" class="android.widget.TextView" package="p" bounds="[60,100][1000,170]"/><node index="1" text="{summary}" class="android.widget.TextView" package="p" bounds="[60,170][1000,240]"/></node>"#
        )
    };
    let choice = |label: &str, checked: bool| {
        format!(
            r#"<node index="1" text="{label}" resource-id="p:id/wipe_choice" class="android.widget.CheckedTextView" package="p" checkable="true" checked="{checked}" clickable="true" bounds="[40,300][1040,440]"/>"#
        )
    };
    let recording = Recording::default();
    let mut book = RefBook::default();
    let a = reading(
        &screen_xml(&(row("Off") + &choice("Off", true))),
        &[],
        &mut book,
        &recording,
    );
    let b = reading(
        &screen_xml(&(row("On: erases the phone when it is lost") + &choice("On", false))),
        &[],
        &mut book,
        &recording,
    );
    for element in a.elements.iter().filter(|e| e.clickable) {
        let recorded = recorded_tap(&a, element, &recording);
        let refused = replayed(&b, &recorded).expect("verified").0.unwrap_err();
        println!("{recorded:?}: {refused}");
        assert!(
            refused.contains("not the recorded") && refused.contains("nothing was done"),
            "{refused}"
        );
    }
}
