//! The fields each Maestro command takes, in one table: the reader refuses any other key of a
//! command with the command's list from here (`yaml::only_keys`), and tests generate their cases
//! from it (`fields`). `label`, every command's caption, goes without saying.

/// A selector's keys beyond `id`, `text` and `point`: a selector with any of them is resolved as
/// Maestro resolves it.
pub(super) const MAESTRO_KEYS: &[&str] = &[
    "index",
    "enabled",
    "selected",
    "checked",
    "focused",
    "width",
    "height",
    "tolerance",
    "below",
    "above",
    "leftOf",
    "rightOf",
    "childOf",
    "containsChild",
    "containsDescendants",
];

/// What a condition (`when`, `while`) and a selector inside a command take (beside
/// `MAESTRO_KEYS`); what a command's own selector takes (its `optional` too); what `tapOn` points
/// at; the options a tap takes beside its selector; what a command with no argument may still say.
pub(super) const SELECTOR: &[&str] = &["id", "text", "point"];
pub(super) const COMMAND_SELECTOR: &[&str] = &["id", "text", "point", "optional"];
pub(super) const TARGET: &[&str] = &["id", "text", "point", "label", "optional"];
pub(super) const TAP_OPTIONS: &[&str] = &[
    "repeat",
    "delay",
    "retryTapIfNoChange",
    "waitToSettleTimeoutMs",
    "waitUntilVisible",
];
pub(super) const NO_ARGUMENT: &[&str] = &["optional"];

/// Each command's own keys (a command that takes only a value, `killApp: APP`, has none; one whose
/// value has a key of its own, `inputText: {text}`, names it first).
const OWN: &[(&str, &[&str])] = &[
    (
        "launchApp",
        &[
            "appId",
            "optional",
            "clearState",
            "stopApp",
            "clearKeychain",
            "permissions",
            "arguments",
        ],
    ),
    ("stopApp", &[]),
    ("killApp", &[]),
    ("clearState", &[]),
    ("clearKeychain", NO_ARGUMENT),
    ("inputText", &["text", "optional"]),
    ("inputRandomEmail", NO_ARGUMENT),
    ("inputRandomPersonName", NO_ARGUMENT),
    ("inputRandomNumber", &["length", "optional"]),
    ("inputRandomText", &["length", "optional"]),
    ("eraseText", &["charactersToErase", "optional"]),
    ("pasteText", NO_ARGUMENT),
    ("setClipboard", &["text", "optional"]),
    ("hideKeyboard", NO_ARGUMENT),
    ("pressKey", &["key", "optional"]),
    ("back", NO_ARGUMENT),
    ("scroll", NO_ARGUMENT),
    (
        "scrollUntilVisible",
        &[
            "element",
            "direction",
            "timeout",
            "speed",
            "visibilityPercentage",
            "centerElement",
            "optional",
        ],
    ),
    ("swipe", &["start", "end", "duration", "direction", "from", "optional"]),
    ("assertTrue", &["condition", "optional"]),
    ("extendedWaitUntil", &["visible", "notVisible", "timeout", "optional"]),
    ("waitForAnimationToEnd", &["timeout", "optional"]),
    ("takeScreenshot", &["path", "optional"]),
    ("startRecording", &["path", "optional"]),
    ("stopRecording", NO_ARGUMENT),
    ("openLink", &["link", "autoVerify", "browser", "optional"]),
    ("setLocation", &["latitude", "longitude", "optional"]),
    ("travel", &["points", "speed", "optional"]),
    ("setPermissions", &["appId", "permissions", "optional"]),
    ("addMedia", &["files", "optional"]),
    ("setAirplaneMode", &["value", "optional"]),
    ("toggleAirplaneMode", NO_ARGUMENT),
    ("setOrientation", &["orientation", "optional"]),
    ("runFlow", &["file", "commands", "env", "when", "optional"]),
    ("repeat", &["times", "commands", "while"]),
    ("retry", &["maxRetries", "file", "commands", "env", "optional"]),
    ("runScript", &["file", "env", "when", "optional"]),
    ("evalScript", &["script", "optional"]),
    // Not a command: a runFlow's, a runScript's `when`, a repeat's `while`.
    ("when", &["visible", "notVisible", "platform", "true"]),
];

/// The keys the reader takes in `command`'s mapping, or `None` for a command it does not read.
pub fn fields(command: &str) -> Option<Vec<&'static str>> {
    match command {
        "tapOn" | "doubleTapOn" | "longPressOn" => Some([TARGET, TAP_OPTIONS, MAESTRO_KEYS].concat()),
        "assertVisible" | "assertNotVisible" | "copyTextFrom" => Some([COMMAND_SELECTOR, MAESTRO_KEYS].concat()),
        _ => OWN.iter().find(|(c, _)| *c == command).map(|(_, keys)| keys.to_vec()),
    }
}

/// `command`'s own keys, as the reader refuses any other.
pub(super) fn of(command: &str) -> &'static [&'static str] {
    OWN.iter().find(|(c, _)| *c == command).map_or(&[], |(_, keys)| keys)
}
