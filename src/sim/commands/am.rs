//! `am start`, `am force-stop` and `monkey -p PKG … 1`.

use crate::sim::device::Device;
use crate::sim::shell::Output;

pub fn am(d: &mut Device, args: &[&str]) -> Output {
    match args.first().copied() {
        Some("start" | "start-activity") => {
            let Some(component) = args.iter().position(|a| *a == "-n").and_then(|i| args.get(i + 1)) else {
                return Output::err(
                    1,
                    "Error: the simulator starts activities by component: am start -n PKG/ACTIVITY\n",
                );
            };
            let Some((pkg, act)) = component.split_once('/') else {
                return Output::err(1, format!("Error: Bad component name: {component}\n"));
            };
            let mut out = Output::ok(format!("Starting: Intent {{ cmp={component} }}\n"));
            if let Err(e) = d.start_activity(pkg, act) {
                out.stderr = format!("Error type 3\n{e}\n").into_bytes();
                out.code = 1;
            }
            out
        }
        Some("force-stop" | "kill") => match args.iter().skip(1).find(|a| !a.starts_with('-')) {
            Some(pkg) => {
                d.force_stop(pkg);
                Output::default()
            }
            None => Output::err(1, "Error: no package specified\n"),
        },
        Some("broadcast") => crate::sim::phone::ime::broadcast(d, &args[1..]),
        Some(other) => Output::err(1, format!("Error: the simulator's am does not know '{other}'\n")),
        None => Output::err(1, "usage: am [start|force-stop|kill] ...\n"),
    }
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
