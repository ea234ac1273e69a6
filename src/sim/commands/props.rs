//! getprop, setprop and a small `settings`.

use crate::android::getprop::format_getprop;
use crate::sim::device::Device;
use crate::sim::shell::Output;

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
                .or_else(|| crate::sim::phone::ime::default_setting(ns, key))
                .unwrap_or_else(|| "null".into())
        )),
        ["put", ns, key, value] => {
            d.props.insert(format!("settings.{ns}.{key}"), value.to_string());
            Output::default()
        }
        _ => Output::err(
            255,
            "usage:  settings [--user <USER_ID> | current] get namespace key\n        settings [--user <USER_ID> | current] put namespace key value\n",
        ),
    }
}
