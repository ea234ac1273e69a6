//! `input tap|swipe|text|keyevent` and `wm size|density`.

use crate::device::Device;
use crate::shell::Output;

/// The duration of `input swipe X1 Y1 X2 Y2 MS`, at most a minute.
pub fn swipe_duration(args: &[&str]) -> Option<u64> {
    let at = args.iter().position(|a| *a == "swipe")?;
    let ms = args.get(at + 5)?.parse::<u64>().ok()?;
    Some(ms.min(60_000))
}

const USAGE: &str = "Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n\nThe commands and default sources are:\n      text <string> (Default: keyboard)\n      keyevent [--longpress|--doubletap] <key code number or name> ... (Default: keyboard)\n      tap <x> <y> (Default: touchscreen)\n      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n";

const SOURCES: [&str; 11] = [
    "keyboard",
    "mouse",
    "touchscreen",
    "touchpad",
    "touchnavigation",
    "stylus",
    "trackball",
    "joystick",
    "gamepad",
    "dpad",
    "rotaryencoder",
];

/// The key names both sides know (`android::keys`).
use android::keys::KEYS as KEYCODES;

/// `BACK`, `KEYCODE_BACK` or `4` → `BACK`. Unknown numbers keep their number as the name.
pub fn key_name(arg: &str) -> Option<String> {
    if let Ok(code) = arg.parse::<u32>() {
        return Some(
            KEYCODES
                .iter()
                .find(|(_, c)| *c == code)
                .map_or_else(|| code.to_string(), |(n, _)| n.to_string()),
        );
    }
    let name = arg.strip_prefix("KEYCODE_").unwrap_or(arg).to_ascii_uppercase();
    KEYCODES.iter().any(|(n, _)| *n == name).then_some(name)
}

pub fn input(d: &mut Device, args: &[&str]) -> Output {
    let mut args = args;
    if args.first().is_some_and(|a| SOURCES.contains(a)) {
        args = &args[1..];
    }
    if args.first() == Some(&"-d") {
        args = args.get(2..).unwrap_or(&[]);
    }
    let num = |s: &str| s.parse::<f64>().ok().filter(|v| v.is_finite()).map(|v| v as i32);
    match args {
        ["tap", x, y] => match (num(x), num(y)) {
            (Some(x), Some(y)) => {
                crate::phone::tap(d, x, y);
                Output::default()
            }
            _ => Output::err(1, format!("Error: Invalid arguments for command: tap\n{USAGE}")),
        },
        ["swipe", x1, y1, x2, y2, rest @ ..] if rest.len() <= 1 => match (num(x1), num(y1), num(x2), num(y2)) {
            (Some(x1), Some(y1), Some(x2), Some(y2)) => {
                crate::phone::swipe_between(d, [x1, y1], [x2, y2]);
                Output::default()
            }
            _ => Output::err(1, format!("Error: Invalid arguments for command: swipe\n{USAGE}")),
        },
        ["text", words @ ..] if !words.is_empty() => {
            // `input text` turns %s into a space; the shell already removed the quoting.
            crate::phone::type_text(d, &words.join(" ").replace("%s", " "));
            Output::default()
        }
        ["keyevent", keys @ ..] => {
            let keys: Vec<&&str> = keys.iter().filter(|k| !k.starts_with("--")).collect();
            if keys.is_empty() {
                return Output::err(1, format!("Error: Invalid arguments for command: keyevent\n{USAGE}"));
            }
            for k in keys {
                match key_name(k) {
                    Some(name) => crate::phone::key(d, &name),
                    None => return Output::err(1, format!("Error: Unknown keycode: {k}\n")),
                }
            }
            Output::default()
        }
        ["press" | "roll" | "motionevent", ..] => Output::default(),
        _ => Output::err(1, USAGE),
    }
}

pub fn wm(d: &mut Device, args: &[&str]) -> Output {
    match args {
        ["size"] => Output::ok(format!("Physical size: {}x{}\n", d.display.width, d.display.height)),
        ["density"] => Output::ok(format!("Physical density: {}\n", d.display.density)),
        ["dismiss-keyguard"] => crate::phone::wm_dismiss_keyguard(d),
        _ => Output::err(
            255,
            "the simulator's wm answers: wm size, wm density, wm dismiss-keyguard\n",
        ),
    }
}
