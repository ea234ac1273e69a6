//! Small device-state outputs: `dumpsys battery` and `wm size`.

/// The parts of `dumpsys battery` a health check reports.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Battery {
    pub level: Option<u32>,
    /// `charging`, `discharging`, `not charging`, `full` or `unknown` (BatteryManager's codes).
    pub status: Option<String>,
    /// `ac`, `usb`, `wireless`, or none when on battery.
    pub powered_by: Vec<String>,
    /// Degrees Celsius (dumpsys prints tenths).
    pub temperature_c: Option<f32>,
}

pub fn parse_battery(text: &str) -> Battery {
    let mut battery = Battery::default();
    for line in text.lines() {
        let Some((key, value)) = line.trim().split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key.trim() {
            "level" => battery.level = value.parse().ok(),
            "status" => {
                battery.status = Some(
                    match value {
                        "2" => "charging",
                        "3" => "discharging",
                        "4" => "not charging",
                        "5" => "full",
                        _ => "unknown",
                    }
                    .to_string(),
                )
            }
            "temperature" => battery.temperature_c = value.parse::<f32>().ok().map(|t| t / 10.0),
            "AC powered" if value == "true" => battery.powered_by.push("ac".into()),
            "USB powered" if value == "true" => battery.powered_by.push("usb".into()),
            "Wireless powered" if value == "true" => battery.powered_by.push("wireless".into()),
            _ => {}
        }
    }
    battery
}

/// `wm size` prints `Physical size: 1080x2400` and, when set, `Override size: 720x1600`; the
/// override is what apps and `input tap` see.
pub fn parse_wm_size(text: &str) -> Option<(u32, u32)> {
    let mut physical = None;
    let mut override_size = None;
    for line in text.lines() {
        let Some((label, size)) = line.split_once(':') else {
            continue;
        };
        let Some((w, h)) = size.trim().split_once('x') else {
            continue;
        };
        let (Ok(w), Ok(h)) = (w.parse(), h.parse()) else {
            continue;
        };
        if label.contains("Override") {
            override_size = Some((w, h));
        } else if label.contains("Physical") {
            physical = Some((w, h));
        }
    }
    override_size.or(physical)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wm_size_prefers_the_override() {
        assert_eq!(parse_wm_size("Physical size: 1080x2400\n"), Some((1080, 2400)));
        assert_eq!(
            parse_wm_size("Physical size: 1080x2400\nOverride size: 720x1600\n"),
            Some((720, 1600))
        );
        assert_eq!(parse_wm_size("wm: not found\n"), None);
    }
}
