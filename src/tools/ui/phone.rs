//! The phone's state in every answer that reads the screen: asleep, locked, never idle, the
//! keyboard shown, a system dialog (`android::screen_state` recognises them), and the way
//! forward for each. Elements behind the keyboard are marked `covered`.

use std::time::Duration;

use serde::Serialize;

use super::answer::{Done, Outcome, UiOutput, output};
use super::args::UiOperation;
use super::capture::{DEFAULT_MAX_SIZE, capture, scale};
use super::read::Snapshot;
pub(super) use crate::android::screen_state::ScreenState;
use crate::android::screen_state::{DialogKind, Reported, combine, from_dump, parse_reports};
use crate::android::ui_elements::Element;
use crate::android::uiautomator::{Bounds, UiTree};
use crate::image::grid;
use crate::tools::State;

/// One reading's command: the window dump, then the lines of `dumpsys window` that tell the
/// phone's state (awake, keyguard, the input method's window and frame), in one round trip.
/// The same lines name the app in front (`mFocusedApp=`, `mCurrentFocus=`), so no
/// `dumpsys activity` is needed.
pub(super) const READING: &str = "uiautomator dump /dev/tty; dumpsys window | grep -E 'mAwake=|Lockscreen=|isStatusBarKeyguard=|Window #|isVisible=|frame=|mFocusedApp=|mCurrentFocus='";

/// What an answer says about the phone, when it is not simply ready.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PhoneState {
    /// asleep, locked, never-idle, keyboard, not-responding, crashed, permission.
    pub name: String,
    /// A dialog's message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// What to do.
    pub next: String,
}

/// The phone's state from a reading's output: the dump's evidence and the reports after it.
pub(super) fn state_of(tree: &UiTree, output: &str) -> (ScreenState, Reported) {
    let reported = parse_reports(reports_of(output));
    (combine(&reported, &from_dump(tree)), reported)
}

/// The report lines that follow the dump in a reading's output.
pub(super) fn reports_of(output: &str) -> &str {
    output.rfind("</hierarchy>").map_or(output, |i| &output[i..])
}

/// How an answer names a state, and the way forward; `None` when the phone is simply ready.
pub(super) fn describe(state: &ScreenState, elements: &[Element]) -> Option<PhoneState> {
    let (name, text, next) = match state {
        ScreenState::Ready => return None,
        ScreenState::Asleep { locked } => (
            "asleep",
            None,
            format!(
                "the screen is off{}: adb-device {{operation: \"wake\"}}{}",
                if *locked { " and locked" } else { "" },
                if *locked { UNLOCK } else { "" }
            ),
        ),
        ScreenState::Locked { needs_pin } => (
            "locked",
            None,
            format!(
                "the phone is locked{}: adb-device {{operation: \"unlock\"}}{}",
                if *needs_pin { " and asks for its PIN" } else { "" },
                if *needs_pin {
                    " with {pinEnv: \"NAME\"}, the environment variable that holds the PIN"
                } else {
                    " (swipe; a PIN: {pinEnv: \"NAME\"})"
                }
            ),
        ),
        ScreenState::Keyboard { .. } => (
            "keyboard",
            None,
            "the keyboard covers the bottom of the screen; elements behind it are flagged covered: hide the keyboard first (`ui key BACK`)".to_string(),
        ),
        ScreenState::Dialog { kind, text } => {
            let buttons: Vec<String> = elements
                .iter()
                .filter(|e| e.clickable && !e.label.is_empty())
                .map(|e| format!("{} ({})", e.label, e.reference))
                .collect();
            let name = match kind {
                DialogKind::NotResponding => "not-responding",
                DialogKind::Crashed => "crashed",
                DialogKind::Permission => "permission",
            };
            (
                name,
                Some(text.clone()),
                format!("a system dialog waits for an answer: tap {{ref}} on {}", buttons.join(", ")),
            )
        }
    };
    Some(PhoneState {
        name: name.into(),
        text,
        next,
    })
}

const UNLOCK: &str = ", then {operation: \"unlock\"} (swipe; a PIN: {pinEnv: \"NAME\"})";

/// The state a screen that never went idle is in: the tree is unavailable, the screen is not.
pub(super) fn never_idle(waited: Duration) -> PhoneState {
    PhoneState {
        name: "never-idle".into(),
        text: None,
        next: format!(
            "uiautomator waited {:.1} s and said `ERROR: could not get idle state.`: something keeps animating (a video, a spinner), so the element tree is unavailable. The grid screenshot still works: tap {{gridCell, gridPosition}} or {{x, y, space: \"image\"}}",
            waited.as_secs_f64()
        ),
    }
}

/// Drops the keyboard's own keys from the elements, and flags the app's elements under it.
pub(super) fn mark_covered(tree: &UiTree, elements: &mut Vec<Element>, keyboard: Option<Bounds>) {
    let Some(frame) = keyboard else { return };
    let ime_roots: Vec<usize> = tree
        .roots()
        .filter(|&r| tree.nodes[r].bounds() == Some(frame))
        .collect();
    elements.retain(|e| !ime_roots.iter().any(|&r| tree.is_within(e.node, r)));
    for e in elements.iter_mut() {
        if frame.contains(e.at[0], e.at[1]) {
            e.flags.push("covered".into());
        }
    }
}

/// Refuses an action on the screen while the phone cannot take it: asleep, locked, or the
/// element is behind the keyboard. Nothing was done when this says no.
pub(super) fn refuse(snap: &Snapshot, element: Option<&Element>) -> Result<(), String> {
    match &snap.state {
        ScreenState::Asleep { .. } | ScreenState::Locked { .. } => {
            let described = describe(&snap.state, &snap.elements)
                .map(|s| s.next)
                .unwrap_or_default();
            Err(format!("nothing was done: {described}"))
        }
        ScreenState::Keyboard { .. } if element.is_some_and(|e| e.flags.iter().any(|f| f == "covered")) => {
            let e = element
                .map(|e| format!("{} {:?}", e.reference, e.label))
                .unwrap_or_default();
            Err(format!(
                "{e} is behind the keyboard, where a tap would land on a key: hide the keyboard first (`ui key BACK`), then tap it; nothing was done"
            ))
        }
        _ => Ok(()),
    }
}

/// The answer of a dump or find on a screen that never went idle: the grid screenshot instead
/// of the tree, so coordinates and grid cells still work.
pub(super) async fn grid_instead(state: &State, serial: &str, operation: UiOperation, waited: Duration) -> Outcome {
    let (shot, block) = capture(state, serial, DEFAULT_MAX_SIZE, true, None).await?;
    Ok(Done::answer(
        UiOutput {
            state: Some(never_idle(waited)),
            image: Some(shot.image),
            screen: Some(shot.screen),
            scale: Some(scale(&shot)),
            hint: Some(format!("the grid screenshot instead of the tree: {}", grid::NUMBERING)),
            ..output(operation, serial)
        },
        Some(block),
    ))
}

/// Whether a black screenshot is a screen that is off: `dumpsys power`'s wakefulness.
pub(super) async fn asleep_state(state: &State, serial: &str) -> Option<PhoneState> {
    let out = state
        .adb
        .shell(serial, "dumpsys power | grep mWakefulness=")
        .await
        .ok()?;
    let reported = parse_reports(&out.stdout_text());
    let asleep = ScreenState::Asleep { locked: false };
    (reported.awake == Some(false))
        .then(|| describe(&asleep, &[]))
        .flatten()
}
