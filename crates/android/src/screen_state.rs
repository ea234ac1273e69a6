//! The state a real phone is in, recognised from what it reports (`dumpsys window`, `dumpsys
//! power`, `dumpsys input_method`, uiautomator's own messages) and from the window dump itself,
//! whichever shows it: asleep, locked, a screen that never goes idle, the keyboard shown, a
//! system dialog over the app. Pure: text and trees in, a `Reported` or `ScreenState` out.

use super::uiautomator::{Bounds, UiTree};

/// What uiautomator prints (on stderr) when the screen kept changing for its whole wait (10 s
/// on AOSP's `DumpCommand`: idle 1 s within 10 s): a video, a spinner, a looping animation.
pub const NOT_IDLE: &str = "could not get idle state";

/// Whether uiautomator's output says the screen never went idle.
pub fn never_idle(output: &str) -> bool {
    output.contains(NOT_IDLE)
}

/// What the system services report, each `None` when the text does not say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reported {
    /// `mWakefulness=Awake` (power) or `mAwake=true` (window policy).
    pub awake: Option<bool>,
    /// The keyguard shows: `isStatusBarKeyguard=true`, `mShowingLockscreen=true`,
    /// `mDreamingLockscreen=true`, or a visible `Keyguard`/`NotificationShade` window that holds
    /// the focus while locked.
    pub locked: Option<bool>,
    /// The input method's window frame, when it is shown (`mInputShown=true`, or an
    /// `InputMethod` window that is visible).
    pub keyboard: Option<Bounds>,
    /// `mInputShown=` from `dumpsys input_method`.
    pub input_shown: Option<bool>,
}

/// Reads any mix of `dumpsys window` (whole, or grepped to its state lines), `dumpsys power`
/// and `dumpsys input_method` output.
pub fn parse_reports(text: &str) -> Reported {
    let mut r = Reported::default();
    // The window block being read (`Window #7 Window{88b5c7c u0 InputMethod}:`), and whether
    // the input method's block said it is visible.
    let mut in_ime = false;
    let mut ime_visible = false;
    let mut ime_frame = None;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("Window #") {
            in_ime = line.contains(" InputMethod}");
            continue;
        }
        for word in line.split_whitespace() {
            let Some((key, value)) = word.split_once('=') else {
                continue;
            };
            match key {
                "mWakefulness" => r.awake = Some(value == "Awake"),
                "mAwake" => r.awake = Some(value == "true"),
                "isStatusBarKeyguard" | "mShowingLockscreen" | "mDreamingLockscreen" if value == "true" => {
                    r.locked = Some(true)
                }
                "isStatusBarKeyguard" | "mShowingLockscreen" => {
                    r.locked.get_or_insert(false);
                }
                "mInputShown" => r.input_shown = Some(value == "true"),
                "isVisible" | "isOnScreen" if in_ime && value == "true" => ime_visible = true,
                "frame" if in_ime => ime_frame = Bounds::parse(value),
                _ => {}
            }
        }
    }
    let shown = r.input_shown.unwrap_or(ime_visible);
    if shown {
        r.keyboard = ime_frame.filter(|f| !f.is_empty());
    }
    r
}

/// The system dialogs a person must answer before the app goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DialogKind {
    /// "App isn't responding": Close app / Wait.
    NotResponding,
    /// "App keeps stopping" (or "has stopped"): App info / Close app.
    Crashed,
    /// A runtime permission prompt: Allow / Don't allow.
    Permission,
}

/// What the dump itself shows about the phone.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Seen {
    /// systemui's keyguard window is what is dumped.
    pub keyguard: bool,
    /// The keyguard asks for a PIN, password or pattern (its bouncer shows).
    pub bouncer: bool,
    /// The input method's window, dumped beside the app's.
    pub keyboard: Option<Bounds>,
    /// A system dialog, its kind and its message.
    pub dialog: Option<(DialogKind, String)>,
}

/// Packages whose windows are input methods (Gboard, AOSP, Samsung, SwiftKey, ADBKeyBoard…).
fn is_input_method(package: &str) -> bool {
    ["inputmethod", "keyboard", "honeyboard", "swiftkey"]
        .iter()
        .any(|k| package.contains(k))
}

/// Recognises the keyguard, the keyboard and system dialogs in a dump.
pub fn from_dump(tree: &UiTree) -> Seen {
    let mut seen = Seen::default();
    for root in tree.roots() {
        let node = &tree.nodes[root];
        if is_input_method(node.package()) {
            seen.keyboard = node.bounds();
        }
    }
    let id_has = |needle: &str| tree.nodes.iter().any(|n| n.resource_id().contains(needle));
    let systemui = |n: &super::uiautomator::UiNode| n.package() == "com.android.systemui";
    seen.keyguard = tree.nodes.iter().any(|n| {
        systemui(n) && (n.resource_id().contains(":id/keyguard_") || n.resource_id().ends_with(":id/lock_icon_view"))
    });
    seen.bouncer = [
        "keyguard_pin_view",
        "keyguard_password_view",
        "keyguard_pattern_view",
        ":id/pinEntry",
    ]
    .iter()
    .any(|id| id_has(id));
    let text_of = |id_end: &str| {
        tree.nodes
            .iter()
            .find(|n| n.resource_id().ends_with(id_end))
            .map(|n| n.text().trim().to_string())
    };
    let title = text_of(":id/alertTitle").unwrap_or_default();
    if id_has("android:id/aerr_wait") || title.contains("isn't responding") || title.contains("not responding") {
        seen.dialog = Some((DialogKind::NotResponding, title));
    } else if id_has("android:id/aerr_close") || title.contains("keeps stopping") || title.contains("has stopped") {
        seen.dialog = Some((DialogKind::Crashed, title));
    } else if tree.nodes.iter().any(|n| n.package().contains("permissioncontroller"))
        && (id_has(":id/permission_allow") || id_has(":id/grant_dialog"))
    {
        let message = text_of(":id/permission_message").unwrap_or_default();
        seen.dialog = Some((DialogKind::Permission, message));
    }
    seen
}

/// The phone's state as an answer names it, most pressing first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScreenState {
    Asleep { locked: bool },
    Locked { needs_pin: bool },
    Keyboard { frame: Bounds },
    Dialog { kind: DialogKind, text: String },
    Ready,
}

/// One state from what the device reported and what its dump showed: either source may be the
/// one that shows it (a grepped report lacks the dump's dialog; an older dump lacks the IME).
pub fn combine(reported: &Reported, seen: &Seen) -> ScreenState {
    let locked = seen.keyguard || seen.bouncer || reported.locked == Some(true);
    if reported.awake == Some(false) {
        return ScreenState::Asleep { locked };
    }
    if locked {
        return ScreenState::Locked {
            needs_pin: seen.bouncer,
        };
    }
    if let Some((kind, text)) = &seen.dialog {
        return ScreenState::Dialog {
            kind: *kind,
            text: text.clone(),
        };
    }
    match seen.keyboard.or(reported.keyboard) {
        Some(frame) => ScreenState::Keyboard { frame },
        None => ScreenState::Ready,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uiautomator::parse_ui_dump;

    #[test]
    fn power_window_and_input_method_lines_as_phones_print_them() {
        let asleep =
            parse_reports("POWER MANAGER (dumpsys power)\n  mWakefulness=Asleep\n  mWakefulnessChanging=false\n");
        assert_eq!(asleep.awake, Some(false));
        let awake = parse_reports("    mAwake=true\n    mScreenOnEarly=true mScreenOnFully=true\n");
        assert_eq!(awake.awake, Some(true));
        let locked = parse_reports("    mShowingLockscreen=true mShowingDream=false mDreamingLockscreen=false\n");
        assert_eq!(locked.locked, Some(true));
        let unlocked = parse_reports("    isStatusBarKeyguard=false\n");
        assert_eq!(unlocked.locked, Some(false));
        let ime = parse_reports(
            "  Window #7 Window{88b5c7c u0 InputMethod}:\n    isVisible=true\n    Frames: parent=[0,142][1080,2424] display=[0,142][1080,2424] frame=[0,1480][1080,2424] last=[0,1480][1080,2424]\n  Window #8 Window{1 u0 com.app/.Main}:\n    Frames: parent=[0,0][1080,2424] frame=[0,0][1080,2424]\n",
        );
        assert_eq!(ime.keyboard, Bounds::parse("[0,1480][1080,2424]"));
        let hidden =
            "  Window #7 Window{88b5c7c u0 InputMethod}:\n    Frames: frame=[0,1480][1080,2424]\n  mInputShown=false\n";
        assert_eq!(parse_reports(hidden).keyboard, None);
    }

    /// The real emulator capture: its InputMethod window is there but hidden (isVisible=false,
    /// no surface), so no keyboard; nothing says locked or asleep.
    #[test]
    fn the_real_window_capture_shows_no_keyboard() {
        let Some(dir) = captures() else { return };
        let text = std::fs::read_to_string(dir.join("dumpsys-window-windows_emulator.txt")).unwrap();
        let r = parse_reports(&text);
        assert_eq!(r.keyboard, None, "{r:?}");
        assert_eq!(r.locked, None);
    }

    /// The real permission prompt is a dialog with its message; the real shade and launcher are
    /// no keyguard, dialog or keyboard.
    #[test]
    fn real_dumps_name_the_permission_prompt_and_nothing_else() {
        let Some(dir) = captures() else { return };
        let read = |name: &str| parse_ui_dump(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap();
        let prompt = from_dump(&read(
            "uiautomator_permission-dialog_permissioncontroller_emulator-1080x2400.xml",
        ));
        assert_eq!(
            prompt.dialog,
            Some((
                DialogKind::Permission,
                "Allow Camera to access this device’s location?".into()
            ))
        );
        for name in [
            "uiautomator_notification-shade_systemui_emulator-1080x2424.xml",
            "uiautomator_launcher-home_pixel-launcher_emulator-1080x2400.xml",
            "uiautomator_login-form_wdio-demo-app_emulator-1080x2424.xml",
        ] {
            assert_eq!(from_dump(&read(name)), Seen::default(), "{name}");
        }
    }

    #[test]
    fn never_idle_is_uiautomators_own_line() {
        assert!(never_idle("ERROR: could not get idle state.\n"));
        assert!(!never_idle("UI hierchary dumped to: /dev/tty\n"));
    }

    #[test]
    fn asleep_outranks_locked_which_outranks_a_dialog() {
        let seen = Seen {
            keyguard: true,
            dialog: Some((DialogKind::Crashed, "x keeps stopping".into())),
            ..Seen::default()
        };
        let asleep = Reported {
            awake: Some(false),
            ..Reported::default()
        };
        assert_eq!(combine(&asleep, &seen), ScreenState::Asleep { locked: true });
        assert_eq!(
            combine(&Reported::default(), &seen),
            ScreenState::Locked { needs_pin: false }
        );
    }

    /// Generated reports: any mix of wakefulness lines, window blocks and junk. The last
    /// wakefulness line decides `awake`; a keyboard is only ever an input method's non-empty frame.
    #[test]
    fn generated_reports_say_what_their_last_lines_say() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let fragment = prop_oneof![
            Just(("  mWakefulness=Asleep".to_string(), Some(false))),
            Just(("  mWakefulness=Awake".to_string(), Some(true))),
            Just(("    mAwake=false".to_string(), Some(false))),
            Just(("    mAwake=true mScreenOnFully=true".to_string(), Some(true))),
            Just(("  Window #7 Window{88b5c7c u0 InputMethod}:".to_string(), None)),
            Just(("  Window #2 Window{1 u0 com.app/.Main}:".to_string(), None)),
            Just(("    isVisible=true".to_string(), None)),
            Just((
                "    Frames: parent=[0,0][1080,2400] frame=[0,1480][1080,2400]".to_string(),
                None
            )),
            Just(("    Frames: frame=[0,0][0,0]".to_string(), None)),
            // Junk: lower case only, so it can never spell a key.
            "[a-z #{}\\[\\],=0-9]{0,40}".prop_map(|j| (j, None)),
        ];
        let mut runner = TestRunner::new(Config::with_cases(256));
        let cases = std::cell::Cell::new(0);
        runner
            .run(&prop::collection::vec(fragment, 0..30), |lines| {
                cases.set(cases.get() + 1);
                let text: String = lines.iter().map(|(l, _)| format!("{l}\n")).collect();
                let r = parse_reports(&text);
                let last = lines.iter().rev().find_map(|(_, awake)| *awake);
                prop_assert_eq!(r.awake, last, "{}", text);
                if let Some(frame) = r.keyboard {
                    prop_assert!(!frame.is_empty() && text.contains(" InputMethod}:"), "{}", text);
                }
                Ok(())
            })
            .unwrap();
        eprintln!("{} cases", cases.get());
    }

    /// `../shared/device-captures`, when it is there (testkit's one skip rule).
    fn captures() -> Option<std::path::PathBuf> {
        testkit::captures_dir()
    }
}
