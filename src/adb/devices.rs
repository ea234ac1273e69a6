//! The device list: `adb devices -l` lines, and the one entry a direct route probes.

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
                error: None,
            })
        })
        .collect()
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
}
