//! The fields Maestro commands take: the groups a selector and a tap's options are made of, a
//! condition's, and each command's own (its row in its file, `command/`). The reader refuses any
//! other key of a command (`yaml::only_keys`), and tests generate their cases from `fields`.
//! `label`, every command's caption, goes without saying.

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

/// What a condition (`when` of runFlow and runScript, `while` of repeat) takes: not a command.
const WHEN: &[&str] = &["visible", "notVisible", "platform", "true"];

/// The keys the reader takes in `command`'s mapping (its file's fields row), or `None` for a
/// command it does not read.
pub fn fields(command: &str) -> Option<Vec<&'static str>> {
    match command {
        "when" => Some(WHEN.to_vec()),
        _ => super::command::find(command)?.fields(),
    }
}

/// `command`'s own keys, as the reader refuses any other.
pub(super) fn of(command: &str) -> &'static [&'static str] {
    match command {
        "when" => WHEN,
        _ => super::command::find(command).map_or(&[], |spec| spec.own),
    }
}
