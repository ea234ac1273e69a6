//! Secrets by the field: generated forms (fields with unique, shared, framework or no ids,
//! told apart by content-desc or not at all, native or on a web page, password or not), typed
//! in any order, with "show password" toggles revealing the password fields between steps. What
//! a reading shows, the steps kept and both exports never hold a password; each secret field has
//! a `${NAME}` of its own; and replayed, each step's target resolves (through `ui`'s own
//! resolution) to the field its value was typed into.

use std::collections::HashMap;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::Value;

use super::{reading, recorded_tap, replayed, screen_xml, web_element};
use crate::android::identity::field_class;
use crate::android::ui_refs::RefBook;
use crate::flow::{Action, Recording, Step, Target, js, maestro, placeholder_name};
use crate::tools::ui::Snapshot;
use crate::tools::ui::act::focused_field;

/// A generated field.
#[derive(Debug, Clone)]
struct Field {
    id: Id,
    /// Its content-desc (a web field's accessible name), if it has one.
    named: bool,
    password: bool,
    web: bool,
}

#[derive(Debug, Clone, Copy)]
enum Id {
    Own,
    /// One id every field of this kind shares (React Native Elements).
    Shared,
    Framework,
    None,
}

fn field() -> impl Strategy<Value = Field> {
    let id = prop_oneof![Just(Id::Own), Just(Id::Shared), Just(Id::Framework), Just(Id::None)];
    (id, any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(id, named, password, web)| Field {
        id,
        named,
        password,
        web,
    })
}

/// The form as a reading shows it: each field's text (a password as dots, unless revealed),
/// the one typed into last focused.
fn form(fields: &[Field], typed: &[Option<String>], revealed: bool, focused: Option<usize>) -> (String, Vec<Value>) {
    let mut body = String::new();
    let mut page = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let value = typed[i].clone().unwrap_or_default();
        let password = f.password && !revealed;
        let name = if f.named {
            format!("Field {i} input")
        } else {
            String::new()
        };
        if f.web {
            // The page never reports a password's value.
            let value = if password { String::new() } else { value };
            let mut e = web_element("textbox", &name, &value, password, i, false);
            e["focused"] = Value::Bool(focused == Some(i));
            page.push(e);
            continue;
        }
        let id = match f.id {
            Id::Own => format!("p:id/field{i}"),
            Id::Shared => "RNE__Input__text-input".into(),
            Id::Framework => "android:id/edit".into(),
            Id::None => String::new(),
        };
        // As a phone shows a password: a dot a character.
        let text = if password {
            value.chars().map(|_| '•').collect()
        } else {
            value
        };
        let top = 100 + 180 * i;
        body.push_str(&format!(
            r#"<node index="{i}" text="{text}" resource-id="{id}" content-desc="{name}" class="android.widget.EditText" package="p" clickable="true" focusable="true" focused="{}" password="{password}" bounds="[40,{top}][900,{}]"/>"#,
            focused == Some(i),
            top + 150
        ));
    }
    (screen_xml(&body), page)
}

/// The field element `i` of a reading of `form`.
fn element_of<'a>(snap: &'a Snapshot, fields: &[Field], i: usize) -> &'a crate::android::ui_elements::Element {
    let native = fields[..i].iter().filter(|f| !f.web).count();
    let web = fields[..i].iter().filter(|f| f.web).count();
    let kind = |e: &&crate::android::ui_elements::Element| field_class(&e.identity.class);
    let (nth, is_web) = if fields[i].web { (web, true) } else { (native, false) };
    snap.elements
        .iter()
        .filter(kind)
        .filter(|e| e.kind.starts_with("web:") == is_web)
        .nth(nth)
        .expect("the field is listed")
}

#[test]
fn each_secret_field_is_its_own_placeholder_and_no_password_is_ever_written() {
    let counts = std::cell::RefCell::new((0usize, 0usize, 0usize, 0usize, 0usize));
    let mut runner = TestRunner::new(Config {
        failure_persistence: None,
        ..Config::with_cases(256)
    });
    let cases = (
        proptest::collection::vec(field(), 2..6),
        proptest::collection::vec(any::<u32>(), 6),
        proptest::collection::vec(any::<bool>(), 6),
        any::<bool>(),
    );
    let result = runner.run(&cases, |(fields, order, reveal_after, by_ref)| {
        let mut c = counts.borrow_mut();
        c.0 += 1;
        let mut sequence: Vec<usize> = (0..fields.len()).collect();
        sequence.sort_by_key(|i| order[*i]);
        let values: Vec<String> = (0..fields.len()).map(|i| format!("Qz{}v{i}Secret!", c.0)).collect();
        let mut recording = Recording::default();
        let mut book = RefBook::default();
        let mut typed: Vec<Option<String>> = vec![None; fields.len()];
        let mut revealed = false;
        let mut steps: Vec<Step> = Vec::new();
        let mut answers: Vec<String> = Vec::new();
        let secrets: Vec<&String> = values
            .iter()
            .zip(&fields)
            .filter(|(_, f)| f.password)
            .map(|(v, _)| v)
            .collect();
        // Every reading handed to the recording, as `read_screen` does, and what an answer
        // and a cache entry would show of it.
        let mut read = |typed: &[Option<String>], revealed: bool, focused: Option<usize>, recording: &mut Recording| {
            let (xml, page) = form(&fields, typed, revealed, focused);
            let snap = reading(&xml, &page, &mut book, recording);
            recording.saw(None, &snap.elements);
            let shown: Vec<String> = snap.elements.iter().map(|e| e.label.clone()).collect();
            let tree: Vec<String> = snap.tree.nodes.iter().map(|n| format!("{:?}", n.attrs)).collect();
            answers.push(format!("{shown:?}{tree:?}"));
            snap
        };
        for (n, &i) in sequence.iter().enumerate() {
            let snap = read(&typed, revealed, None, &mut recording);
            let element = element_of(&snap, &fields, i).clone();
            // `type {ref, text}`: the field's tap is the step's target; else a tap, then `type`
            // into the field that then has focus.
            let target = recorded_tap(&snap, &element, &recording);
            let step = if by_ref {
                let text = recording.typed(&values[i], Some(&element), &snap.elements);
                Action::Type {
                    target: Some(target),
                    text,
                    clear: false,
                    submit: false,
                }
            } else {
                steps.push(Step::new(Action::Tap { target }));
                let now = read(&typed, revealed, Some(i), &mut recording);
                let focus = focused_field(&now.elements).cloned();
                prop_assert!(focus.is_some(), "field {i} has focus");
                let text = recording.typed(&values[i], focus.as_ref(), &now.elements);
                Action::Type {
                    target: None,
                    text,
                    clear: false,
                    submit: false,
                }
            };
            steps.push(Step::new(step));
            typed[i] = Some(values[i].clone());
            if fields[i].password {
                c.1 += 1;
            }
            if reveal_after[n] {
                revealed = !revealed;
                c.2 += usize::from(revealed);
            }
        }
        read(&typed, revealed, None, &mut recording);

        // Nothing written holds a password: not a reading's answer, nor the steps, nor a file.
        let js = js::render(&steps, &[]);
        let yaml = maestro::render(&steps, &[], "p");
        for secret in &secrets {
            for (what, text) in [("the script", &js), ("the Maestro flow", &yaml)] {
                prop_assert!(!text.contains(secret.as_str()), "{what} holds {secret}:\n{text}");
            }
            for answer in &answers {
                prop_assert!(!answer.contains(secret.as_str()), "a reading shows {secret}: {answer}");
            }
        }
        // One NAME per secret field, the same each time it is typed into; plain text kept.
        let mut names: HashMap<String, usize> = HashMap::new();
        let typed_texts: Vec<(usize, &String)> = steps
            .iter()
            .filter_map(|s| match &s.action {
                Action::Type { text, .. } => Some(text),
                _ => None,
            })
            .zip(sequence.iter().copied())
            .map(|(text, i)| (i, text))
            .collect();
        for (i, text) in &typed_texts {
            match placeholder_name(text) {
                Some(name) => {
                    prop_assert!(fields[*i].password, "field {i} is no password: {text}");
                    let owner = *names.entry(name.to_string()).or_insert(*i);
                    prop_assert_eq!(owner, *i, "{} names two fields", text);
                }
                None => {
                    prop_assert!(!fields[*i].password, "field {i} is a password, written {text:?}");
                    prop_assert_eq!(text.as_str(), values[*i].as_str());
                }
            }
        }
        // Replayed on the empty form, each value goes into its own field: the script's steps and
        // the Maestro flow's, read back (a tap, then the text into the field tapped).
        let env: HashMap<&str, &str> = names
            .iter()
            .map(|(name, i)| (name.as_str(), values[*i].as_str()))
            .collect();
        for (format, replay) in [("script", steps.clone()), ("Maestro", maestro::parse(&yaml).unwrap())] {
            let fresh = Recording::default();
            let mut book = RefBook::default();
            let (xml, page) = form(&fields, &vec![None; fields.len()], false, None);
            let empty = reading(&xml, &page, &mut book, &fresh);
            let mut tapped: Option<usize> = None;
            let mut into: Vec<(usize, String)> = Vec::new();
            for step in &replay {
                let aim = |t: &Target| -> Result<Option<usize>, TestCaseError> {
                    match replayed(&empty, t) {
                        Some((Ok(e), _)) => Ok(Some(e.node)),
                        Some((Err(e), _)) => Err(TestCaseError::fail(format!("{format}: {t:?} refused: {e}"))),
                        // A bare point: the field under it.
                        None => Ok(crate::flow::verify::under(
                            &empty.elements,
                            match t.selector {
                                crate::flow::Selector::Point(at) => at,
                                _ => unreachable!(),
                            },
                        )
                        .map(|e| e.node)),
                    }
                };
                match &step.action {
                    Action::Tap { target } => tapped = aim(target)?,
                    Action::Type { target, text, .. } => {
                        if let Some(t) = target {
                            tapped = aim(t)?;
                        }
                        let value = match placeholder_name(text) {
                            Some(name) => env.get(name).copied().unwrap_or_default().to_string(),
                            None => text.clone(),
                        };
                        into.push((tapped.expect("a field was tapped"), value));
                        c.3 += 1;
                    }
                    // A Maestro flow's `inputText: ${NAME}` is read as its step runs, NAME from --env.
                    Action::Rendered(r) if r.command.as_deref() == Some("inputText") => {
                        let name = r.value().and_then(placeholder_name);
                        let value = name.and_then(|n| env.get(n)).copied().unwrap_or_default();
                        into.push((tapped.expect("a field was tapped"), value.to_string()));
                        c.3 += 1;
                    }
                    other => return Err(TestCaseError::fail(format!("not recorded: {other:?}"))),
                }
            }
            for (n, (node, value)) in into.iter().enumerate() {
                let i = sequence[n];
                prop_assert_eq!(
                    *node,
                    element_of(&empty, &fields, i).node,
                    "{}: field {}'s value went elsewhere",
                    format,
                    i
                );
                prop_assert_eq!(value, &values[i], "{}: field {} got another value", format, i);
            }
        }
        c.4 += names.len();
        Ok(())
    });
    let c = counts.borrow();
    let (forms, typed_secrets, revealed_steps, replayed_types) = (c.0, c.1, c.2, c.3);
    println!(
        "{forms} cases (forms): {typed_secrets} passwords typed, {revealed_steps} reveals, {} placeholders, {replayed_types} typed steps replayed into their own field",
        c.4
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(typed_secrets > 0 && revealed_steps > 0);
}
