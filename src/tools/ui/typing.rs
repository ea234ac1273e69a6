//! `ui type`: text into the field of a ref (tapped first) or the focused one: `input text`, an
//! input method that takes broadcasts for what `input text` cannot send (`ime.rs`), or DevTools
//! for a web field; `clear` empties the field first. What the recording keeps of the text is
//! decided here, as it is typed (a password field's is its `${NAME}`).

use super::act::{Act, act, checked_shell, focused_field, input_text, web_target};
use super::answer::{Outcome, output};
use super::args::UiOperation;
use super::command::Typing;
use super::ime;
use super::input::{self, Gesture};
use super::read::read_screen;
use super::resolve::{aim_reading, land};
use super::target::Target;
use super::web::{self, WebAction};
use crate::android::text::quote;
use crate::android::ui_refs::{Resolved, resolve};
use crate::flow;
use crate::tools::State;

pub(super) async fn type_text(state: &State, serial: &str, typing: &Typing) -> Outcome {
    let mut out = output(UiOperation::Type, serial);
    let Typing {
        text,
        into,
        clear,
        submit,
        observe,
    } = typing;
    // A reading taken for this call before it acts, which an `observe` takes as its "before".
    let mut reading = None;
    let mut web_action = None;
    let mut steps = Vec::new();
    let mut selector = None;
    let mut web = None;
    if let Some(reference) = into {
        let landing = land(state, serial, &Target::Ref(reference.clone()), None).await?;
        web = web_target(state, serial, landing.element.as_ref());
        if web.is_none() {
            // The focusing tap, through the one door, before the text.
            out.via = Some(input::send(state, serial, &Gesture::Tap(landing.at)).await?);
        }
        out.target = landing.element;
        selector = Some(landing.selector);
    }
    // A password is recorded as a placeholder, never as itself: decided now, from the
    // field typed into (the ref's, just read) or the one with input focus now. The
    // screen remembered from an earlier call predates the tap that focused the field.
    if out.target.is_none() {
        let (now, reading_ms) = aim_reading(state, serial).await?;
        out.aimed_by_reading_ms = reading_ms;
        reading = Some(now);
    }
    if web.is_none() && into.is_none() {
        // A replayed `inputText` after a tap on a web field: the page's focused field.
        web = web::focused_field(state, serial).await;
    }
    // The reading the field is of: this call's, or the one that resolved its ref.
    let screen = match &reading {
        Some(now) => now.elements.clone(),
        None => state.screen(serial).map(|s| s.elements).unwrap_or_default(),
    };
    let field = out.target.as_ref().or_else(|| focused_field(&screen));
    let step = flow::Action::Type {
        target: selector,
        text: state.flows.typed(serial, text, field, &screen),
        clear: *clear,
        submit: *submit,
    };
    let command = if let Some((page, selector)) = web {
        // A web field takes any text through DevTools.
        web_action = Some(WebAction::Type {
            page,
            selector,
            text: text.to_string(),
            clear: *clear,
            submit: *submit,
        });
        String::new()
    } else {
        if *clear {
            // The field must have focus before it is read and emptied.
            if !steps.is_empty() {
                checked_shell(state, serial, &steps.join(" && ")).await?;
                steps.clear();
            }
            clear_field(state, serial, out.target.as_ref().map(|e| e.reference.as_str())).await?;
        }
        match input_text(text).ok() {
            Some(escaped) if !escaped.is_empty() => steps.push(format!("input text {}", quote(&escaped))),
            Some(_) => {}
            None => {
                // After the focusing tap, before the ENTER.
                if !steps.is_empty() {
                    checked_shell(state, serial, &steps.join(" && ")).await?;
                    steps.clear();
                }
                ime::type_by_broadcast(state, serial, text).await?;
            }
        }
        if *submit {
            steps.push(input::input_line(&Gesture::Key(66)));
        }
        steps.join(" && ")
    };
    act(
        state,
        serial,
        Act::new(out, step, command, *observe)
            .web(web_action)
            .read(reading)
            // A ref's field was tapped above: the reading that resolved it is the "before".
            .aimed(into.is_some()),
    )
    .await
}

/// DEL key events sent in one command: long fields are emptied over several.
const DELS_PER_COMMAND: usize = 500;

/// Empties a text field of any length: the end of the field, then one DEL per character it
/// shows (and a few more), read again until it is empty. `reference` names the field, else the
/// focused one. A field that shows the same text after its DELs holds no text of its own: it
/// shows its hint (uiautomator reports an empty field's hint as its text; not every Android
/// names it as a hint).
async fn clear_field(state: &State, serial: &str, reference: Option<&str>) -> Result<(), String> {
    let mut before: Option<String> = None;
    for _ in 0..4 {
        let snap = read_screen(state, serial).await?;
        let field = match reference {
            Some(r) => match resolve(&snap.elements, r) {
                Resolved::One(e) => e.clone(),
                _ => {
                    return Err(format!(
                        "ref {r} left the screen while its field was being emptied; nothing was typed"
                    ));
                }
            },
            None => focused_field(&snap.elements).cloned().ok_or(
                "type {clear: true} empties the focused field, and no field has focus: pass its ref, or tap it first",
            )?,
        };
        let node = &snap.tree.nodes[field.node];
        let text = node.text().to_string();
        let hint = node.attr("hint").unwrap_or_default();
        if text.is_empty() || text == hint || before.as_deref() == Some(text.as_str()) {
            return Ok(());
        }
        // MOVE_END (123) first, then DELs (67).
        let mut left = text.chars().count() + 8;
        let mut keys = vec!["123"];
        while left > 0 {
            let n = left.min(DELS_PER_COMMAND);
            keys.extend(std::iter::repeat_n("67", n));
            checked_shell(state, serial, &format!("input keyevent {}", keys.join(" "))).await?;
            keys.clear();
            left -= n;
        }
        before = Some(text);
    }
    Err("the field still holds text after four rounds of deleting; check it with ui dump".into())
}
