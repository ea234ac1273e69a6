//! Key names an assistant uses, and their `android.view.KeyEvent` codes; the simulator
//! answers `input keyevent` from the same table.

pub const KEYS: [(&str, u32); 38] = [
    ("HOME", 3),
    ("BACK", 4),
    ("CALL", 5),
    ("ENDCALL", 6),
    ("DPAD_UP", 19),
    ("DPAD_DOWN", 20),
    ("DPAD_LEFT", 21),
    ("DPAD_RIGHT", 22),
    ("DPAD_CENTER", 23),
    ("VOLUME_UP", 24),
    ("VOLUME_DOWN", 25),
    ("POWER", 26),
    ("CAMERA", 27),
    ("TAB", 61),
    ("SPACE", 62),
    ("ENTER", 66),
    ("DEL", 67),
    ("MENU", 82),
    ("SEARCH", 84),
    ("MEDIA_PLAY_PAUSE", 85),
    ("MEDIA_STOP", 86),
    ("MEDIA_NEXT", 87),
    ("MEDIA_PREVIOUS", 88),
    ("MEDIA_REWIND", 89),
    ("MEDIA_FAST_FORWARD", 90),
    ("BUTTON_A", 96),
    ("BUTTON_B", 97),
    ("ESCAPE", 111),
    ("FORWARD_DEL", 112),
    ("MOVE_HOME", 122),
    ("MOVE_END", 123),
    ("VOLUME_MUTE", 164),
    ("TV_INPUT", 178),
    ("APP_SWITCH", 187),
    ("SLEEP", 223),
    ("WAKEUP", 224),
    ("SYSTEM_NAVIGATION_UP", 280),
    ("SYSTEM_NAVIGATION_DOWN", 281),
];

/// A name (`back`, `KEYCODE_BACK`) or a code number (0–400) → the code.
pub fn key_code(name: &str) -> Option<u32> {
    if let Ok(code) = name.trim().parse::<u32>() {
        return (code <= 400).then_some(code);
    }
    let upper = name.trim().to_ascii_uppercase();
    let upper = upper.strip_prefix("KEYCODE_").unwrap_or(&upper);
    KEYS.iter().find(|(n, _)| *n == upper).map(|(_, c)| *c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_codes_and_unknowns() {
        assert_eq!(key_code("back"), Some(4));
        assert_eq!(key_code("KEYCODE_ENTER"), Some(66));
        assert_eq!(key_code("187"), Some(187));
        assert_eq!(key_code("reboot"), None);
        assert_eq!(key_code("9999"), None);
    }
}
