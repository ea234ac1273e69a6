//! getprop, setprop, a small `settings`, and airplane mode (`cmd connectivity`), kept among them.

use crate::device::Device;
use crate::shell::Output;
use android::getprop::format_getprop;

pub fn getprop(d: &Device, args: &[&str]) -> Output {
    match args {
        [] => Output::ok(format_getprop(&d.props)),
        [key] => Output::ok(format!("{}\n", d.prop(key).unwrap_or_default())),
        [key, default, ..] => Output::ok(format!("{}\n", d.prop(key).unwrap_or_else(|| default.to_string()))),
    }
}

pub fn setprop(d: &mut Device, args: &[&str]) -> Output {
    match args {
        [key, value] => {
            d.props.insert(key.to_string(), value.to_string());
            Output::default()
        }
        _ => Output::err(1, "setprop: need 2 arguments\n"),
    }
}

/// `settings get|put NAMESPACE KEY [VALUE]`, stored as `settings.NAMESPACE.KEY` properties.
pub fn settings(d: &mut Device, args: &[&str]) -> Output {
    match args {
        ["get", ns, key] => Output::ok(format!(
            "{}\n",
            d.prop(&format!("settings.{ns}.{key}"))
                .or_else(|| crate::phone::ime::default_setting(ns, key))
                .unwrap_or_else(|| "null".into())
        )),
        ["put", ns, key, value] => {
            d.props.insert(format!("settings.{ns}.{key}"), value.to_string());
            // With auto-rotate off, a device turns its display to `user_rotation` (0 to 3).
            let setting = |k: &str| d.prop(&format!("settings.system.{k}"));
            if *ns == "system"
                && setting("accelerometer_rotation").as_deref() == Some("0")
                && let Some(turn) = setting("user_rotation")
                    .and_then(|r| r.parse::<u8>().ok())
                    .filter(|r| *r < 4)
                && turn != d.emulator.rotation
            {
                d.emulator.rotation = turn;
                d.generation += 1;
            }
            Output::default()
        }
        _ => Output::err(
            255,
            "usage:  settings [--user <USER_ID> | current] get namespace key\n        settings [--user <USER_ID> | current] put namespace key value\n",
        ),
    }
}

/// `cmd connectivity airplane-mode [enable|disable]` (Android 11+): prints `enabled` or
/// `disabled`, or sets it, kept where the device keeps it (`settings get global
/// airplane_mode_on`, 1 or 0), as ConnectivityService's shell command does.
pub fn connectivity(d: &mut Device, args: &[&str]) -> Output {
    const KEY: &str = "settings.global.airplane_mode_on";
    match args {
        ["airplane-mode"] => {
            let on = d.prop(KEY).is_some_and(|v| v == "1");
            Output::ok(if on { "enabled\n" } else { "disabled\n" })
        }
        ["airplane-mode", set @ ("enable" | "disable")] => {
            d.props
                .insert(KEY.into(), if *set == "enable" { "1" } else { "0" }.into());
            Output::default()
        }
        ["airplane-mode", other, ..] => Output::err(255, format!("Error: Unknown command: {other}\n")),
        _ => Output::err(
            255,
            "Connectivity service commands:\n  airplane-mode [enable|disable]\n    Turn airplane mode on or off.\n  airplane-mode\n    Get airplane mode.\n",
        ),
    }
}
