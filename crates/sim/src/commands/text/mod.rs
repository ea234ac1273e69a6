//! The text commands assistants pipe through, as toybox (Android's command set) runs them:
//! same options, same output, same error messages and exit codes. An option toybox has and the
//! simulator lacks is refused with toybox's "Unknown option" message, never ignored.
//! `tests/it/sim_toybox.rs` compares each with Debian's toybox.

mod grep;
mod lines;
mod opts;
mod posix_regex;
mod printf;
mod sed;
mod stream;

use std::sync::Arc;

use crate::Simulator;
use crate::shell::Output;
use opts::Spec;

/// What an endless writer (`yes`, a `printf` with a huge width) writes before it stops: a
/// device's runs until its reader goes away; the simulator's pipes are buffers, so it writes
/// this much and then waits like a blocked writer (`keeps_running`).
pub const WRITER_BYTES: usize = 1 << 20;

/// One input of a command: its name as messages show it, and its bytes.
pub struct Input {
    pub name: String,
    pub data: Vec<u8>,
}

/// Lines without their `\n`; a last line without one still counts.
pub fn lines_of(data: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if data.is_empty() || data.ends_with(b"\n") {
        lines.pop();
    }
    lines
}

/// The text commands; `None` when `program` is not one of them.
pub async fn run(sim: &Arc<Simulator>, program: &str, args: &[&str], stdin: &[u8]) -> Option<Output> {
    let spec = match program {
        "grep" | "egrep" | "fgrep" => &grep::SPEC,
        "sed" => &sed::SPEC,
        "printf" => return Some(printf::printf(args)),
        "xargs" => return Some(stream::xargs(sim, args, stdin).await),
        other => match lines::spec(other).or_else(|| stream::spec(other)) {
            Some(spec) => spec,
            None => return None,
        },
    };
    // `head -5` is `head -n 5`.
    let numbered: Vec<String>;
    let args = if matches!(program, "head" | "tail") {
        numbered = args
            .iter()
            .flat_map(|a| {
                match a
                    .strip_prefix('-')
                    .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                {
                    Some(n) => vec!["-n".to_string(), n.to_string()],
                    None => vec![a.to_string()],
                }
            })
            .collect();
        numbered.iter().map(String::as_str).collect::<Vec<_>>()
    } else {
        args.to_vec()
    };
    let mut parsed = match spec.parse(&args) {
        Ok(p) => p,
        Err(usage) => return Some(usage),
    };
    match program {
        "egrep" => parsed.flags.push('E'),
        "fgrep" => parsed.flags.push('F'),
        _ => {}
    }
    Some(match spec.name {
        "grep" => {
            let pattern_file = match parsed.value('f') {
                Some(path) => match read_file(sim, path) {
                    Ok(data) => Some(data),
                    Err(e) => return Some(spec.fail(&format!("{path}: {e}"))),
                },
                None => None,
            };
            // The pattern is the first operand unless -e or -f gave it.
            let skip = usize::from(parsed.value('e').is_none() && pattern_file.is_none());
            let files = parsed.operands.iter().skip(skip).cloned().collect::<Vec<_>>();
            let (inputs, mut errors) = inputs(sim, spec, &files, stdin);
            if parsed.has('s') {
                errors.stderr.clear();
            }
            grep::grep(parsed, pattern_file.as_deref(), inputs, errors)
        }
        "sed" => sed_files(sim, &parsed, stdin),
        _ => {
            // tr's operands are its sets and yes's its words: they read stdin only.
            let skip = usize::from(matches!(spec.name, "tr" | "yes")) * parsed.operands.len();
            let files: Vec<String> = parsed.operands.iter().skip(skip).cloned().collect();
            let (inputs, errors) = inputs(sim, spec, &files, stdin);
            let mut out = lines::run(spec.name, &parsed, &inputs)
                .or_else(|| stream::run(spec.name, &parsed, &inputs))
                .unwrap_or_else(|| spec.fail("not implemented"));
            let mut stderr = errors.stderr;
            stderr.extend_from_slice(&out.stderr);
            out.stderr = stderr;
            if errors.code != 0 && out.code == 0 {
                out.code = errors.code;
            }
            out
        }
    })
}

/// `sed` reads its files as one stream, or with `-i` edits each in place.
fn sed_files(sim: &Simulator, p: &opts::Parsed, stdin: &[u8]) -> Output {
    let skip = usize::from(p.all('e').is_empty() && p.value('f').is_none());
    let files: Vec<String> = p.operands.iter().skip(skip).cloned().collect();
    let (inputs, errors) = inputs(sim, &sed::SPEC, &files, stdin);
    let data: Vec<u8> = inputs.iter().flat_map(|i| i.data.iter().copied()).collect();
    let mut out = sed::sed(p, &data).unwrap_or_else(|e| e);
    out.stderr.splice(0..0, errors.stderr);
    if errors.code != 0 {
        out.code = errors.code;
    }
    out
}

fn read_file(sim: &Simulator, path: &str) -> Result<Vec<u8>, crate::fs::FsError> {
    if path == "/dev/zero" {
        // A phone's never ends; what `head -c` takes of it (the link probe's 1 MiB) is here.
        return Ok(vec![0; DEV_ZERO_BYTES]);
    }
    sim.with_device(|d| d.fs.read(path).map(<[u8]>::to_vec))
}

/// How much of `/dev/zero` the simulator's text commands read.
const DEV_ZERO_BYTES: usize = 4 << 20;

/// The inputs named by `files` (`-` or none: stdin), and an Output holding the errors of the
/// ones that cannot be read (`NAME: FILE: No such file or directory`, exit code 1 or 2).
fn inputs(sim: &Simulator, spec: &Spec, files: &[String], stdin: &[u8]) -> (Vec<Input>, Output) {
    let mut errors = Output::default();
    if files.is_empty() {
        let name = "(standard input)".to_string();
        return (
            vec![Input {
                name,
                data: stdin.to_vec(),
            }],
            errors,
        );
    }
    let mut inputs = Vec::new();
    for f in files {
        let data = if f == "-" {
            Ok(stdin.to_vec())
        } else {
            read_file(sim, f)
        };
        match data {
            Ok(data) => inputs.push(Input {
                name: if f == "-" { "(standard input)".into() } else { f.clone() },
                data,
            }),
            Err(e) => {
                errors
                    .stderr
                    .extend_from_slice(format!("{}: {f}: {e}\n", spec.name).as_bytes());
                errors.code = spec.error_code;
            }
        }
    }
    (inputs, errors)
}
