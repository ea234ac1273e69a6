//! `am start`, `am force-stop`, `am kill` (background processes only, as a phone's) and
//! `monkey -p PKG … 1`.

use crate::device::Device;
use crate::shell::Output;

pub fn am(d: &mut Device, args: &[&str]) -> Output {
    match args.first().copied() {
        Some("start" | "start-activity") => start(d, &args[1..]),
        Some(verb @ ("force-stop" | "kill")) => match package_arg(&args[1..]) {
            Some(pkg) if verb == "kill" => {
                d.kill_background(pkg);
                Output::default()
            }
            Some(pkg) => {
                d.force_stop(pkg);
                Output::default()
            }
            None => Output::err(1, "Error: no package specified\n"),
        },
        Some("broadcast") => crate::phone::ime::broadcast(d, &args[1..]),
        Some(other) => Output::err(1, format!("Error: the simulator's am does not know '{other}'\n")),
        None => Output::err(1, "usage: am [start|force-stop|kill] ...\n"),
    }
}

/// The package of `am force-stop|kill [--user N] PACKAGE`.
fn package_arg<'a>(args: &[&'a str]) -> Option<&'a str> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "--user" => {
                it.next();
            }
            a if a.starts_with('-') => {}
            a => return Some(a),
        }
    }
    None
}

/// `am start`: by component (`-n PKG/ACTIVITY`), or a VIEW intent (`-a android.intent.action.VIEW
/// -d URI [-c CATEGORY] [-p PKG]`), with intent extras (`--es|--ez|--ei|--el|--ef KEY VALUE`).
/// The simulator knows no intent filters: a VIEW intent opens the launcher activity of its
/// package (`-p`), else of the browser (Chrome), as a phone opens a web link in it. Its lines are
/// a real `am`'s (Android 14; the intent's `dat` shown as it redacts it, `scheme://host/...`).
fn start(d: &mut Device, args: &[&str]) -> Output {
    let (mut component, mut action, mut data, mut package) = (None, None, None, None);
    let mut extras = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().copied();
        match *a {
            "-n" => component = value(),
            "-a" => action = value(),
            "-d" => data = value(),
            "-p" => package = value(),
            "-c" | "-f" | "--user" => {
                value();
            }
            "--es" | "--ez" | "--ei" | "--el" | "--ef" => {
                let (key, v) = (value(), value());
                let valid = match (*a, v) {
                    (_, None) => false,
                    ("--ez", Some(v)) => matches!(v, "true" | "false" | "0" | "1"),
                    ("--ei", Some(v)) => v.parse::<i32>().is_ok(),
                    ("--el", Some(v)) => v.parse::<i64>().is_ok(),
                    ("--ef", Some(v)) => v.parse::<f32>().is_ok(),
                    _ => true,
                };
                if key.is_none() || !valid {
                    return Output::err(
                        255,
                        format!(
                            "Exception occurred while executing 'start':\njava.lang.IllegalArgumentException: Bad value for {a}\n"
                        ),
                    );
                }
                extras = true;
            }
            a if a.starts_with('-') => {}
            other => return Output::err(255, format!("Error: unexpected argument: {other}\n")),
        }
    }
    let has = if extras { " (has extras)" } else { "" };
    if let Some(component) = component {
        let Some((pkg, act)) = component.split_once('/') else {
            return Output::err(1, format!("Error: Bad component name: {component}\n"));
        };
        let mut out = Output::ok(format!("Starting: Intent {{ cmp={component}{has} }}\n"));
        if let Err(e) = d.start_activity(pkg, act) {
            out.stderr = format!("Error type 3\n{e}\n").into_bytes();
            out.code = 1;
        }
        return out;
    }
    let (Some(action), Some(uri)) = (action, data) else {
        return Output::err(
            1,
            "Error: the simulator starts an activity by component (-n PKG/ACTIVITY) or a VIEW intent (-a android.intent.action.VIEW -d URI)\n",
        );
    };
    let shown = match uri.split_once("://") {
        Some((scheme, rest)) => format!("{scheme}://{}/...", rest.split('/').next().unwrap_or_default()),
        None => uri.to_string(),
    };
    let pkg_part = package.map(|p| format!(" pkg={p}")).unwrap_or_default();
    let intent = format!("act={action} dat={shown} flg=0x10000000{pkg_part}{has}");
    let target = package.unwrap_or("com.android.chrome");
    let started = match action {
        "android.intent.action.VIEW" => d.launch(target).is_ok(),
        _ => false,
    };
    if !started {
        return Output {
            stdout: format!("Starting: Intent {{ act={action} dat={shown}{pkg_part}{has} }}\n").into_bytes(),
            stderr: format!("Error: Activity not started, unable to resolve Intent {{ {intent} }}\n").into_bytes(),
            code: 1,
            ..Output::default()
        };
    }
    // system_server's line (its Slog goes to the system buffer).
    let pid = d.pid_of("system_server").unwrap_or(0);
    d.log_line(
        crate::device::LogBuffer::System,
        pid,
        android::logcat::Level::Info,
        "ActivityTaskManager",
        &format!("START u0 {{{intent}}} with LAUNCH_MULTIPLE from uid 2000 result code=0"),
    );
    Output::ok(format!(
        "Starting: Intent {{ act={action} dat={shown}{pkg_part}{has} }}\n"
    ))
}

pub fn monkey(d: &mut Device, args: &[&str]) -> Output {
    let Some(pkg) = args.iter().position(|a| *a == "-p").and_then(|i| args.get(i + 1)) else {
        return Output::err(1, "** Error: the simulator's monkey needs -p PACKAGE\n");
    };
    let echo: String = args.iter().map(|a| format!("  bash arg: {a}\n")).collect();
    match d.launch(pkg) {
        Ok(()) => Output::ok(format!(
            "{echo}args: {args:?}\n arg: \"-p\"\n data=\"{pkg}\"\nEvents injected: 1\n## Network stats: elapsed time=12ms (0ms mobile, 0ms wifi, 12ms not connected)\n"
        )),
        Err(e) => Output {
            stdout: echo.into_bytes(),
            stderr: format!("{e}\n").into_bytes(),
            code: 251,
            ..Output::default()
        },
    }
}
