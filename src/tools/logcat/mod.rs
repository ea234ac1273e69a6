//! `adb-logcat`: a log read as counts, crashes and the last lines that match, with every
//! matching line behind a cacheId; and `clear`.

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use rmcp::model::{CallToolResult, JsonObject};
use serde::{Deserialize, Serialize};

use super::command::{self, Command, Deadline, Range};
use super::{State, error};

mod since;
use crate::android::crashes::{Crash, collapse_runs, find_crashes, group_repeats, pids_of_package};
use crate::android::logcat::{Level, LogLine, format_threadtime, parse_threadtime_line, with_years};
use crate::android::packages::is_valid_package_name;
use crate::android::text::cut;
use crate::android::text::quote;
use crate::context::budget::{Budgeted, chars, respond};
use crate::context::{Data, Kind};
use since::{is_date, parse_since};

const DEFAULT_LINES: usize = 20;
const MAX_LINES: u64 = 200;
/// A default read (no `lines`) stays within this many chars: the window gives way, oldest line
/// first, so that every crash is listed and the answer stays small.
const GOAL_CHARS: usize = 2500;
/// The crash list stays within this many chars and entries; past them the whole list is
/// behind `crashesCacheId`.
const CRASH_LIST_CHARS: usize = 1400;
const MAX_CRASHES_LISTED: usize = 8;
/// A message in the window or a crash's text longer than this is cut and marked with `…`;
/// the whole line is in the cache.
const MAX_MESSAGE_CHARS: usize = 64;
const MAX_CRASH_TEXT_CHARS: usize = 120;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LogcatArgs {
    pub operation: LogcatOperation,
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub package: Option<String>,
    #[serde(default)]
    pub pid: Option<u32>,
    #[serde(default)]
    pub level: Option<LevelArg>,
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// "last" (read) or MM-DD HH:MM:SS[.mmm]
    #[serde(default)]
    pub since: Option<String>,
    #[serde(default)]
    pub lines: Option<u64>,
    /// Substring, any case.
    #[serde(default)]
    pub grep: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LogcatOperation {
    Read,
    Clear,
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
pub enum LevelArg {
    V,
    D,
    I,
    W,
    E,
    F,
}

impl LevelArg {
    fn level(self) -> Level {
        match self {
            LevelArg::V => Level::Verbose,
            LevelArg::D => Level::Debug,
            LevelArg::I => Level::Info,
            LevelArg::W => Level::Warn,
            LevelArg::E => Level::Error,
            LevelArg::F => Level::Fatal,
        }
    }
}

#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogcatOutput {
    pub operation: String,
    pub device: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_lines: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matching_lines: Option<usize>,
    /// Matching lines per level letter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<BTreeMap<String, usize>>,
    /// Crashes in scope (since, pid, package; text filters never hide one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crash_count: Option<usize>,
    /// The crashes, most frequent first, then most recent; repeats of one signature are one
    /// entry with `count`. A long list shows its head (`crashesListed` of them) and the whole
    /// list is behind `crashesCacheId`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crashes: Option<Vec<Crash>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crashes_listed: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crashes_cache_id: Option<String>,
    /// The last matching lines, oldest first, as `HH:MM:SS.mmm L TAG: message`; a run of
    /// identical lines is one, with `(×N)`. Whole lines, with date and pids, are in the cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<Vec<String>>,
    /// The newest line's time with its year (the device's clock): what `since: "last"` starts
    /// after next time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newest: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Budgeted for LogcatOutput {
    const KEY_FIELDS: &'static [&'static str] = &[
        "operation",
        "device",
        "totalLines",
        "matchingLines",
        "counts",
        "crashCount",
        "crashes",
        "crashesListed",
        "crashesCacheId",
        "cacheId",
    ];
    const BULK_FIELDS: &'static [&'static str] = &["lines"];
    const KIND: Kind = Kind::Logcat;
}

/// One valid adb-logcat call, built from `LogcatArgs` by `LogcatCommand::parse`.
#[derive(Debug)]
pub struct LogcatCommand {
    pub device: Option<String>,
    /// `None`: clear the log.
    pub read: Option<LogRead>,
}

/// What a read looks at: its filters, checked, as given.
#[derive(Debug)]
pub struct LogRead {
    /// A package name in Android's grammar.
    pub package: Option<String>,
    pub pid: Option<u32>,
    pub level: Option<LevelArg>,
    pub tags: Option<Vec<String>>,
    /// "last", or a time whose form was checked.
    pub since: Option<String>,
    /// At most `MAX_LINES`; `None`: a default read, `DEFAULT_LINES` within `GOAL_CHARS`.
    pub lines: Option<usize>,
    pub grep: Option<String>,
}

const LINES: Range = Range::new("`lines`", 0, MAX_LINES)
    .min_means(" (the summary alone)")
    .instead(". cache get pages all of them");

impl Command for LogcatCommand {
    fn parse(args: JsonObject) -> Result<LogcatCommand, String> {
        let args = command::parse("adb-logcat", args, |a: &LogcatArgs| match a.operation {
            LogcatOperation::Read => &["package", "pid", "level", "tags", "since", "lines", "grep"],
            LogcatOperation::Clear => &[],
        })?;
        let read = match args.operation {
            LogcatOperation::Clear => None,
            LogcatOperation::Read => {
                let lines = match args.lines {
                    Some(n) => Some(LINES.check_count(Some(n), 0)?),
                    None => None,
                };
                if let Some(p) = &args.package
                    && !is_valid_package_name(p)
                {
                    return Err(format!(
                        "`{}` is not a package name (e.g. com.example.app)",
                        crate::android::text::echoed(p)
                    ));
                }
                // Checked before the device is asked (the day of an HH:MM:SS form comes from
                // the log later).
                if let Some(t) = args
                    .since
                    .as_deref()
                    .map(str::trim)
                    .filter(|t| !t.is_empty() && !t.starts_with("last"))
                {
                    parse_since(t, None, "2000-01-01")?;
                }
                Some(LogRead {
                    package: args.package,
                    pid: args.pid,
                    level: args.level,
                    tags: args.tags,
                    since: args.since,
                    lines,
                    grep: args.grep,
                })
            }
        };
        Ok(LogcatCommand {
            device: args.device,
            read,
        })
    }

    fn deadline(&self) -> Deadline {
        Deadline::SERVER
    }

    /// A clear empties the device's log, which a person holding it may be reproducing a crash
    /// into; a read only reads.
    fn acts(&self) -> bool {
        self.read.is_none()
    }

    fn device(&self) -> Option<&str> {
        self.device.as_deref()
    }

    async fn apply(self, state: Arc<State>, _ctx: RequestContext<RoleServer>) -> CallToolResult {
        apply(&state, self).await
    }
}

pub async fn apply(state: &State, command: LogcatCommand) -> CallToolResult {
    let serial = match state.device(command.device.as_deref()).await {
        Ok(s) => s,
        Err(e) => return error(e.to_string()),
    };
    let outcome = match &command.read {
        Some(args) => read(state, &serial, args).await,
        None => clear(state, &serial).await,
    };
    match outcome {
        Ok(output) => respond(&output, state.budget, &state.cache, &format!("logcat of {serial}")),
        Err(message) => error(message),
    }
}

async fn clear(state: &State, serial: &str) -> Result<LogcatOutput, String> {
    let out = state.adb.shell(serial, "logcat -c").await.map_err(|e| e.to_string())?;
    if out.exit_code.is_some_and(|c| c != 0) {
        return Err(format!(
            "logcat -c failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(LogcatOutput {
        operation: "clear".into(),
        device: serial.into(),
        ..Default::default()
    })
}

async fn read(state: &State, serial: &str, args: &LogRead) -> Result<LogcatOutput, String> {
    let shown = args.lines.unwrap_or(DEFAULT_LINES);
    // The device's date comes first, in the same round trip: log lines carry no year.
    let out = state
        .adb
        .shell(
            serial,
            "date +%Y-%m-%d; logcat -d -v threadtime -b main -b system -b crash",
        )
        .await
        .map_err(|e| e.to_string())?;
    let text = out.stdout_text();
    let device_date = text.lines().next().map(str::trim).filter(|d| is_date(d));
    let today = device_date.map_or_else(|| chrono::Local::now().format("%Y-%m-%d").to_string(), str::to_string);
    let all: Vec<LogLine> = text.lines().filter_map(parse_threadtime_line).collect();
    let stamps: Vec<&str> = all.iter().map(|l| l.timestamp.as_str()).collect();
    let dated = with_years(&stamps, &today);
    let newest = dated.iter().max().cloned();

    let since = match args.since.as_deref().map(str::trim) {
        None | Some("") => None,
        Some("last" | "last call" | "last read") => state.last_log_read(serial).map(|t| (t, false)),
        Some(t) => Some((parse_since(t, newest.as_deref(), &today)?, true)),
    };
    let pids = processes(state, serial, args, &all).await?;
    let min_level = args.level.map(LevelArg::level);
    let tags: Option<Vec<String>> = args.tags.as_ref().map(|t| t.iter().map(|s| s.to_lowercase()).collect());
    let needle = args.grep.as_deref().filter(|g| !g.is_empty()).map(str::to_lowercase);
    // The scope (time and processes) bounds the crashes; the text filters only the lines.
    let in_scope: Vec<LogLine> = all
        .iter()
        .zip(&dated)
        .filter(|(_, at)| match &since {
            Some((t, inclusive)) => *at > t || (*inclusive && *at == t),
            None => true,
        })
        .map(|(l, _)| l)
        .filter(|l| pids.as_ref().is_none_or(|p| p.contains(&l.pid)))
        .cloned()
        .collect();
    let matching: Vec<&LogLine> = in_scope
        .iter()
        .filter(|l| min_level.is_none_or(|m| l.level >= m))
        .filter(|l| tags.as_ref().is_none_or(|t| t.contains(&l.tag.to_lowercase())))
        .filter(|l| {
            needle
                .as_ref()
                .is_none_or(|n| l.tag.to_lowercase().contains(n) || l.message.to_lowercase().contains(n))
        })
        .collect();

    let mut counts = BTreeMap::new();
    for l in &matching {
        *counts.entry(l.level.as_char().to_string()).or_insert(0) += 1;
    }
    let found = find_crashes(&in_scope);
    let crash_count = found.len();
    let (crashes, crashes_listed, crashes_cache_id) = crashes_of(state, serial, found);
    let window = window_of(&matching, shown);

    let whole: String = matching.iter().map(|l| format_threadtime(l) + "\n").collect();
    let entry = state.cache.put(
        Kind::Logcat,
        format!("{} matching logcat lines of {serial}", matching.len()),
        Data::Text(whole),
    );
    if let Some(t) = &newest {
        state.remember_log_read(serial, t.clone());
    }
    let hint = if matching.is_empty() {
        Some("no line matches; drop a filter, or use since: \"last\" only after a read".into())
    } else {
        Some("cache get {id, filter, offset} greps and pages every matching line".into())
    };
    let mut output = LogcatOutput {
        operation: "read".into(),
        device: serial.into(),
        total_lines: Some(all.len()),
        matching_lines: Some(matching.len()),
        counts: Some(counts),
        crash_count: Some(crash_count),
        crashes: Some(crashes),
        crashes_listed,
        crashes_cache_id,
        lines: None,
        newest,
        cache_id: Some(entry.id.clone()),
        hint,
    };
    output.lines = Some(match args.lines {
        Some(_) => window,
        None => fitted(&output, window),
    });
    Ok(output)
}

/// The processes a read keeps (`pid`, and a `package`'s: those the log names and those running
/// now), `None` for all.
async fn processes(
    state: &State,
    serial: &str,
    args: &LogRead,
    all: &[LogLine],
) -> Result<Option<HashSet<u32>>, String> {
    let mut pids: Option<HashSet<u32>> = args.pid.map(|p| HashSet::from([p]));
    if let Some(package) = &args.package {
        let mut found = pids_of_package(all, package);
        let running = state
            .adb
            .shell(serial, &format!("pidof {}", quote(package)))
            .await
            .map_err(|e| e.to_string())?;
        found.extend(
            running
                .stdout_text()
                .split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
        pids = Some(match pids {
            Some(p) => p.intersection(&found).copied().collect(),
            None => found,
        });
    }
    Ok(pids)
}

/// The crashes found as the answer lists them (repeats grouped, ranked, shortened), with how
/// many are listed and the cache id of them all when not all are.
fn crashes_of(state: &State, serial: &str, found: Vec<Crash>) -> (Vec<Crash>, Option<usize>, Option<String>) {
    let crashes = ranked(group_repeats(found));
    // As the answer shows them; the whole ones go to the cache when not all are listed.
    let as_listed: Vec<Crash> = crashes.iter().cloned().map(shortened).collect();
    let listed = listed_crashes(&as_listed);
    let (crashes_listed, crashes_cache_id) = if listed < crashes.len() {
        let whole = crashes.iter().filter_map(|c| serde_json::to_value(c).ok()).collect();
        let entry = state.cache.put(
            Kind::Logcat,
            format!("{} crashes in the log of {serial}", crashes.len()),
            Data::List(whole),
        );
        (Some(listed), Some(entry.id.clone()))
    } else {
        (None, None)
    };
    (
        as_listed.into_iter().take(listed).collect(),
        crashes_listed,
        crashes_cache_id,
    )
}

/// The last `shown` matching lines, repeats collapsed, each short.
fn window_of(matching: &[&LogLine], shown: usize) -> Vec<String> {
    let runs = collapse_runs(matching);
    runs.iter()
        .rev()
        .take(shown)
        .rev()
        .map(|run| {
            let l = run.line;
            // Date and pid are in `newest`, the crashes and the cache; the window stays short.
            let mut text = format!(
                "{} {} {}: {}",
                &l.timestamp[6..],
                l.level.as_char(),
                l.tag,
                cut(l.message.trim(), MAX_MESSAGE_CHARS)
            );
            if run.count > 1 {
                text.push_str(&format!(" (×{})", run.count));
            }
            text
        })
        .collect()
}

/// Asked for no number of lines: the window gives way, oldest first, for `output` to stay
/// within the goal.
fn fitted(output: &LogcatOutput, mut window: Vec<String>) -> Vec<String> {
    let size = |o: &LogcatOutput| chars(&serde_json::to_string(o).unwrap_or_default());
    let mut room = GOAL_CHARS.saturating_sub(size(output) + "\"lines\":[],".len());
    let mut fitting = 0;
    for line in window.iter().rev() {
        let cost = chars(&serde_json::to_string(line).unwrap_or_default()) + 1;
        if cost > room {
            break;
        }
        room -= cost;
        fitting += 1;
    }
    window.drain(..window.len() - fitting);
    window
}

/// Most frequent first, then most recent (groups come oldest first, each in its latest's place).
fn ranked(mut groups: Vec<Crash>) -> Vec<Crash> {
    groups.reverse();
    groups.sort_by_key(|c| std::cmp::Reverse(c.count));
    groups
}

/// How many of the ranked (shortened) crashes the answer lists: as many as fit the list's room.
fn listed_crashes(crashes: &[Crash]) -> usize {
    let mut used = 0;
    let mut listed = 0;
    for crash in crashes.iter().take(MAX_CRASHES_LISTED) {
        used += chars(&serde_json::to_string(crash).unwrap_or_default()) + 1;
        if used > CRASH_LIST_CHARS && listed > 0 {
            break;
        }
        listed += 1;
    }
    listed
}

/// A crash as the answer lists it: long texts cut, a native library named by its file.
fn shortened(mut c: Crash) -> Crash {
    c.what = cut(&c.what, MAX_CRASH_TEXT_CHARS);
    c.cause = c.cause.map(|t| cut(&t, MAX_CRASH_TEXT_CHARS));
    let frame = |f: String| {
        let f = match f.split_once(' ') {
            Some((path, rest)) if path.starts_with('/') => {
                format!("{} {rest}", path.rsplit('/').next().unwrap_or(path))
            }
            _ => f,
        };
        cut(&f, MAX_CRASH_TEXT_CHARS)
    };
    c.app_frame = c.app_frame.map(frame);
    c.top_frame = c.top_frame.map(frame);
    c
}
