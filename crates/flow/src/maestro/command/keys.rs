//! The commands that press one key: `hideKeyboard` and `back` (BACK, as Maestro sends on
//! Android), `pressKey` (every Maestro key name, or an Android key name or code).

use super::super::args::{no_argument, scalar_or_field};
use super::super::compat::Status;
use super::super::fields::NO_ARGUMENT;
use super::super::read::Reader;
use super::super::yaml::{at, string, typed};
use super::{Given, Spec};
use crate::{Action, Step};

pub(in crate::maestro) const HIDE_KEYBOARD: Spec = Spec {
    name: "hideKeyboard",
    status: Status::Replayed,
    note: "BACK, as Maestro sends on Android",
    own: NO_ARGUMENT,
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        no_argument(given.arg)?;
        Ok(Some(Action::Key { name: "BACK".into() }))
    }),
    with_the_flow: false,
};

/// Maestro's other spelling (`YamlFluentCommand.parse`: `"hide keyboard", "hideKeyboard"`).
pub(in crate::maestro) const HIDE_KEYBOARD_SPELT: Spec = Spec {
    name: "hide keyboard",
    note: "Maestro's other spelling of hideKeyboard",
    ..HIDE_KEYBOARD
};

pub(in crate::maestro) const BACK: Spec = Spec {
    name: "back",
    note: "",
    ..HIDE_KEYBOARD
};

pub(in crate::maestro) const PRESS_KEY: Spec = Spec {
    name: "pressKey",
    status: Status::Replayed,
    note: "every Maestro key name (Enter, Backspace, Back, Home, Lock, Power, Escape, Tab, Volume Up / Down, Remote Dpad *, Remote Media *, Remote System Navigation Up / Down, Remote Button A / B, Remote Menu, TV Input), or an Android key name or code",
    own: &["key", "optional"],
    aimed: &[],
    read: Some(|_: &mut Reader, given: &Given, _: &mut Vec<Step>| {
        let key = scalar_or_field(given.needed()?, given.name)?;
        let ours = typed(key, "ENTER".to_string(), || Ok(our_key(&string(key, given.name)?)))?;
        // Checked here, so a key the device cannot be sent fails with its line.
        if android::keys::key_code(&ours).is_none() {
            return Err(at(
                key,
                &format!(
                    "pressKey {:?} is none of Maestro's key names (Enter, Back, Home, Remote Dpad Up, Remote Media Play Pause, TV Input…) nor an Android key name or code",
                    android::text::echoed(&ours)
                ),
            ));
        }
        Ok(Some(Action::Key { name: ours }))
    }),
    with_the_flow: false,
};

/// Maestro's key names (its KeyCode list, matched ignoring case) as ours (`android::keys`);
/// any other name is taken as an Android key name or code.
fn our_key(name: &str) -> String {
    let ours = match name.to_ascii_lowercase().as_str() {
        "home" => "HOME",
        "back" => "BACK",
        "enter" => "ENTER",
        "backspace" => "DEL",
        "tab" => "TAB",
        "escape" => "ESCAPE",
        "volume up" => "VOLUME_UP",
        "volume down" => "VOLUME_DOWN",
        "power" | "lock" => "POWER",
        "remote dpad up" => "DPAD_UP",
        "remote dpad down" => "DPAD_DOWN",
        "remote dpad left" => "DPAD_LEFT",
        "remote dpad right" => "DPAD_RIGHT",
        "remote dpad center" => "DPAD_CENTER",
        "remote media play pause" => "MEDIA_PLAY_PAUSE",
        "remote media stop" => "MEDIA_STOP",
        "remote media next" => "MEDIA_NEXT",
        "remote media previous" => "MEDIA_PREVIOUS",
        "remote media rewind" => "MEDIA_REWIND",
        "remote media fast forward" => "MEDIA_FAST_FORWARD",
        "remote system navigation up" => "SYSTEM_NAVIGATION_UP",
        "remote system navigation down" => "SYSTEM_NAVIGATION_DOWN",
        "remote button a" => "BUTTON_A",
        "remote button b" => "BUTTON_B",
        "remote menu" => "MENU",
        "tv input" => "TV_INPUT",
        _ => return name.to_string(),
    };
    ours.into()
}
