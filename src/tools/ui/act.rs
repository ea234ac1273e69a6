//! What every acting operation (tap, long press, swipe, key, type) does once it has aimed: the
//! reading an `observe` compares with (taken before the action), the action itself (a device
//! command, or a web element's through DevTools), and the `Done` that `apply`'s `finish` records;
//! and the helpers they share (the swipe geometry, the focused field, a checked `input` command).

use std::time::Duration;

use super::answer::{Done, Observe, Outcome, UiOutput};
use super::command::FingerDirection;
use super::input::{self, Gesture};
use super::read::{Snapshot, read_screen};
use super::web::{self, WebAction};
use crate::android::ui_elements::Element;
use crate::flow;
use crate::tools::State;

/// An action, aimed: its answer so far, the step a recorded flow keeps of it, the device command
/// (empty: none) or web action, and what `observe` needs.
pub(super) struct Act {
    out: UiOutput,
    step: flow::Action,
    command: String,
    /// A gesture or key, made through the one door (`input.rs`) where `command` would run.
    gesture: Option<Gesture>,
    web: Option<WebAction>,
    observe: bool,
    /// A reading this call took before acting (typing reads the focus): the "before".
    reading: Option<Snapshot>,
    /// Aimed by a reading just taken (a ref, a text), with nothing run since: the device's
    /// remembered screen is the "before".
    aimed: bool,
}

impl Act {
    pub(super) fn new(out: UiOutput, step: flow::Action, command: String, observe: bool) -> Act {
        Act {
            out,
            step,
            command,
            gesture: None,
            web: None,
            observe,
            reading: None,
            aimed: false,
        }
    }

    /// On a web element the action goes through DevTools, where the device command would run.
    pub(super) fn web(self, web: Option<WebAction>) -> Act {
        Act { web, ..self }
    }

    /// The gesture the action is (its device command is `input.rs`'s to choose).
    pub(super) fn gesture(self, gesture: Option<Gesture>) -> Act {
        Act { gesture, ..self }
    }

    pub(super) fn read(self, reading: Option<Snapshot>) -> Act {
        Act { reading, ..self }
    }

    pub(super) fn aimed(self, aimed: bool) -> Act {
        Act { aimed, ..self }
    }
}

/// Acts: a fresh reading for an `observe`, taken after the target was checked (a ref is checked
/// against the dump that made it) and before the action (the stored one may predate actions
/// that read nothing), unless this call's own reading, or the one it aimed by, is the "before";
/// then the web action or the device command. The step is `apply`'s to record once this worked.
pub(super) async fn act(state: &State, serial: &str, a: Act) -> Outcome {
    let before = match (a.observe, a.reading) {
        (false, _) => None,
        (true, Some(reading)) => Some(reading),
        (true, None) if a.aimed => state.screen(serial),
        (true, None) => Some(read_screen(state, serial).await?),
    };
    let mut out = a.out;
    match (a.web, a.gesture) {
        (Some(web_action), _) => web::perform(state, serial, web_action).await?,
        (None, Some(gesture)) => out.via = Some(input::send(state, serial, &gesture).await?),
        (None, None) => {}
    }
    if !a.command.is_empty() {
        checked_shell(state, serial, &a.command).await?;
    }
    Ok(Done {
        out,
        image: None,
        step: Some(a.step),
        observe: before.map(|before| Observe {
            before,
            unchanged: "unchanged: the screen looks the same as before".into(),
        }),
    })
}

/// Where a finger swiping `finger` across `percent`% of the screen goes, through its middle:
/// the one swipe geometry (a scroll is a swipe across 60%).
pub(super) fn swipe_across(screen: [u32; 2], finger: FingerDirection, percent: u32) -> ([i32; 2], [i32; 2]) {
    let (w, h) = (screen[0] as i32, screen[1] as i32);
    let (cx, cy) = (w / 2, h / 2);
    let (dx, dy) = (w * percent as i32 / 200, h * percent as i32 / 200);
    match finger {
        FingerDirection::Up => ([cx, cy + dy], [cx, cy - dy]),
        FingerDirection::Down => ([cx, cy - dy], [cx, cy + dy]),
        FingerDirection::Left => ([cx + dx, cy], [cx - dx, cy]),
        FingerDirection::Right => ([cx - dx, cy], [cx + dx, cy]),
    }
}

/// The text field with input focus in a reading: an EditText, a web page's text box, or any
/// field shown as a password.
pub(super) fn focused_field(elements: &[Element]) -> Option<&Element> {
    elements.iter().find(|e| {
        (crate::android::identity::field_class(&e.identity.class) || flow::is_password(e))
            && e.flags.iter().any(|f| f == "focused")
    })
}

/// The page and selector of a web element (`web.rs`), from the reading that resolved it.
pub(super) fn web_target(state: &State, serial: &str, element: Option<&Element>) -> Option<(web::WebPage, String)> {
    let snap = state.screen(serial)?;
    let selector = web::selector_of(&snap, element?)?;
    Some((snap.web?, selector))
}

/// Runs an input command and fails with its stderr when it fails.
pub(super) async fn checked_shell(state: &State, serial: &str, command: &str) -> Result<(), String> {
    input::run(state, serial, command, Duration::ZERO)
        .await
        .map_err(|e| input::failed(command, e))
}

/// Escapes text for `input text`: a space becomes `%s`; the shell quoting is done by `quote`.
/// `input text` cannot deliver non-ASCII or control characters, nor a literal `%s`.
pub fn input_text(text: &str) -> Result<String, String> {
    if let Some(c) = text.chars().find(|c| !c.is_ascii() || c.is_ascii_control()) {
        return Err(format!(
            "`text`: cannot type {c:?}: `input text` delivers printable ASCII only; type the rest another way (e.g. paste)"
        ));
    }
    if text.contains("%s") {
        return Err("`text`: cannot type a literal \"%s\": `input text` turns it into a space".into());
    }
    Ok(text.replace(' ', "%s"))
}

#[cfg(test)]
mod tests {
    use super::input_text;

    #[test]
    fn input_text_escapes_spaces_and_refuses_what_it_cannot_send() {
        assert_eq!(input_text("user name").unwrap(), "user%sname");
        assert_eq!(
            input_text("a&b;c|d<e>f$g`h'i\"j\\k").unwrap(),
            "a&b;c|d<e>f$g`h'i\"j\\k"
        );
        assert!(input_text("café").is_err());
        assert!(input_text("100%s").is_err());
        assert!(input_text("tab\there").is_err());
    }
}
