//! `adb-device emulator {command}`: one emulator console command (battery, location, network,
//! rotation, SMS, calls, fingerprint), its reply within the budget. The console client is in
//! `adb/console.rs`; this is the policy: which commands may go, and how the answer reads.

use super::DeviceOutput;
use crate::tools::State;

/// Longer than any console command a model needs; the console reads lines of up to 4 KiB.
const MAX_COMMAND: usize = 1000;

/// Commands that only read or set what the device senses (battery, location, network, rotation,
/// SMS, calls, fingerprint, sensors), plus the console's own help: sent without a flag. Anything
/// else (`kill`, `crash`, `avd stop`, snapshots, `redir`, `network capture` writing a host file,
/// `event`, …) needs `--allow-emulator-admin`: an allow-list, so a command added to the console
/// later is refused until someone decides. Matched on the first words.
const DEVICE_STATE: &[&[&str]] = &[
    &["help"],
    &["help-verbose"],
    &["ping"],
    &["avd", "name"],
    &["avd", "status"],
    &["avd", "id"],
    &["power"],
    &["geo"],
    &["network", "status"],
    &["network", "speed"],
    &["network", "delay"],
    &["rotate"],
    &["sms"],
    &["gsm"],
    &["finger"],
    &["sensor"],
];

/// What the refusal lists as allowed without the flag.
const DEVICE_STATE_NAMES: &str =
    "power, geo, network status|speed|delay, rotate, sms, gsm, finger, sensor, help, ping, avd name|status|id";

/// Checks a console command before it is sent; the error says what was wrong and what to do.
pub fn check_command(command: &str, allow_admin: bool) -> Result<(), String> {
    let words = words(command);
    if words.is_empty() {
        return Err("adb-device emulator needs `command`, one emulator console line, e.g. \"power capacity 15\", \"geo fix -122.08 37.42\", \"rotate\", \"sms send 5551234 hello\"; \"help\" lists them".into());
    }
    if command.chars().count() > MAX_COMMAND {
        return Err(format!(
            "`command` is {} chars; a console command is one line of at most {MAX_COMMAND}",
            command.chars().count()
        ));
    }
    if command.chars().any(char::is_control) {
        return Err("`command` holds a line break or control character: send one console command per call".into());
    }
    match words[0].as_str() {
        "auth" => return Err("droidmcp authenticates to the console itself (with ~/.emulator_console_auth_token): send the command alone".into()),
        "quit" | "exit" => return Err("quit and exit end the console connection droidmcp keeps open; there is nothing to send".into()),
        _ => {}
    }
    if starting(&words, DEVICE_STATE).is_none() && !allow_admin {
        return Err(format!(
            "`{}` is not a console command that only reads or sets device state ({DEVICE_STATE_NAMES}), so it is refused: it may stop, reset or crash the emulator, or reach past the device; start droidmcp with --allow-emulator-admin to allow it",
            crate::android::text::echoed(command)
        ));
    }
    Ok(())
}

/// Commands that only read (`help`, `avd name`, `power display`, …): a recording leaves them out,
/// since replaying them changes nothing.
const QUERIES: &[&[&str]] = &[
    &["help"],
    &["avd", "name"],
    &["avd", "status"],
    &["avd", "path"],
    &["avd", "id"],
    &["avd", "discoverypath"],
    &["power", "display"],
    &["network", "status"],
    &["gsm", "list"],
    &["gsm", "status"],
    &["sensor", "status"],
    &["sensor", "get"],
    &["geo", "status"],
    &["ping"],
];

/// Whether a command sets what the device senses (and so belongs in a recorded flow).
pub fn changes_the_device(command: &str) -> bool {
    let words = words(command);
    !words.is_empty() && starting(&words, QUERIES).is_none()
}

/// A command's words, lower-cased (the console takes any case).
fn words(command: &str) -> Vec<String> {
    command.split_whitespace().map(str::to_ascii_lowercase).collect()
}

/// The first of `prefixes` the command's words start with.
fn starting<'a>(words: &[String], prefixes: &[&'a [&'a str]]) -> Option<&'a [&'a str]> {
    prefixes
        .iter()
        .find(|prefix| prefix.len() <= words.len() && prefix.iter().zip(words).all(|(p, w)| p == w))
        .copied()
}

/// Sends one console line; the answer, and the step a recorded flow keeps of it (a line that
/// sets something), which the caller records.
pub async fn run(
    state: &State,
    device: Option<&str>,
    command: Option<&str>,
) -> Result<(DeviceOutput, Option<crate::flow::Action>), String> {
    let command = command.unwrap_or("").trim();
    check_command(command, state.emulator_admin)?;
    let serial = state.device(device).await.map_err(|e| e.to_string())?;
    let (addr, reply) = state
        .adb
        .emulator_console(&serial, command, state.adb.timeout())
        .await
        .map_err(|e| e.to_string())?;
    if let Some(why) = reply.refused {
        return Err(format!(
            "the emulator console at {addr} refused `{}`: {why}. `help` (or `help power`, …) lists what it takes",
            crate::android::text::echoed(command)
        ));
    }
    let step = changes_the_device(command).then(|| crate::flow::Action::Emulator {
        command: command.to_string(),
    });
    let output = DeviceOutput {
        operation: "emulator".into(),
        device: Some(serial),
        console: Some(addr.to_string()),
        reply: Some(if reply.lines.is_empty() {
            "OK".into()
        } else {
            reply.text()
        }),
        ..Default::default()
    };
    Ok((output, step))
}

#[cfg(test)]
mod tests {
    use super::{changes_the_device, check_command};

    #[test]
    fn only_commands_that_set_something_are_recorded() {
        for sets in [
            "power capacity 17",
            "geo fix 4.88 52.36",
            "sms send 5551234 hi",
            "rotate",
            "avd snapshot load base",
        ] {
            assert!(changes_the_device(sets), "{sets}");
        }
        for reads in [
            "help",
            "help power",
            "HELP",
            "avd name",
            "power display",
            "network status",
            "gsm list",
            "",
        ] {
            assert!(!changes_the_device(reads), "{reads}");
        }
    }

    #[test]
    fn admin_commands_need_the_flag_and_one_line_goes_at_a_time() {
        for admin in [
            "kill",
            "KILL",
            "avd stop",
            "avd snapshot load base",
            "redir add tcp:80:80",
            "crash",
            "network capture start /tmp/x.pcap",
            "event send EV_KEY:KEY_POWER:1",
            "killall",
            "avd path",
        ] {
            let refused = check_command(admin, false).unwrap_err();
            assert!(refused.contains("--allow-emulator-admin"), "{admin}: {refused}");
            assert!(check_command(admin, true).is_ok(), "{admin}");
        }
        for fine in [
            "power capacity 17",
            "avd name",
            "avd status",
            "geo fix -122.08 37.42",
            "network speed edge",
            "Power Capacity 5",
            "help network",
            "sensor set acceleration 0:9.8:0",
        ] {
            assert!(check_command(fine, false).is_ok(), "{fine}");
        }
        for bad in ["", "  ", "rotate\nkill", "power\rcapacity", "auth abc", "quit"] {
            assert!(check_command(bad, true).is_err(), "{bad:?}");
        }
        assert!(
            check_command(&"x".repeat(1001), true)
                .unwrap_err()
                .contains("1001 chars")
        );
    }
}
