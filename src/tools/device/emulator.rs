//! `adb-device emulator {command}`: one emulator console command (battery, location, network,
//! rotation, SMS, calls, fingerprint), its reply within the budget. The console client is in
//! `adb/console.rs`; this is the policy: which commands may go, and how the answer reads.

use super::DeviceOutput;
use crate::tools::State;

/// Longer than any console command a model needs; the console reads lines of up to 4 KiB.
const MAX_COMMAND: usize = 1000;

/// Commands that stop or reset the emulator, or reach past the device (host ports, host
/// files): sent only with `--allow-emulator-admin`. Matched on the first words.
const ADMIN: &[&[&str]] = &[
    &["kill"],
    &["avd", "stop"],
    &["avd", "pause"],
    &["avd", "snapshot"],
    &["redir"],
    &["screenrecord"],
];

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
    if let (Some(prefix), false) = (starting(&words, ADMIN), allow_admin) {
        return Err(format!(
            "`{}` stops or resets the emulator, or reaches past the device, so it is refused; start droidmcp with --allow-emulator-admin to allow it",
            prefix.join(" ")
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

pub async fn run(state: &State, device: Option<&str>, command: Option<&str>) -> Result<DeviceOutput, String> {
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
            crate::adb::cut(command)
        ));
    }
    if changes_the_device(command) {
        let step = crate::flow::Step::new(crate::flow::Action::Emulator {
            command: command.to_string(),
        });
        state.flows.record(&serial, step);
    }
    Ok(DeviceOutput {
        operation: "emulator".into(),
        device: Some(serial),
        console: Some(addr.to_string()),
        reply: Some(if reply.lines.is_empty() {
            "OK".into()
        } else {
            reply.text()
        }),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
            "killall",
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
