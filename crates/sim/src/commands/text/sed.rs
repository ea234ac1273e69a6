//! toybox `sed`, the part scripts use: `s///` (flags g, p, N, i), `p`, `d`, `q`, `y///`, `=`;
//! addresses by number, `$` and `/regex/`, ranges and `!`; `-n`, `-e`, `-E`/`-r`, `-i`.
//! Any other command is refused with a message, never skipped.

use regex::{Captures, Regex};

use super::lines_of;
use super::opts::{Parsed, Spec};
use super::posix_regex::{Flavor, translate};
use crate::shell::Output;

pub const SPEC: Spec = Spec {
    name: "sed",
    flags: "nErsz",
    valued: "ef",
    error_code: 1,
    stop_at_operand: false,
};

#[derive(Debug)]
enum Address {
    Line(usize),
    Last,
    Match(Regex),
}

#[derive(Debug)]
enum Action {
    Substitute {
        regex: Regex,
        replacement: String,
        global: bool,
        nth: usize,
        print: bool,
    },
    Print,
    Delete,
    Quit,
    LineNumber,
    Translate(Vec<(char, char)>),
}

#[derive(Debug)]
struct Command {
    from: Option<Address>,
    to: Option<Address>,
    negate: bool,
    action: Action,
}

/// Splits the script text into commands; `script` is every `-e` joined by newlines.
fn compile(script: &str, flavor: Flavor) -> Result<Vec<Command>, String> {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let mut commands = Vec::new();
    loop {
        while chars.get(i).is_some_and(|c| c.is_whitespace() || *c == ';') {
            i += 1;
        }
        if i >= chars.len() {
            return Ok(commands);
        }
        let start = i;
        let from = address(&chars, &mut i, flavor)?;
        let to = match (&from, chars.get(i)) {
            (Some(_), Some(',')) => {
                i += 1;
                Some(address(&chars, &mut i, flavor)?.ok_or("unknown command")?)
            }
            _ => None,
        };
        let negate = chars.get(i) == Some(&'!');
        if negate {
            i += 1;
        }
        let Some(&c) = chars.get(i) else {
            return Err(format!(
                "no command after '{}'",
                chars[start..].iter().collect::<String>()
            ));
        };
        i += 1;
        let action = match c {
            'p' => Action::Print,
            'd' => Action::Delete,
            'q' => Action::Quit,
            '=' => Action::LineNumber,
            's' => {
                let delim = *chars.get(i).ok_or("unterminated s")?;
                i += 1;
                let pattern = delimited(&chars, &mut i, delim)?;
                let replacement = delimited(&chars, &mut i, delim)?;
                let (mut global, mut nth, mut print, mut icase) = (false, 1, false, false);
                while let Some(&f) = chars.get(i) {
                    match f {
                        'g' => global = true,
                        'p' => print = true,
                        'i' | 'I' => icase = true,
                        d if d.is_ascii_digit() => nth = d.to_digit(10).unwrap_or(1) as usize,
                        _ => break,
                    }
                    i += 1;
                }
                let translated = translate(&pattern, flavor).map_err(|e| format!("bad regex '{pattern}': {e}"))?;
                let translated = if icase { format!("(?i){translated}") } else { translated };
                Action::Substitute {
                    regex: Regex::new(&translated).map_err(|e| e.to_string())?,
                    replacement,
                    global,
                    nth: nth.max(1),
                    print,
                }
            }
            'y' => {
                let delim = *chars.get(i).ok_or("unterminated y")?;
                i += 1;
                let from: Vec<char> = delimited(&chars, &mut i, delim)?.chars().collect();
                let to: Vec<char> = delimited(&chars, &mut i, delim)?.chars().collect();
                if from.len() != to.len() {
                    return Err("y/// strings differ in length".into());
                }
                Action::Translate(from.into_iter().zip(to).collect())
            }
            other => return Err(format!("command '{other}' is not supported by the simulator")),
        };
        while chars.get(i).is_some_and(|c| *c == ' ' || *c == '\t') {
            i += 1;
        }
        if !matches!(chars.get(i), None | Some(';' | '\n' | '}')) {
            return Err(format!("extra characters after command '{c}'"));
        }
        commands.push(Command {
            from,
            to,
            negate,
            action,
        });
    }
}

fn address(chars: &[char], i: &mut usize, flavor: Flavor) -> Result<Option<Address>, String> {
    match chars.get(*i) {
        Some('$') => {
            *i += 1;
            Ok(Some(Address::Last))
        }
        Some(d) if d.is_ascii_digit() => {
            let start = *i;
            while chars.get(*i).is_some_and(char::is_ascii_digit) {
                *i += 1;
            }
            let n: String = chars[start..*i].iter().collect();
            Ok(Some(Address::Line(n.parse().map_err(|_| "bad line number")?)))
        }
        Some('/') => {
            *i += 1;
            let pattern = delimited(chars, i, '/')?;
            let translated = translate(&pattern, flavor).map_err(|e| format!("bad regex '{pattern}': {e}"))?;
            Ok(Some(Address::Match(
                Regex::new(&translated).map_err(|e| e.to_string())?,
            )))
        }
        _ => Ok(None),
    }
}

/// Text up to the next unescaped `delim`; `\delim` becomes `delim`, other escapes stay.
fn delimited(chars: &[char], i: &mut usize, delim: char) -> Result<String, String> {
    let mut out = String::new();
    while let Some(&c) = chars.get(*i) {
        *i += 1;
        if c == delim {
            return Ok(out);
        }
        if c == '\\' && chars.get(*i) == Some(&delim) {
            out.push(delim);
            *i += 1;
        } else if c == '\\' && *i < chars.len() {
            out.push('\\');
            out.push(chars[*i]);
            *i += 1;
        } else {
            out.push(c);
        }
    }
    Err(format!("unterminated address regex or command (missing {delim})"))
}

/// `&` is the match, `\1`…`\9` the groups, `\n` a newline, `\X` a literal X.
fn expand(replacement: &str, caps: &Captures) -> String {
    let mut out = String::new();
    let mut chars = replacement.chars();
    while let Some(c) = chars.next() {
        match c {
            '&' => out.push_str(&caps[0]),
            '\\' => match chars.next() {
                Some(d @ '0'..='9') => {
                    out.push_str(caps.get(d as usize - '0' as usize).map_or("", |m| m.as_str()));
                }
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            },
            c => out.push(c),
        }
    }
    out
}

fn substitute(line: &str, regex: &Regex, replacement: &str, global: bool, nth: usize) -> Option<String> {
    let mut out = String::new();
    let mut last = 0;
    let mut changed = false;
    for (n, caps) in regex.captures_iter(line).enumerate() {
        let m = caps.get(0).expect("group 0");
        if n + 1 < nth {
            continue;
        }
        out.push_str(&line[last..m.start()]);
        out.push_str(&expand(replacement, &caps));
        last = m.end();
        changed = true;
        if !global {
            break;
        }
    }
    changed.then(|| {
        out.push_str(&line[last..]);
        out
    })
}

/// Runs the script over `data`; `Err` is toybox's message.
pub fn sed(p: &Parsed, data: &[u8]) -> Result<Output, Output> {
    let mut operands = p.operands.iter();
    let mut scripts: Vec<String> = p.all('e').iter().map(|s| s.to_string()).collect();
    if scripts.is_empty() && p.value('f').is_none() {
        scripts.push(operands.next().ok_or_else(|| SPEC.fail("no pattern"))?.clone());
    }
    let flavor = if p.has('E') || p.has('r') {
        Flavor::Extended
    } else {
        Flavor::Basic
    };
    let script = scripts.join("\n");
    let commands = compile(&script, flavor).map_err(|e| SPEC.fail(&format!("bad pattern '{script}': {e}")))?;
    let lines = lines_of(data);
    let quiet = p.has('n');
    // The last line prints without a newline when it had none.
    let unterminated = !data.is_empty() && !data.ends_with(b"\n");
    let mut out = Vec::new();
    let mut active = vec![false; commands.len()];
    // Where the last line's output starts.
    let mut before_last = usize::MAX;
    'lines: for (n, line) in lines.iter().enumerate() {
        let number = n + 1;
        let last = number == lines.len();
        if last {
            before_last = out.len();
        }
        let mut text = String::from_utf8_lossy(line).into_owned();
        let hits = |a: &Address, text: &str| match a {
            Address::Line(l) => *l == number,
            Address::Last => last,
            Address::Match(r) => r.is_match(text),
        };
        for (k, cmd) in commands.iter().enumerate() {
            let selected = match (&cmd.from, &cmd.to) {
                (None, _) => true,
                (Some(from), None) => hits(from, &text),
                (Some(from), Some(to)) => {
                    if active[k] {
                        let ends = match to {
                            Address::Line(l) => number >= *l,
                            _ => hits(to, &text),
                        };
                        active[k] = !ends;
                        true
                    } else if hits(from, &text) {
                        active[k] = !matches!(to, Address::Line(l) if *l <= number);
                        true
                    } else {
                        false
                    }
                }
            };
            if selected == cmd.negate {
                continue;
            }
            match &cmd.action {
                Action::Print => {
                    out.extend_from_slice(text.as_bytes());
                    out.push(b'\n');
                }
                Action::Delete => continue 'lines,
                Action::Quit => {
                    if !quiet {
                        out.extend_from_slice(text.as_bytes());
                        out.push(b'\n');
                    }
                    break 'lines;
                }
                Action::LineNumber => out.extend_from_slice(format!("{number}\n").as_bytes()),
                Action::Translate(map) => {
                    text = text
                        .chars()
                        .map(|c| map.iter().find(|(f, _)| *f == c).map_or(c, |(_, t)| *t))
                        .collect();
                }
                Action::Substitute {
                    regex,
                    replacement,
                    global,
                    nth,
                    print,
                } => {
                    if let Some(new) = substitute(&text, regex, replacement, *global, *nth) {
                        text = new;
                        if *print {
                            out.extend_from_slice(text.as_bytes());
                            out.push(b'\n');
                        }
                    }
                }
            }
        }
        if !quiet {
            out.extend_from_slice(text.as_bytes());
            out.push(b'\n');
        }
    }
    if unterminated && out.len() > before_last && out.ends_with(b"\n") {
        out.pop();
    }
    Ok(Output::ok(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str], input: &str) -> String {
        let p = SPEC.parse(args).unwrap();
        String::from_utf8(sed(&p, input.as_bytes()).unwrap().stdout).unwrap()
    }

    #[test]
    fn substitutes_addresses_and_ranges() {
        assert_eq!(run(&["s/a/A/g"], "banana\n"), "bAnAnA\n");
        assert_eq!(run(&["-n", "2,3p"], "1\n2\n3\n4\n"), "2\n3\n");
        assert_eq!(run(&["/b/,/d/d"], "a\nb\nc\nd\ne\n"), "a\ne\n");
        assert_eq!(run(&["$!d"], "a\nb\n"), "b\n");
        assert_eq!(run(&["-E", "s/(a)(b)/\\2\\1/"], "ab\n"), "ba\n");
        assert_eq!(run(&["s|/|_|g"], "/a/b\n"), "_a_b\n");
        assert_eq!(run(&["2q"], "1\n2\n3\n"), "1\n2\n");
    }

    #[test]
    fn unsupported_commands_are_refused() {
        let p = SPEC.parse(&["a\\text"]).unwrap();
        let err = String::from_utf8(sed(&p, b"x\n").unwrap_err().stderr).unwrap();
        assert!(err.contains("not supported by the simulator"), "{err}");
    }
}
