//! `adb-device wake` and `unlock`: a phone asleep or locked, as `ui` answers name it. The PIN
//! comes from an environment variable the call names (`pinEnv`), one of those the server was
//! started to allow (`--pin-env`); it goes to the device once, and is never logged, cached,
//! recorded or answered.

use super::{AdbError, DeviceOutput, State};
use crate::android::screen_state::{Reported, parse_reports};

/// Wakes the screen, then reads the power and keyguard state, in one round trip.
const WAKE: &str = "input keyevent 224; dumpsys power | grep mWakefulness=; dumpsys window | grep -E 'mAwake=|Lockscreen=|isStatusBarKeyguard='";
/// Opens the keyguard (a swipe lock opens; a PIN lock shows its pad), then reads its state.
const DISMISS: &str = "wm dismiss-keyguard; dumpsys window | grep -E 'Lockscreen=|isStatusBarKeyguard='";
const LOCK_STATE: &str = "dumpsys window | grep -E 'Lockscreen=|isStatusBarKeyguard='";

async fn report(state: &State, serial: &str, command: &str) -> Result<Reported, AdbError> {
    let out = state.adb.shell(serial, command).await?;
    Ok(parse_reports(&out.stdout_text()))
}

fn answer(operation: &str, serial: &str, reported: &Reported, hint: &str) -> DeviceOutput {
    DeviceOutput {
        operation: operation.into(),
        device: Some(serial.into()),
        awake: reported.awake,
        locked: reported.locked,
        hint: Some(hint.into()),
        ..Default::default()
    }
}

pub(super) async fn wake(state: &State, device: Option<&str>) -> Result<DeviceOutput, String> {
    let serial = state.device(device).await.map_err(|e| e.to_string())?;
    let r = report(state, &serial, WAKE).await.map_err(|e| e.to_string())?;
    let hint = match (r.awake, r.locked) {
        (Some(false), _) => "the screen is still off: try again, or press POWER (ui key POWER)",
        (_, Some(true)) => {
            "the screen is on and locked: adb-device {operation: \"unlock\"} (a PIN: {pinEnv: \"NAME\"})"
        }
        _ => "the screen is on",
    };
    Ok(answer("wake", &serial, &r, hint))
}

/// The PIN from the environment variable `name`, one of `allowed`: 4 to 16 digits. Another
/// name is refused before the environment is read, so a call learns nothing of the server's
/// other variables.
fn pin_from(name: &str, allowed: &[String]) -> Result<String, String> {
    if !allowed.iter().any(|a| a == name) {
        // The option to set names the variable when it is one a shell can name.
        let plain = name.len() <= 64
            && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let option = if plain { name } else { "NAME" };
        return Err(format!(
            "pinEnv {:?} is not a variable droidmcp may read a PIN from: start droidmcp with --pin-env {option} (or DROIDMCP_PIN_ENV={option}) to allow it; {}",
            crate::android::text::echoed(name),
            match allowed {
                [] => "none is allowed now".to_string(),
                _ => format!("allowed now: {}", allowed.join(", ")),
            }
        ));
    }
    let value = std::env::var(name).map_err(|_| {
        format!(
            "pinEnv names {:?}, which is not set in droidmcp's environment: set it where droidmcp starts (the MCP client's env block), never in a prompt",
            crate::android::text::echoed(name)
        )
    })?;
    if (4..=16).contains(&value.len()) && value.bytes().all(|b| b.is_ascii_digit()) {
        Ok(value)
    } else {
        // Its length and content are not said: they would tell part of it.
        Err(format!(
            "${name} does not hold a PIN (4 to 16 digits); nothing was typed"
        ))
    }
}

pub(super) async fn unlock(state: &State, device: Option<&str>, pin_env: Option<&str>) -> Result<DeviceOutput, String> {
    // Checked before anything reaches the device.
    let pin = pin_env.map(|name| pin_from(name, &state.pin_envs)).transpose()?;
    let serial = state.device(device).await.map_err(|e| e.to_string())?;
    let woke = report(state, &serial, WAKE).await.map_err(|e| e.to_string())?;
    if woke.awake == Some(false) {
        return Err("the screen did not turn on (input keyevent WAKEUP); nothing else was done".into());
    }
    if woke.locked != Some(true) {
        return Ok(answer("unlock", &serial, &woke, "the phone was not locked"));
    }
    let opened = report(state, &serial, DISMISS).await.map_err(|e| e.to_string())?;
    if opened.locked != Some(true) {
        return Ok(answer("unlock", &serial, &opened, "unlocked"));
    }
    let Some(pin) = pin else {
        return Err(
            "the phone asks for its PIN; its pad is showing. Put the PIN in an environment variable of droidmcp's (e.g. PHONE_PIN in the MCP client's env block, with DROIDMCP_PIN_ENV=PHONE_PIN to allow it) and call adb-device {operation: \"unlock\", pinEnv: \"PHONE_PIN\"}".into(),
        );
    };
    // The PIN reaches the device as one command whose log line and errors do not show it.
    let typed = format!("input text {} && input keyevent 66", crate::android::text::quote(&pin));
    state
        .adb
        .shell_secret(&serial, &typed, "input text <PIN> && input keyevent 66")
        .await
        .map_err(|e| e.to_string())?;
    let after = report(state, &serial, LOCK_STATE).await.map_err(|e| e.to_string())?;
    if after.locked == Some(true) {
        return Err(format!(
            "the phone stayed locked after the PIN from ${} was entered: it is not this phone's PIN (too many wrong PINs lock the phone for a while)",
            pin_env.unwrap_or_default()
        ));
    }
    Ok(answer("unlock", &serial, &after, "unlocked with the PIN"))
}
