//! The recording's own tests: steps, outcomes, and secrets by the field and by the value.

use super::{MAX_STEPS, Recording, Recordings, Selector, Step, Target, hide};
use crate::Action;
use android::identity::Identity;
use android::ui_elements::{Element, elements};
use android::uiautomator::{UiTree, parse_ui_dump};

fn labelled(labels: &[&str]) -> Vec<Element> {
    labels
        .iter()
        .map(|l| Element {
            reference: String::new(),
            label: l.to_string(),
            kind: "TextView".into(),
            id: None,
            at: [0, 0],
            flags: vec![],
            node: 0,
            bounds: Default::default(),
            clickable: false,
            identity: Identity {
                class: "android.widget.TextView".into(),
                label: l.to_string(),
                ..Identity::default()
            },
            twin: 0,
        })
        .collect()
}

/// A form's fields as a reading lists them: (resource-id, content-desc, text, password,
/// focused) each.
fn form(fields: &[(&str, &str, &str, bool, bool)]) -> Vec<Element> {
    let mut xml = r#"<hierarchy rotation="0"><node index="0" text="" class="android.widget.FrameLayout" package="p" bounds="[0,0][1080,2400]">"#.to_string();
    for (i, (id, desc, text, password, focused)) in fields.iter().enumerate() {
        let top = 200 + 200 * i;
        xml.push_str(&format!(
            r#"<node index="{i}" text="{text}" resource-id="{id}" content-desc="{desc}" class="android.widget.EditText" package="p" clickable="true" focusable="true" focused="{focused}" password="{password}" bounds="[40,{top}][1040,{}]"/>"#,
            top + 150
        ));
    }
    xml.push_str("</node></hierarchy>");
    elements(&parse_ui_dump(&xml).unwrap())
}

#[test]
fn typing_into_a_password_field_or_one_seen_as_one_is_recorded_as_a_placeholder() {
    let mut r = Recording::default();
    let login = form(&[
        ("p:id/username", "", "ada", false, false),
        ("p:id/password", "", "••••", true, true),
    ]);
    let (user, pass) = (&login[0], &login[1]);
    assert_eq!(r.typed("ada", Some(user), &login), "ada");
    assert_eq!(r.typed("hunter2", Some(pass), &login), "${PASSWORD}");
    // No field has focus: a password field on the screen may get the text.
    assert_eq!(r.typed("hunter2", None, &login), "${PASSWORD}");
    assert_eq!(r.typed("ada", None, &login[..1]), "ada");
    // The field once shown as a password, now showing its text ("show password").
    r.saw(None, &login);
    let revealed = form(&[
        ("p:id/username", "", "ada", false, false),
        ("p:id/password", "", "hunter2", false, true),
    ]);
    let shown = &revealed[1];
    assert_eq!(r.typed("hunter2", Some(shown), &revealed), "${PASSWORD}");
    assert_eq!(r.hidden(&revealed).nodes, vec![shown.node]);
    // Its text is never an outcome to assert.
    r.push(Step::new(Action::Key { name: "TAB".into() }));
    r.saw(None, &revealed);
    assert!(!r.steps[0].expect.visible.contains(&Selector::Text("hunter2".into())));
    // Nor a selector.
    let by_text = Target {
        selector: Selector::Text("hunter2".into()),
        label: Some("hunter2".into()),
        class: Some("EditText".into()),
        id: None,
    };
    let kept = r.guarded(shown, by_text.clone());
    assert_eq!(
        kept,
        Target {
            selector: Selector::Point(shown.at),
            label: None,
            class: Some("EditText".into()),
            id: None,
        }
    );
    assert_eq!(r.guarded(&revealed[0], by_text.clone()), by_text);
    // A new recording still knows the field.
    let all = Recordings::default();
    all.saw("s", None, &login);
    all.reset("s");
    assert_eq!(all.typed("s", "hunter2", Some(shown), &revealed), "${PASSWORD}");
}

/// React Native Elements gives every input one resource-id: the fields are told apart by
/// their content-descs, and a form's unnamed fields by their order.
#[test]
fn fields_that_share_an_id_or_have_none_are_each_their_own() {
    let mut r = Recording::default();
    let shared = "RNE__Input__text-input";
    let rn = form(&[
        (shared, "Email input", "", false, false),
        (shared, "Password input", "", true, false),
        (shared, "PIN input", "", true, false),
    ]);
    r.saw(None, &rn);
    assert_eq!(r.typed("pw", Some(&rn[1]), &rn), "${PASSWORD_INPUT}");
    assert_eq!(r.typed("1234", Some(&rn[2]), &rn), "${PIN_INPUT}");
    assert_eq!(r.typed("ada@example.com", Some(&rn[0]), &rn), "ada@example.com");
    let anonymous = form(&[
        ("", "", "", false, false),
        ("", "", "", true, false),
        ("", "", "", true, false),
    ]);
    r.saw(None, &anonymous);
    assert_eq!(r.typed("ada", Some(&anonymous[0]), &anonymous), "ada");
    assert_eq!(r.typed("pw", Some(&anonymous[1]), &anonymous), "${SECRET}");
    assert_eq!(r.typed("pw2", Some(&anonymous[2]), &anonymous), "${SECRET_2}");
    // Revealed, each keeps its own name; the plain field stays plain.
    let revealed = form(&[
        ("", "", "ada", false, false),
        ("", "", "pw", false, false),
        ("", "", "", true, false),
    ]);
    assert_eq!(r.typed("pw", Some(&revealed[1]), &revealed), "${SECRET}");
    assert_eq!(r.typed("ada", Some(&revealed[0]), &revealed), "ada");
}

/// A screen of (class, resource-id, content-desc, text, hint, password) nodes, one a line.
fn screen(nodes: &[(&str, &str, &str, &str, &str, bool)]) -> UiTree {
    let mut xml = r#"<hierarchy rotation="0"><node index="0" text="" class="android.widget.FrameLayout" package="p" bounds="[0,0][1080,2400]">"#.to_string();
    for (i, (class, id, desc, text, hint, password)) in nodes.iter().enumerate() {
        let top = 200 + 200 * i;
        xml.push_str(&format!(
            r#"<node index="{i}" text="{text}" resource-id="{id}" content-desc="{desc}" hint="{hint}" class="android.widget.{class}" package="p" focusable="true" password="{password}" bounds="[40,{top}][1040,{}]"/>"#,
            top + 150
        ));
    }
    xml.push_str("</node></hierarchy>");
    parse_ui_dump(&xml).unwrap()
}

/// What `read_screen` shows of `tree` (`elements_of`): each node's text, content-desc, hint.
fn shown(all: &Recordings, serial: &str, mut tree: UiTree) -> Vec<[String; 3]> {
    let hidden = all.hidden(serial, &elements(&tree));
    hide(&mut tree, &hidden);
    let attr = |n: &android::uiautomator::UiNode, a: &str| n.attr(a).unwrap_or_default().to_string();
    tree.nodes[1..]
        .iter()
        .map(|n| [attr(n, "text"), attr(n, "content-desc"), attr(n, "hint")])
        .collect()
}

/// A value typed into a secret field is hidden in every reading of its device, wherever it
/// shows (whole or inside a text, a content-desc, a hint), whoever reads it; the field itself
/// may have moved or been renamed. Not on another device; a short value only in its field.
#[test]
fn a_value_typed_into_a_secret_field_is_hidden_wherever_the_device_shows_it() {
    let (alice, bob) = (Recordings::default(), Recordings::default());
    let serial = "unit-a-value-typed";
    let login = elements(&screen(&[("EditText", "", "", "", "", true)]));
    assert_eq!(
        alice.typed(serial, "Quokka-Sunrise", Some(&login[0]), &login),
        "${SECRET}"
    );
    assert_eq!(alice.typed(serial, "pw1", Some(&login[0]), &login), "${SECRET}");
    let later = || {
        screen(&[
            ("EditText", "p:id/other", "moved", "Quokka-Sunrise", "", false),
            ("TextView", "", "", "you typed Quokka-Sunrise!", "", false),
            ("ImageView", "", "input, Quokka-Sunrise wrong", "", "", false),
            ("EditText", "", "", "", "Quokka-Sunrise", false),
            ("TextView", "", "", "pw1 stays pw1", "", false),
        ])
    };
    let dots = "•".repeat("Quokka-Sunrise".len());
    let expected = vec![
        [dots.clone(), "moved".into(), String::new()],
        [format!("you typed {dots}!"), String::new(), String::new()],
        [String::new(), format!("input, {dots} wrong"), String::new()],
        [String::new(), String::new(), dots.clone()],
        ["pw1 stays pw1".into(), String::new(), String::new()],
    ];
    assert_eq!(shown(&alice, serial, later()), expected);
    assert_eq!(shown(&bob, serial, later()), expected, "another principal, one device");
    let elsewhere = shown(&alice, "unit-another-device", later());
    assert_eq!(elsewhere[1][0], "you typed Quokka-Sunrise!");
}

/// A field revealed before any reading is still a password field when its name says so: its
/// resource-id, content-desc or hint, or the label just before it.
#[test]
fn a_field_named_as_a_password_is_secret_even_revealed() {
    let r = Recording::default();
    let tree = screen(&[
        ("EditText", "p:id/user_pin", "", "1234", "", false),
        ("EditText", "", "Password input", "hunter2", "", false),
        ("EditText", "", "", "hunter3", "Your passcode", false),
        ("TextView", "", "", "Password", "", false),
        ("EditText", "", "", "hunter4", "", false),
        ("EditText", "p:id/spinner", "", "ada", "", false),
        ("TextView", "", "", "Pinned", "", false),
        ("EditText", "", "", "bob", "", false),
        ("Button", "", "", "Show password", "", false),
    ]);
    let els = elements(&tree);
    let hidden: Vec<&str> = r.hidden(&els).nodes.iter().map(|n| tree.nodes[*n].text()).collect();
    assert_eq!(hidden, ["1234", "hunter2", "hunter3", "hunter4"]);
    let mut r = r;
    let field = &els[4];
    assert_eq!(r.typed("hunter4", Some(field), &els), "${SECRET}");
}

#[test]
fn a_step_expects_what_the_next_reading_shows_that_was_not_there_before() {
    let mut r = Recording::default();
    r.saw(
        Some(".Settings"),
        &labelled(&["Settings", "Network & internet", "Battery"]),
    );
    r.push(Step::new(Action::Key { name: "BACK".into() }));
    r.saw(
        Some(".SubSettings"),
        &labelled(&["Settings", "Wi-Fi", "12:30", "Airplane mode", "VPN"]),
    );
    let step = &r.steps[0];
    assert_eq!(step.expect.activity.as_deref(), Some(".SubSettings"));
    assert_eq!(
        step.expect.visible,
        vec![Selector::Text("Wi-Fi".into()), Selector::Text("Airplane mode".into())]
    );
    // A later reading does not rewrite it.
    r.saw(Some(".Other"), &labelled(&["Other"]));
    assert_eq!(r.steps[0].expect.activity.as_deref(), Some(".SubSettings"));
}

#[test]
fn the_recording_keeps_the_newest_steps_and_counts_the_dropped() {
    let mut r = Recording::default();
    for i in 0..MAX_STEPS + 7 {
        r.push(Step::new(Action::Key { name: format!("{i}") }));
    }
    assert_eq!(r.steps.len(), MAX_STEPS);
    assert_eq!(r.dropped, 7);
    assert_eq!(r.steps[0].action, Action::Key { name: "7".into() });
}

/// Two instances recorded on one copy at once (`--state`): the one that writes second puts its
/// new steps after the other's, each once, within `MAX_STEPS`; and a recording read back from
/// its JSON is the same recording.
#[test]
fn steps_recorded_on_a_copy_go_after_the_steps_recorded_meanwhile() {
    let key = |n: &str| Step::new(Action::Key { name: n.into() });
    let names = |r: &Recording| -> Vec<String> {
        r.steps
            .iter()
            .map(|s| match &s.action {
                Action::Key { name } => name.clone(),
                other => format!("{other:?}"),
            })
            .collect()
    };
    let mut base = Recording::default();
    base.push(key("A"));
    let (mut ours, mut theirs) = (base.clone(), base.clone());
    ours.push(key("OURS"));
    theirs.push(key("THEIRS1"));
    theirs.push(key("THEIRS2"));
    let merged = ours.onto(base.total(), theirs);
    assert_eq!(names(&merged), ["A", "THEIRS1", "THEIRS2", "OURS"]);
    let json = serde_json::to_string(&merged).unwrap();
    let back: Recording = serde_json::from_str(&json).unwrap();
    assert_eq!(serde_json::to_string(&back).unwrap(), json);

    let mut full = Recording::default();
    for i in 0..MAX_STEPS {
        full.push(key(&i.to_string()));
    }
    let mut ours = full.clone();
    ours.push(key("LAST"));
    let merged = ours.onto(full.total(), full.clone());
    assert_eq!((merged.steps.len(), merged.dropped), (MAX_STEPS, 1));
    assert_eq!(names(&merged).last().map(String::as_str), Some("LAST"));
}

/// A reading through one instance gave the newest step its outcome while another instance
/// recorded the next step: the merge keeps that outcome (it was dropped, and the exported flow
/// asserted nothing after the step), and never overwrites one theirs gave.
#[test]
fn an_outcome_given_on_a_copy_is_kept_when_another_instance_recorded_meanwhile() {
    let key = |n: &str| Step::new(Action::Key { name: n.into() });
    let mut base = Recording::default();
    base.saw(Some(".Settings"), &labelled(&["Settings", "Battery"]));
    base.push(key("TAP"));
    let (mut ours, mut theirs) = (base.clone(), base.clone());
    ours.saw(Some(".SubSettings"), &labelled(&["Settings", "Wi-Fi"]));
    theirs.push(key("NEXT"));
    let merged = ours.clone().onto(base.total(), theirs);
    let names: Vec<String> = merged.steps.iter().map(|s| format!("{:?}", s.action)).collect();
    assert_eq!(merged.steps.len(), 2, "{names:?}");
    assert_eq!(merged.steps[0].expect.activity.as_deref(), Some(".SubSettings"));
    assert_eq!(merged.steps[0].expect.visible, vec![Selector::Text("Wi-Fi".into())]);
    assert_eq!(
        merged.steps[1].expect,
        Default::default(),
        "the next step's is still to come"
    );

    // Theirs gave the step an outcome of its own first: theirs stands.
    let mut theirs = base.clone();
    theirs.saw(Some(".Other"), &labelled(&["Other"]));
    let merged = ours.onto(base.total(), theirs);
    assert_eq!(merged.steps[0].expect.activity.as_deref(), Some(".Other"));
}
