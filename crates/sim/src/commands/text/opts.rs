//! Option parsing as toybox does it (lib/args.c): grouped flags (`-in`), values attached or
//! separate (`-A4`, `-A 4`), options anywhere among the operands unless the command stops at
//! its first operand, `--` ends them, and toybox's own error messages.

use crate::shell::Output;

/// What a command accepts.
pub struct Spec {
    pub name: &'static str,
    /// Flags without a value.
    pub flags: &'static str,
    /// Flags that take a value.
    pub valued: &'static str,
    /// Exit code of a usage error (2 for grep and sort, 1 for most).
    pub error_code: i32,
    /// Options end at the first operand (xargs: the rest is the command to run).
    pub stop_at_operand: bool,
}

/// Parsed command line: flags and values in the order given, then the operands.
#[derive(Debug, Default)]
pub struct Parsed {
    pub flags: Vec<char>,
    pub values: Vec<(char, String)>,
    pub operands: Vec<String>,
}

impl Parsed {
    pub fn has(&self, flag: char) -> bool {
        self.flags.contains(&flag) || self.values.iter().any(|(f, _)| *f == flag)
    }

    /// The last value given for `flag`.
    pub fn value(&self, flag: char) -> Option<&str> {
        self.values
            .iter()
            .rev()
            .find(|(f, _)| *f == flag)
            .map(|(_, v)| v.as_str())
    }

    /// Every value given for `flag`, in order (`grep -e a -e b`).
    pub fn all(&self, flag: char) -> Vec<&str> {
        self.values
            .iter()
            .filter(|(f, _)| *f == flag)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

impl Spec {
    pub fn parse(&self, args: &[&str]) -> Result<Parsed, Output> {
        let mut parsed = Parsed::default();
        let mut i = 0;
        let mut options_over = false;
        while i < args.len() {
            let arg = args[i];
            i += 1;
            if options_over || arg == "-" || !arg.starts_with('-') {
                parsed.operands.push(arg.to_string());
                options_over |= self.stop_at_operand;
                continue;
            }
            if arg == "--" {
                options_over = true;
                continue;
            }
            if let Some(long) = arg.strip_prefix("--") {
                return Err(self.usage(&format!("Unknown option '{long}'")));
            }
            for (at, flag) in arg[1..].char_indices() {
                if self.valued.contains(flag) {
                    let rest = &arg[1 + at + flag.len_utf8()..];
                    let value = if !rest.is_empty() {
                        rest.to_string()
                    } else if let Some(next) = args.get(i) {
                        i += 1;
                        next.to_string()
                    } else {
                        return Err(self.usage(&format!("Missing argument to -{flag}")));
                    };
                    parsed.values.push((flag, value));
                    break;
                } else if self.flags.contains(flag) {
                    parsed.flags.push(flag);
                } else {
                    return Err(self.usage(&format!("Unknown option '{}'", &arg[1 + at..])));
                }
            }
        }
        Ok(parsed)
    }

    /// `NAME: MESSAGE (see "NAME --help")`, toybox's usage error.
    pub fn usage(&self, message: &str) -> Output {
        Output::err(
            self.error_code,
            format!("{}: {message} (see \"{} --help\")\n", self.name, self.name),
        )
    }

    /// `NAME: MESSAGE`, toybox's error_exit.
    pub fn fail(&self, message: &str) -> Output {
        Output::err(self.error_code, format!("{}: {message}\n", self.name))
    }

    /// A numeric option value, with toybox's message when it is not one.
    pub fn number(&self, value: &str) -> Result<i64, Output> {
        value.parse().map_err(|_| self.fail(&format!("not integer: {value}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GREP: Spec = Spec {
        name: "grep",
        flags: "icnv",
        valued: "Ae",
        error_code: 2,
        stop_at_operand: false,
    };

    #[test]
    fn flags_group_values_attach_and_options_follow_operands() {
        let p = GREP.parse(&["-in", "-A4", "pat", "-c", "-e", "x", "--", "-v"]).unwrap();
        assert_eq!(p.flags, ['i', 'n', 'c']);
        assert_eq!(p.value('A'), Some("4"));
        assert_eq!(p.all('e'), ["x"]);
        assert_eq!(p.operands, ["pat", "-v"]);
    }

    #[test]
    fn errors_read_as_toybox_prints_them() {
        let err = |args: &[&str]| String::from_utf8(GREP.parse(args).unwrap_err().stderr).unwrap();
        assert_eq!(err(&["-z"]), "grep: Unknown option 'z' (see \"grep --help\")\n");
        assert_eq!(err(&["-A"]), "grep: Missing argument to -A (see \"grep --help\")\n");
        assert_eq!(
            err(&["--color"]),
            "grep: Unknown option 'color' (see \"grep --help\")\n"
        );
    }
}
