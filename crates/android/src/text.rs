//! The string helpers every layer shares: `cut`, the one cut of a string to a length; `echoed`,
//! a caller's string as errors quote it; and quoting for the device's `sh` (mksh on Android,
//! toybox's sh, or the simulator's): every string a caller supplies goes through `quote`, so the
//! shell sees it as one literal word.

/// The first `max` chars of `text`, marked with `…` when cut (the whole text stays in the cache).
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// A caller's string as errors echo it: its first 80 chars (`cut`, the one cut) and,
/// when cut, how long it was, so no answer outgrows the budget.
pub fn echoed(text: &str) -> String {
    let head = cut(text, 80);
    if head.len() == text.len() {
        head
    } else {
        format!("{head} ({} chars)", text.chars().count())
    }
}

/// Wraps `value` in single quotes; a single quote inside becomes `'\''`. Nothing is special
/// between single quotes in POSIX sh, so `$`, backquotes, `;`, `|`, `&`, newlines and globs
/// all stay literal.
pub fn quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('\'');
    for c in value.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// Builds a command line from a program and its arguments, quoting each argument.
pub fn command<'a>(program: &str, args: impl IntoIterator<Item = &'a str>) -> String {
    let mut line = program.to_string();
    for arg in args {
        line.push(' ');
        line.push_str(&quote(arg));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metacharacters_stay_inside_one_literal_word() {
        assert_eq!(quote("plain"), "'plain'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote("a; reboot $(id) `x` | & > *"), "'a; reboot $(id) `x` | & > *'");
        assert_eq!(command("getprop", ["ro.build.", "x y"]), "getprop 'ro.build.' 'x y'");
    }
}
