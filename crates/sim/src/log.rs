//! The device's log: its buffers, and the profile's log as a device that has just been running
//! holds it. `Device::log_line` adds to it; `logcat` reads it.

use chrono::{Datelike, Duration as ChronoDuration, Local, NaiveDateTime};

use android::logcat::{LogLine, format_threadtime, parse_threadtime_line};

/// Which logcat buffer a line belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogBuffer {
    Main,
    System,
    Crash,
    Events,
}

impl LogBuffer {
    pub fn parse(name: &str) -> Option<LogBuffer> {
        Some(match name {
            "main" => LogBuffer::Main,
            "system" => LogBuffer::System,
            "crash" => LogBuffer::Crash,
            "events" => LogBuffer::Events,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone)]
pub struct LogEntry {
    pub buffer: LogBuffer,
    pub line: LogLine,
}

/// Reads the profile's log and shifts its timestamps so the last line is one minute before now,
/// so "since" filters behave as on a device that has just been running.
pub fn rebase_log(text: &str) -> Vec<LogEntry> {
    let mut buffer = LogBuffer::Main;
    let mut entries = Vec::new();
    for raw in text.lines() {
        if let Some(name) = raw.strip_prefix("--------- beginning of ") {
            buffer = LogBuffer::parse(name.trim()).unwrap_or(LogBuffer::Main);
            continue;
        }
        if let Some(line) = parse_threadtime_line(raw) {
            entries.push(LogEntry { buffer, line });
        }
    }
    let year = Local::now().year();
    let parse = |ts: &str| NaiveDateTime::parse_from_str(&format!("{year}-{ts}"), "%Y-%m-%d %H:%M:%S%.3f").ok();
    let last = entries.iter().filter_map(|e| parse(&e.line.timestamp)).max();
    if let Some(last) = last {
        let shift = (Local::now().naive_local() - ChronoDuration::minutes(1)) - last;
        for e in &mut entries {
            if let Some(t) = parse(&e.line.timestamp) {
                e.line.timestamp = (t + shift).format("%m-%d %H:%M:%S%.3f").to_string();
            }
        }
    }
    entries
}

/// Formats one entry as threadtime.
pub fn format_entry(e: &LogEntry) -> String {
    format_threadtime(&e.line)
}
