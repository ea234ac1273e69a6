//! Line tools: `wc`, `head`, `tail`, `cut`, `sort`, `uniq`, `rev`, `tac`.

use std::cmp::Ordering;

use super::opts::{Parsed, Spec};
use super::{Input, lines_of};
use crate::shell::Output;

const fn spec_of(name: &'static str, flags: &'static str, valued: &'static str, error_code: i32) -> Spec {
    Spec {
        name,
        flags,
        valued,
        error_code,
        stop_at_operand: false,
    }
}

const SPECS: &[Spec] = &[
    spec_of("wc", "lwcm", "", 1),
    spec_of("head", "qv", "nc", 1),
    spec_of("tail", "qv", "nc", 1),
    spec_of("cut", "s", "bcfd", 1),
    spec_of("sort", "rnufbs", "kt", 2),
    spec_of("uniq", "cdui", "", 1),
    spec_of("rev", "", "", 1),
    spec_of("tac", "", "", 1),
];

pub fn spec(program: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.name == program)
}

pub fn run(name: &str, p: &Parsed, inputs: &[Input]) -> Option<Output> {
    let all = || -> Vec<u8> { inputs.iter().flat_map(|i| i.data.iter().copied()).collect() };
    let spec = spec(name)?;
    Some(
        match name {
            "wc" => wc(p, inputs),
            "head" | "tail" => inputs_with_headers(p, inputs, |data| head_tail(spec, p, data)),
            "cut" => cut(spec, p, &all()),
            "sort" => sort(spec, p, &all()),
            "uniq" => Ok(uniq(p, &all())),
            "rev" => Ok(each_line(&all(), |l| l.iter().rev().copied().collect())),
            "tac" => {
                // Each line keeps its own newline: a last line without one runs into the next.
                let data = all();
                let mut lines: Vec<&[u8]> = data.split_inclusive(|&b| b == b'\n').collect();
                lines.reverse();
                Ok(Output::ok(lines.concat()))
            }
            _ => return None,
        }
        .unwrap_or_else(|e| e),
    )
}

fn join_lines(lines: &[&[u8]]) -> Output {
    let mut out = Vec::new();
    for l in lines {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    Output::ok(out)
}

fn each_line(data: &[u8], f: impl Fn(&[u8]) -> Vec<u8>) -> Output {
    let changed: Vec<Vec<u8>> = lines_of(data).into_iter().map(f).collect();
    join_lines(&changed.iter().map(Vec::as_slice).collect::<Vec<_>>())
}

fn wc(p: &Parsed, inputs: &[Input]) -> Result<Output, Output> {
    let wanted: Vec<char> = match ['l', 'w', 'c', 'm']
        .into_iter()
        .filter(|f| p.has(*f))
        .collect::<Vec<_>>()
    {
        none if none.is_empty() => vec!['l', 'w', 'c'],
        some => some,
    };
    let named = !p.operands.is_empty();
    let mut totals = [0usize; 4];
    let mut out = String::new();
    let mut row = |counts: [usize; 4], name: Option<&str>| {
        let cells: Vec<String> = wanted
            .iter()
            .map(|f| {
                let n = counts[['l', 'w', 'c', 'm'].iter().position(|x| x == f).unwrap_or(0)];
                if wanted.len() > 1 {
                    format!("{n:7}")
                } else {
                    n.to_string()
                }
            })
            .collect();
        out.push_str(&cells.join(" "));
        if let Some(name) = name {
            out.push(' ');
            out.push_str(name);
        }
        out.push('\n');
    };
    for input in inputs {
        let text = String::from_utf8_lossy(&input.data);
        let counts = [
            input.data.iter().filter(|&&b| b == b'\n').count(),
            text.split_whitespace().count(),
            input.data.len(),
            text.chars().count(),
        ];
        for (t, c) in totals.iter_mut().zip(counts) {
            *t += c;
        }
        let name = if p.operands.is_empty() {
            None
        } else {
            Some(input.name.as_str())
        };
        row(counts, name.map(|n| if n == "(standard input)" { "-" } else { n }));
    }
    if named && p.operands.len() > 1 {
        row(totals, Some("total"));
    }
    Ok(Output::ok(out))
}

/// Runs `f` on each input; with several, each gets a `==> NAME <==` header as toybox prints.
fn inputs_with_headers(
    p: &Parsed,
    inputs: &[Input],
    f: impl Fn(&[u8]) -> Result<Vec<u8>, Output>,
) -> Result<Output, Output> {
    let headers = (p.operands.len() > 1 || p.has('v')) && !p.has('q');
    let mut out = Vec::new();
    for (n, input) in inputs.iter().enumerate() {
        if headers {
            let name = if input.name == "(standard input)" {
                "standard input"
            } else {
                &input.name
            };
            let gap = if n > 0 { "\n" } else { "" };
            out.extend_from_slice(format!("{gap}==> {name} <==\n").as_bytes());
        }
        out.extend_from_slice(&f(&input.data)?);
    }
    Ok(Output::ok(out))
}

/// `-n N` lines or `-c N` bytes from the start (head) or the end (tail; `+N` counts from the start).
fn head_tail(spec: &Spec, p: &Parsed, data: &[u8]) -> Result<Vec<u8>, Output> {
    let head = spec.name == "head";
    let (bytes, value) = match (p.value('c'), p.value('n')) {
        (Some(c), _) => (true, c),
        (None, Some(n)) => (false, n),
        (None, None) => (false, "10"),
    };
    let from_start = !head && value.starts_with('+');
    let n = spec.number(value.trim_start_matches('+'))?;
    if n < 0 {
        return Err(spec.usage(&format!("-{} < 0", if bytes { 'c' } else { 'n' })));
    }
    let n = n as usize;
    if bytes {
        let cut = match (head, from_start) {
            (true, _) => &data[..n.min(data.len())],
            (false, true) => &data[n.saturating_sub(1).min(data.len())..],
            (false, false) => &data[data.len() - n.min(data.len())..],
        };
        return Ok(cut.to_vec());
    }
    // Split keeping each line's own newline, so a last line without one stays without.
    let lines: Vec<&[u8]> = data.split_inclusive(|&b| b == b'\n').collect();
    let pick = match (head, from_start) {
        (true, _) => &lines[..n.min(lines.len())],
        (false, true) => &lines[n.saturating_sub(1).min(lines.len())..],
        (false, false) => &lines[lines.len() - n.min(lines.len())..],
    };
    Ok(pick.concat())
}

/// A `cut` list: `N`, `N-M`, `N-`, `-M`, comma separated, 1-based.
fn ranges(spec: &Spec, list: &str) -> Result<Vec<(usize, usize)>, Output> {
    let mut out = Vec::new();
    for part in list.split(',') {
        let bad = || spec.fail(&format!("bad list value '{part}'"));
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (
                if a.is_empty() { 1 } else { a.parse().map_err(|_| bad())? },
                if b.is_empty() {
                    usize::MAX
                } else {
                    b.parse().map_err(|_| bad())?
                },
            ),
            None => {
                let n = part.parse().map_err(|_| bad())?;
                (n, n)
            }
        };
        if a == 0 {
            return Err(bad());
        }
        out.push((a, b));
    }
    Ok(out)
}

fn cut(spec: &Spec, p: &Parsed, data: &[u8]) -> Result<Output, Output> {
    let in_list = |ranges: &[(usize, usize)], n: usize| ranges.iter().any(|(a, b)| (*a..=*b).contains(&n));
    if let Some(list) = p.value('f') {
        let ranges = ranges(spec, list)?;
        let delim = p.value('d').unwrap_or("\t");
        let mut out = Vec::new();
        for line in lines_of(data) {
            let text = String::from_utf8_lossy(line);
            if !text.contains(delim) {
                if !p.has('s') {
                    out.extend_from_slice(line);
                    out.push(b'\n');
                }
                continue;
            }
            let fields: Vec<&str> = text
                .split(delim)
                .enumerate()
                .filter(|(i, _)| in_list(&ranges, i + 1))
                .map(|(_, f)| f)
                .collect();
            out.extend_from_slice(fields.join(delim).as_bytes());
            out.push(b'\n');
        }
        return Ok(Output::ok(out));
    }
    let Some(list) = p.value('c').or(p.value('b')) else {
        return Err(spec.usage("Needs -CFfcb"));
    };
    let ranges = ranges(spec, list)?;
    let by_char = p.value('c').is_some();
    Ok(each_line(data, |line| {
        if by_char {
            let text = String::from_utf8_lossy(line);
            let kept: String = text
                .chars()
                .enumerate()
                .filter(|(i, _)| in_list(&ranges, i + 1))
                .map(|(_, c)| c)
                .collect();
            kept.into_bytes()
        } else {
            line.iter()
                .enumerate()
                .filter(|(i, _)| in_list(&ranges, i + 1))
                .map(|(_, b)| *b)
                .collect()
        }
    }))
}

/// The sort key of a line: fields `from..=to` (1-based) split by `-t` or by blank runs.
fn key<'a>(line: &'a str, p: &Parsed) -> &'a str {
    let Some(k) = p.value('k') else { return line };
    let (from, to) = match k.split_once(',') {
        Some((a, b)) => (a, Some(b)),
        None => (k, None),
    };
    let num = |s: &str| s.split('.').next().and_then(|n| n.parse::<usize>().ok()).unwrap_or(1);
    let (from, to) = (num(from), to.map(num));
    // Byte offsets where each field starts; a field keeps its leading blanks, as in toybox.
    let mut starts = vec![0];
    match p.value('t') {
        Some(sep) if !sep.is_empty() => {
            starts.extend(line.match_indices(sep).map(|(i, _)| i + sep.len()));
        }
        _ => {
            let bytes = line.as_bytes();
            for i in 1..bytes.len() {
                if bytes[i - 1] != b' ' && bytes[i - 1] != b'\t' && (bytes[i] == b' ' || bytes[i] == b'\t') {
                    starts.push(i);
                }
            }
        }
    }
    let Some(&start) = starts.get(from - 1) else { return "" };
    let end = match to.and_then(|t| starts.get(t)) {
        Some(&next) => next - usize::from(p.value('t').is_some_and(|s| !s.is_empty())),
        None => line.len(),
    };
    &line[start..end.max(start)]
}

/// A number as `sort -n` reads a line's start: optional blanks, sign, digits, fraction.
fn leading_number(s: &str) -> f64 {
    let s = s.trim_start();
    let end = s
        .char_indices()
        .take_while(|(i, c)| c.is_ascii_digit() || *c == '.' || (*i == 0 && *c == '-'))
        .map(|(i, c)| i + c.len_utf8())
        .last()
        .unwrap_or(0);
    s[..end].parse().unwrap_or(0.0)
}

fn sort(_spec: &Spec, p: &Parsed, data: &[u8]) -> Result<Output, Output> {
    let text = String::from_utf8_lossy(data);
    let mut lines: Vec<&str> = text.lines().collect();
    let compare_keys = |a: &str, b: &str| {
        let (mut ka, mut kb) = (key(a, p), key(b, p));
        if p.has('b') {
            ka = ka.trim_start();
            kb = kb.trim_start();
        }
        if p.has('n') {
            leading_number(ka)
                .partial_cmp(&leading_number(kb))
                .unwrap_or(Ordering::Equal)
        } else if p.has('f') {
            ka.to_uppercase().cmp(&kb.to_uppercase())
        } else {
            ka.cmp(kb)
        }
    };
    let order = |a: &&str, b: &&str| {
        let by_key = compare_keys(a, b);
        let o = if by_key == Ordering::Equal && !p.has('s') && !p.has('u') {
            a.cmp(b)
        } else {
            by_key
        };
        if p.has('r') { o.reverse() } else { o }
    };
    lines.sort_by(order);
    if p.has('u') {
        lines.dedup_by(|a, b| compare_keys(a, b) == Ordering::Equal);
    }
    Ok(join_lines(&lines.iter().map(|l| l.as_bytes()).collect::<Vec<_>>()))
}

fn uniq(p: &Parsed, data: &[u8]) -> Output {
    let lines = lines_of(data);
    let same = |a: &[u8], b: &[u8]| {
        if p.has('i') { a.eq_ignore_ascii_case(b) } else { a == b }
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let mut j = i + 1;
        while j < lines.len() && same(lines[i], lines[j]) {
            j += 1;
        }
        let count = j - i;
        let show = !((p.has('d') && count == 1) || (p.has('u') && count > 1));
        if show {
            if p.has('c') {
                out.extend_from_slice(format!("{count:7} ").as_bytes());
            }
            out.extend_from_slice(lines[i]);
            out.push(b'\n');
        }
        i = j;
    }
    Output::ok(out)
}
