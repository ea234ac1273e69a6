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

#[cfg(test)]
mod tests {
    use super::*;

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
