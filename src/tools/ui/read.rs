//! Reading the screen: one window dump plus the focused app, its elements with their identities
//! and a secret field's text hidden as the recording says (`elements_of`), numbered with the
//! device's refs; `dump` pages it, `observe` compares two readings.

use super::*;

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
/// recording's `hidden`). Nothing else is kept of it: see `read_current`, and `recording_sees`
/// for the recording.
pub(super) async fn read_screen(state: &State, serial: &str) -> Result<Snapshot, ReadError> {
    let started = std::time::Instant::now();
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
    state.number_refs(serial, &mut els);
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
    };
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

/// Hands a reading to the device's recording (`flow::Recordings::saw`): the password fields it
/// shows, and the newest step's outcome when it has none yet (the first reading after a step is
/// what the step was seen to do). Each reading a call takes is handed over as it is taken; the
/// one after an action, by `finish`, once the step is recorded.
pub fn recording_sees(state: &State, serial: &str, snapshot: &Snapshot) {
    let activity = snapshot.focused.as_ref().map(|f| f.activity.as_str());
    state.flows.saw(serial, activity, &snapshot.elements);
}

/// `read_screen` for another tool (`flow export` reads the screen for the newest step's outcome).
pub async fn read(state: &State, serial: &str) -> Result<Snapshot, String> {
    read_screen(state, serial).await.map_err(String::from)
}

pub(super) async fn dump(state: &State, serial: &str, limit: usize, offset: usize, filter: Option<&str>) -> Outcome {
    let snap = match read_current(state, serial).await {
        Err(ReadError::NeverIdle(waited)) => return grid_instead(state, serial, UiOperation::Dump, waited).await,
        read => read?,
    };
    recording_sees(state, serial, &snap);
    let needle = filter.map(str::to_lowercase);
    let matching: Vec<Element> = snap
        .elements
        .iter()
        .filter(|e| {
            needle.as_ref().is_none_or(|n| {
                e.label.to_lowercase().contains(n) || e.id.as_deref().is_some_and(|i| i.to_lowercase().contains(n))
            })
        })
        .cloned()
        .collect();
    let total = matching.len();
    if offset > 0 && offset >= total {
        return Err(format!(
            "offset {offset} is past the end: {total} elements. Use an offset below {total}"
        ));
    }
    let page: Vec<Element> = matching.into_iter().skip(offset).take(limit).collect();
    let end = offset + page.len();
    let tree_items: Vec<Value> = snap
        .tree
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mut o = serde_json::Map::new();
            o.insert("i".into(), json!(i));
            o.insert("depth".into(), json!(n.depth));
            for (k, v) in &n.attrs {
                o.insert(k.clone(), json!(v));
            }
            Value::Object(o)
        })
        .collect();
    let entry = state
        .cache
        .put(Kind::Ui, format!("window dump of {serial}"), Data::List(tree_items));
    let hint = match snap.window {
        Some(w) => format!(
            "the dump is a window of {}×{} at ({}, {}) over the {}×{} screen: a dialog or popup; tap {{ref}} acts on its elements",
            w.right - w.left,
            w.bottom - w.top,
            w.left,
            w.top,
            snap.screen[0],
            snap.screen[1]
        ),
        None => "tap {ref} acts on an element; a ref names its element while it is on the screen".into(),
    };
    Ok(Done::answer(
        UiOutput {
            focused: snap.focused.clone(),
            state: describe(&snap.state, &snap.elements),
            screen: Some(snap.screen),
            window: snap.window.map(|w| [w.left, w.top, w.right, w.bottom]),
            count: Some(page.len()),
            elements: Some(page),
            total_count: Some(total),
            has_more: Some(end < total),
            next_offset: (end < total).then_some(end),
            cache_id: Some(entry.id.clone()),
            web: snap.web.clone(),
            hint: Some(hint),
            ..output(UiOperation::Dump, serial)
        },
        None,
    ))
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
