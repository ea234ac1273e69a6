//! `logcat` with `-d`, `-c`, `-t N|TIME`, `-T N|TIME`, `-s`, `-b`, `--pid`, `-m`, `-e` and
//! `TAG:LEVEL` filter specs. Output is always threadtime, the format droidmcp reads.

use crate::device::{Device, LogBuffer, format_entry};
use crate::shell::Output;
use android::logcat::Level;

struct Options<'a> {
    dump: bool,
    clear: bool,
    tail: Option<Tail>,
    silent_default: bool,
    buffers: Vec<LogBuffer>,
    pid: Option<u32>,
    max: Option<usize>,
    contains: Option<&'a str>,
    specs: Vec<(&'a str, Level)>,
}

enum Tail {
    Count(usize),
    Since(String),
}

fn parse_tail(v: &str) -> Option<Tail> {
    match v.parse::<usize>() {
        Ok(n) => Some(Tail::Count(n)),
        // `MM-DD HH:MM:SS.mmm` sorts as text, like the timestamps themselves.
        Err(_) if v.len() >= 14 && v.as_bytes()[2] == b'-' => Some(Tail::Since(v.to_string())),
        Err(_) => None,
    }
}

fn parse<'a>(args: &[&'a str]) -> Result<Options<'a>, String> {
    let mut o = Options {
        dump: false,
        clear: false,
        tail: None,
        silent_default: false,
        buffers: Vec::new(),
        pid: None,
        max: None,
        contains: None,
        specs: Vec::new(),
    };
    let mut it = args.iter().copied();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .ok_or_else(|| format!("logcat: option requires an argument -- {name}"))
        };
        match a {
            "-d" => o.dump = true,
            "-c" => o.clear = true,
            "-s" => o.silent_default = true,
            "-v" => {
                value("v")?;
            }
            "-t" | "-T" => {
                o.tail = Some(parse_tail(value("t")?).ok_or("logcat: -t/-T takes a count or 'MM-DD hh:mm:ss.mmm'")?);
                o.dump |= a == "-t";
            }
            "-b" => {
                for name in value("b")?.split(',') {
                    match name {
                        "all" => {
                            o.buffers
                                .extend([LogBuffer::Main, LogBuffer::System, LogBuffer::Crash, LogBuffer::Events])
                        }
                        "default" => o.buffers.extend([LogBuffer::Main, LogBuffer::System, LogBuffer::Crash]),
                        n => o
                            .buffers
                            .push(LogBuffer::parse(n).ok_or_else(|| format!("logcat: unknown buffer {n}"))?),
                    }
                }
            }
            "--pid" => o.pid = Some(value("pid")?.parse().map_err(|_| "logcat: --pid takes a number")?),
            "-m" | "--max-count" => o.max = Some(value("m")?.parse().map_err(|_| "logcat: -m takes a number")?),
            "-e" | "--regex" => o.contains = Some(value("e")?),
            a if a.starts_with("--pid=") => o.pid = Some(a[6..].parse().map_err(|_| "logcat: --pid takes a number")?),
            a if a.starts_with('-') => return Err(format!("logcat: the simulator does not support {a}")),
            spec => {
                let (tag, level) = spec.rsplit_once(':').unwrap_or((spec, "V"));
                let level = level
                    .chars()
                    .next()
                    .and_then(Level::from_char)
                    .ok_or_else(|| format!("logcat: invalid filter spec {spec}"))?;
                o.specs.push((tag, level));
            }
        }
    }
    if o.buffers.is_empty() {
        o.buffers = vec![LogBuffer::Main, LogBuffer::System, LogBuffer::Crash];
    }
    Ok(o)
}

pub fn logcat(d: &mut Device, args: &[&str]) -> Output {
    let o = match parse(args) {
        Ok(o) => o,
        Err(e) => return Output::err(1, format!("{e}\n")),
    };
    if o.clear {
        d.log.retain(|e| !o.buffers.contains(&e.buffer));
        return Output::default();
    }
    let default_level = if o.silent_default {
        Level::Silent
    } else {
        Level::Verbose
    };
    let star = o
        .specs
        .iter()
        .find(|(t, _)| *t == "*")
        .map_or(default_level, |(_, l)| *l);
    let shown: Vec<_> = d
        .log
        .iter()
        .filter(|e| o.buffers.contains(&e.buffer))
        .filter(|e| o.pid.is_none_or(|p| e.line.pid == p))
        .filter(|e| o.contains.is_none_or(|c| e.line.message.contains(c)))
        .filter(|e| {
            let min = o.specs.iter().find(|(t, _)| *t == e.line.tag).map_or(star, |(_, l)| *l);
            min != Level::Silent && e.line.level >= min
        })
        .collect();
    let start = match &o.tail {
        Some(Tail::Count(n)) => shown.len().saturating_sub(*n),
        Some(Tail::Since(t)) => shown.iter().position(|e| e.line.timestamp >= *t).unwrap_or(shown.len()),
        None => 0,
    };
    let mut out = String::new();
    let mut announced: Vec<LogBuffer> = Vec::new();
    for e in shown[start..].iter().take(o.max.unwrap_or(usize::MAX)) {
        if !announced.contains(&e.buffer) {
            announced.push(e.buffer);
            out.push_str(&format!(
                "--------- beginning of {}\n",
                format!("{:?}", e.buffer).to_lowercase()
            ));
        }
        out.push_str(&format_entry(e));
        out.push('\n');
    }
    Output {
        stdout: out.into_bytes(),
        keeps_running: !o.dump && o.max.is_none(),
        ..Output::default()
    }
}
