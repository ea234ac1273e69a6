//! Verify before act: what a recording saw of the element a step acted on (its name, class and
//! resource-id), and the one check `ui tap` (and long-press) makes with it on the element it
//! resolved, before it touches the device. A replayed step carries it as `recorded`; the element
//! found by its selector, by its point or by healing is acted on only when it is that element.

use serde::Deserialize;

use android::ui_elements::Element;
use android::uiautomator::UiTree;

/// What the recording saw of a step's element; each part given must hold on the element found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recorded {
    /// Its name: its own text or its first child's (a row's title), as `selector_for` keeps it.
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
/// (`resourceId "android:id/button1"`, `the point (540, 1200)`). An editable field's text is what
/// was typed into it, and an older switch's ON/OFF its state: neither is its name, so a field is
/// known by its class and id alone, and a switch by its name without them.
pub fn check(tree: &UiTree, element: &Element, recorded: &Recorded, what: &str) -> Result<(), String> {
    let node = &tree.nodes[element.node];
    let id = node.resource_id().trim();
    let state = |t: &str| node.flag("checkable") && matches!(t.trim().to_lowercase().as_str(), "on" | "off");
    let editable = node.class().ends_with("EditText") || node.flag("password");
    let name = super::texts_within(tree, element.node)
        .into_iter()
        .find(|t| !state(t))
        .unwrap_or_else(|| element.label.clone());
    let same_label = match &recorded.label {
        Some(label) => editable || state(label) || name.trim() == label.trim(),
        None => true,
    };
    let same_class = recorded.class.as_ref().is_none_or(|c| *c == element.kind);
    let same_id = recorded.id.as_ref().is_none_or(|i| i.trim() == id);
    if same_label && same_class && same_id {
        return Ok(());
    }
    let describe = |label: Option<&str>, class: Option<&str>, id: Option<&str>| {
        let mut out = format!("{:?}", android::text::echoed(label.unwrap_or("")));
        let more: Vec<&str> = [class, id].into_iter().flatten().filter(|s| !s.is_empty()).collect();
        if !more.is_empty() {
            out.push_str(&format!(" ({})", more.join(" ")));
        }
        out
    };
    Err(format!(
        "{what} is now {}, not the recorded {}; nothing was done. The screen changed under the flow: check it (ui dump), then record the step again",
        describe(Some(&name), Some(&element.kind), Some(id)),
        describe(
            recorded.label.as_deref().or(Some(&name)),
            recorded.class.as_deref(),
            recorded.id.as_deref()
        ),
    ))
}

/// The element a tap at `at` lands on: the smallest tappable element under it.
pub fn under(elements: &[Element], at: [i32; 2]) -> Option<&Element> {
    elements
        .iter()
        .filter(|e| e.clickable && e.bounds.contains(at[0], at[1]))
        .min_by_key(|e| i64::from(e.bounds.right - e.bounds.left) * i64::from(e.bounds.bottom - e.bounds.top))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    use super::*;
    use crate::{Action, Selector, Step, Target, maestro, selector_for, texts_within};
    use android::ui_elements::{Field, Matcher, best_target, elements, find};
    use android::uiautomator::{Bounds, parse_ui_dump};

    const LABELS: [&str; 6] = [
        "OK",
        "Delete everything",
        "Cancel",
        "Allow",
        "Erase all data",
        "OK · Delete",
    ];
    const IDS: [&str; 5] = [
        "android:id/button1",
        "android:id/button2",
        "p:id/confirm",
        "p:id/ok",
        "",
    ];
    const SCREEN: Bounds = Bounds {
        left: 0,
        top: 0,
        right: 1080,
        bottom: 2400,
    };

    /// One tappable slot of a screen: a button showing its label, or a row whose title is its
    /// label (with a summary that may be another slot's label), at a fixed place with an id.
    #[derive(Debug, Clone)]
    struct Slot {
        label: usize,
        id: usize,
        row: bool,
        summary: usize,
    }

    fn slot() -> impl Strategy<Value = Slot> {
        (0..LABELS.len(), 0..IDS.len(), any::<bool>(), 0..LABELS.len()).prop_map(|(label, id, row, summary)| Slot {
            label,
            id,
            row,
            summary,
        })
    }

    fn xml(slots: &[Slot]) -> UiTree {
        let mut xml = r#"<hierarchy rotation="0"><node index="0" text="" class="android.widget.FrameLayout" package="p" bounds="[0,0][1080,2400]">"#.to_string();
        for (i, s) in slots.iter().enumerate() {
            let top = 200 + 200 * i;
            let (label, id) = (LABELS[s.label], IDS[s.id]);
            let bounds = format!("[40,{top}][1040,{}]", top + 150);
            if s.row {
                xml.push_str(&format!(
                    r#"<node index="{i}" text="" resource-id="{id}" class="android.widget.LinearLayout" package="p" clickable="true" bounds="{bounds}"><node index="0" text="{label}" class="android.widget.TextView" package="p" bounds="[60,{top}][1000,{}]"/><node index="1" text="{}" class="android.widget.TextView" package="p" bounds="[60,{}][1000,{}]"/></node>"#,
                    top + 70,
                    LABELS[s.summary],
                    top + 80,
                    top + 140
                ));
            } else {
                xml.push_str(&format!(
                    r#"<node index="{i}" text="{label}" resource-id="{id}" class="android.widget.Button" package="p" clickable="true" bounds="{bounds}"/>"#
                ));
            }
        }
        xml.push_str("</node></hierarchy>");
        parse_ui_dump(&xml).unwrap()
    }

    /// What a replayed tap acts on, as the script's `target` and `ui tap` decide it: the
    /// selector resolved the way a tap resolves it (a point: the element under it), else healed
    /// by a label only one element has, then `check` with what was recorded.
    fn acted_on<'a>(tree: &UiTree, els: &'a [Element], target: &Target) -> Option<&'a Element> {
        let by = |field: Field, value: &str| {
            let found = find(tree, els, field, &Matcher::Exact(value.to_string()), SCREEN);
            best_target(&found)
                .ok()
                .map(|f| els.iter().find(|e| e.node == f.element.node).unwrap())
        };
        let resolved = match &target.selector {
            Selector::Point(at) => under(els, *at),
            Selector::ResourceId(v) => by(Field::ResourceId, v),
            Selector::Text(v) => by(Field::Text, v),
            Selector::ContentDesc(v) => by(Field::ContentDesc, v),
            other => panic!("not generated: {other:?}"),
        };
        let (element, recorded) = match (resolved, &target.label) {
            (Some(e), _) => (e, target.checks()),
            // Healing: the script's ui.find of the label counts its matches, then taps by it.
            (None, Some(label)) if target.selector != Selector::Text(label.clone()) && !target.selector.fragile() => {
                let found = find(tree, els, Field::Text, &Matcher::Exact(label.clone()), SCREEN);
                if found.len() != 1 {
                    return None;
                }
                let recorded = Recorded {
                    label: Some(label.clone()),
                    class: target.class.clone(),
                    id: None,
                };
                (by(Field::Text, label)?, Some(recorded))
            }
            (None, _) => return None,
        };
        match recorded {
            Some(r) => check(tree, element, &r, "it").ok().map(|_| element),
            None => Some(element),
        }
    }

    fn name(tree: &UiTree, e: &Element) -> String {
        texts_within(tree, e.node).first().cloned().unwrap_or_default()
    }

    /// The target a Maestro flow gives back for a tap: written by `flow export`, read again.
    fn through_maestro(target: &Target) -> Target {
        tap_of(&maestro::render(
            &[Step::new(Action::Tap { target: target.clone() })],
            &[],
            "p",
        ))
    }

    /// The target of a Maestro `tapOn` written by hand with these fields.
    fn by_hand(fields: &[(&str, &str)]) -> Target {
        let lines: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("    {k}: {}\n", crate::quoted(v)))
            .collect();
        tap_of(&format!("appId: p\n---\n- tapOn:\n{}", lines.concat()))
    }

    fn tap_of(flow: &str) -> Target {
        match maestro::parse(flow).unwrap().remove(0).action {
            Action::Tap { target } => target,
            other => panic!("{other:?}"),
        }
    }

    /// A screen recorded, then the next one where its ids and places belong to other labels (the
    /// labels shuffled, one slot maybe gone): a replayed tap never acts on an element with another
    /// label, whether the flow is the script, the Maestro export, or a Maestro flow written by hand
    /// with an id and its text; one written with a text acts on an element showing it, one with an
    /// id alone (or an id and a `label`, Maestro's caption) keeps Maestro's meaning (whatever has
    /// that id), and healing never moves to another label.
    #[test]
    fn a_replayed_tap_never_acts_on_an_element_with_another_label() {
        let (pairs, taps, acts) = (AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0));
        let mut runner = TestRunner::new(Config {
            cases: 512,
            ..Config::default()
        });
        let screens = (
            proptest::collection::vec(slot(), 2..6),
            proptest::collection::vec(any::<u32>(), 6),
            proptest::option::of(0usize..6),
        );
        let result = runner.run(&screens, |(before, order, gone)| {
            pairs.fetch_add(1, Ordering::Relaxed);
            let a = xml(&before);
            let a_els = elements(&a);
            // The labels move to other places and ids.
            let mut moved: Vec<usize> = (0..before.len()).collect();
            moved.sort_by_key(|i| order[*i]);
            let mut after: Vec<Slot> = before
                .iter()
                .zip(&moved)
                .map(|(s, m)| Slot {
                    label: before[*m].label,
                    ..s.clone()
                })
                .collect();
            if let Some(g) = gone.filter(|g| *g < after.len()) {
                after.remove(g);
            }
            let b = xml(&after);
            let b_els = elements(&b);
            for element in a_els.iter().filter(|e| e.clickable) {
                let recorded = selector_for(&a, &a_els, SCREEN, element);
                // Recorded, never a framework id or a shared id alone.
                if let Selector::ResourceId(id) = &recorded.selector {
                    prop_assert!(!id.starts_with("android:id/"), "{recorded:?}");
                    prop_assert_eq!(a.nodes.iter().filter(|n| n.resource_id() == id).count(), 1);
                }
                let label = recorded.label.clone().unwrap_or_default();
                let id = IDS[before[element_slot(&a, element)].id];
                let mut written = vec![
                    recorded.clone(),
                    through_maestro(&recorded),
                    by_hand(&[("text", &label)]),
                ];
                // By hand, an id and the text it shows (Maestro: both must hold).
                if !id.is_empty() {
                    written.push(by_hand(&[("id", id), ("text", &label)]));
                }
                for (i, target) in written.iter().enumerate() {
                    let by_hand = i == 2;
                    taps.fetch_add(1, Ordering::Relaxed);
                    let Some(acted) = acted_on(&b, &b_els, target) else {
                        continue;
                    };
                    acts.fetch_add(1, Ordering::Relaxed);
                    match (&target.selector, &target.label) {
                        // Maestro's text, by hand: an element that shows it.
                        (Selector::Text(text), None) if by_hand => prop_assert!(
                            texts_within(&b, acted.node).contains(text),
                            "{target:?} acted on {acted:?}"
                        ),
                        // The Maestro export of a text (no id to pair it with): as Maestro reads
                        // it, an element showing that text (its own, a child's, or its label).
                        (Selector::Text(text), None) => prop_assert!(
                            texts_within(&b, acted.node).contains(text) || acted.label == *text,
                            "{target:?} acted on {acted:?}"
                        ),
                        // A point in a Maestro flow: whatever is under it, as Maestro taps it (it
                        // has no field for the element; the script export checks it).
                        (Selector::Point(at), None) => prop_assert!(acted.bounds.contains(at[0], at[1])),
                        _ => prop_assert_eq!(name(&b, acted), label.clone(), "{:?} acted on {:?}", target, acted),
                    }
                }
                // By hand, an id alone, or with a `label` (only a caption in Maestro's report):
                // whatever has that id, as Maestro taps it.
                for fields in [vec![("id", id)], vec![("id", id), ("label", "Tap the button")]] {
                    if !id.is_empty()
                        && let Some(acted) = acted_on(&b, &b_els, &by_hand(&fields))
                    {
                        prop_assert_eq!(b.nodes[acted.node].resource_id(), id);
                    }
                }
            }
            Ok(())
        });
        eprintln!(
            "{} cases (screen pairs), {} replayed taps: {} acted (on its recorded label, or as Maestro reads a text or point), {} refused",
            pairs.load(Ordering::Relaxed),
            taps.load(Ordering::Relaxed),
            acts.load(Ordering::Relaxed),
            taps.load(Ordering::Relaxed) - acts.load(Ordering::Relaxed)
        );
        if let Err(e) = result {
            panic!("{e}");
        }
    }

    /// The slot an element of a generated screen stands for.
    fn element_slot(tree: &UiTree, e: &Element) -> usize {
        let top = tree.nodes[e.node].bounds().unwrap().top;
        ((top - 200) / 200) as usize
    }
}
