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
        "appId, clearState, stopApp (when given), clearKeychain; permissions (pm grant / revoke, Maestro's short names spelt out, all: every permission the app requests; what the device refuses is a warning); arguments as intent extras of their YAML type (am start -n the launcher activity --es / --ez / --ei / --ef)",
    ),
    ("stopApp", Status::Replayed, "the header's appId, or the one given"),
    (
        "killApp",
        Status::Replayed,
        "am kill, the process death the system causes (Maestro's); the header's appId, or the one given",
    ),
    ("clearState", Status::Replayed, "pm clear"),
    (
        "clearKeychain",
        Status::Replayed,
        "iOS only: nothing to do on Android, which its step line says",
    ),
    (
        "tapOn",
        Status::Replayed,
        "any selector, as Maestro resolves it (text, id, index, enabled, checked, focused, selected, width, height, tolerance, below, above, leftOf, rightOf, childOf, containsChild, containsDescendants), or point; label is a caption; repeat (the first press checked, the rest at its point), delay (100 ms), retryTapIfNoChange: true taps again when the screen did not change (absent, a replay taps once: Maestro's default taps again), waitToSettleTimeoutMs (at most 30 s), waitUntilVisible (a replay always waits)",
    ),
    (
        "doubleTapOn",
        Status::Replayed,
        "two presses 100 ms apart (delay), as tapOn",
    ),
    (
        "longPressOn",
        Status::Replayed,
        "a 3 s press, as Maestro's on Android; as tapOn (no repeat)",
    ),
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
    (
        "copyTextFrom",
        Status::Replayed,
        "the element's whole text, else its hint, else its content-desc, into the script's maestro.copiedText",
    ),
    (
        "pasteText",
        Status::Replayed,
        "types maestro.copiedText into the focused field (nothing when none was copied)",
    ),
    (
        "setClipboard",
        Status::Replayed,
        "sets maestro.copiedText, which pasteText types",
    ),
    ("hideKeyboard", Status::Replayed, "BACK, as Maestro sends on Android"),
    (
        "pressKey",
        Status::Replayed,
        "every Maestro key name (Enter, Backspace, Back, Home, Lock, Power, Escape, Tab, Volume Up / Down, Remote Dpad *, Remote Media *, Remote System Navigation Up / Down, Remote Button A / B, Remote Menu, TV Input), or an Android key name or code",
    ),
    ("back", Status::Replayed, ""),
    ("scroll", Status::Replayed, ""),
    (
        "scrollUntilVisible",
        Status::Replayed,
        "element, direction; with timeout (20 s), speed (40: a swipe of 1000 × (100 − speed) / 100 + 1 ms, 40 over 100, at least 50 on the device), visibilityPercentage (read: an element shows when its centre is on the screen, what Maestro's check comes to below 100) or centerElement (at most 4 swipes towards the middle), Maestro's loop of looks and swipes; with none, ui scroll's (at most 8 swipes, or to the list's end)",
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
    (
        "takeScreenshot",
        Status::Replayed,
        "PATH.png in the JUnit report's folder (else the current folder), PATH a path of plain names inside it (an absolute PATH or a .. refused at its line; a ${…} in it rendered as the step runs, the name it makes held to the same rules): screencap on the device, pulled after the run",
    ),
    (
        "startRecording",
        Status::Replayed,
        "PATH.mp4 beside the report: the device's screenrecord running beside the next steps (at most its 180 s), pulled after the run",
    ),
    (
        "stopRecording",
        Status::Replayed,
        "pkill -INT screenrecord, which finishes its file",
    ),
    (
        "openLink",
        Status::Replayed,
        "am start -a android.intent.action.VIEW -d LINK; autoVerify: in the flow's app (-p appId); browser: -c BROWSABLE",
    ),
    ("setLocation", Status::Replayed, "the emulator console's geo fix"),
    (
        "travel",
        Status::Replayed,
        "points, speed (4 m/s): the emulator console's geo fix at each point in turn, after the time the distance takes; a real phone has no console, so the step fails saying so",
    ),
    ("setPermissions", Status::Replayed, "as launchApp's permissions"),
    (
        "addMedia",
        Status::Replayed,
        "files beside the flow, pushed to the device's Pictures (videos: Movies) before the run, then a media scan of each (am broadcast MEDIA_SCANNER_SCAN_FILE)",
    ),
    (
        "setAirplaneMode",
        Status::Replayed,
        "cmd connectivity airplane-mode enable | disable (Android 11 and later)",
    ),
    (
        "toggleAirplaneMode",
        Status::Replayed,
        "the other way from what cmd connectivity airplane-mode says",
    ),
    (
        "setOrientation",
        Status::Replayed,
        "PORTRAIT, LANDSCAPE_LEFT, LANDSCAPE_RIGHT, UPSIDE_DOWN: auto-rotate off (settings put system accelerometer_rotation 0), then settings put system user_rotation 0 to 3",
    ),
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
    let name = android::text::echoed(command);
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
