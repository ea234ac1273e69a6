//! What droidmcp replays of Maestro's flow language, one row per command Maestro documents: the
//! reader refuses a command with its row's note, and docs/flows.md shows the table rendered from
//! here (`tests/it/docs.rs` keeps the two equal).

/// How a replay takes a Maestro command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Read and replayed.
    Replayed,
    /// Refused for good: it cannot run on Android, or needs what a replay does not have.
    Refused,
    /// Refused for now: it runs on Android and is yet to be replayed.
    NotYet,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Replayed => "replayed",
            Status::Refused => "refused",
            Status::NotYet => "not yet",
        }
    }
}

/// Every command Maestro 1.39 (and 2.x's docs) lists, with how a replay takes it.
pub const COMMANDS: &[(&str, Status, &str)] = &[
    (
        "launchApp",
        Status::Replayed,
        "appId, clearState, stopApp (when given), clearKeychain; permissions, arguments not yet",
    ),
    ("stopApp", Status::Replayed, "the header's appId, or the one given"),
    ("killApp", Status::NotYet, "am force-stop, as stopApp"),
    ("clearState", Status::Replayed, "pm clear"),
    ("clearKeychain", Status::Replayed, "iOS only: nothing to do on Android"),
    (
        "tapOn",
        Status::Replayed,
        "any selector, as Maestro resolves it (text, id, index, enabled, checked, focused, selected, width, height, tolerance, below, above, leftOf, rightOf, childOf, containsChild, containsDescendants), or point; label is a caption",
    ),
    ("doubleTapOn", Status::NotYet, "two taps"),
    ("longPressOn", Status::Replayed, "as tapOn"),
    ("inputText", Status::Replayed, "into the focused field"),
    (
        "inputRandomEmail",
        Status::Replayed,
        "first_last_NNNN@domain, drawn as the flow is read",
    ),
    ("inputRandomPersonName", Status::Replayed, "First Last"),
    (
        "inputRandomNumber",
        Status::Replayed,
        "length digits (8), not starting with 0",
    ),
    ("inputRandomText", Status::Replayed, "length letters and digits (8)"),
    ("eraseText", Status::Replayed, "N characters, or the whole field"),
    ("copyTextFrom", Status::NotYet, ""),
    ("pasteText", Status::NotYet, ""),
    ("setClipboard", Status::NotYet, ""),
    ("hideKeyboard", Status::Replayed, "BACK, as Maestro sends on Android"),
    (
        "pressKey",
        Status::Replayed,
        "Maestro's key names, or an Android key name or code",
    ),
    ("back", Status::Replayed, ""),
    ("scroll", Status::Replayed, ""),
    (
        "scrollUntilVisible",
        Status::Replayed,
        "element, direction; timeout, speed, visibilityPercentage, centerElement refused",
    ),
    (
        "swipe",
        Status::Replayed,
        "direction, or start and end, or from (any selector) with direction; duration",
    ),
    ("assertVisible", Status::Replayed, "any selector, or point"),
    ("assertNotVisible", Status::Replayed, "any selector, or point"),
    (
        "assertTrue",
        Status::Replayed,
        "its ${…} true as the step runs (not blank, false, undefined, null, 0)",
    ),
    ("extendedWaitUntil", Status::Replayed, "visible or notVisible, timeout"),
    (
        "waitForAnimationToEnd",
        Status::Replayed,
        "a screen reading (it waits until the app is idle), at most timeout",
    ),
    ("takeScreenshot", Status::NotYet, ""),
    ("startRecording", Status::NotYet, "the device's screenrecord"),
    ("stopRecording", Status::NotYet, ""),
    ("openLink", Status::NotYet, "am start -a VIEW -d LINK"),
    ("setLocation", Status::Replayed, "the emulator console's geo fix"),
    ("travel", Status::NotYet, ""),
    ("setPermissions", Status::NotYet, ""),
    ("addMedia", Status::NotYet, ""),
    ("setAirplaneMode", Status::NotYet, ""),
    ("toggleAirplaneMode", Status::NotYet, ""),
    ("setOrientation", Status::NotYet, ""),
    (
        "runFlow",
        Status::Replayed,
        "file or commands; env (for its steps, over the subflow's own); when visible, notVisible, platform, true; optional",
    ),
    (
        "repeat",
        Status::Replayed,
        "times; while visible, notVisible, true (read before each round)",
    ),
    (
        "retry",
        Status::Replayed,
        "maxRetries (1 by default, 3 at most), file or commands, env, optional",
    ),
    (
        "runScript",
        Status::Replayed,
        "file (read and compiled with the flow), env, when; in the replay's sandbox",
    ),
    ("evalScript", Status::Replayed, "its ${…} evaluated as the step runs"),
    (
        "assertWithAI",
        Status::Refused,
        "an AI model judges the screen: no such model in a replay",
    ),
    (
        "assertNoDefectsWithAI",
        Status::Refused,
        "an AI model judges the screen: no such model in a replay",
    ),
    (
        "extractTextWithAI",
        Status::Refused,
        "an AI model reads the screen: no such model in a replay",
    ),
];

/// The table row of `command`, if Maestro has such a command.
pub fn row(command: &str) -> Option<(Status, &'static str)> {
    COMMANDS
        .iter()
        .find(|(name, _, _)| *name == command)
        .map(|(_, status, note)| (*status, *note))
}

/// Why a command the reader does not read is refused: its row's reason, or that Maestro has no
/// such command.
pub fn refusal(command: &str) -> String {
    let name = crate::adb::cut(command);
    match row(command) {
        Some((Status::Refused, note)) => format!("`{name}` is refused: {note}"),
        Some((_, note)) if !note.is_empty() => format!("`{name}` is not replayed yet ({note})"),
        Some(_) => format!("`{name}` is not replayed yet"),
        None => format!("`{name}` is not a Maestro command"),
    }
}

/// The table as docs/flows.md shows it (Markdown, between its markers).
pub fn table() -> String {
    let mut out = String::from("| command | replay | note |\n|---|---|---|\n");
    for (name, status, note) in COMMANDS {
        out.push_str(&format!("| `{name}` | {} | {note} |\n", status.as_str()));
    }
    out
}
