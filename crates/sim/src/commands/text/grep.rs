//! toybox `grep`: basic, extended and fixed patterns, context, counts, only-matching, names.

use regex::Regex;

use super::opts::{Parsed, Spec};
use super::posix_regex::{Flavor, translate};
use super::{Input, lines_of};
use crate::shell::Output;

pub const SPEC: Spec = Spec {
    name: "grep",
    flags: "EFivwcloqsHhnxbL",
    valued: "ABCmef",
    error_code: 2,
    stop_at_operand: false,
};

/// The pattern and how to print, from the command line.
struct Grep {
    regex: Regex,
    p: Parsed,
    before: usize,
    after: usize,
    max: Option<usize>,
}

/// Builds the matcher: `-e`/`-f` patterns (or the first operand), each line of each one an
/// alternative; `-F` literal, `-E` extended, else basic; `-i`, `-w`, `-x` wrap it.
pub fn matcher(mut p: Parsed, pattern_file: Option<&[u8]>) -> Result<(Parsed, Regex), Output> {
    let mut patterns: Vec<String> = p.all('e').iter().map(|s| s.to_string()).collect();
    if let Some(file) = pattern_file {
        patterns.extend(String::from_utf8_lossy(file).lines().map(str::to_string));
    }
    if patterns.is_empty() {
        if p.operands.is_empty() {
            return Err(SPEC.fail("no REGEX"));
        }
        patterns.push(p.operands.remove(0));
    }
    let flavor = if p.has('E') || p.has('w') {
        Flavor::Extended
    } else {
        Flavor::Basic
    };
    let mut alternatives = Vec::new();
    for pattern in patterns.iter().flat_map(|p| p.split('\n')) {
        let translated = if p.has('F') {
            regex::escape(pattern)
        } else {
            translate(pattern, flavor).map_err(|e| SPEC.fail(&format!("bad regex '{pattern}': {e}")))?
        };
        alternatives.push(format!("(?:{translated})"));
    }
    let mut joined = alternatives.join("|");
    if p.has('w') {
        joined = format!(r"\b(?:{joined})\b");
    }
    if p.has('x') {
        joined = format!("^(?:{joined})$");
    }
    if p.has('i') {
        joined = format!("(?i){joined}");
    }
    let regex = Regex::new(&joined).map_err(|e| SPEC.fail(&format!("bad regex: {e}")))?;
    Ok((p, regex))
}

pub fn grep(parsed: Parsed, pattern_file: Option<&[u8]>, inputs: Vec<Input>, mut out: Output) -> Output {
    let (p, regex) = match matcher(parsed, pattern_file) {
        Ok(m) => m,
        Err(e) => return e,
    };
    let number = |flag: char| -> Result<Option<usize>, Output> {
        p.value(flag)
            .map(|v| SPEC.number(v).map(|n| n.max(0) as usize))
            .transpose()
    };
    let (context, before, after, max) = match (number('C'), number('B'), number('A'), number('m')) {
        (Ok(c), Ok(b), Ok(a), Ok(m)) => (c.unwrap_or(0), b, a, m),
        (Err(e), ..) | (_, Err(e), ..) | (_, _, Err(e), _) | (.., Err(e)) => return e,
    };
    let grep = Grep {
        before: before.unwrap_or(context),
        after: after.unwrap_or(context),
        max,
        regex,
        p,
    };
    let names = (inputs.len() > 1 || grep.p.has('H')) && !grep.p.has('h');
    let mut any = false;
    for input in &inputs {
        let selected = grep.file(input, names, &mut out.stdout);
        any |= selected > 0;
        if any && grep.p.has('q') {
            break;
        }
    }
    if grep.p.has('q') {
        out.stdout.clear();
    }
    out.code = match (out.code != 0 && !(any && grep.p.has('q')), any) {
        (true, _) => 2,
        (false, true) => 0,
        (false, false) => 1,
    };
    out
}

impl Grep {
    /// Prints what one input selects; returns how many lines it selected.
    fn file(&self, input: &Input, names: bool, stdout: &mut Vec<u8>) -> usize {
        let lines = lines_of(&input.data);
        let invert = self.p.has('v');
        let (list, list_missing, count) = (self.p.has('l'), self.p.has('L'), self.p.has('c'));
        let quiet = list || list_missing || count || self.p.has('q');
        let mut selected = 0;
        let mut last_printed: Option<usize> = None;
        let mut after_left = 0;
        let mut offset = 0;
        for (i, line) in lines.iter().enumerate() {
            let text = String::from_utf8_lossy(line);
            let line_offset = offset;
            offset += line.len() + 1;
            let hit = self.regex.is_match(&text) != invert;
            if self.max.is_some_and(|m| selected >= m) {
                if hit || after_left == 0 {
                    break;
                }
            } else if hit {
                selected += 1;
                if quiet {
                    continue;
                }
                let from = i.saturating_sub(self.before).max(last_printed.map_or(0, |l| l + 1));
                if (self.before > 0 || self.after > 0) && last_printed.is_some_and(|l| from > l + 1) {
                    stdout.extend_from_slice(b"--\n");
                }
                for (j, context) in lines.iter().enumerate().take(i).skip(from) {
                    self.print(stdout, input, names, j, None, '-', context);
                }
                if self.p.has('o') && !invert {
                    for m in self.regex.find_iter(&text).filter(|m| !m.is_empty()) {
                        let at = line_offset + m.start();
                        self.print(stdout, input, names, i, Some(at), ':', m.as_str().as_bytes());
                    }
                } else if !self.p.has('o') {
                    self.print(stdout, input, names, i, Some(line_offset), ':', line);
                }
                last_printed = Some(i);
                after_left = self.after;
                continue;
            }
            if after_left > 0 && !quiet {
                after_left -= 1;
                self.print(stdout, input, names, i, Some(line_offset), '-', line);
                last_printed = Some(i);
            }
        }
        if count {
            let prefix = if names {
                format!("{}:", input.name)
            } else {
                String::new()
            };
            stdout.extend_from_slice(format!("{prefix}{selected}\n").as_bytes());
        } else if (list && selected > 0) || (list_missing && selected == 0) {
            stdout.extend_from_slice(format!("{}\n", input.name).as_bytes());
        }
        selected
    }

    /// One output line: `name:`, `N:`, `offset:` as asked (`-` instead of `:` for context).
    #[allow(clippy::too_many_arguments)]
    fn print(
        &self,
        stdout: &mut Vec<u8>,
        input: &Input,
        names: bool,
        index: usize,
        offset: Option<usize>,
        sep: char,
        text: &[u8],
    ) {
        if names {
            stdout.extend_from_slice(format!("{}{sep}", input.name).as_bytes());
        }
        if self.p.has('n') {
            stdout.extend_from_slice(format!("{}{sep}", index + 1).as_bytes());
        }
        if let (true, Some(at)) = (self.p.has('b'), offset) {
            stdout.extend_from_slice(format!("{at}{sep}").as_bytes());
        }
        stdout.extend_from_slice(text);
        stdout.push(b'\n');
    }
}
