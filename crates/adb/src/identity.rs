//! Which phone a route reaches: one phone may be reached by several names (a USB serial and
//! `ip:port`, two adb servers, an adb server and its own adbd), and leases must hold on the phone,
//! not on the name. A physical device is its `ro.serialno`. An emulator is not: every emulator
//! of one system image prints the same one (`EMULATOR34X1X9X0`), so it is that and its kernel's
//! boot id, which it keeps until it boots again. Read once per route (`Adb::identity`).

use crate::{Adb, AdbError};

/// What the device is asked, one line each: its serial, whether it is an emulator (older and
/// newer property), the boot id.
pub const ASK: &str =
    "getprop ro.serialno; getprop ro.kernel.qemu; getprop ro.boot.qemu; cat /proc/sys/kernel/random/boot_id";

/// Serials that name no one phone: factory defaults some boards ship with.
const SHARED_SERIALS: [&str; 3] = ["", "unknown", "0123456789ABCDEF"];

/// The identity in what `ASK` printed, or why there is none.
pub fn read(printed: &str) -> Result<String, String> {
    let lines: Vec<&str> = printed.lines().map(str::trim).collect();
    let line = |at: usize| lines.get(at).copied().unwrap_or_default();
    let serial = line(0);
    let emulator = line(1) == "1" || line(2) == "1";
    let boot = Some(line(3)).filter(|b| b.len() == 36 && b.chars().all(|c| c.is_ascii_hexdigit() || c == '-'));
    let shared = SHARED_SERIALS.iter().any(|s| s.eq_ignore_ascii_case(serial));
    if !emulator && !shared && serial.chars().all(|c| c.is_ascii_graphic()) {
        return Ok(format!("serialno:{serial}"));
    }
    // Its own prefix: no phone's serial can spell a booted device's identity.
    match boot {
        Some(boot) => Ok(format!("boot:{boot}+serialno:{serial}")),
        None => Err(format!(
            "its ro.serialno is {serial:?}{}, which many devices share, and it printed no boot id (/proc/sys/kernel/random/boot_id)",
            if emulator { " (an emulator)" } else { "" }
        )),
    }
}

impl Adb {
    /// Which phone `name` (a name `resolve` gave) is, whichever route reaches it (`identity.rs`):
    /// read from the device once per route and kept until a listing no longer shows it.
    /// Leases are keyed by it.
    pub async fn identity(&self, name: &str) -> Result<String, AdbError> {
        let route = self.route_name(name);
        if let Some(known) = self.known_identity(name) {
            return Ok(known);
        }
        let unidentified = |why: String| AdbError::Unidentified {
            device: name.to_string(),
            why,
        };
        let printed = self.shell(name, ASK).await.map_err(|e| unidentified(e.to_string()))?;
        let found = read(&printed.stdout_text()).map_err(unidentified)?;
        self.identities
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(route, found.clone());
        Ok(found)
    }

    /// The identity read before for `name`'s route, if any (an offline device keeps it).
    pub fn known_identity(&self, name: &str) -> Option<String> {
        let route = self.route_name(name);
        self.identities
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&route)
            .cloned()
    }

    /// Forgets the identities of routes no longer listed (`routes`, of the sources that
    /// answered; those of `silent` sources are kept): the name may reach another phone next (an
    /// `ip:port` handed on, an emulator's port reused).
    pub(crate) fn forget_gone(&self, routes: &[String], silent: &[&str]) {
        let mut identities = self.identities.lock().unwrap_or_else(|p| p.into_inner());
        identities.retain(|route, _| {
            routes.contains(route)
                || silent
                    .iter()
                    .any(|label| route.split_once('/').is_some_and(|(l, _)| l == *label))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::read;

    const BOOT: &str = "0f5e8a4c-52b1-4d8e-9d1c-2f0c3a6b7e91";

    #[test]
    fn a_phone_is_its_serial_and_an_emulator_its_serial_and_boot() {
        assert_eq!(read("f89a5ec6\n\n\n").unwrap(), "serialno:f89a5ec6");
        assert_eq!(
            read(&format!("f89a5ec6\r\n\r\n\r\n{BOOT}\r\n")).unwrap(),
            "serialno:f89a5ec6"
        );
        for qemu in ["1\n\n", "\n1\n", "1\n1\n"] {
            assert_eq!(
                read(&format!("EMULATOR34X1X9X0\n{qemu}{BOOT}\n")).unwrap(),
                format!("boot:{BOOT}+serialno:EMULATOR34X1X9X0")
            );
        }
        assert_eq!(
            read(&format!("0123456789ABCDEF\n\n\n{BOOT}\n")).unwrap(),
            format!("boot:{BOOT}+serialno:0123456789ABCDEF")
        );
    }

    /// Found from outside: a phone whose serial spells an emulator's identity is still another
    /// phone, and a factory-default serial in lower case is still shared by many.
    #[test]
    fn no_serial_spells_another_devices_identity_and_shared_serials_match_in_any_case() {
        let emulator = read(&format!("X\n1\n\n{BOOT}\n")).unwrap();
        let spelled = read(&format!("X+boot:{BOOT}\n\n\n")).unwrap();
        assert_ne!(emulator, spelled);
        let spelled = read(&format!("{}\n\n\n", emulator.trim_start_matches("serialno:"))).unwrap();
        assert_ne!(emulator, spelled);
        assert_eq!(
            read(&format!("0123456789abcdef\n\n\n{BOOT}\n")).unwrap(),
            format!("boot:{BOOT}+serialno:0123456789abcdef")
        );
        assert!(read("0123456789abcdef\n\n\n").is_err(), "shared, and no boot id");
    }

    /// Generated: phones (serials of every shape, emulator flags old and new, boot ids or none,
    /// `\r\n` from old shells): two readings are one identity exactly when they are one phone
    /// (same serial, and for an emulator or a shared serial the same boot); a phone's is its serial
    /// alone, so it outlives a reboot; anything else printed is an answer, never a panic.
    #[test]
    fn identities_tell_phones_apart_exactly_when_they_are_apart() {
        use proptest::prelude::{Just, Strategy, prop_oneof};
        let serial = prop_oneof![
            Just(String::new()),
            Just("unknown".to_string()),
            Just("0123456789ABCDEF".to_string()),
            Just("EMULATOR34X1X9X0".to_string()),
            "[0-9a-zA-Z]{6,16}",
        ];
        let boot = prop_oneof![Just(None), (0u128..4).prop_map(|n| Some(format!("{BOOT:.32}{n:04x}")))];
        let phone = (serial, 0u8..4, boot, proptest::bool::ANY);
        let printed = |(serial, qemu, boot, crlf): &(String, u8, Option<String>, bool)| {
            let end = if *crlf { "\r\n" } else { "\n" };
            let flag = |bit: u8| if qemu & bit != 0 { "1" } else { "" };
            let boot = boot.clone().unwrap_or_default();
            format!("{serial}{end}{}{end}{}{end}{boot}{end}", flag(1), flag(2))
        };
        let cases = std::cell::Cell::new(0);
        let mut runner = proptest::test_runner::TestRunner::default();
        runner
            .run(&(phone.clone(), phone, ".{0,80}"), |(a, b, noise)| {
                cases.set(cases.get() + 1);
                let _ = read(&noise);
                let shared = |p: &(String, u8, Option<String>, bool)| {
                    p.1 != 0 || ["", "unknown", "0123456789ABCDEF"].contains(&p.0.as_str())
                };
                let (ia, ib) = (read(&printed(&a)), read(&printed(&b)));
                if !shared(&a) {
                    proptest::prop_assert_eq!(ia.clone(), Ok(format!("serialno:{}", a.0)));
                }
                proptest::prop_assert_eq!(ia.is_ok(), !shared(&a) || a.2.is_some());
                if let (Ok(ia), Ok(ib)) = (&ia, &ib) {
                    let same = a.0 == b.0 && shared(&a) == shared(&b) && (!shared(&a) || a.2 == b.2);
                    proptest::prop_assert_eq!(ia == ib, same, "{:?} {:?}", a, b);
                }
                Ok(())
            })
            .unwrap();
        println!(
            "identity: {} generated pairs of readings (serials real, shared and empty; emulator flags; boot ids or none; CRLF) and noise",
            cases.get()
        );
    }

    #[test]
    fn a_device_that_names_no_one_phone_has_no_identity() {
        for printed in ["", "\n\n\n", "EMULATOR34X1X9X0\n1\n1\n", "unknown\n\n\nnot-a-boot-id\n"] {
            let why = read(printed).unwrap_err();
            assert!(why.contains("many devices share"), "{printed:?}: {why}");
        }
    }
}
