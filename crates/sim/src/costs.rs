//! What a call costs on a phone: the profile's `[costs]` table (time to start each device
//! program, uiautomator's idle wait and its walk by node count, screencap by pixels and format,
//! the link's speed), counted so a journey's device time can be measured apart from the host's
//! (`sim-state costs` prints the count). Counted, not slept: a model, so tests stay fast; only
//! the link is played for real (paced bytes, `transport.rs`), since the host measures it. All
//! zero unless the profile sets them; the `phone` profile's numbers and their sources are in
//! fixtures/README.md.

use std::time::Duration;

use crate::device::Device;

#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Costs {
    /// `input`: `cmd input` in system_server on Android 12+, a Java process on 11 and older.
    #[serde(default)]
    pub input_ms: f64,
    #[serde(default)]
    pub am_ms: f64,
    #[serde(default)]
    pub pm_ms: f64,
    #[serde(default)]
    pub dumpsys_ms: f64,
    /// Any other program (toybox's grep, settings, ime, getevent, a write to an input device…).
    #[serde(default)]
    pub other_ms: f64,
    /// …and a write to `/dev/input/eventN` on top of the `printf` that makes it (estimate).
    #[serde(default)]
    pub input_write_ms: f64,
    /// `uiautomator dump`: the Java process's start and UiAutomation's connect…
    #[serde(default)]
    pub uiautomator_ms: f64,
    /// …then `waitForIdle`'s quiet window, which a fresh UiAutomation (one per dump) always
    /// waits out in full (a never-idle screen waits `[phone] never_idle_ms` instead)…
    #[serde(default)]
    pub uiautomator_idle_ms: f64,
    /// …then the walk and the XML, per node of the dumped tree.
    #[serde(default)]
    pub uiautomator_per_node_ms: f64,
    /// `screencap`: per million pixels, PNG (`-p`) or raw.
    #[serde(default)]
    pub screencap_png_ms_per_mpixel: f64,
    #[serde(default)]
    pub screencap_raw_ms_per_mpixel: f64,
    /// The link in MB/s, as the profile starts (USB); 0 is no cost.
    #[serde(default)]
    pub link_mb_per_s: f64,
    /// The Wi-Fi link `sim-state link wifi` switches to, in MB/s.
    #[serde(default)]
    pub wifi_mb_per_s: f64,
}

/// Device time spent so far, and device programs started.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spent {
    pub device_us: u64,
    pub programs: u64,
}

fn ms(v: f64) -> Duration {
    Duration::from_secs_f64((v.max(0.0)) / 1000.0)
}

/// What running `program` costs on the phone, counted as spent.
pub fn start(d: &mut Device, program: &str, args: &[&str]) {
    let c = &d.costs;
    let cost = match program {
        "input" => c.input_ms,
        "am" | "monkey" => c.am_ms,
        "pm" | "cmd" => c.pm_ms,
        "dumpsys" => c.dumpsys_ms,
        "uiautomator" if args.first() == Some(&"dump") => match d.phone.never_idle_ms {
            // AOSP's DumpCommand: no idle state within the global timeout, no walk.
            Some(wait) => c.uiautomator_ms + wait as f64,
            None => {
                c.uiautomator_ms + c.uiautomator_idle_ms + c.uiautomator_per_node_ms * d.shown_tree().nodes.len() as f64
            }
        },
        "uiautomator" => c.uiautomator_ms,
        "screencap" => {
            let (w, h) = d.shown_size();
            let mpixels = f64::from(w) * f64::from(h) / 1e6;
            let png = args.contains(&"-p") || args.iter().any(|a| a.ends_with(".png"));
            mpixels
                * match png {
                    true => c.screencap_png_ms_per_mpixel,
                    false => c.screencap_raw_ms_per_mpixel,
                }
        }
        "sim-state" => 0.0,
        _ => c.other_ms,
    };
    d.spent.programs += u64::from(program != "sim-state");
    count(d, ms(cost));
}

/// A write to an input device, counted as spent (its `printf` is a program of its own).
pub fn input_write(d: &mut Device) {
    let cost = ms(d.costs.input_write_ms);
    count(d, cost);
}

/// The link's speed now in bytes per second, if it is modelled.
pub fn link_bytes_per_s(d: &Device) -> Option<f64> {
    (d.link_mb_per_s > 0.0).then_some(d.link_mb_per_s * 1e6)
}

/// What sending `bytes` to the host costs on the link, counted as spent; the caller paces the
/// bytes so (`transport.rs`).
pub fn transfer(d: &mut Device, bytes: usize) -> Duration {
    let Some(speed) = link_bytes_per_s(d) else {
        return Duration::ZERO;
    };
    count(d, Duration::from_secs_f64(bytes as f64 / speed))
}

fn count(d: &mut Device, cost: Duration) -> Duration {
    d.spent.device_us += cost.as_micros() as u64;
    cost
}

/// `sim-state costs`: the device time and programs so far.
pub fn report(d: &Device) -> String {
    format!(
        "device_ms={:.1} programs={}\n",
        d.spent.device_us as f64 / 1000.0,
        d.spent.programs
    )
}

/// `sim-state link usb|wifi`: which of the profile's links carries the bytes from now on.
pub fn switch_link(d: &mut Device, link: &str) -> Result<String, String> {
    d.link_mb_per_s = match link {
        "usb" => d.costs.link_mb_per_s,
        "wifi" => d.costs.wifi_mb_per_s,
        other => return Err(format!("sim-state link takes usb or wifi, not {other:?}\n")),
    };
    Ok(format!("link={link} mb_per_s={}\n", d.link_mb_per_s))
}
