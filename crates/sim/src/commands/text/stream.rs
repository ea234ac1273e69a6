//! Byte and stream tools: `tr`, `base64`, `yes`, `xargs`.

use std::sync::Arc;

use base64::Engine;

use super::opts::{Parsed, Spec};
use super::{Input, WRITER_BYTES};
use crate::Simulator;
use crate::shell::Output;

const TR: Spec = Spec {
    name: "tr",
    flags: "cCdst",
    valued: "",
    error_code: 1,
    stop_at_operand: false,
};
const BASE64: Spec = Spec {
    name: "base64",
    flags: "di",
    valued: "w",
    error_code: 1,
    stop_at_operand: false,
};
const YES: Spec = Spec {
    name: "yes",
    flags: "",
    valued: "",
    error_code: 1,
    stop_at_operand: true,
};
const XARGS: Spec = Spec {
    name: "xargs",
    flags: "0rt",
    valued: "n",
    error_code: 1,
    stop_at_operand: true,
};

pub fn spec(program: &str) -> Option<&'static Spec> {
    [&TR, &BASE64, &YES].into_iter().find(|s| s.name == program)
}

pub fn run(name: &str, p: &Parsed, inputs: &[Input]) -> Option<Output> {
    let data: Vec<u8> = inputs.iter().flat_map(|i| i.data.iter().copied()).collect();
    Some(match name {
        "tr" => tr(p, &data),
        "base64" => base64(p, &data),
        "yes" => {
            let mut line = if p.operands.is_empty() {
                "y".to_string()
            } else {
                p.operands.join(" ")
            };
            line.push('\n');
            let times = (WRITER_BYTES / line.len()).max(1);
            Output {
                stdout: line.repeat(times).into_bytes(),
                keeps_running: true,
                ..Output::default()
            }
        }
        _ => return None,
    })
}

/// A `tr` set: ranges (`a-z`), classes (`[:upper:]`) and escapes (`\n`, `\\`, `\NNN`).
fn expand_set(set: &str) -> Vec<char> {
    let chars: Vec<char> = set.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '[' && chars.get(i + 1) == Some(&':') {
            let rest: String = chars[i + 2..].iter().collect();
            if let Some(end) = rest.find(":]") {
                let class = &rest[..end];
                let test: fn(&u8) -> bool = match class {
                    "alpha" => u8::is_ascii_alphabetic,
                    "digit" => u8::is_ascii_digit,
                    "alnum" => u8::is_ascii_alphanumeric,
                    "upper" => u8::is_ascii_uppercase,
                    "lower" => u8::is_ascii_lowercase,
                    "space" => |b: &u8| b.is_ascii_whitespace() || *b == 11,
                    "blank" => |b: &u8| *b == b' ' || *b == b'\t',
                    "punct" => u8::is_ascii_punctuation,
                    "xdigit" => u8::is_ascii_hexdigit,
                    "cntrl" => u8::is_ascii_control,
                    "print" => |b: &u8| (32..127).contains(b),
                    "graph" => u8::is_ascii_graphic,
                    _ => |_: &u8| false,
                };
                out.extend((0u8..128).filter(test).map(char::from));
                i += 2 + end + 2;
                continue;
            }
        }
        let (c, next) = set_char(&chars, i);
        if chars.get(next) == Some(&'-') && next + 1 < chars.len() {
            let (end, after) = set_char(&chars, next + 1);
            out.extend((c..=end).filter(|_| c <= end));
            i = after;
        } else {
            out.push(c);
            i = next;
        }
    }
    out
}

fn set_char(chars: &[char], i: usize) -> (char, usize) {
    if chars[i] != '\\' || i + 1 >= chars.len() {
        return (chars[i], i + 1);
    }
    let c = chars[i + 1];
    let simple = match c {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        '\\' => '\\',
        'a' => '\u{7}',
        'b' => '\u{8}',
        'f' => '\u{c}',
        'v' => '\u{b}',
        '0'..='7' => {
            let digits: String = chars[i + 1..].iter().take(3).take_while(|d| d.is_digit(8)).collect();
            let value = u32::from_str_radix(&digits, 8).unwrap_or(0);
            return (char::from_u32(value).unwrap_or('\0'), i + 1 + digits.len());
        }
        other => other,
    };
    (simple, i + 2)
}

fn tr(p: &Parsed, data: &[u8]) -> Output {
    let usage = |m: &str| TR.usage(m);
    let (delete, squeeze) = (p.has('d'), p.has('s'));
    let sets: Vec<Vec<char>> = p.operands.iter().map(|s| expand_set(s)).collect();
    let needed = if delete && !squeeze {
        1
    } else if delete || !squeeze {
        2
    } else {
        1
    };
    if sets.len() < needed {
        return usage(&format!("Needs {needed} argument{}", if needed > 1 { "s" } else { "" }));
    }
    if sets.len() > 2 {
        return usage("Max 2 arguments");
    }
    let complement = p.has('c') || p.has('C');
    let in_set1 = |c: char| sets[0].contains(&c) != complement;
    let text = String::from_utf8_lossy(data);
    let mut out = String::new();
    let squeeze_set = if delete || sets.len() == 1 {
        sets.last()
    } else {
        sets.get(1)
    };
    let mut last: Option<char> = None;
    for c in text.chars() {
        let mapped = if delete {
            if in_set1(c) {
                continue;
            }
            c
        } else if sets.len() == 2 && in_set1(c) {
            let to = &sets[1];
            let index = if complement {
                to.len() - 1
            } else {
                sets[0].iter().position(|&x| x == c).unwrap_or(0)
            };
            to.get(index).or(to.last()).copied().unwrap_or(c)
        } else {
            c
        };
        if squeeze && last == Some(mapped) && squeeze_set.is_some_and(|s| s.contains(&mapped)) {
            continue;
        }
        out.push(mapped);
        last = Some(mapped);
    }
    Output::ok(out)
}

fn base64(p: &Parsed, data: &[u8]) -> Output {
    let engine = base64::engine::general_purpose::STANDARD;
    if p.has('d') {
        let text: Vec<u8> = data
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .filter(|b| !p.has('i') || b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
            .collect();
        return match engine.decode(&text) {
            Ok(bytes) => Output::ok(bytes),
            Err(_) => Output::err(1, "base64: bad input\n"),
        };
    }
    let wrap = match p.value('w').map(|w| BASE64.number(w)) {
        Some(Ok(w)) => w.max(0) as usize,
        Some(Err(e)) => return e,
        None => 76,
    };
    let encoded = engine.encode(data);
    let mut out = String::new();
    if wrap == 0 {
        out.push_str(&encoded);
    } else {
        for chunk in encoded.as_bytes().chunks(wrap) {
            out.push_str(&String::from_utf8_lossy(chunk));
            out.push('\n');
        }
    }
    if (wrap == 0 || encoded.is_empty()) && !out.ends_with('\n') {
        out.push('\n');
    }
    Output::ok(out)
}

/// `xargs [-0rt] [-n N] [COMMAND [ARG...]]`: runs COMMAND (default `echo`) with the words of
/// stdin appended, N at a time.
pub async fn xargs(sim: &Arc<Simulator>, args: &[&str], stdin: &[u8]) -> Output {
    let p = match XARGS.parse(args) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let per_run = match p.value('n').map(|n| XARGS.number(n)) {
        Some(Ok(n)) if n > 0 => n as usize,
        Some(Ok(_)) => return XARGS.fail("-n must be at least 1"),
        Some(Err(e)) => return e,
        None => usize::MAX,
    };
    let text = String::from_utf8_lossy(stdin);
    let words: Vec<&str> = if p.has('0') {
        text.split('\0').filter(|w| !w.is_empty()).collect()
    } else {
        text.split_whitespace().collect()
    };
    let command: Vec<String> = if p.operands.is_empty() {
        vec!["echo".into()]
    } else {
        p.operands.clone()
    };
    let mut out = Output::default();
    if words.is_empty() && p.has('r') {
        return out;
    }
    let batches: Vec<&[&str]> = if words.is_empty() {
        vec![&[]]
    } else {
        words.chunks(per_run.min(words.len())).collect()
    };
    for batch in batches {
        let argv: Vec<String> = command
            .iter()
            .cloned()
            .chain(batch.iter().map(|w| w.to_string()))
            .collect();
        if p.has('t') {
            out.stderr.extend_from_slice(format!("{}\n", argv.join(" ")).as_bytes());
        }
        let ran = Box::pin(crate::commands::run(sim, &argv, Vec::new())).await;
        out.stdout.extend_from_slice(&ran.stdout);
        out.stderr.extend_from_slice(&ran.stderr);
        match ran.code {
            0 => {}
            127 => {
                out.code = 127;
                return out;
            }
            _ => out.code = 123,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Debian's toybox has no `tr` (Android's has), so these pin it to toybox's documented behaviour.
    fn tr_of(args: &[&str], input: &str) -> (String, i32) {
        let out = tr(&TR.parse(args).unwrap(), input.as_bytes());
        (
            String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap(),
            out.code,
        )
    }

    #[test]
    fn tr_maps_deletes_squeezes_and_complements() {
        assert_eq!(tr_of(&["a-z", "A-Z"], "hello\n").0, "HELLO\n");
        assert_eq!(tr_of(&["[:lower:]", "[:upper:]"], "abc\n").0, "ABC\n");
        assert_eq!(tr_of(&["-d", "0-9"], "a1b22c\n").0, "abc\n");
        assert_eq!(tr_of(&["-s", " "], "a   b  c\n").0, "a b c\n");
        assert_eq!(tr_of(&["-cd", "a-z\\n"], "a1-b!\n").0, "ab\n");
        assert_eq!(tr_of(&[":", "\\n"], "a:b\n").0, "a\nb\n");
        assert_eq!(
            tr_of(&["abc", "x"], "abcd\n").0,
            "xxxd\n",
            "a short SET2 repeats its last char"
        );
        let (msg, code) = tr_of(&["a"], "x");
        assert_eq!((msg.as_str(), code), ("tr: Needs 2 arguments (see \"tr --help\")\n", 1));
    }
}
