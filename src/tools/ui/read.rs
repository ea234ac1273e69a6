//! Reading the screen: one window dump plus the focused app, its elements with their identities
//! and a secret field's text hidden as the recording says (`elements_of`), numbered with the
//! device's refs, handed to the recording as it is taken; `observed` compares two readings.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use super::answer::Observed;
use super::phone::{READING, ScreenState, mark_covered, never_idle, reports_of, state_of};
use super::web;
use crate::android::activity::Focus;
use crate::android::ui_elements::{Element, elements};
use crate::android::uiautomator::{Bounds, UiTree, parse_ui_dump};
use crate::flow;
use crate::tools::State;
use crate::tools::handles;

/// One reading of the screen, kept per device so refs can be checked and changes observed.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub tree: UiTree,
    pub elements: Vec<Element>,
    pub focused: Option<Focus>,
    pub screen: [u32; 2],
    /// The dumped window's bounds when it is smaller than the screen (a dialog, a popup).
    pub window: Option<Bounds>,
    pub signature: u64,
    /// Asleep, locked, the keyboard, a system dialog, or ready (`phone.rs` names it).
    pub state: crate::android::screen_state::ScreenState,
    /// The page of a WebView on the screen, read through DevTools (`web.rs`).
    pub web: Option<web::WebPage>,
    /// When it was taken (its start), and the device's acting calls then, other than the one
    /// taking it: what says whether a tap may still aim by it (`resolve.rs`'s `aim_reading`).
    pub taken: std::time::Instant,
    pub acts: crate::tools::Acts,
}

/// Why a reading has no tree: the screen never went idle (the screen itself can still be seen
/// and tapped), or anything else.
#[derive(Debug)]
pub(super) enum ReadError {
    NeverIdle(Duration),
    Failed(String),
}

impl From<ReadError> for String {
    fn from(e: ReadError) -> String {
        match e {
            ReadError::NeverIdle(waited) => format!("the screen never went idle: {}", never_idle(waited).next),
            ReadError::Failed(message) => message,
        }
    }
}

/// Reads the screen: the window dump (one round trip, `uiautomator dump /dev/tty`), the resumed
/// activity, and the display size (read once per device). Every reading numbers its elements
/// with the device's refs, by identity, so the numbers agree across readings. The same round
/// trip reads the phone's state (`phone::READING`). A secret field's text is hidden (the
/// recording's `hidden`), and the reading is handed to the recording as it is taken (`seen`,
/// the one hand-over). Nothing else is kept of it: see `read_current`.
pub(super) async fn read_screen(state: &State, serial: &str) -> Result<Snapshot, ReadError> {
    let started = std::time::Instant::now();
    let acts = state.acting_calls();
    let out = state
        .adb
        .shell(serial, READING)
        .await
        .map_err(|e| ReadError::Failed(e.to_string()))?;
    let said = format!("{}{}", out.stdout_text(), String::from_utf8_lossy(&out.stderr));
    if crate::android::screen_state::never_idle(&said) {
        return Err(ReadError::NeverIdle(started.elapsed()));
    }
    let mut tree = parse_ui_dump(&out.stdout_text()).map_err(|e| {
        ReadError::Failed(format!(
            "could not read the screen: {e}. uiautomator said: {}",
            crate::android::text::cut(said.trim(), 200)
        ))
    })?;
    let (phone, _) = state_of(&tree, &out.stdout_text());
    // The keyguard's window is no app's: the app in front is the one behind it.
    let behind_keyguard = matches!(phone, ScreenState::Asleep { .. } | ScreenState::Locked { .. });
    let window_package = tree
        .nodes
        .first()
        .and_then(|n| n.attr("package"))
        .filter(|_| !behind_keyguard);
    let focused = crate::android::activity::focus_for_screen(reports_of(&out.stdout_text()), window_package);
    let natural = state.display(serial).await.map_err(ReadError::Failed)?;
    // Turned a quarter (rotation 1 or 3): the display is as wide as it is naturally tall.
    let screen = if tree.rotation % 2 == 1 {
        [natural[1], natural[0]]
    } else {
        natural
    };
    // The dumped window, when it is not the whole screen: a dialog or a popup.
    let window = tree
        .nodes
        .iter()
        .filter(|n| n.parent.is_none())
        .filter_map(|n| n.bounds())
        .reduce(|a, b| Bounds {
            left: a.left.min(b.left),
            top: a.top.min(b.top),
            right: a.right.max(b.right),
            bottom: a.bottom.max(b.bottom),
        })
        .filter(|w| w.left > 0 || w.top > 0 || w.right < screen[0] as i32 || w.bottom < screen[1] as i32);
    // A WebView's page joins the tree: its elements get refs like any other.
    let web = web::merge(state, serial, &mut tree).await;
    let mut els = elements_of(&mut tree, |els| state.flows.hidden(serial, els));
    let keyboard = match &phone {
        ScreenState::Keyboard { frame } => Some(*frame),
        _ => None,
    };
    mark_covered(&tree, &mut els, keyboard);
    handles::number_refs(state, serial, &mut els)
        .await
        .map_err(ReadError::Failed)?;
    let mut hasher = DefaultHasher::new();
    for e in &els {
        (&e.label, &e.kind, e.at, &e.flags).hash(&mut hasher);
    }
    focused.as_ref().map(|f| &f.activity).hash(&mut hasher);
    format!("{phone:?}").hash(&mut hasher);
    let snapshot = Snapshot {
        tree,
        elements: els,
        focused,
        screen,
        window,
        signature: hasher.finish(),
        state: phone,
        web,
        taken: started,
        acts,
    };
    seen(state, serial, &snapshot);
    Ok(snapshot)
}

/// A dump's elements, each with its identity (`android::identity`), a field the recording knows
/// holds a secret (`hidden`: `Recordings::hidden`) showing none of it, even revealed: hidden in
/// the tree before anything (an answer, a cache entry, a selector, an outcome) reads it.
pub(super) fn elements_of(tree: &mut UiTree, hidden: impl FnOnce(&[Element]) -> flow::record::Hidden) -> Vec<Element> {
    let els = elements(tree);
    match flow::record::hide(tree, &hidden(&els)) {
        true => elements(tree),
        false => els,
    }
}

/// `read_screen`, kept as the device's current screen: what later calls take the screen's size,
/// a point's element and a web element's page from. A reading an `observe` takes before an
/// action is not kept: the one after it is.
pub(super) async fn read_current(state: &State, serial: &str) -> Result<Snapshot, ReadError> {
    let snapshot = read_screen(state, serial).await?;
    state.remember_screen(serial, snapshot.clone());
    Ok(snapshot)
}

/// `read_current` after this call acted: the call's own count is not another's acting call, so
/// the next one may aim by this reading (`resolve.rs`'s `aim_reading`).
pub(super) async fn read_after_acting(state: &State, serial: &str) -> Result<Snapshot, ReadError> {
    let mut snapshot = read_screen(state, serial).await?;
    snapshot.acts.running = snapshot.acts.running.saturating_sub(1);
    state.remember_screen(serial, snapshot.clone());
    Ok(snapshot)
}

/// Hands a reading to the device's recording (`flow::Recordings::saw`), as it is taken: the
/// password fields it shows, and the newest step's outcome when it has none yet (the first
/// reading after a step is what the step was seen to do). Every reading of every call comes
/// here, in the order they are taken, between the steps ui's `finish` records: handing them
/// over later, after the call, would give a step the wrong outcome and leave a field seen as a
/// password in one reading unknown to the next reading of the same call.
fn seen(state: &State, serial: &str, snapshot: &Snapshot) {
    let activity = snapshot.focused.as_ref().map(|f| f.activity.as_str());
    state.flows.saw(serial, activity, &snapshot.elements);
}

/// `read_screen` for another tool (`flow export` reads the screen for the newest step's outcome).
pub async fn read(state: &State, serial: &str) -> Result<Snapshot, String> {
    read_screen(state, serial).await.map_err(String::from)
}

pub(super) fn screen_bounds(snap: &Snapshot) -> Bounds {
    Bounds {
        left: 0,
        top: 0,
        right: snap.screen[0] as i32,
        bottom: snap.screen[1] as i32,
    }
}

/// The screen as the last reading saw it (turned or not), else the display.
pub(super) async fn screen_size(state: &State, serial: &str) -> Result<[u32; 2], String> {
    if let Some(s) = state.screen(serial) {
        return Ok(s.screen);
    }
    state.display(serial).await
}

pub(super) fn observed(before: &Snapshot, after: &Snapshot) -> Observed {
    let labels = |s: &Snapshot| -> Vec<String> {
        s.elements
            .iter()
            .filter(|e| !e.label.is_empty())
            .map(|e| e.label.clone())
            .collect()
    };
    let (b, a) = (labels(before), labels(after));
    let appeared: Vec<String> = a.iter().filter(|l| !b.contains(l)).take(8).cloned().collect();
    let disappeared: Vec<String> = b.iter().filter(|l| !a.contains(l)).take(8).cloned().collect();
    let focus_changed = before.focused != after.focused;
    Observed {
        changed: before.signature != after.signature,
        focused: focus_changed.then(|| after.focused.clone()).flatten(),
        appeared,
        disappeared,
    }
}
