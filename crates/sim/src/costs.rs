//! What a call costs on a phone: the profile's `[costs]` table (time to start each device
//! program, uiautomator by node count, screencap by pixels and format, the link's speed), slept
//! by the simulator and counted, so a journey's device time can be measured apart from the
//! host's (`sim-state costs` prints the count). All zero unless the profile sets them; the
//! `phone` profile's numbers come from published measurements (fixtures/README.md).

use std::time::Duration;

use crate::device::Device;

#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Costs {
    /// `input`: a Java process started per call.
    #[serde(default)]
    pub input_ms: f64,
    #[serde(default)]
    pub am_ms: f64,
    #[serde(default)]
    pub pm_ms: f64,
    #[serde(default)]
    pub dumpsys_ms: f64,
    /// Any other program (toybox's grep, settings, ime…).
    #[serde(default)]
    pub other_ms: f64,
    /// `uiautomator dump`: a start, plus a cost per node of the dumped tree.
    #[serde(default)]
    pub uiautomator_ms: f64,
    #[serde(default)]
    pub uiautomator_per_node_ms: f64,
    /// `screencap`: per million pixels, PNG (`-p`) or raw.
    #[serde(default)]
    pub screencap_png_ms_per_mpixel: f64,
    #[serde(default)]
    pub screencap_raw_ms_per_mpixel: f64,
    /// The link's speed in MB/s (USB 2.0, Wi-Fi adb); 0 is no cost.
    #[serde(default)]
    pub link_mb_per_s: f64,
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

/// What starting `program` costs now, counted as spent.
pub fn start(d: &mut Device, program: &str, args: &[&str]) -> Duration {
    let c = &d.costs;
    let cost = match program {
        "input" => c.input_ms,
        "am" | "monkey" => c.am_ms,
        "pm" | "cmd" => c.pm_ms,
        "dumpsys" => c.dumpsys_ms,
        "uiautomator" => c.uiautomator_ms + c.uiautomator_per_node_ms * d.shown_tree().nodes.len() as f64,
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
    count(d, ms(cost))
}

/// What sending `bytes` to the host costs on the link, counted as spent.
pub fn transfer(d: &mut Device, bytes: usize) -> Duration {
    if d.costs.link_mb_per_s <= 0.0 {
        return Duration::ZERO;
    }
    let cost = ms(bytes as f64 / (d.costs.link_mb_per_s * 1000.0));
    count(d, cost)
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
