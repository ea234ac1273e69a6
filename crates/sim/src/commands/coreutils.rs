//! Toybox basics: echo, date, cat, ls, rm, mkdir, touch, true, false, seq, id, sleep, pidof, ps.
//! The text tools (grep, sed, wc, head, …) are in `text/`.

use std::time::Duration;

use crate::Simulator;
use crate::device::Device;
use crate::fs::{Entry, now_secs};
use crate::shell::Output;

/// Commands that only need the file system or their input. `None`: no such command.
pub fn run(sim: &Simulator, program: &str, args: &[&str], stdin: &[u8]) -> Option<Output> {
    Some(match program {
        "true" | ":" => Output::default(),
        "false" => Output {
            code: 1,
            ..Output::default()
        },
        "echo" => echo(args),
        "id" => Output::ok(
            "uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),1015(sdcard_rw),1028(sdcard_r),3001(net_bt_admin),3002(net_bt),3003(inet),3006(net_bw_stats) context=u:r:shell:s0\n",
        ),
        "whoami" => Output::ok("shell\n"),
        "date" => date(args),
        "seq" => seq(args),
        "cat" => sim.with_device(|d| cat(d, args, stdin)),
        "ls" => sim.with_device(|d| ls(d, args)),
        "rm" => sim.with_device(|d| rm(d, args)),
        "mkdir" => sim.with_device(|d| {
            for path in args.iter().filter(|a| !a.starts_with('-')) {
                d.fs.mkdirs(path);
            }
            Output::default()
        }),
        "touch" => sim.with_device(|d| {
            for path in args.iter().filter(|a| !a.starts_with('-')) {
                if d.fs.get(path).is_none()
                    && let Err(e) = d.fs.write(path, Vec::new(), 0o666, now_secs())
                {
                    return Output::err(1, format!("touch: '{path}': {e}\n"));
                }
            }
            Output::default()
        }),
        _ => return None,
    })
}

/// `date` and `date +FORMAT` (strftime), from the host's clock.
fn date(args: &[&str]) -> Output {
    use chrono::format::{Item, StrftimeItems};
    let format = match args {
        [] => "%a %b %e %H:%M:%S %Z %Y",
        [f] if f.starts_with('+') => &f[1..],
        [other, ..] => return Output::err(1, format!("date: Unknown option '{other}'\n")),
    };
    let items: Vec<Item> = StrftimeItems::new(format).collect();
    if items.iter().any(|i| matches!(i, Item::Error)) {
        return Output::err(1, format!("date: bad format '{format}'\n"));
    }
    Output::ok(format!(
        "{}\n",
        chrono::Local::now().format_with_items(items.into_iter())
    ))
}

pub async fn sleep(args: &[&str]) -> Output {
    match args
        .first()
        .and_then(|a| a.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
    {
        Some(secs) => {
            tokio::time::sleep(Duration::from_secs_f64(secs.min(86_400.0))).await;
            Output::default()
        }
        None => Output::err(1, "sleep: need a number of seconds\n"),
    }
}

fn echo(args: &[&str]) -> Output {
    let (newline, words) = match args.first() {
        Some(&"-n") => (false, &args[1..]),
        _ => (true, args),
    };
    let mut s = words.join(" ");
    if newline {
        s.push('\n');
    }
    Output::ok(s)
}

fn seq(args: &[&str]) -> Output {
    let nums: Option<Vec<i64>> = args.iter().map(|a| a.parse().ok()).collect();
    let (first, last) = match nums.as_deref() {
        Some([last]) => (1, *last),
        Some([first, last]) => (*first, *last),
        _ => return Output::err(1, "usage: seq [FIRST] LAST\n"),
    };
    if last - first > 10_000_000 {
        return Output::err(1, "seq: range too large for the simulator (10M lines at most)\n");
    }
    let mut out = String::new();
    for n in first..=last {
        out.push_str(&n.to_string());
        out.push('\n');
    }
    Output::ok(out)
}

fn cat(d: &Device, args: &[&str], stdin: &[u8]) -> Output {
    let files: Vec<&&str> = args.iter().filter(|a| !a.starts_with('-') || **a == "-").collect();
    if files.is_empty() {
        return Output::ok(stdin.to_vec());
    }
    let mut out = Output::default();
    for f in files {
        if **f == *"/proc/net/unix" {
            out.stdout
                .extend_from_slice(crate::webview::proc_net_unix(d).as_bytes());
            continue;
        }
        if **f == *"/proc/sys/kernel/random/boot_id" {
            out.stdout.extend_from_slice(format!("{}\n", d.boot_id).as_bytes());
            continue;
        }
        match d.fs.read(f) {
            Ok(data) => out.stdout.extend_from_slice(data),
            Err(e) => {
                out.stderr.extend_from_slice(format!("cat: {f}: {e}\n").as_bytes());
                out.code = 1;
            }
        }
    }
    out
}

fn ls(d: &Device, args: &[&str]) -> Output {
    let long = args.iter().any(|a| a.starts_with('-') && a.contains('l'));
    let all = args.iter().any(|a| a.starts_with('-') && a.contains('a'));
    let paths: Vec<&str> = args.iter().filter(|a| !a.starts_with('-')).copied().collect();
    let paths = if paths.is_empty() { vec!["/"] } else { paths };
    let mut out = Output::default();
    let line = |name: &str, e: &Entry| {
        if long {
            let kind = if matches!(e, Entry::Dir { .. }) { 'd' } else { '-' };
            let perms = format_perms(e.mode());
            let when = chrono::DateTime::from_timestamp(i64::from(e.mtime()), 0).unwrap_or_default();
            format!(
                "{kind}{perms} 1 shell shell {:>8} {} {name}\n",
                e.size(),
                when.format("%Y-%m-%d %H:%M")
            )
        } else {
            format!("{name}\n")
        }
    };
    for p in paths {
        match (d.fs.get(p), d.fs.list(p)) {
            (Some(Entry::File { .. }), _) => out.stdout.extend(line(p, d.fs.get(p).expect("checked")).into_bytes()),
            (_, Ok(entries)) => {
                for (name, e) in entries {
                    if all || !name.starts_with('.') {
                        out.stdout.extend(line(&name, e).into_bytes());
                    }
                }
            }
            (_, Err(e)) => {
                out.stderr.extend(format!("ls: {p}: {e}\n").into_bytes());
                out.code = 1;
            }
        }
    }
    out
}

fn format_perms(mode: u32) -> String {
    let mut s = String::new();
    for shift in [6, 3, 0] {
        let bits = (mode >> shift) & 7;
        s.push(if bits & 4 != 0 { 'r' } else { '-' });
        s.push(if bits & 2 != 0 { 'w' } else { '-' });
        s.push(if bits & 1 != 0 { 'x' } else { '-' });
    }
    s
}

fn rm(d: &mut Device, args: &[&str]) -> Output {
    let recursive = args
        .iter()
        .any(|a| a.starts_with('-') && (a.contains('r') || a.contains('R')));
    let force = args.iter().any(|a| a.starts_with('-') && a.contains('f'));
    let mut out = Output::default();
    for p in args.iter().filter(|a| !a.starts_with('-')) {
        if let Err(e) = d.fs.remove(p, recursive)
            && !(force && e == crate::fs::FsError::NotFound)
        {
            out.stderr.extend(format!("rm: {p}: {e}\n").into_bytes());
            out.code = 1;
        }
    }
    out
}

pub fn pidof(d: &Device, args: &[&str]) -> Output {
    let pids: Vec<String> = args.iter().filter_map(|p| d.pid_of(p)).map(|p| p.to_string()).collect();
    if pids.is_empty() {
        return Output {
            code: 1,
            ..Output::default()
        };
    }
    Output::ok(format!("{}\n", pids.join(" ")))
}

pub fn ps(d: &Device, _args: &[&str]) -> Output {
    let mut out = String::from("USER            PID   PPID        VSZ    RSS WCHAN            ADDR S NAME\n");
    out.push_str("root              1      0   10903552   5160 0                   0 S init\n");
    for (name, pid) in d.running() {
        out.push_str(&format!(
            "u0_a150       {pid:>5}    350   16312456 112340 0                   0 S {name}\n"
        ));
    }
    Output::ok(out)
}
