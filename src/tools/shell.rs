//! `adb-shell`: one command on the device's shell, as given (this is the assistant's own shell),
//! with its exit code, stdout and stderr. A stream too long for the budget is shown as its head
//! and tail, and kept whole behind a cacheId.

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, JsonObject};
use serde::{Deserialize, Serialize};

use super::command::{self, Command, Deadline, Range};
use super::{State, error};
use crate::adb::AdbError;
use crate::context::budget::{Budgeted, chars, escaped_chars, respond};
use crate::context::{Data, Kind};

const MAX_TIMEOUT_MS: u64 = 600_000;
/// Room kept for the other fields when the streams share the budget.
const OVERHEAD_CHARS: usize = 600;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ShellArgs {
    pub operation: ShellOperation,
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub command: Option<String>,
    /// Default --timeout-ms; max 600000.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ShellOperation {
    Run,
}

#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShellOutput {
    pub operation: String,
    pub device: String,
    /// None from a device without shell v2 (Android 6 and older).
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// Sizes of the whole streams.
    pub stdout_chars: usize,
    pub stderr_chars: usize,
    /// The whole stdout, when the answer shows only its head and tail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout_cache_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr_cache_id: Option<String>,
    /// The output was not UTF-8; invalid bytes are shown as U+FFFD.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Budgeted for ShellOutput {
    const KEY_FIELDS: &'static [&'static str] = &[
        "operation",
        "device",
        "exitCode",
        "stdoutChars",
        "stderrChars",
        "stdoutCacheId",
        "stderrCacheId",
        "binary",
    ];
    const BULK_FIELDS: &'static [&'static str] = &["stdout", "stderr"];
    const KIND: Kind = Kind::Shell;
}

/// Commands refused before they run. Not a sandbox: `sh -c`, variables or a script get past
/// it; it catches the plain slip, and the tool is annotated destructive either way.
#[derive(Debug, Clone)]
pub struct DenyList(Vec<Vec<String>>);

impl DenyList {
    pub const DEFAULT: [&'static str; 2] = ["reboot", "rm -rf /"];

    pub fn new<S: AsRef<str>>(rules: &[S]) -> DenyList {
        DenyList(
            rules
                .iter()
                .map(|r| r.as_ref().split_whitespace().map(str::to_string).collect::<Vec<_>>())
                .filter(|r| !r.is_empty())
                .collect(),
        )
    }

    /// The rule a command's segment (between `;`, `&&`, `||`, `|`, `&`, newlines) starts with.
    pub fn refuses(&self, command: &str) -> Option<String> {
        command
            .split([';', '|', '&', '\n'])
            .map(|segment| segment.split_whitespace().collect::<Vec<_>>())
            .find_map(|words| {
                self.0
                    .iter()
                    .find(|rule| words.len() >= rule.len() && words.iter().zip(rule.iter()).all(|(w, r)| w == r))
                    .map(|rule| rule.join(" "))
            })
    }
}

/// One valid adb-shell call (`run`), built from `ShellArgs` by `ShellCommand::parse`.
#[derive(Debug)]
pub struct ShellCommand {
    pub device: Option<String>,
    /// Not blank.
    pub command: String,
    /// Its own timeoutMs, else the server's `--timeout-ms`.
    pub timeout: Option<Duration>,
}

const TIMEOUT: Range = Range::new("timeoutMs", 1, MAX_TIMEOUT_MS);

impl Command for ShellCommand {
    fn parse(args: JsonObject) -> Result<ShellCommand, String> {
        let args = command::parse("adb-shell", args, |a: &ShellArgs| match a.operation {
            ShellOperation::Run => &["command", "timeoutMs"],
        })?;
        let Some(command) = args.command.filter(|c| !c.trim().is_empty()) else {
            return Err("run needs `command`, e.g. \"ls /sdcard\"".into());
        };
        let timeout = match args.timeout_ms {
            Some(ms) => Some(TIMEOUT.check_ms(Some(ms), 0)?),
            None => None,
        };
        Ok(ShellCommand {
            device: args.device,
            command,
            timeout,
        })
    }

    fn deadline(&self) -> Deadline {
        Deadline::Within {
            timeout: self.timeout,
            gesture: Duration::ZERO,
        }
    }

    /// Any command may change the device; which ones only read cannot be told from the text.
    fn acts(&self) -> bool {
        true
    }

    fn device(&self) -> Option<&str> {
        self.device.as_deref()
    }

    async fn apply(self, state: Arc<State>, _ctx: RequestContext<RoleServer>) -> CallToolResult {
        apply(&state, self).await
    }
}

pub async fn apply(
    state: &State,
    ShellCommand {
        device,
        command,
        timeout,
    }: ShellCommand,
) -> CallToolResult {
    let command = command.as_str();
    let timeout = timeout.unwrap_or(state.adb.timeout());
    if let Some(rule) = state.shell_deny.refuses(command) {
        return error(format!(
            "refused: the command matches the deny-list rule `{rule}` (droidmcp --shell-deny sets the rules; they are a guard against slips, not a sandbox)"
        ));
    }
    let serial = match state.device(device.as_deref()).await {
        Ok(s) => s,
        Err(e) => return error(e.to_string()),
    };
    let out = match state.adb.shell_with_timeout(&serial, command, timeout).await {
        Ok(out) => out,
        Err(AdbError::Timeout { after, .. }) => {
            return error(format!(
                "the command ran past its {} ms timeout, so droidmcp closed its stream, which ends it on the device (once the device has opened it, if it had not yet). Pass a larger timeoutMs (max {MAX_TIMEOUT_MS}) or run it in the background (`cmd &`)",
                after.as_millis()
            ));
        }
        Err(e) => return error(e.to_string()),
    };
    let output = shape(state, &serial, command, out);
    respond(&output, state.budget, &state.cache, &format!("adb-shell on {serial}"))
}

/// Fits the streams into the budget: each gets a share, and one over its share is shown as its
/// head and tail with the whole behind a cacheId. Nothing here copies or escapes a whole stream:
/// outputs can be as large as the capture cap.
fn shape(state: &State, serial: &str, command: &str, out: crate::adb::ShellOutput) -> ShellOutput {
    let (stdout, out_binary) = into_text(out.stdout);
    let (stderr, err_binary) = into_text(out.stderr);
    let binary = out_binary || err_binary;
    let (out_chars, err_chars) = (chars(&stdout), chars(&stderr));
    let room = state.budget.saturating_sub(OVERHEAD_CHARS + chars(command).min(200));
    let (out_escaped, err_escaped) = (escaped_chars(&stdout) + 2, escaped_chars(&stderr) + 2);
    let fits = out_escaped + err_escaped <= room;
    // Each stream gets what it needs up to its share (stdout 2/3, stderr 1/3); what one does not
    // need goes to the other.
    let (out_room, err_room) = if fits {
        (usize::MAX, usize::MAX)
    } else {
        let err_room = err_escaped.min(room / 3).max(room.saturating_sub(out_escaped));
        (room.saturating_sub(err_room), err_room)
    };
    let mut output = ShellOutput {
        operation: "run".into(),
        device: serial.into(),
        exit_code: out.exit_code,
        stdout_chars: out_chars,
        stderr_chars: err_chars,
        binary,
        ..Default::default()
    };
    let short = |s: &str| s.chars().take(60).collect::<String>();
    let keep = |text: String, escaped: usize, room: usize, which: &str| -> (String, Option<String>) {
        if escaped <= room {
            return (text, None);
        }
        // Moved into the cache, not copied; the preview is cut from the stored text.
        let entry = state.cache.put(
            Kind::Shell,
            format!("{which} of `{}` on {serial}", short(command)),
            Data::Text(text),
        );
        let shown = match &entry.data {
            Data::Text(stored) => head_and_tail(stored, room, &entry.id),
            _ => String::new(),
        };
        (shown, Some(entry.id.clone()))
    };
    (output.stdout, output.stdout_cache_id) = keep(stdout, out_escaped, out_room, "stdout");
    (output.stderr, output.stderr_cache_id) = keep(stderr, err_escaped, err_room, "stderr");
    let mut hints = Vec::new();
    if output.stdout_cache_id.is_some() || output.stderr_cache_id.is_some() {
        hints.push("cut to head and tail: cache get {id, offset, filter} pages the whole stream".to_string());
    }
    if out.dropped > 0 {
        hints.push(format!(
            "the output passed the {} MiB capture cap: {} bytes in its middle were dropped (a marker line says where); redirect to a file on the device and read it in parts",
            state.adb.max_output() / (1024 * 1024),
            out.dropped
        ));
    }
    if binary {
        hints.push("not UTF-8: invalid bytes show as U+FFFD".into());
    }
    output.hint = (!hints.is_empty()).then(|| hints.join("; "));
    output
}

/// The bytes as text, without a copy when they are UTF-8; and whether they were not.
fn into_text(bytes: Vec<u8>) -> (String, bool) {
    match String::from_utf8(bytes) {
        Ok(text) => (text, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    }
}

/// The first and last lines of `text` that fit in about `room` escaped chars, with a marker
/// saying what was left out and where it is. Scans from both ends; never walks the middle twice.
pub fn head_and_tail(text: &str, room: usize, cache_id: &str) -> String {
    let marker_room = 120;
    let budget = room.saturating_sub(marker_room);
    let (head_room, tail_room) = (budget * 2 / 3, budget / 3);
    let mut head_end = 0;
    let mut used = 0;
    for line in text.split_inclusive('\n') {
        let size = escaped_chars(line);
        if used + size > head_room {
            break;
        }
        used += size;
        head_end += line.len();
    }
    let mut tail_start = text.len();
    used = 0;
    while tail_start > head_end {
        // The line that ends at tail_start (its own newline included).
        let body_end = if text[..tail_start].ends_with('\n') {
            tail_start - 1
        } else {
            tail_start
        };
        let line_start = text[head_end..body_end]
            .rfind('\n')
            .map_or(head_end, |i| head_end + i + 1);
        let size = escaped_chars(&text[line_start..tail_start]);
        if used + size > tail_room {
            break;
        }
        used += size;
        tail_start = line_start;
    }
    let head_text: &str = if head_end == 0 {
        // One enormous first line: its first chars.
        let cut = text.char_indices().nth(head_room).map_or(text.len(), |(i, _)| i);
        &text[..cut.min(tail_start)]
    } else {
        &text[..head_end]
    };
    let middle = &text[head_text.len()..tail_start];
    let left_out_lines = middle.bytes().filter(|&b| b == b'\n').count();
    let left_out_chars = chars(middle);
    let gap = if head_text.ends_with('\n') { "" } else { "\n" };
    format!(
        "{head_text}{gap}…[{left_out_lines} lines, {left_out_chars} chars left out; cache get {{id: \"{cache_id}\", offset}} pages them]…\n{}",
        &text[tail_start..]
    )
}

#[cfg(test)]
mod tests {
    use super::{DenyList, chars, head_and_tail};

    #[test]
    fn deny_rules_match_whole_words_at_the_start_of_a_segment() {
        let deny = DenyList::new(&DenyList::DEFAULT);
        assert_eq!(deny.refuses("reboot").as_deref(), Some("reboot"));
        assert_eq!(deny.refuses("ls; reboot now").as_deref(), Some("reboot"));
        assert_eq!(deny.refuses("true && rm -rf /").as_deref(), Some("rm -rf /"));
        assert_eq!(deny.refuses("rm -rf /sdcard/tmp"), None);
        assert_eq!(deny.refuses("echo reboot"), None);
        assert_eq!(DenyList::new::<&str>(&[]).refuses("reboot"), None);
    }

    #[test]
    fn head_and_tail_keep_both_ends_and_say_what_is_left_out() {
        let text: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
        let cut = head_and_tail(&text, 1000, "sh-X");
        assert!(cut.starts_with("line 1\n") && cut.ends_with("line 1000\n"), "{cut}");
        assert!(cut.contains("lines, ") && cut.contains("sh-X"));
        assert!(chars(&serde_json::to_string(&cut).unwrap()) <= 1000 + 20);
    }
}
