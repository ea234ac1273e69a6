//! The device list: `adb devices -l` lines, the one entry a direct route probes, and several
//! sources' lists made one.

use serde::Serialize;

/// One line of `adb devices -l`, or the one device of a direct route.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema, PartialEq, Eq)]
pub struct DeviceEntry {
    pub serial: String,
    /// `device` (online), `offline`, `unauthorized`, `recovery`, …
    pub state: String,
    /// As the adb server reports it: characters other than letters, digits, `-` and `.` become `_`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `usb`, `emulator`, `tcp` (via the adb server) or `direct` (our own adbd connection).
    pub transport: String,
    /// Which `--adb` source sees it, when there are several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Why a direct device is not reachable right now (probed, not remembered).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Parses the answer to `host:devices-l`:
/// `SERIAL<spaces>STATE [usb:1-1] product:x model:y device:z transport_id:n`.
pub fn parse_devices_long(text: &str) -> Vec<DeviceEntry> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let serial = words.next()?.to_string();
            let state = words.next()?.to_string();
            let mut model = None;
            let mut usb = false;
            for word in words {
                if let Some(m) = word.strip_prefix("model:") {
                    model = Some(m.to_string());
                } else if word.starts_with("usb:") {
                    usb = true;
                }
            }
            let transport = if serial.starts_with("emulator-") {
                "emulator"
            } else if usb {
                "usb"
            } else if serial.contains(':') || serial.contains("._adb-tls-") {
                "tcp"
            } else {
                "usb"
            };
            Some(DeviceEntry {
                serial,
                state,
                model,
                transport: transport.to_string(),
                source: None,
                error: None,
            })
        })
        .collect()
}

/// Every device, and with several sources one row per source.
#[derive(Debug, Default)]
pub struct Listing {
    pub devices: Vec<DeviceEntry>,
    pub sources: Vec<SourceStatus>,
}

/// One `--adb` source: where it is, and how many devices it sees or why it did not answer.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema, PartialEq, Eq)]
pub struct SourceStatus {
    pub source: String,
    /// `server HOST:PORT` or `tcp HOST:PORT`.
    pub address: String,
    pub devices: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One list from each source's answer (label, address, devices or error): every device is
/// marked with its source, and a serial that several sources see is named `label/serial` on
/// each, so a caller can pass either one back.
pub fn merge_sources(answers: Vec<(String, String, Result<Vec<DeviceEntry>, String>)>) -> Listing {
    let mut count: std::collections::HashMap<String, usize> = Default::default();
    for (_, _, answer) in &answers {
        for device in answer.iter().flatten() {
            *count.entry(device.serial.clone()).or_default() += 1;
        }
    }
    let mut listing = Listing::default();
    for (label, address, answer) in answers {
        let (devices, error) = match answer {
            Ok(devices) => (devices, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        listing.sources.push(SourceStatus {
            source: label.clone(),
            address,
            devices: devices.len(),
            error,
        });
        for mut device in devices {
            if count[&device.serial] > 1 {
                device.serial = format!("{label}/{}", device.serial);
            }
            device.source = Some(label.clone());
            listing.devices.push(device);
        }
    }
    listing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_long_lines_give_serial_state_model_and_transport() {
        let text = "emulator-5554          device product:sdk_gphone64_x86_64 model:sdk_gphone64_x86_64 device:emu64xa transport_id:1\n\
                    R58M123ABC             unauthorized usb:1-1 transport_id:2\n\
                    127.0.0.1:5555         device product:sim model:Pixel_7 device:emu64xa transport_id:3\n";
        let devices = parse_devices_long(text);
        assert_eq!(devices.len(), 3);
        assert_eq!(devices[0].transport, "emulator");
        assert_eq!(devices[0].model.as_deref(), Some("sdk_gphone64_x86_64"));
        assert_eq!(devices[1].state, "unauthorized");
        assert_eq!(devices[1].transport, "usb");
        assert_eq!(devices[2].transport, "tcp");
        assert_eq!(devices[2].model.as_deref(), Some("Pixel_7"));
    }

    #[test]
    fn serials_two_sources_share_are_qualified_and_a_silent_source_is_a_row() {
        let a = parse_devices_long("emulator-5554 device model:A\nR58M1 device\n");
        let b = parse_devices_long("emulator-5554 device model:B\n");
        let listing = merge_sources(vec![
            ("labA".into(), "server 10.0.0.1:5037".into(), Ok(a)),
            ("labB".into(), "server 10.0.0.2:5037".into(), Ok(b)),
            ("labC".into(), "server 10.0.0.3:5037".into(), Err("refused".into())),
        ]);
        let names: Vec<&str> = listing.devices.iter().map(|d| d.serial.as_str()).collect();
        assert_eq!(names, ["labA/emulator-5554", "R58M1", "labB/emulator-5554"]);
        assert_eq!(listing.devices[1].source.as_deref(), Some("labA"));
        assert_eq!(listing.sources[2].error.as_deref(), Some("refused"));
        assert_eq!(listing.sources.iter().map(|s| s.devices).collect::<Vec<_>>(), [2, 1, 0]);
    }
}
