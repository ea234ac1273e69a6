//! Refs by identity: kept through typing and toggling, refused once the element is gone (generated screens).

use super::*;
use crate::text::cut;
use crate::ui_elements::{MAX_LABEL_CHARS, elements, label_of};
use crate::uiautomator::{UiTree, parse_ui_dump};
use proptest::prelude::*;

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
    book.number(&mut els);
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

#[test]
fn a_field_keeps_its_ref_as_its_text_changes_and_is_refused_where_another_field_has_another_hint() {
    let form = |hint: &str, text: &str| {
        parse_ui_dump(&format!(
            r#"<hierarchy rotation="0"><node index="0" text="" class="android.widget.FrameLayout" package="p" bounds="[0,0][1080,2400]"><node index="0" text="{text}" hint="{hint}" resource-id="p:id/input" class="android.widget.EditText" package="p" clickable="true" focusable="true" bounds="[40,200][1040,300]"/></node></hierarchy>"#
        ))
        .unwrap()
    };
    let mut book = RefBook::default();
    let email = numbered(&mut book, &form("Email", "Email"))[0].reference.clone();
    let typed = numbered(&mut book, &form("Email", "ada@example.com"));
    assert!(matches!(resolve(&typed, &email), Resolved::One(_)), "typing is state");
    let confirm = numbered(&mut book, &form("Type DELETE to confirm", "ada@example.com"));
    assert!(matches!(resolve(&confirm, &email), Resolved::Gone), "another field");
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
fn a_row_is_refused_where_the_next_dialog_shows_another_whole_label() {
    let mut book = RefBook::default();
    let wipe = numbered(&mut book, &dialog("Remote wipe", &[("Off", true), ("On", false)]));
    let off = ref_of(&wipe, "Off", "CheckedTextView").to_string();
    // The next dialog has "On" where "Off" was: refused (a ref is never moved with a row).
    let armed = numbered(&mut book, &dialog("Remote wipe", &[("On", false), ("Off", true)]));
    assert!(
        matches!(resolve(&armed, &off), Resolved::Gone),
        "Off must not become On"
    );
    // The first dialog again, another row chosen: a state change, the ref holds.
    let again = numbered(&mut book, &dialog("Remote wipe", &[("Off", false), ("On", true)]));
    assert!(matches!(resolve(&again, &off), Resolved::One(e) if e.label == "Off"));

    let year = "Automatically delete messages and attachments that are older than one year";
    let hour = year.replace("year", "hour");
    let old = numbered(&mut book, &dialog("Clean up", &[(year, false)]));
    let listed = &old[1];
    assert_eq!(listed.label, cut(year, MAX_LABEL_CHARS), "listed cut, as before");
    let newer = numbered(&mut book, &dialog("Clean up", &[(&hour, false)]));
    assert_eq!(newer[1].label, listed.label, "the two look alike in a listing");
    assert!(
        matches!(resolve(&newer, &listed.reference), Resolved::Gone),
        "one year must not become one hour"
    );
}

#[test]
fn a_switch_showing_only_on_or_off_keeps_its_ref_when_toggled() {
    let mut book = RefBook::default();
    let on = numbered(
        &mut book,
        &rows_screen(&[Row::Switch {
            text: "ON".into(),
            checked: true,
        }]),
    );
    let off = numbered(
        &mut book,
        &rows_screen(&[Row::Switch {
            text: "OFF".into(),
            checked: false,
        }]),
    );
    assert_eq!(on[0].label, "ON");
    assert!(matches!(resolve(&off, &on[0].reference), Resolved::One(e) if e.label == "OFF"));
    // A word that disagrees with the flag is no mirror of it: it is the switch's label.
    let odd = numbered(
        &mut book,
        &rows_screen(&[Row::Switch {
            text: "ON".into(),
            checked: false,
        }]),
    );
    assert!(matches!(resolve(&odd, &on[0].reference), Resolved::Gone));
}

#[test]
fn a_book_of_whole_labels_stays_bounded_and_the_current_screens_refs_hold() {
    let mut book = RefBook::default();
    for round in 0..12 {
        let label = format!("{round} {}", "x".repeat(1 << 20));
        let tree = dialog("Huge", &[(&label, false)]);
        let els = numbered(&mut book, &tree);
        assert!(book.label_bytes <= MAX_LABEL_BYTES + (2 << 20), "{}", book.label_bytes);
        let again = numbered(&mut book, &tree);
        assert!(matches!(resolve(&again, &els[1].reference), Resolved::One(_)));
    }
    assert_eq!(book.next, 13, "numbers keep counting: the title once, a row each round");
}

/// One row of a generated screen, at its index's place.
#[derive(Debug, Clone)]
enum Row {
    /// A dialog's choice (AlertDialog's CheckedTextView): its text is its label.
    Choice { label: String, checked: bool },
    /// A settings row: a clickable layout labelled by its title and summary, and maybe a
    /// switch inside that shows "ON"/"OFF" as it is checked or not (as Android 5 and 6 do).
    Setting {
        title: String,
        summary: String,
        toggle: Option<bool>,
    },
    /// A switch whose own text is any label, or an ON/OFF word agreeing with its flag or not.
    Switch { text: String, checked: bool },
}

impl Row {
    fn flip(&mut self) {
        match self {
            Row::Choice { checked, .. } | Row::Switch { checked, .. } => *checked = !*checked,
            Row::Setting { toggle, .. } => *toggle = toggle.map(|on| !on),
        }
    }

    /// What a person would call this row, worked out from the generated row, not the dump:
    /// its whole text; only the word a switch shows for its `checked` flag is left out.
    fn whole_label(&self) -> String {
        match self {
            Row::Choice { label, .. } => label.trim().to_string(),
            Row::Setting { title, summary, .. } => {
                let mut parts: Vec<&str> = Vec::new();
                for part in [title.trim(), summary.trim()] {
                    if !part.is_empty() && !parts.contains(&part) {
                        parts.push(part);
                    }
                }
                parts.join(" · ")
            }
            Row::Switch { text, checked } => {
                let word = if *checked { "on" } else { "off" };
                if text.trim().eq_ignore_ascii_case(word) {
                    String::new()
                } else {
                    text.trim().to_string()
                }
            }
        }
    }

    /// The class and resource-id the row is dumped with.
    fn kind_and_id(&self) -> (&'static str, &'static str) {
        match self {
            Row::Choice { .. } => ("CheckedTextView", "text1"),
            Row::Setting { .. } => ("LinearLayout", "row"),
            Row::Switch { .. } => ("Switch", "switch"),
        }
    }

    fn label_mut(&mut self) -> &mut String {
        match self {
            Row::Choice { label, .. } | Row::Setting { title: label, .. } | Row::Switch { text: label, .. } => label,
        }
    }

    fn xml(&self, i: usize) -> String {
        let (top, bottom) = (300 + 160 * i, 460 + 160 * i);
        match self {
            Row::Choice { label, checked } => format!(
                r#"<node index="{i}" text="{label}" resource-id="android:id/text1" class="android.widget.CheckedTextView" package="p" checkable="true" checked="{checked}" clickable="true" bounds="[0,{top}][1080,{bottom}]"/>"#
            ),
            Row::Setting { title, summary, toggle } => {
                let switch = toggle.map_or(String::new(), |on| {
                    format!(
                        r#"<node index="2" text="{}" resource-id="android:id/switch_widget" class="android.widget.Switch" package="p" checkable="true" checked="{on}" bounds="[900,{}][1040,{}]"/>"#,
                        if on { "ON" } else { "OFF" },
                        top + 40,
                        top + 120
                    )
                });
                format!(
                    r#"<node index="{i}" text="" resource-id="p:id/row" class="android.widget.LinearLayout" package="p" clickable="true" bounds="[0,{top}][1080,{bottom}]"><node index="0" text="{title}" resource-id="android:id/title" class="android.widget.TextView" package="p" bounds="[40,{}][880,{}]"/><node index="1" text="{summary}" resource-id="android:id/summary" class="android.widget.TextView" package="p" bounds="[40,{}][880,{}]"/>{switch}</node>"#,
                    top + 10,
                    top + 80,
                    top + 80,
                    top + 150
                )
            }
            Row::Switch { text, checked } => format!(
                r#"<node index="{i}" text="{text}" resource-id="p:id/switch" class="android.widget.Switch" package="p" checkable="true" checked="{checked}" clickable="true" bounds="[0,{top}][1080,{bottom}]"/>"#
            ),
        }
    }
}

fn rows_screen(rows: &[Row]) -> UiTree {
    let body: String = rows.iter().enumerate().map(|(i, row)| row.xml(i)).collect();
    parse_ui_dump(&format!(
        r#"<hierarchy rotation="0"><node index="0" text="" class="android.widget.FrameLayout" package="p" bounds="[0,0][1080,2400]">{body}</node></hierarchy>"#
    ))
    .unwrap()
}

/// Labels that share long prefixes (past the 60 chars a listed label keeps) and differ
/// after, state words, right-to-left text and emoji (some of several code points).
fn label(prefix: String) -> impl Strategy<Value = String> {
    const WORDS: [&str; 16] = [
        "On",
        "Off",
        "ON",
        "OFF",
        "Light",
        "Erase all data",
        "Remote wipe",
        "Remote wipe · Off",
        "מחק את כל הנתונים",
        "حذف كل الرسائل",
        "🔥 Wipe",
        "🔥 Wipe 📱",
        "👍🏽 Like",
        "👍🏿 Like",
        "Wi‑Fi",
        "",
    ];
    const TAILS: [&str; 6] = ["year", "hour", "one year 🗑️", "one year 🗑", "שנה", "سنة"];
    const LONG: [&str; 3] = [
        "Automatically delete messages and attachments that are older than one ",
        "מחיקה אוטומטית של הודעות וקבצים מצורפים שישנים יותר משנה אחת או יותר מ",
        "🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹🧹 ",
    ];
    prop_oneof![
        proptest::sample::select(&WORDS[..]).prop_map(str::to_string),
        (
            proptest::sample::select(&LONG[..]),
            proptest::sample::select(&TAILS[..])
        )
            .prop_map(|(head, tail)| format!("{head}{tail}")),
        proptest::sample::select(&TAILS[..]).prop_map(move |tail| format!("{prefix}{tail}")),
    ]
}

fn row(prefix: String) -> impl Strategy<Value = Row> {
    prop_oneof![
        (label(prefix.clone()), any::<bool>()).prop_map(|(label, checked)| Row::Choice { label, checked }),
        (
            label(prefix.clone()),
            label(prefix.clone()),
            proptest::option::of(any::<bool>())
        )
            .prop_map(|(title, summary, toggle)| Row::Setting { title, summary, toggle }),
        (label(prefix), any::<bool>()).prop_map(|(text, checked)| Row::Switch { text, checked }),
    ]
}

/// How the second screen comes from the first.
#[derive(Debug, Clone)]
enum Change {
    /// The row's state flips (a choice made, a switch toggled): its ref stays.
    Flip(usize),
    /// Two rows trade labels (state words swapped between rows).
    Swap(usize, usize),
    /// A row takes another label (same place, class and id: another dialog's row).
    Relabel(usize, String),
    /// A row goes (the rows below move up a place) or comes (they move down).
    Remove(usize),
    Insert(usize, Row),
}

fn change(prefix: String) -> impl Strategy<Value = Change> {
    prop_oneof![
        (0usize..8).prop_map(Change::Flip),
        (0usize..8, 0usize..8).prop_map(|(a, b)| Change::Swap(a, b)),
        (0usize..8, label(prefix.clone())).prop_map(|(i, l)| Change::Relabel(i, l)),
        (0usize..8).prop_map(Change::Remove),
        (0usize..8, row(prefix)).prop_map(|(i, r)| Change::Insert(i, r)),
    ]
}

fn apply(rows: &mut Vec<Row>, change: Change) {
    let n = rows.len();
    match change {
        Change::Flip(i) => rows[i % n].flip(),
        Change::Swap(a, b) => {
            let from_a = rows[a % n].label_mut().clone();
            let from_b = std::mem::replace(rows[b % n].label_mut(), from_a);
            *rows[a % n].label_mut() = from_b;
        }
        Change::Relabel(i, label) => *rows[i % n].label_mut() = label,
        Change::Remove(i) if n > 1 => {
            rows.remove(i % n);
        }
        Change::Remove(_) => {}
        Change::Insert(i, row) => rows.insert(i % (n + 1), row),
    }
}

/// Generated screen pairs: a ref of the first resolves on the second exactly when the row at
/// its place has the same whole label, class and id, and then to that row; otherwise it is
/// refused. Long labels are listed cut, and still told apart.
#[test]
fn a_ref_resolves_only_to_the_element_with_its_whole_label_class_and_id() {
    use proptest::test_runner::{Config, TestCaseError, TestRunner};
    let pair = "[a-z][a-z ]{60,70}".prop_flat_map(|prefix| {
        (
            proptest::collection::vec(row(prefix.clone()), 1..7),
            proptest::collection::vec(change(prefix), 0..6),
        )
    });
    let mut runner = TestRunner::new(Config {
        failure_persistence: None,
        ..Config::with_cases(512)
    });
    // Counted in cells: the runner takes a `Fn`.
    let [cases, kept, refused, long_refused] = [(); 4].map(|_| std::cell::Cell::new(0usize));
    runner
        .run(&pair, |(first, changes)| {
            cases.set(cases.get() + 1);
            let mut second = first.clone();
            for c in changes {
                apply(&mut second, c);
            }
            let (a_tree, b_tree) = (rows_screen(&first), rows_screen(&second));
            let mut book = RefBook::default();
            let a = numbered(&mut book, &a_tree);
            let b = numbered(&mut book, &b_tree);
            // The element listed for row i (not the switch inside a settings row).
            let of_row = |els: &[Element], tree: &UiTree, i: usize| -> Element {
                let node = tree.nodes[0].children[i];
                els.iter().find(|e| e.node == node).cloned().unwrap()
            };
            for (i, row) in first.iter().enumerate() {
                let element = of_row(&a, &a_tree, i);
                let whole = row.whole_label();
                let shown = label_of(&a_tree, element.node);
                prop_assert_eq!(&element.label, &cut(&shown, MAX_LABEL_CHARS), "listed labels stay cut");
                let same = second
                    .get(i)
                    .is_some_and(|there| there.kind_and_id() == row.kind_and_id() && there.whole_label() == whole);
                match resolve(&b, &element.reference) {
                    Resolved::One(found) => {
                        prop_assert!(
                            same,
                            "{} of {:?} resolved to {:?} on {:?}",
                            element.reference,
                            row,
                            found,
                            second
                        );
                        prop_assert_eq!(found, &of_row(&b, &b_tree, i));
                        kept.set(kept.get() + 1);
                    }
                    Resolved::Gone => {
                        prop_assert!(!same, "{} of {:?} refused on {:?}", element.reference, row, second);
                        refused.set(refused.get() + 1);
                        let lookalike = second.get(i).is_some_and(|there| {
                            let other = there.whole_label();
                            other != whole && cut(&other, MAX_LABEL_CHARS) == cut(&whole, MAX_LABEL_CHARS)
                        });
                        long_refused.set(long_refused.get() + usize::from(lookalike));
                    }
                    Resolved::Several(hits) => {
                        return Err(TestCaseError::fail(format!(
                            "{} is on the screen {} times",
                            element.reference,
                            hits.len()
                        )));
                    }
                }
            }
            Ok(())
        })
        .unwrap();
    let [cases, kept, refused, long_refused] = [cases, kept, refused, long_refused].map(|c| c.get());
    eprintln!(
        "{cases} cases: {kept} refs kept, {refused} refused ({long_refused} where the row now there lists the same first {MAX_LABEL_CHARS} chars)"
    );
    assert!(kept > 0 && refused > 0 && long_refused > 0);
}

#[test]
fn ref_syntax_is_strict() {
    assert_eq!(parse_ref("e12"), Some(12));
    for bad in ["e0", "e-1", "e", "12", "x3", "e01", "e99999999999999999999", "e1 "] {
        assert_eq!(parse_ref(bad), None, "{bad}");
    }
}

/// A book written out and read back (as instances sharing state hand it on) is the same book:
/// the next reading gets the same refs from either, a new element the same new number.
#[test]
fn a_book_read_back_from_its_json_numbers_as_the_original() {
    let mut book = RefBook::default();
    let first = numbered(&mut book, &screen("", false, "Login"));
    let json = serde_json::to_string(&book).unwrap();
    let mut copy: RefBook = serde_json::from_str(&json).unwrap();
    assert_eq!(copy, book);
    let next = screen("typed", true, "Welcome");
    let (mine, theirs) = (numbered(&mut book, &next), numbered(&mut copy, &next));
    let refs = |els: &[Element]| els.iter().map(|e| e.reference.clone()).collect::<Vec<_>>();
    assert_eq!(refs(&mine), refs(&theirs));
    assert!(
        refs(&theirs).iter().any(|r| !refs(&first).contains(r)),
        "a new title, a new ref"
    );
    assert!(copy.knows(&first[0].reference));
}
