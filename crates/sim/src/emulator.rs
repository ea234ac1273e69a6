//! What the emulator console sets on the simulated device, and where the device shows it:
//! battery (`dumpsys battery`), location (`dumpsys location`), rotation (the dump, screenshots
//! and taps), SMS, calls and fingerprints (the log), network speed and delay (`network status`).
//! `console.rs` serves the protocol; `answer` is one command line's reply.

use crate::device::{Device, LogBuffer};
use android::logcat::Level;
use android::uiautomator::UiTree;

/// The console's settings on the device.
#[derive(Debug, Clone, Default)]
pub struct EmulatorState {
    /// `dumpsys battery`'s status code, when `power status` set one.
    pub battery_status: Option<u32>,
    /// Longitude, latitude, altitude, from `geo fix`.
    pub location: Option<(f64, f64, f64)>,
    /// Quarter turns from the natural (portrait) orientation, 0-3.
    pub rotation: u8,
    pub network_speed: Option<String>,
    pub network_delay: Option<String>,
    /// Calls by number, and their state (`ringing`, `active`).
    pub calls: Vec<(String, String)>,
}

/// The commands `help` lists (a subset of the emulator's).
const HELP: &str = "Android console commands:\n\n    help|h|?         print a list of commands\n    ping             check if the emulator is alive\n    power            power related commands\n    geo              Geo-location commands\n    network          manage network settings\n    rotate           rotate the screen clockwise by 90 degrees\n    sms              SMS related commands\n    gsm              GSM related commands\n    finger           manage emulator fingerprint\n    avd              control virtual device execution\n\ntry 'help <command>' for command-specific help";

/// Answers one command line: the reply's lines, then `OK`, or `KO: why`.
pub fn answer(d: &mut Device, line: &str) -> Result<String, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.first().copied().unwrap_or("") {
        "help" | "h" | "?" => Ok(HELP.to_string()),
        "ping" if words.len() == 1 => Ok("I am alive!".to_string()),
        "avd" => avd(d, &words),
        "power" => power(d, &words),
        "geo" => geo(d, &words),
        "network" => network(d, &words),
        "rotate" => rotate(d, &words),
        "sms" => sms(d, &words, line),
        "gsm" => gsm(d, &words),
        "finger" => finger(d, &words),
        _ => Err("unknown command, try 'help'".into()),
    }
}

/// `avd …`.
fn avd(d: &mut Device, words: &[&str]) -> Result<String, String> {
    match words {
        ["avd", "name"] => Ok(d.prop("ro.boot.qemu.avd_name").unwrap_or_else(|| "droidmcp_sim".into())),
        ["avd", "status"] => Ok("virtual device is running".to_string()),
        _ => Err("unknown command, try 'help'".into()),
    }
}

/// `power …`.
fn power(d: &mut Device, words: &[&str]) -> Result<String, String> {
    let arg = |i: usize| words.get(i).copied().unwrap_or("");
    match words {
        ["power", "capacity", level] => {
            let level: u32 = level
                .parse()
                .ok()
                .filter(|l| *l <= 100)
                .ok_or("Usage: \"capacity <percentage>\"")?;
            d.battery.level = level;
            Ok(String::new())
        }
        ["power", "ac", on] => {
            d.battery.powered = match *on {
                "on" => "ac",
                "off" => "none",
                _ => return Err("Usage: \"ac on|off\"".into()),
            }
            .into();
            Ok(String::new())
        }
        ["power", "status", status] => {
            let code = match *status {
                "unknown" => 1,
                "charging" => 2,
                "discharging" => 3,
                "not-charging" => 4,
                "full" => 5,
                _ => return Err("Usage: \"status unknown|charging|discharging|not-charging|full\"".into()),
            };
            d.emulator.battery_status = Some(code);
            Ok(String::new())
        }
        ["power", "display"] => {
            let status = ["Unknown", "Charging", "Discharging", "Not charging", "Full"];
            let status = status[(battery_status(d).clamp(1, 5) - 1) as usize];
            let ac = if d.battery.powered == "none" {
                "offline"
            } else {
                "online"
            };
            Ok(format!(
                "AC: {ac}\nstatus: {status}\nhealth: Good\npresent: true\ncapacity: {}",
                d.battery.level
            ))
        }
        ["power", ..] => Err(format!("bad sub-command '{}', try 'help power'", arg(1))),
        _ => Err("unknown command, try 'help'".into()),
    }
}

/// `geo …`.
fn geo(d: &mut Device, words: &[&str]) -> Result<String, String> {
    match words {
        ["geo", "fix", lon, lat, rest @ ..] if rest.len() <= 3 => {
            let number = |s: &str| s.parse::<f64>().ok().filter(|v| v.is_finite());
            let lon = number(lon)
                .filter(|v| v.abs() <= 180.0)
                .ok_or("invalid longitude value")?;
            let lat = number(lat)
                .filter(|v| v.abs() <= 90.0)
                .ok_or("invalid latitude value")?;
            let alt = match rest.first() {
                Some(a) => number(a).ok_or("invalid altitude value")?,
                None => 0.0,
            };
            d.emulator.location = Some((lon, lat, alt));
            Ok(String::new())
        }
        ["geo", ..] => Err("Usage: \"geo fix <longitude> <latitude> [<altitude> [<satellites> [<velocity>]]]\"".into()),
        _ => Err("unknown command, try 'help'".into()),
    }
}

/// `network …`.
fn network(d: &mut Device, words: &[&str]) -> Result<String, String> {
    let arg = |i: usize| words.get(i).copied().unwrap_or("");
    match words {
        ["network", "speed", speed] => {
            d.emulator.network_speed = Some(network_value(speed, NETWORK_SPEEDS)?);
            Ok(String::new())
        }
        ["network", "delay", delay] => {
            d.emulator.network_delay = Some(network_value(delay, NETWORK_DELAYS)?);
            Ok(String::new())
        }
        ["network", "status"] => Ok(format!(
            "Current network status:\n  speed: {}\n  delay: {}",
            d.emulator.network_speed.as_deref().unwrap_or("full"),
            d.emulator.network_delay.as_deref().unwrap_or("none")
        )),
        ["network", ..] => Err(format!("bad sub-command '{}', try 'help network'", arg(1))),
        _ => Err("unknown command, try 'help'".into()),
    }
}

/// `rotate …`.
fn rotate(d: &mut Device, words: &[&str]) -> Result<String, String> {
    match words {
        ["rotate"] => {
            d.emulator.rotation = (d.emulator.rotation + 1) % 4;
            d.generation += 1;
            Ok(String::new())
        }
        _ => Err("unknown command, try 'help'".into()),
    }
}

/// `sms …`.
fn sms(d: &mut Device, words: &[&str], line: &str) -> Result<String, String> {
    match words {
        ["sms", "send", number, text @ ..] if !text.is_empty() => {
            let number = phone_number(number)?;
            // What follows the number is the message, spaces and all.
            let text = line.splitn(4, char::is_whitespace).nth(3).unwrap_or("").trim();
            system_log(d, "SmsReceiver", &format!("SMS received from {number}: {text}"));
            system_log(
                d,
                "NotificationService",
                &format!("Posted notification from com.google.android.apps.messaging: \"{number}: {text}\""),
            );
            Ok(String::new())
        }
        ["sms", ..] => Err("Usage: \"sms send <phonenumber> <text message>\"".into()),
        _ => Err("unknown command, try 'help'".into()),
    }
}

/// `gsm …`.
fn gsm(d: &mut Device, words: &[&str]) -> Result<String, String> {
    let arg = |i: usize| words.get(i).copied().unwrap_or("");
    match words {
        ["gsm", "call", number] => {
            let number = phone_number(number)?;
            d.emulator.calls.retain(|(n, _)| *n != number);
            d.emulator.calls.push((number.clone(), "ringing".into()));
            system_log(d, "Telecom", &format!("Incoming call from {number}: ringing"));
            Ok(String::new())
        }
        ["gsm", "accept", number] => {
            let number = phone_number(number)?;
            let call = d.emulator.calls.iter_mut().find(|(n, _)| *n == number);
            let Some((_, state)) = call else {
                return Err(format!("no call with number {number}"));
            };
            *state = "active".into();
            system_log(d, "Telecom", &format!("Call with {number}: active"));
            Ok(String::new())
        }
        ["gsm", "cancel", number] => {
            let number = phone_number(number)?;
            let before = d.emulator.calls.len();
            d.emulator.calls.retain(|(n, _)| *n != number);
            if d.emulator.calls.len() == before {
                return Err(format!("no call with number {number}"));
            }
            system_log(d, "Telecom", &format!("Call with {number}: ended"));
            Ok(String::new())
        }
        ["gsm", "list"] => Ok(d
            .emulator
            .calls
            .iter()
            .map(|(n, s)| format!("inbound from {n} : {s}"))
            .collect::<Vec<_>>()
            .join("\n")),
        ["gsm", ..] => Err(format!("bad sub-command '{}', try 'help gsm'", arg(1))),
        _ => Err("unknown command, try 'help'".into()),
    }
}

/// `finger …`.
fn finger(d: &mut Device, words: &[&str]) -> Result<String, String> {
    match words {
        ["finger", "touch", id] if id.parse::<u32>().is_ok() => {
            system_log(d, "FingerprintService", &format!("finger {id} touched the sensor"));
            Ok(String::new())
        }
        ["finger", "remove"] => Ok(String::new()),
        ["finger", ..] => Err("Usage: \"finger touch <fingerid>\" or \"finger remove\"".into()),
        _ => Err("unknown command, try 'help'".into()),
    }
}
const NETWORK_SPEEDS: &[&str] = &[
    "gsm", "hscsd", "gprs", "edge", "umts", "hsdpa", "lte", "evdo", "5g", "full",
];
const NETWORK_DELAYS: &[&str] = &["gsm", "gprs", "edge", "umts", "hsdpa", "lte", "evdo", "none"];

/// A named profile, or numbers (`up:down`, `min:max`, one number) as the emulator takes them.
fn network_value(value: &str, names: &[&str]) -> Result<String, String> {
    let numbers = value.split(':').count() <= 2 && value.split(':').all(|n| n.parse::<u64>().is_ok());
    if names.contains(&value) || numbers {
        Ok(value.to_string())
    } else {
        Err(format!(
            "invalid format '{value}': one of {} or numbers",
            names.join(", ")
        ))
    }
}

fn phone_number(number: &str) -> Result<String, String> {
    let digits = number.strip_prefix('+').unwrap_or(number);
    if !digits.is_empty() && digits.len() <= 20 && digits.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        Ok(number.to_string())
    } else {
        Err(format!("bad phone number format '{number}'"))
    }
}

fn system_log(d: &mut Device, tag: &str, message: &str) {
    let pid = d.pid_of("com.android.phone").unwrap_or(1342);
    d.log_line(LogBuffer::Main, pid, Level::Info, tag, message);
}

/// The tree as the display shows it: turned a quarter, the layout is stretched to the landscape
/// display (x by height/width, y by width/height) and the hierarchy says its rotation.
pub fn shown_tree(tree: &UiTree, natural: (u32, u32), rotation: u8) -> UiTree {
    let mut shown = tree.clone();
    shown.rotation = i32::from(rotation);
    if rotation % 2 == 1 {
        let (w, h) = (i64::from(natural.0), i64::from(natural.1));
        for node in &mut shown.nodes {
            if let Some(b) = node.bounds() {
                let x = |v: i32| (i64::from(v) * h / w) as i32;
                let y = |v: i32| (i64::from(v) * w / h) as i32;
                node.set_attr(
                    "bounds",
                    &format!("[{},{}][{},{}]", x(b.left), y(b.top), x(b.right), y(b.bottom)),
                );
            }
        }
    }
    shown
}

/// A point on the shown display, back in the natural layout's pixels (for taps and swipes).
pub fn natural_point(x: i32, y: i32, natural: (u32, u32), rotation: u8) -> (i32, i32) {
    if rotation.is_multiple_of(2) {
        return (x, y);
    }
    let (w, h) = (i64::from(natural.0), i64::from(natural.1));
    ((i64::from(x) * w / h) as i32, (i64::from(y) * h / w) as i32)
}

/// BatteryManager's status code (2 charging, 3 discharging, 5 full, …): what `power status` set,
/// else what the power source and the level make it.
pub fn battery_status(d: &Device) -> u32 {
    match d.emulator.battery_status {
        Some(set) => set,
        None if d.battery.powered == "none" => 3,
        None if d.battery.level >= 100 => 5,
        None => 2,
    }
}

/// `dumpsys location`'s last known location, in the layout Android 12+ prints.
pub fn location_dump(d: &Device) -> String {
    let mut s = String::from(
        "Location Manager State:\n  Location Settings:\n    Location Enabled: true\n  Last Known Locations:\n",
    );
    if let Some((lon, lat, alt)) = d.emulator.location {
        s.push_str(&format!(
            "    gps: Location[gps {lat:.6},{lon:.6} hAcc=1.0 et=+1m0s0ms alt={alt:.1} vel=0.0]\n"
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quarter_turn_maps_points_there_and_back() {
        let natural = (1080, 2400);
        for (x, y) in [(0, 0), (159, 1410), (1079, 2399), (540, 1200)] {
            let shown = ((i64::from(x) * 2400 / 1080) as i32, (i64::from(y) * 1080 / 2400) as i32);
            let (bx, by) = natural_point(shown.0, shown.1, natural, 1);
            assert!(
                (bx - x).abs() <= 1 && (by - y).abs() <= 3,
                "{x},{y} → {shown:?} → {bx},{by}"
            );
        }
        assert_eq!(natural_point(10, 20, natural, 2), (10, 20));
    }

    #[test]
    fn phone_numbers_and_network_values_are_checked() {
        assert!(phone_number("+15551234").is_ok() && phone_number("555-1234").is_ok());
        assert!(phone_number("5551234;reboot").is_err() && phone_number("").is_err());
        assert!(network_value("lte", NETWORK_SPEEDS).is_ok() && network_value("128:256", NETWORK_SPEEDS).is_ok());
        assert!(network_value("warp", NETWORK_SPEEDS).is_err());
    }
}
