//! The console's replies, parsed: pure (no i/o), so the fuzz targets include this file by path.

/// The token file's name, in the home folder (or `ANDROID_EMULATOR_HOME`).
pub const TOKEN_FILE: &str = ".emulator_console_auth_token";

/// One reply: the lines before its closing line, and how it closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub lines: Vec<String>,
    /// `None` for `OK`; the text after `KO:` otherwise.
    pub refused: Option<String>,
}

impl Reply {
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }
}

/// Parses one reply from the start of `buf`: the reply and the bytes it used once its closing
/// line is in, `None` while more is needed. Pure, and fuzzed.
pub fn parse_reply(buf: &[u8]) -> Option<(Reply, usize)> {
    let mut lines = Vec::new();
    let mut at = 0;
    while let Some(end) = buf[at..].iter().position(|&b| b == b'\n') {
        let raw = &buf[at..at + end];
        at += end + 1;
        let line = String::from_utf8_lossy(raw.strip_suffix(b"\r").unwrap_or(raw)).into_owned();
        if line == "OK" || line.starts_with("OK:") {
            if let Some(said) = line.strip_prefix("OK:") {
                lines.push(said.trim().to_string());
            }
            return Some((Reply { lines, refused: None }, at));
        }
        if line == "KO" || line.starts_with("KO:") {
            let why = line[2..].trim_start_matches(':').trim().to_string();
            return Some((
                Reply {
                    lines,
                    refused: Some(why),
                },
                at,
            ));
        }
        lines.push(line);
    }
    None
}

/// The token file a greeting names: the quoted path on the line after "you can find your
/// <auth_token> in".
pub fn named_token_path(greeting: &Reply) -> Option<String> {
    let at = greeting.lines.iter().position(|l| l.contains("<auth_token> in"))?;
    let path = greeting.lines.get(at + 1)?.trim().trim_matches('\'');
    path.ends_with(TOKEN_FILE).then(|| path.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape a real emulator's console prints (its documentation's transcript).
    const GREETING: &[u8] = b"Android Console: Authentication required\r\nAndroid Console: type 'auth <auth_token>' to authenticate\r\nAndroid Console: you can find your <auth_token> in \r\n'/home/me/.emulator_console_auth_token'\r\nOK\r\n";

    #[test]
    fn replies_close_on_ok_or_ko_and_keep_what_follows() {
        let (greeting, used) = parse_reply(GREETING).unwrap();
        assert_eq!(used, GREETING.len());
        assert_eq!(greeting.refused, None);
        assert_eq!(
            named_token_path(&greeting).as_deref(),
            Some("/home/me/.emulator_console_auth_token")
        );
        let two = b"KO: unknown command, try 'help'\r\nI am alive!\r\nOK\r\n";
        let (first, used) = parse_reply(two).unwrap();
        assert_eq!(first.refused.as_deref(), Some("unknown command, try 'help'"));
        let (second, _) = parse_reply(&two[used..]).unwrap();
        assert_eq!(second.lines, ["I am alive!"]);
        assert_eq!(
            parse_reply(b"OK: killing emulator, bye bye\r\n").unwrap().0.lines,
            ["killing emulator, bye bye"]
        );
        assert_eq!(
            parse_reply(b"Android Console: type 'help'\r\nO"),
            None,
            "more is needed"
        );
        assert_eq!(parse_reply(b"OK"), None, "a line ends with its newline");
    }
}
