#![no_main]
//! `logcat -v threadtime` lines, then crash detection and run collapsing over them.

use droidmcp_pure::android::crashes::{collapse_runs, find_crashes, pids_of_package};
use droidmcp_pure::android::logcat::{format_threadtime, parse_threadtime_line};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let lines: Vec<_> = text.lines().filter_map(parse_threadtime_line).collect();
    for line in &lines {
        let _ = format_threadtime(line);
    }
    let _ = find_crashes(&lines);
    let _ = pids_of_package(&lines, "com.example.app");
    let refs: Vec<_> = lines.iter().collect();
    let _ = collapse_runs(&refs);
});
