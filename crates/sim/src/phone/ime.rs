//! Input methods: Gboard, always there, and ADBKeyBoard, the open-source input method that
//! takes text by broadcast (`am broadcast -a ADB_INPUT_B64 --es msg BASE64`), present once its
//! package `com.android.adbkeyboard` is installed. `ime list|enable|set`, the current one in
//! `settings get secure default_input_method`, and the broadcast, as a phone answers them.

use base64::Engine;

use crate::device::Device;
use crate::shell::Output;

pub const GBOARD: &str = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME";
pub const ADB_KEYBOARD: &str = "com.android.adbkeyboard/.AdbIME";
const CURRENT: &str = "settings.secure.default_input_method";
const ENABLED: &str = "settings.secure.enabled_input_methods";

/// The input method settings a phone has from the start: Gboard, current and enabled.
pub fn default_setting(namespace: &str, key: &str) -> Option<String> {
    (namespace == "secure" && matches!(key, "default_input_method" | "enabled_input_methods")).then(|| GBOARD.into())
}

fn current(d: &Device) -> String {
    d.prop(CURRENT).unwrap_or_else(|| GBOARD.into())
}

/// The input methods installed: Gboard, and ADBKeyBoard when its package is.
fn installed(d: &Device) -> Vec<&'static str> {
    let mut all = vec![GBOARD];
    if d.package("com.android.adbkeyboard").is_some() {
        all.push(ADB_KEYBOARD);
    }
    all
}

fn enabled(d: &Device) -> Vec<String> {
    let list = d.prop(ENABLED).unwrap_or_else(|| GBOARD.into());
    let installed = installed(d);
    list.split(':')
        .filter(|id| installed.contains(id))
        .map(String::from)
        .collect()
}

/// `ime list -s [-a]`, `ime enable ID`, `ime set ID`.
pub fn ime(d: &mut Device, args: &[&str]) -> Output {
    match args {
        ["list", flags @ ..] if flags.contains(&"-s") => {
            let ids: Vec<String> = match flags.contains(&"-a") {
                true => installed(d).into_iter().map(String::from).collect(),
                false => enabled(d),
            };
            Output::ok(ids.iter().map(|id| format!("{id}\n")).collect::<String>())
        }
        ["enable", id] if installed(d).contains(id) => {
            let mut list = enabled(d);
            if !list.iter().any(|e| e == id) {
                list.push(id.to_string());
            }
            d.props.insert(ENABLED.into(), list.join(":"));
            Output::ok(format!("Input method {id}: now enabled for user #0\n"))
        }
        ["set", id] if enabled(d).iter().any(|e| e == id) => {
            d.props.insert(CURRENT.into(), id.to_string());
            Output::ok(format!("Input method {id} selected for user #0\n"))
        }
        ["enable", id] => Output::err(
            255,
            format!("Unknown input method {id} cannot be enabled for user #0\n"),
        ),
        ["set", id] => Output::err(
            255,
            format!("Unknown input method {id} cannot be selected for user #0\n"),
        ),
        _ => Output::err(255, "ime <command>: list -s [-a], enable ID, set ID\n"),
    }
}

/// `am broadcast -a ADB_INPUT_B64 --es msg BASE64`: ADBKeyBoard types the text into the focused
/// field, when it is the current input method; any other broadcast reaches no receiver.
pub fn broadcast(d: &mut Device, args: &[&str]) -> Output {
    let after = |flag: &str| {
        args.iter()
            .position(|a| *a == flag)
            .and_then(|i| args.get(i + 1))
            .copied()
    };
    let action = after("-a").unwrap_or_default();
    let done =
        format!("Broadcasting: Intent {{ act={action} flg=0x400000 (has extras) }}\nBroadcast completed: result=0\n");
    let message = args.windows(3).find(|w| w[0] == "--es" && w[1] == "msg").map(|w| w[2]);
    if action == "ADB_INPUT_B64" && current(d) == ADB_KEYBOARD {
        let text = message.and_then(|m| base64::engine::general_purpose::STANDARD.decode(m).ok());
        match text.and_then(|t| String::from_utf8(t).ok()) {
            Some(text) => super::type_text(d, &text),
            None => return Output::ok(done.replace("result=0", "result=-1")),
        }
    }
    Output::ok(done)
}
