//! What droidmcp replays of Maestro's flow language, one row per command Maestro documents, each
//! row in its command's file (`command/`, listed by `command::REGISTRY`): the reader refuses a
//! command with its row's note, and docs/flows.md shows the table rendered here (`tests/it/docs.rs`
//! keeps the two equal).

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

/// Every command Maestro 1.39 (and 2.x's docs) lists, with how a replay takes it: each row as
/// its command's file says (`command::REGISTRY`, in its order).
pub const COMMANDS: &[(&str, Status, &str)] = &{
    const N: usize = super::command::REGISTRY.len();
    let mut rows = [("", Status::Refused, ""); N];
    let mut i = 0;
    while i < N {
        let spec = super::command::REGISTRY[i];
        rows[i] = (spec.name, spec.status, spec.note);
        i += 1;
    }
    rows
};

/// The table row of `command` (its file's, `command/`), if Maestro has such a command.
pub fn row(command: &str) -> Option<(Status, &'static str)> {
    super::command::find(command).map(|spec| (spec.status, spec.note))
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
