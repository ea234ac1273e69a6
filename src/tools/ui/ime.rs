//! Typing what `input text` cannot send (any language, emoji, a literal `%s`) through an input
//! method that takes text by broadcast: ADBKeyBoard (`am broadcast -a ADB_INPUT_B64`), found
//! with `ime list -a -s`, switched to for the call and back.

use base64::Engine;

use crate::android::text::quote;
use crate::tools::State;

/// ADBKeyBoard's input method id (https://github.com/senzhk/ADBKeyBoard).
const ADB_KEYBOARD: &str = "com.android.adbkeyboard/.AdbIME";

/// What to do when the phone has no such input method.
fn missing() -> String {
    format!(
        "`text` holds characters `input text` cannot send (it delivers printable ASCII only), and this phone has no input method that takes text by broadcast. Install ADBKeyBoard (its APK from https://github.com/senzhk/ADBKeyBoard/releases, then adb-app {{operation: \"install\", path}}): ui type then switches to {ADB_KEYBOARD} for the call and back. Nothing was typed"
    )
}

/// Types `text` into the focused field through ADBKeyBoard: the input methods and the current
/// one in one round trip, then enable, switch, broadcast and switch back in another. The text
/// travels as base64 and is not logged.
pub(super) async fn type_by_broadcast(state: &State, serial: &str, text: &str) -> Result<(), String> {
    let out = state
        .adb
        .shell(serial, "ime list -a -s; settings get secure default_input_method")
        .await
        .map_err(|e| e.to_string())?;
    let listed = out.stdout_text();
    let mut lines: Vec<&str> = listed.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let current = lines.pop().unwrap_or_default().to_string();
    if !lines.contains(&ADB_KEYBOARD) {
        return Err(missing());
    }
    let b64 = base64::engine::general_purpose::STANDARD.encode(text);
    let back = match current.contains('/') && current != ADB_KEYBOARD {
        true => format!("; ime set {}", quote(&current)),
        false => String::new(),
    };
    let command = format!(
        "ime enable {ADB_KEYBOARD} >/dev/null; ime set {ADB_KEYBOARD} >/dev/null && am broadcast -a ADB_INPUT_B64 --es msg {b64}{back}"
    );
    let shown = format!("ime set {ADB_KEYBOARD} && am broadcast -a ADB_INPUT_B64 --es msg <text>{back}");
    let out = state
        .adb
        .shell_secret(serial, &command, &shown)
        .await
        .map_err(|e| e.to_string())?;
    if !out.stdout_text().contains("Broadcast completed: result=0") {
        return Err(format!(
            "ADBKeyBoard did not take the text (`am broadcast` said {:?}); check it with ime list -s",
            crate::android::text::cut(out.stdout_text().trim(), 200)
        ));
    }
    Ok(())
}
