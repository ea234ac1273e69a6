//! The device's commands, answered from the device model as a real device answers them.
//! One file per family; `run` dispatches on the program name.

mod am;
mod coreutils;
mod dumpsys;
mod input;
mod logcat;
mod pm;
mod props;
pub mod record;
mod screen;
mod text;

use std::sync::Arc;

use super::Simulator;
use super::shell::Output;

pub async fn run(sim: &Arc<Simulator>, argv: &[String], stdin: Vec<u8>) -> Output {
    let Some(first) = argv.first() else {
        return Output::default();
    };
    // `/system/bin/getprop` runs `getprop`.
    let program = first.rsplit('/').next().unwrap_or(first);
    if sim.faults.stall_on.iter().any(|s| s == program) {
        tracing::warn!(target: "droidmcp::sim::commands", program, "fault: stalling");
        std::future::pending::<()>().await;
    }
    let args: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
    // What the program costs on the phone (the profile's [costs]): counted, not slept.
    sim.with_device(|d| crate::costs::start(d, program, &args));
    answer(sim, program, &args, stdin).await
}

async fn answer(sim: &Arc<Simulator>, program: &str, args: &[&str], stdin: Vec<u8>) -> Output {
    match program {
        "sleep" => coreutils::sleep(args).await,
        "getprop" => sim.with_device(|d| props::getprop(d, args)),
        "setprop" => sim.with_device(|d| props::setprop(d, args)),
        "settings" => sim.with_device(|d| props::settings(d, args)),
        "pm" => sim.with_device(|d| pm::pm(d, args, &stdin)),
        "cmd" => match args.first() {
            Some(&"package") => sim.with_device(|d| pm::pm(d, &args[1..], &stdin)),
            Some(&"window") => sim.with_device(|d| input::wm(d, &args[1..])),
            Some(&"connectivity") => sim.with_device(|d| props::connectivity(d, &args[1..])),
            Some(service) => Output::err(20, format!("cmd: Can't find service: {service}\n")),
            None => Output::err(20, "cmd: No service specified; use -l to list all running services.\n"),
        },
        "dumpsys" => sim.with_device(|d| dumpsys::dumpsys(d, args)),
        "screenrecord" => record::screenrecord(sim, args).await,
        "pkill" => record::pkill(sim, args),
        "wm" => sim.with_device(|d| input::wm(d, args)),
        "input" => {
            // A swipe lasts its duration on a device (`input swipe … 3000` returns after 3 s);
            // the wait is outside the device's lock, so other commands go on meanwhile.
            if let Some(ms) = input::swipe_duration(args) {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            }
            sim.with_device(|d| input::input(d, args))
        }
        "uiautomator" => {
            // A screen that never goes idle: uiautomator waits, then gives up (outside the
            // device's lock, as a swipe's wait is).
            if let Some(ms) = sim
                .with_device(|d| d.phone.never_idle_ms)
                .filter(|_| args.first() == Some(&"dump"))
            {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                return Output::err(0, "ERROR: could not get idle state.\n");
            }
            sim.with_device(|d| screen::uiautomator(d, args))
        }
        "locksettings" => sim.with_device(|d| crate::phone::locksettings(d, args)),
        "getevent" => sim.with_device(|d| crate::touch::getevent(d, args)),
        "ime" => sim.with_device(|d| crate::phone::ime::ime(d, args)),
        "sim-state" => sim.with_device(|d| crate::phone::sim_state(d, args)),
        "screencap" => sim.with_device(|d| screen::screencap(d, args)),
        "am" => sim.with_device(|d| am::am(d, args)),
        "monkey" => sim.with_device(|d| am::monkey(d, args)),
        "logcat" => sim.with_device(|d| logcat::logcat(d, args)),
        "pidof" => sim.with_device(|d| coreutils::pidof(d, args)),
        "ps" => sim.with_device(|d| coreutils::ps(d, args)),
        _ => match coreutils::run(sim, program, args, &stdin) {
            Some(out) => out,
            None => match text::run(sim, program, args, &stdin).await {
                Some(out) => out,
                None => Output::err(127, format!("/system/bin/sh: {program}: inaccessible or not found\n")),
            },
        },
    }
}
