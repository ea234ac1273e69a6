//! What matters in a log: crashes (Java `FATAL EXCEPTION`, ANR, native signal), the processes of
//! a package, and runs of identical lines. Pure functions over parsed threadtime lines.

use std::collections::HashSet;

use super::logcat::LogLine;

/// One crash found in the log.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Crash {
    /// `java`, `anr` or `native`.
    pub kind: String,
    /// `MM-DD HH:MM:SS.mmm` of its first line.
    pub time: String,
    pub pid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process: Option<String>,
    /// The exception line, the ANR reason, or the signal.
    pub what: String,
    /// The root cause of a Java crash (its last `Caused by:`), or a native crash's `Cause:`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// The first frame in the crashing app's own code (its package, or its own native
    /// libraries), the root cause's first: where to look.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_frame: Option<String>,
    /// The top frame of the root cause's stack, when it is not `appFrame`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_frame: Option<String>,
    /// How many crashes this one stands for: the same kind, process, exception and cause
    /// (`group_repeats`); its time and pid are the latest's.
    #[serde(skip_serializing_if = "is_one")]
    pub count: usize,
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

/// Crashes with the same signature (kind, process, exception, cause) become one, counted, in
/// the place of the latest; the order stays oldest first.
pub fn group_repeats(crashes: Vec<Crash>) -> Vec<Crash> {
    let mut grouped: Vec<Crash> = Vec::new();
    for crash in crashes {
        let same = |g: &Crash| {
            g.kind == crash.kind && g.process == crash.process && g.what == crash.what && g.cause == crash.cause
        };
        match grouped.iter().position(same) {
            Some(at) => {
                let mut group = grouped.remove(at);
                group.count += 1;
                group.time = crash.time;
                group.pid = crash.pid;
                grouped.push(group);
            }
            None => grouped.push(crash),
        }
    }
    grouped
}

/// How far past its first line a crash's lines are looked for.
const CRASH_WINDOW: usize = 600;

pub fn find_crashes(lines: &[LogLine]) -> Vec<Crash> {
    let mut crashes = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let crash = if line.tag == "AndroidRuntime" && line.message.starts_with("FATAL EXCEPTION") {
            Some(java_crash(lines, i))
        } else if line.tag == "ActivityManager" && line.message.starts_with("ANR in ") {
            Some(anr(lines, i))
        } else if line.tag == "libc" && line.message.starts_with("Fatal signal") {
            Some(native_crash(lines, i))
        } else {
            None
        };
        crashes.extend(crash);
    }
    crashes
}

/// The lines after `start` written by the same process under the same tag.
fn following<'a>(lines: &'a [LogLine], start: usize, pid: u32, tag: &'a str) -> impl Iterator<Item = &'a LogLine> {
    lines[start + 1..]
        .iter()
        .take(CRASH_WINDOW)
        .filter(move |l| l.pid == pid && l.tag == tag)
}

fn java_crash(lines: &[LogLine], start: usize) -> Crash {
    let head = &lines[start];
    let mut crash = new_crash("java", head, head.message.clone());
    let mut have_exception = false;
    // The frames of the exception, then of each `Caused by:`; the last is the root cause's.
    let mut sections: Vec<Vec<String>> = vec![Vec::new()];
    for l in following(lines, start, head.pid, "AndroidRuntime") {
        let text = l.message.trim();
        if text.starts_with("FATAL EXCEPTION") {
            break;
        }
        if let Some(rest) = text.strip_prefix("Process: ") {
            crash.process = rest.split(',').next().map(str::to_string);
        } else if let Some(frame) = text.strip_prefix("at ") {
            if let Some(section) = sections.last_mut() {
                section.push(frame.to_string());
            }
        } else if let Some(cause) = text.strip_prefix("Caused by: ") {
            crash.cause = Some(cause.to_string());
            sections.push(Vec::new());
        } else if !have_exception && !text.starts_with("...") {
            crash.what = text.to_string();
            have_exception = true;
        }
    }
    let package = crash.process.as_deref().map(app_package);
    // The root cause's stack first, then the ones it caused, outermost last; the app's package
    // first, then any code that is not the framework's (an app whose code has another name).
    let first = |own: &dyn Fn(&str) -> bool| sections.iter().rev().find_map(|s| s.iter().find(|f| own(f))).cloned();
    let app = package
        .and_then(|p| first(&|f| in_package(f, p)))
        .or_else(|| first(&|f| !FRAMEWORK_PREFIXES.iter().any(|x| f.starts_with(x))));
    let top = sections.iter().rev().find_map(|s| s.first()).cloned();
    set_frames(&mut crash, app, top);
    crash
}

/// `com.x:remote` → `com.x`: a process of the app is named after its package.
fn app_package(process: &str) -> &str {
    process.split(':').next().unwrap_or(process)
}

/// Frames of the platform and common libraries: not where an app's bug is.
const FRAMEWORK_PREFIXES: &[&str] = &[
    "java.",
    "javax.",
    "jdk.",
    "sun.",
    "libcore.",
    "dalvik.",
    "android.",
    "androidx.",
    "com.android.",
    "com.google.android.material.",
    "kotlin.",
    "kotlinx.",
    "org.apache.",
    "org.json.",
    "okhttp3.",
    "okio.",
    "retrofit2.",
];

/// A frame in the app's package, or under its organisation's prefix (`com.strava.upload` for
/// `com.strava.android`), if that is not a framework's.
fn in_package(frame: &str, package: &str) -> bool {
    if frame.starts_with(package) && frame[package.len()..].starts_with('.') {
        return true;
    }
    let org: Vec<&str> = package.split('.').take(2).collect();
    org.len() == 2
        && frame.split('.').take(2).eq(org.iter().copied())
        && !FRAMEWORK_PREFIXES.iter().any(|f| frame.starts_with(f))
}

fn set_frames(crash: &mut Crash, app: Option<String>, top: Option<String>) {
    crash.top_frame = top.filter(|t| Some(t) != app.as_ref());
    crash.app_frame = app;
}

fn anr(lines: &[LogLine], start: usize) -> Crash {
    let head = &lines[start];
    let target = head.message.trim_start_matches("ANR in ");
    let mut crash = new_crash("anr", head, "ANR".into());
    crash.process = target.split_whitespace().next().map(str::to_string);
    for l in following(lines, start, head.pid, "ActivityManager")
        .filter(|l| l.tid == head.tid)
        .take(20)
    {
        if let Some(pid) = l.message.strip_prefix("PID: ") {
            crash.pid = pid.trim().parse().unwrap_or(crash.pid);
        } else if let Some(reason) = l.message.strip_prefix("Reason: ") {
            crash.what = format!("ANR: {reason}");
        }
    }
    crash
}

fn native_crash(lines: &[LogLine], start: usize) -> Crash {
    let head = &lines[start];
    let mut crash = new_crash("native", head, head.message.clone());
    // The tombstone comes from crash_dump under the tag DEBUG, in its own pid.
    let window = || lines[start + 1..].iter().take(CRASH_WINDOW);
    let Some(debug_pid) = window().find(|l| l.tag == "DEBUG").map(|l| l.pid) else {
        return crash;
    };
    let mut frames: Vec<String> = Vec::new();
    for l in window().filter(|l| l.tag == "DEBUG" && l.pid == debug_pid) {
        let text = l.message.trim();
        if let Some((_, name)) = text.split_once(">>> ") {
            crash.process = name.split(" <<<").next().map(str::to_string);
        } else if let Some(cause) = text.strip_prefix("Cause: ") {
            crash.cause = Some(cause.to_string());
        } else if text.starts_with('#') && text.contains(" pc ") {
            let frame = text.split_once(" pc ").map_or(text, |(_, f)| f);
            frames.push(frame.split_whitespace().skip(1).collect::<Vec<_>>().join(" "));
        } else if text.starts_with("backtrace:") && !frames.is_empty() {
            break; // a second thread's backtrace
        }
    }
    let package = crash.process.as_deref().map(app_package);
    let app = frames.iter().find(|f| is_app_native_frame(f, package)).cloned();
    set_frames(&mut crash, app, frames.first().cloned());
    crash
}

/// A frame in one of the app's own libraries: installed with it (`/data/app/…`), or named
/// after its package; never the system's (`/system`, `/apex`, `/vendor`).
fn is_app_native_frame(frame: &str, package: Option<&str>) -> bool {
    let library = frame.split_whitespace().next().unwrap_or("");
    if ["/system/", "/apex/", "/vendor/", "/product/", "[vdso]"]
        .iter()
        .any(|p| library.starts_with(p))
    {
        return false;
    }
    library.starts_with("/data/") || package.is_some_and(|p| library.contains(p))
}

fn new_crash(kind: &str, head: &LogLine, what: String) -> Crash {
    Crash {
        kind: kind.into(),
        time: head.timestamp.clone(),
        pid: head.pid,
        process: None,
        what,
        cause: None,
        app_frame: None,
        top_frame: None,
        count: 1,
    }
}

/// Every pid the log ties to `package` (its main process and `package:suffix` ones): from
/// ActivityManager's `Start proc PID:PKG/…` and `Process PKG (pid N)`, AndroidRuntime's
/// `Process: PKG, PID: N`, an ANR's `PID:`, and a tombstone's `pid: N … >>> PKG <<<`.
/// A crashed process is gone by the time anyone asks, so `pidof` alone would miss it.
pub fn pids_of_package(lines: &[LogLine], package: &str) -> HashSet<u32> {
    let belongs = |name: &str| name == package || name.strip_prefix(package).is_some_and(|r| r.starts_with(':'));
    let mut pids = HashSet::new();
    for (i, l) in lines.iter().enumerate() {
        let m = l.message.as_str();
        if let Some(rest) = m.strip_prefix("Start proc ")
            && let Some((pid, name)) = rest.split_once(':')
            && belongs(name.split('/').next().unwrap_or(""))
        {
            pids.extend(pid.parse::<u32>().ok());
        } else if let Some(rest) = m.strip_prefix("Process: ")
            && let Some((name, pid)) = rest.split_once(", PID: ")
            && belongs(name)
        {
            pids.extend(pid.trim().parse::<u32>().ok());
        } else if let Some(rest) = m.strip_prefix("pid: ")
            && let Some((_, name)) = rest.split_once(">>> ")
            && belongs(name.trim_end_matches(" <<<").trim())
        {
            pids.extend(rest.split(',').next().and_then(|p| p.trim().parse::<u32>().ok()));
        } else if let Some(rest) = m.strip_prefix("ANR in ")
            && belongs(rest.split_whitespace().next().unwrap_or(""))
            && let Some(pid) = lines[i + 1..]
                .iter()
                .take(5)
                .find_map(|n| n.message.strip_prefix("PID: "))
        {
            pids.extend(pid.trim().parse::<u32>().ok());
        }
    }
    pids
}

/// A run of identical lines (same pid, level, tag and message) as one line and its count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run<'a> {
    pub line: &'a LogLine,
    pub count: usize,
}

pub fn collapse_runs<'a>(lines: &[&'a LogLine]) -> Vec<Run<'a>> {
    let mut runs: Vec<Run<'a>> = Vec::new();
    for &line in lines {
        match runs.last_mut() {
            Some(run)
                if run.line.pid == line.pid
                    && run.line.level == line.level
                    && run.line.tag == line.tag
                    && run.line.message == line.message =>
            {
                run.count += 1
            }
            _ => runs.push(Run { line, count: 1 }),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logcat::parse_threadtime_line;

    fn parse(text: &str) -> Vec<LogLine> {
        text.lines().filter_map(parse_threadtime_line).collect()
    }

    #[test]
    fn a_java_crash_keeps_its_exception_frames_and_root_cause() {
        let lines = parse(
            "01-01 10:00:00.000  1200  1300 I ActivityManager: Start proc 77:com.x/u0a1 for activity\n\
             01-01 10:00:01.000    77    77 E AndroidRuntime: FATAL EXCEPTION: main\n\
             01-01 10:00:01.000    77    77 E AndroidRuntime: Process: com.x, PID: 77\n\
             01-01 10:00:01.000    99    99 I Other: interleaved\n\
             01-01 10:00:01.000    77    77 E AndroidRuntime: java.lang.RuntimeException: boom\n\
             01-01 10:00:01.000    77    77 E AndroidRuntime: \tat com.x.A.b(A.java:1)\n\
             01-01 10:00:01.000    77    77 E AndroidRuntime: Caused by: java.io.IOException: disk\n\
             01-01 10:00:01.000    77    77 E AndroidRuntime: \tat com.x.C.d(C.java:2)\n",
        );
        let crashes = find_crashes(&lines);
        assert_eq!(crashes.len(), 1);
        let c = &crashes[0];
        assert_eq!(
            (c.kind.as_str(), c.pid, c.process.as_deref()),
            ("java", 77, Some("com.x"))
        );
        assert_eq!(c.what, "java.lang.RuntimeException: boom");
        assert_eq!(c.cause.as_deref(), Some("java.io.IOException: disk"));
        assert_eq!(c.app_frame.as_deref(), Some("com.x.C.d(C.java:2)"));
        assert_eq!(c.top_frame, None, "the root cause's top frame is the app's");
        assert_eq!(pids_of_package(&lines, "com.x"), HashSet::from([77]));
        assert!(pids_of_package(&lines, "com.xy").is_empty());
    }

    #[test]
    fn identical_consecutive_lines_collapse_with_a_count() {
        let lines = parse(
            "01-01 10:00:00.000     1     1 I T: same\n\
             01-01 10:00:00.100     1     1 I T: same\n\
             01-01 10:00:00.200     1     1 I T: other\n\
             01-01 10:00:00.300     1     1 I T: same\n",
        );
        let refs: Vec<&LogLine> = lines.iter().collect();
        let counts: Vec<usize> = collapse_runs(&refs).iter().map(|r| r.count).collect();
        assert_eq!(counts, [2, 1, 1]);
    }
}
