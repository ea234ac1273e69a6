//! `logcat -v threadtime` lines: `MM-DD HH:MM:SS.mmm  PID  TID L TAG: message`.

/// A log priority, in logcat's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Verbose,
    Debug,
    Info,
    Warn,
    Error,
    Fatal,
    Silent,
}

impl Level {
    pub fn from_char(c: char) -> Option<Level> {
        Some(match c.to_ascii_uppercase() {
            'V' => Level::Verbose,
            'D' => Level::Debug,
            'I' => Level::Info,
            'W' => Level::Warn,
            'E' => Level::Error,
            'F' | 'A' => Level::Fatal,
            'S' => Level::Silent,
            _ => return None,
        })
    }

    pub fn as_char(self) -> char {
        match self {
            Level::Verbose => 'V',
            Level::Debug => 'D',
            Level::Info => 'I',
            Level::Warn => 'W',
            Level::Error => 'E',
            Level::Fatal => 'F',
            Level::Silent => 'S',
        }
    }
}

/// One parsed threadtime line. `timestamp` is `MM-DD HH:MM:SS.mmm`, which sorts as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    pub timestamp: String,
    pub pid: u32,
    pub tid: u32,
    pub level: Level,
    pub tag: String,
    pub message: String,
}

/// Parses one threadtime line; `None` for anything else (buffer markers, other formats).
pub fn parse_threadtime_line(line: &str) -> Option<LogLine> {
    let line = line.trim_end_matches(['\r', '\n']);
    let timestamp = line.get(..18)?;
    let b = timestamp.as_bytes();
    let shape_ok = b[2] == b'-' && b[5] == b' ' && b[8] == b':' && b[11] == b':' && b[14] == b'.';
    if !shape_ok || timestamp.bytes().filter(u8::is_ascii_digit).count() != 13 {
        return None;
    }
    let mut rest = line[18..].trim_start();
    let (pid, r) = split_word(rest)?;
    rest = r.trim_start();
    let (tid, r) = split_word(rest)?;
    rest = r.trim_start();
    let mut chars = rest.chars();
    let level = Level::from_char(chars.next()?)?;
    let rest = chars.as_str().strip_prefix(' ')?;
    // The tag ends at the first ": "; kernel lines have a blank tag padded with spaces.
    let (tag, message) = match rest.split_once(": ") {
        Some((tag, message)) => (tag, message),
        None => (rest.strip_suffix(':').unwrap_or(rest), ""),
    };
    Some(LogLine {
        timestamp: timestamp.to_string(),
        pid: pid.parse().ok()?,
        tid: tid.parse().ok()?,
        level,
        tag: tag.trim().to_string(),
        message: message.to_string(),
    })
}

fn split_word(s: &str) -> Option<(&str, &str)> {
    let end = s.find(' ')?;
    Some((&s[..end], &s[end..]))
}

/// Formats a line as `logcat -v threadtime` prints it.
pub fn format_threadtime(l: &LogLine) -> String {
    format!(
        "{} {:>5} {:>5} {} {}: {}",
        l.timestamp,
        l.pid,
        l.tid,
        l.level.as_char(),
        l.tag,
        l.message
    )
}

/// Each timestamp (`MM-DD HH:MM:SS.mmm`, in log order) with its year, `YYYY-MM-DD HH:MM:SS.mmm`:
/// log lines carry no year, so it is inferred backwards from `today` (`YYYY-MM-DD`, the device's
/// clock). The newest line is this year unless its day is after today; going back, a step from
/// January–March to October–December crosses a New Year (and the other way, a line merged out of
/// order, steps back into the later year). The result sorts as text across New Year.
pub fn with_years(timestamps: &[&str], today: &str) -> Vec<String> {
    let Some((year, today_day)) = today.get(..4).and_then(|y| y.parse::<i32>().ok()).zip(today.get(5..10)) else {
        return timestamps.iter().map(|t| format!("0000-{t}")).collect();
    };
    let month = |t: &str| t.get(..2).and_then(|m| m.parse::<u32>().ok()).unwrap_or(0);
    let mut out = vec![String::new(); timestamps.len()];
    let mut year = year;
    let mut later: Option<&str> = None;
    for (i, t) in timestamps.iter().enumerate().rev() {
        let day = t.get(..5).unwrap_or("");
        match later {
            None if day > today_day => year -= 1,
            Some(next) if month(t) >= 10 && month(next) <= 3 => year -= 1,
            Some(next) if month(t) <= 3 && month(next) >= 10 => year += 1,
            _ => {}
        }
        out[i] = format!("{year:04}-{t}");
        later = Some(t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn years_follow_the_log_back_across_new_year() {
        let ts = [
            "12-31 23:59:58.000",
            "12-31 23:59:59.900",
            "01-01 00:00:00.100",
            "01-01 00:00:02.000",
        ];
        assert_eq!(
            with_years(&ts, "2027-01-01"),
            [
                "2026-12-31 23:59:58.000",
                "2026-12-31 23:59:59.900",
                "2027-01-01 00:00:00.100",
                "2027-01-01 00:00:02.000"
            ]
        );
        // A log that ends before today's date in the year: all this year.
        assert_eq!(
            with_years(&["03-01 10:00:00.000"], "2027-05-01"),
            ["2027-03-01 10:00:00.000"]
        );
        // A newest line after today's day is last year's.
        assert_eq!(
            with_years(&["12-30 10:00:00.000"], "2027-01-02"),
            ["2026-12-30 10:00:00.000"]
        );
    }

    proptest! {
        /// Any log of increasing times across up to three New Years, read on its last day: the
        /// inferred years are the true ones, so the dated keys sort as the times do.
        #[test]
        fn inferred_years_are_the_true_ones(steps in prop::collection::vec(0u32..(40 * 24 * 3600), 1..80)) {
            let start = chrono::NaiveDate::from_ymd_opt(2024, 11, 1).unwrap().and_hms_opt(0, 0, 0).unwrap();
            let mut t = start;
            let mut truth = Vec::new();
            for s in steps {
                t += chrono::Duration::seconds(i64::from(s));
                truth.push(t);
            }
            let plain: Vec<String> = truth.iter().map(|t| t.format("%m-%d %H:%M:%S%.3f").to_string()).collect();
            let refs: Vec<&str> = plain.iter().map(String::as_str).collect();
            let today = truth.last().unwrap().format("%Y-%m-%d").to_string();
            let dated = with_years(&refs, &today);
            for (d, t) in dated.iter().zip(&truth) {
                prop_assert_eq!(d, &t.format("%Y-%m-%d %H:%M:%S%.3f").to_string());
            }
        }
    }

    #[test]
    fn parses_tag_with_spaces_and_blank_kernel_tag() {
        let l =
            parse_threadtime_line("03-13 10:01:23.827  7711  7767 E AndroidRuntime: FATAL EXCEPTION: main").unwrap();
        assert_eq!((l.pid, l.tid, l.level), (7711, 7767, Level::Error));
        assert_eq!(l.tag, "AndroidRuntime");
        assert_eq!(l.message, "FATAL EXCEPTION: main");
        let k = parse_threadtime_line("03-13 10:01:22.012     0     0 E         : c3 SELinux").unwrap();
        assert_eq!(k.tag, "");
        assert_eq!(k.message, "c3 SELinux");
        assert!(parse_threadtime_line("--------- beginning of main").is_none());
        assert_eq!(parse_threadtime_line(&format_threadtime(&l)), Some(l));
    }
}
