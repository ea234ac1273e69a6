//! The states a real phone is in, played by the simulator: asleep (a black screencap,
//! `mWakefulness=Asleep`), locked with or without a PIN (systemui's keyguard window is what
//! uiautomator dumps), a screen that never goes idle (uiautomator's real error after its wait),
//! the keyboard shown (its window beside the app's, its frame in `dumpsys window`,
//! `mInputShown=true`), and system dialogs (an ANR, a crash, a permission prompt). The windows
//! are uiautomator XML modelled on what Android 14 prints (the `.xml` files here).
//!
//! Set by the profile's `[phone]` table, by real commands (`input keyevent POWER|SLEEP|WAKEUP`,
//! `locksettings set-pin|clear`, `wm dismiss-keyguard`), and by `sim-state`, a simulator-only
//! command for what no real command sets (see docs/simulator.md).

pub mod ime;

use crate::device::Device;
use crate::shell::Output;
use android::uiautomator::{UiTree, parse_ui_dump};

/// How long uiautomator waits for an idle screen before it gives up, as AOSP's `DumpCommand`
/// does (`waitForIdle(1000, 10_000)`).
pub const IDLE_WAIT_MS: u64 = 10_000;

/// The profile's `[phone]` table: the state at boot.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhoneSpec {
    /// The screen is off at boot (locked too, when there is a lock).
    #[serde(default)]
    pub asleep: bool,
    /// `"swipe"`, or a PIN of 4 to 16 digits; the phone boots locked.
    #[serde(default)]
    pub lock: Option<String>,
    /// uiautomator waits this many ms, then prints `ERROR: could not get idle state.`
    #[serde(default)]
    pub never_idle_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lock {
    None,
    Swipe,
    Pin(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialog {
    NotResponding,
    Crashed,
    Permission,
}

/// The phone's state on top of the app's screens.
#[derive(Debug, Clone)]
pub struct Phone {
    pub awake: bool,
    pub lock: Lock,
    /// The keyguard shows (only with a lock).
    pub locked: bool,
    /// The keyguard asks for the PIN; `entered` is what was typed into it.
    pub bouncer: bool,
    entered: String,
    pub never_idle_ms: Option<u64>,
    /// The input method's window shows (a tap focused a field; BACK or a new screen hides it).
    pub keyboard: bool,
    /// A system dialog over the app, and the app it speaks for.
    pub dialog: Option<(Dialog, String)>,
}

impl Phone {
    pub fn from_spec(spec: &PhoneSpec) -> Result<Phone, String> {
        let lock = match spec.lock.as_deref() {
            None | Some("none") => Lock::None,
            Some("swipe") => Lock::Swipe,
            Some(pin) => Lock::Pin(check_pin(pin)?),
        };
        Ok(Phone {
            awake: !spec.asleep,
            locked: lock != Lock::None,
            lock,
            bouncer: false,
            entered: String::new(),
            never_idle_ms: spec.never_idle_ms,
            keyboard: false,
            dialog: None,
        })
    }
}

fn check_pin(pin: &str) -> Result<String, String> {
    if (4..=16).contains(&pin.len()) && pin.bytes().all(|b| b.is_ascii_digit()) {
        Ok(pin.to_string())
    } else {
        Err(format!("a lock is \"swipe\" or a PIN of 4 to 16 digits; got {pin:?}"))
    }
}

const KEYGUARD: &str = include_str!("keyguard.xml");
const KEYGUARD_PIN: &str = include_str!("keyguard_pin.xml");
const KEYBOARD: &str = include_str!("keyboard.xml");
const ANR: &str = include_str!("anr.xml");
const CRASH: &str = include_str!("crash.xml");
const PERMISSION: &str = include_str!("permission.xml");

/// One of the windows above, its app's label put in, scaled from 1080×2400 to the display.
/// The label goes into the parsed attributes, never into XML text: any label is shown as it is.
fn window(xml: &str, app: &str, size: (u32, u32)) -> UiTree {
    let mut tree = parse_ui_dump(xml).expect("the phone's windows are valid dumps");
    for node in &mut tree.nodes {
        for (_, value) in node.attrs.iter_mut().filter(|(_, v)| v.contains("APP")) {
            *value = value.replace("APP", app);
        }
    }
    if size != (1080, 2400) {
        for node in &mut tree.nodes {
            if let Some(b) = node.bounds() {
                let x = |v: i32| (i64::from(v) * i64::from(size.0) / 1080) as i32;
                let y = |v: i32| (i64::from(v) * i64::from(size.1) / 2400) as i32;
                node.set_attr(
                    "bounds",
                    &format!("[{},{}][{},{}]", x(b.left), y(b.top), x(b.right), y(b.bottom)),
                );
            }
        }
    }
    tree
}

/// `other`'s nodes added after `tree`'s, as a second window of the same dump.
fn beside(mut tree: UiTree, other: UiTree) -> UiTree {
    let offset = tree.nodes.len();
    for mut node in other.nodes {
        node.parent = node.parent.map(|p| p + offset);
        node.children = node.children.iter().map(|c| c + offset).collect();
        tree.nodes.push(node);
    }
    tree
}

fn label_of(d: &Device, package: &str) -> String {
    d.package(package)
        .map_or_else(|| package.to_string(), |p| p.label.clone())
}

/// What uiautomator dumps now, in the display's natural orientation: the keyguard over
/// everything when locked (asleep or not: the views are still there), else a system dialog's
/// window, else the app with the keyboard's window beside it.
pub fn shown(d: &Device, app: UiTree) -> UiTree {
    let size = (d.display.width, d.display.height);
    let phone = &d.phone;
    if phone.locked {
        return window(if phone.bouncer { KEYGUARD_PIN } else { KEYGUARD }, "", size);
    }
    if let Some((dialog, package)) = &phone.dialog {
        let xml = match dialog {
            Dialog::NotResponding => ANR,
            Dialog::Crashed => CRASH,
            Dialog::Permission => PERMISSION,
        };
        return window(xml, &label_of(d, package), size);
    }
    if phone.keyboard {
        return beside(app, window(KEYBOARD, "", size));
    }
    app
}

/// The keyboard's frame on the natural display, when it shows.
fn keyboard_frame(d: &Device) -> Option<android::uiautomator::Bounds> {
    d.phone
        .keyboard
        .then(|| window(KEYBOARD, "", (d.display.width, d.display.height)).nodes[0].bounds())
        .flatten()
}

/// A tap: nothing while the screen is off or locked; a dialog's button answers it; on the
/// keyboard it presses a key, never the app behind; a tap that focuses a field shows the keyboard.
pub fn tap(d: &mut Device, x: i32, y: i32) {
    if !d.phone.awake || d.phone.locked {
        return;
    }
    if let Some((dialog, package)) = d.phone.dialog.clone() {
        let tree = shown(d, UiTree::default());
        let pressed = tree
            .deepest_at(x, y, |n| n.flag("clickable"))
            .map(|i| tree.nodes[i].resource_id().to_string());
        match (dialog, pressed.as_deref()) {
            (_, None) => {}
            (Dialog::Permission, Some(_)) | (Dialog::NotResponding, Some("android:id/aerr_wait")) => {
                close_dialog(d);
            }
            (_, Some(_)) => {
                close_dialog(d);
                d.force_stop(&package);
                d.key("HOME");
            }
        }
        return;
    }
    if keyboard_frame(d).is_some_and(|k| k.contains(x, y)) {
        return;
    }
    let screen = d.screen().name.clone();
    d.tap(x, y);
    d.phone.keyboard = d.screen().name == screen && d.focused_edit().is_some();
    d.generation += 1;
}

fn close_dialog(d: &mut Device) {
    d.phone.dialog = None;
    d.generation += 1;
}

/// A key event: POWER, SLEEP and WAKEUP turn the screen (sleep locks a phone with a lock);
/// nothing else reaches a sleeping phone. On the keyguard, MENU opens a swipe lock, ENTER checks
/// the PIN; BACK hides the keyboard, or dismisses a dialog.
pub fn key(d: &mut Device, name: &str) {
    d.generation += 1;
    let sleep = |d: &mut Device| {
        d.phone.awake = false;
        d.phone.locked = d.phone.lock != Lock::None;
        d.phone.bouncer = false;
        d.phone.keyboard = false;
    };
    match name {
        "POWER" if d.phone.awake => return sleep(d),
        "SLEEP" => return sleep(d),
        "POWER" | "WAKEUP" => {
            d.phone.awake = true;
            return;
        }
        _ if !d.phone.awake => return,
        _ => {}
    }
    if d.phone.locked {
        match name {
            "MENU" if d.phone.lock == Lock::Swipe => d.phone.locked = false,
            "BACK" => d.phone.bouncer = false,
            "DEL" if d.phone.bouncer => {
                d.phone.entered.pop();
            }
            "ENTER" if d.phone.bouncer => {
                let entered = std::mem::take(&mut d.phone.entered);
                if Lock::Pin(entered) == d.phone.lock {
                    d.phone.locked = false;
                    d.phone.bouncer = false;
                }
            }
            _ => {}
        }
        return;
    }
    if d.phone.dialog.is_some() {
        if name == "BACK" {
            close_dialog(d);
        }
        return;
    }
    if d.phone.keyboard && name == "BACK" {
        d.phone.keyboard = false;
        return;
    }
    let screen = d.screen().name.clone();
    d.key(name);
    if d.screen().name != screen {
        d.phone.keyboard = false;
    }
}

/// A finger moved from `from` to `to` (shown pixels), as `input swipe` and the touchscreen both
/// read it: under 20 px it is no swipe (false); else a swipe the way it mostly went.
pub fn swipe_between(d: &mut Device, from: [i32; 2], to: [i32; 2]) -> bool {
    let (dx, dy) = (to[0] - from[0], to[1] - from[1]);
    if dx.abs().max(dy.abs()) < 20 {
        return false;
    }
    let direction = if dy.abs() >= dx.abs() {
        if dy < 0 { "up" } else { "down" }
    } else if dx < 0 {
        "left"
    } else {
        "right"
    };
    swipe(d, direction);
    true
}

/// A swipe: up on the keyguard opens a swipe lock, or shows the PIN pad.
pub fn swipe(d: &mut Device, direction: &str) {
    if !d.phone.awake || d.phone.dialog.is_some() {
        return;
    }
    if d.phone.locked {
        if direction == "up" {
            dismiss_keyguard(d);
        }
        return;
    }
    let screen = d.screen().name.clone();
    d.swipe(direction);
    if d.screen().name != screen {
        d.phone.keyboard = false;
    }
}

/// What swiping up (or `wm dismiss-keyguard`) does: a swipe lock opens, a PIN lock asks for it.
fn dismiss_keyguard(d: &mut Device) {
    d.generation += 1;
    match d.phone.lock {
        Lock::Pin(_) => d.phone.bouncer = true,
        _ => d.phone.locked = false,
    }
}

/// `input text`: into the PIN pad when it shows, into the focused field when the app shows.
pub fn type_text(d: &mut Device, text: &str) {
    if !d.phone.awake || d.phone.dialog.is_some() {
        return;
    }
    if d.phone.locked {
        if d.phone.bouncer {
            d.phone.entered.push_str(text);
        }
        return;
    }
    d.type_text(text);
}

/// `wm dismiss-keyguard`, as Android 8+ runs it.
pub fn wm_dismiss_keyguard(d: &mut Device) -> Output {
    if d.phone.locked && d.phone.awake {
        dismiss_keyguard(d);
    }
    Output::default()
}

/// `locksettings set-pin PIN`, `locksettings clear --old PIN`, `locksettings get-disabled`.
pub fn locksettings(d: &mut Device, args: &[&str]) -> Output {
    match args {
        ["set-pin", pin] => match check_pin(pin) {
            Ok(pin) => {
                d.phone.lock = Lock::Pin(pin.clone());
                Output::ok(format!("Pin set to '{pin}'\n"))
            }
            Err(e) => Output::err(255, format!("Error while executing command: set-pin\n{e}\n")),
        },
        ["clear", "--old", old] if Lock::Pin(old.to_string()) == d.phone.lock || d.phone.lock == Lock::Swipe => {
            d.phone.lock = Lock::None;
            d.phone.locked = false;
            Output::ok("Lock credential cleared\n")
        }
        ["clear", ..] => Output::err(255, "Old password provided but user has no password\n"),
        _ => Output::err(255, "usage: locksettings set-pin PIN | clear --old PIN\n"),
    }
}

/// `sim-state`: what no real command sets. `costs`, `link usb|wifi`, `never-idle MS|off`, `dialog anr|crash|permission
/// [PKG]|off`, `lock swipe|PIN|none` (locks now when the screen is on).
pub fn sim_state(d: &mut Device, args: &[&str]) -> Output {
    d.generation += 1;
    let usage = "usage: sim-state costs | link usb|wifi | never-idle MS|off | dialog anr|crash|permission [PACKAGE]|off | lock swipe|PIN|none | input refuse|allow|capture NAME|writes\n";
    match args {
        ["costs"] => return Output::ok(crate::costs::report(d)),
        ["link", link] => {
            return match crate::costs::switch_link(d, link) {
                Ok(said) => Output::ok(said),
                Err(why) => Output::err(2, why),
            };
        }
        ["input", "refuse"] => d.touch.refused = true,
        ["input", "allow"] => d.touch.refused = false,
        ["input", "capture", name] => match crate::touch::Touch::named(name) {
            Ok(mut touch) => {
                touch.refused = d.touch.refused;
                d.touch = touch;
            }
            Err(why) => return Output::err(2, format!("{why}\n")),
        },
        ["input", "writes"] => return Output::ok(format!("writes={}\n", d.touch.writes)),
        ["never-idle", "off"] => d.phone.never_idle_ms = None,
        ["never-idle", ms] => match ms.parse::<u64>() {
            Ok(ms) if ms <= 60_000 => d.phone.never_idle_ms = Some(ms),
            _ => return Output::err(2, format!("never-idle takes ms (0-60000) or off; got {ms}\n")),
        },
        ["dialog", "off"] => d.phone.dialog = None,
        ["dialog", kind, rest @ ..] if rest.len() <= 1 => {
            let kind = match *kind {
                "anr" => Dialog::NotResponding,
                "crash" => Dialog::Crashed,
                "permission" => Dialog::Permission,
                _ => return Output::err(2, usage),
            };
            let package = rest
                .first()
                .map_or_else(|| d.screen().package.clone(), |p| p.to_string());
            d.phone.dialog = Some((kind, package));
            d.phone.keyboard = false;
        }
        ["lock", "none"] => {
            d.phone.lock = Lock::None;
            d.phone.locked = false;
        }
        ["lock", lock] => {
            d.phone.lock = match *lock {
                "swipe" => Lock::Swipe,
                pin => match check_pin(pin) {
                    Ok(pin) => Lock::Pin(pin),
                    Err(e) => return Output::err(2, format!("{e}\n")),
                },
            };
            d.phone.locked = true;
            d.phone.bouncer = false;
            d.phone.keyboard = false;
        }
        _ => return Output::err(2, usage),
    }
    Output::default()
}

/// `dumpsys power`'s wakefulness lines.
pub fn power_dump(d: &Device) -> String {
    let w = if d.phone.awake { "Awake" } else { "Asleep" };
    format!(
        "POWER MANAGER (dumpsys power)\n\nPower Manager State:\n  mDirty=0x0\n  mWakefulness={w}\n  mWakefulnessChanging=false\n  mIsPowered={}\n  mStayOn=false\n  mBatteryLevel={}\n",
        d.battery.powered != "none",
        d.battery.level
    )
}

/// `dumpsys input_method`'s state lines (Gboard as the input method).
pub fn input_method_dump(d: &Device) -> String {
    format!(
        "Current Input Method Manager state:\n  mCurMethodId=com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME\n  mCurFocusedWindowSoftInputMode=STATE_UNSPECIFIED|ADJUST_PAN\n  mInputShown={}\n  mShowRequested={}\n",
        d.phone.keyboard, d.phone.keyboard
    )
}

/// What `dumpsys window` adds for the phone's state: the keyboard's window (visible or not,
/// with its frame) and the policy's awake and keyguard lines, as Android 14 prints them.
pub fn window_dump(d: &Device) -> String {
    let frame = window(KEYBOARD, "", (d.display.width, d.display.height)).nodes[0]
        .bounds()
        .unwrap_or_default();
    let shown = d.phone.keyboard;
    format!(
        "  Window #1 Window{{88b5c7c u0 InputMethod}}:\n    mOwnerUid=10184 showForAllUsers=false package=com.google.android.inputmethod.latin appop=NONE\n    mIsImWindow=true mIsWallpaper=false mIsFloatingLayer=true\n    mHasSurface={shown} isReadyForDisplay()={shown} mWindowRemovalAllowed=false\n    Frames: parent=[0,0][{w},{h}] display=[0,0][{w},{h}] frame=[{l},{t}][{r},{b}] last=[{l},{t}][{r},{b}] insetsChanged=false\n    isOnScreen={shown}\n    isVisible={shown}\n  mInputMethodWindow=Window{{88b5c7c u0 InputMethod}}\n\nWINDOW MANAGER POLICY STATE (dumpsys window policy)\n    mAwake={awake}\n    mScreenOnEarly={awake} mScreenOnFully={awake}\n    mKeyguardDrawComplete=true mWindowManagerDrawComplete=true\n    mShowingDream=false mDreamingLockscreen={dreaming} isStatusBarKeyguard={locked}\n",
        w = d.display.width,
        h = d.display.height,
        l = frame.left,
        t = frame.top,
        r = frame.right,
        b = frame.bottom,
        awake = d.phone.awake,
        dreaming = d.phone.locked && !d.phone.awake,
        locked = d.phone.locked,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use android::screen_state::{DialogKind, ScreenState, combine, from_dump, parse_reports};

    fn device() -> Device {
        let sim = crate::Simulator::builtin(None, crate::AuthPolicy::None).unwrap();
        sim.device
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn state(d: &Device) -> ScreenState {
        let report = format!("{}{}{}", window_dump(d), power_dump(d), input_method_dump(d));
        combine(&parse_reports(&report), &from_dump(&d.shown_tree()))
    }

    /// Each state the simulator plays is the one the parser names, from its dump and its reports.
    #[test]
    fn each_state_played_is_the_state_named() {
        let mut d = device();
        assert_eq!(state(&d), ScreenState::Ready);
        sim_state(&mut d, &["lock", "1234"]);
        assert_eq!(state(&d), ScreenState::Locked { needs_pin: false });
        key(&mut d, "POWER");
        assert_eq!(state(&d), ScreenState::Asleep { locked: true });
        key(&mut d, "WAKEUP");
        swipe(&mut d, "up");
        assert_eq!(state(&d), ScreenState::Locked { needs_pin: true });
        type_text(&mut d, "1234");
        key(&mut d, "ENTER");
        assert_eq!(state(&d), ScreenState::Ready);
        sim_state(&mut d, &["dialog", "anr", "org.droidmcp.demo.login"]);
        let ScreenState::Dialog { kind, text } = state(&d) else {
            panic!("{:?}", state(&d))
        };
        assert_eq!(
            (kind, text.as_str()),
            (DialogKind::NotResponding, "Login Demo isn't responding")
        );
        key(&mut d, "BACK");
        d.launch("org.droidmcp.demo.login").unwrap();
        tap(&mut d, 540, 665);
        assert!(matches!(state(&d), ScreenState::Keyboard { .. }), "{:?}", state(&d));
        key(&mut d, "BACK");
        assert_eq!(state(&d), ScreenState::Ready);
    }

    /// What no shell can pass (a NUL) still dumps, as `.`; the rest of the label as it is.
    #[test]
    fn a_label_with_any_character_is_dumped_as_uiautomator_shows_it() {
        let mut d = device();
        sim_state(&mut d, &["dialog", "crash", "a\0b & <c> \"d\" ]]> \u{1}\n"]);
        let dump = android::uiautomator::parse_ui_dump(&d.shown_tree().to_xml()).unwrap();
        assert!(
            dump.nodes
                .iter()
                .any(|n| n.text() == "a.b & <c> \"d\" ]]> .\n keeps stopping"),
            "{dump:?}"
        );
    }

    #[test]
    fn a_wrong_pin_keeps_the_phone_locked() {
        let mut d = device();
        sim_state(&mut d, &["lock", "1234"]);
        swipe(&mut d, "up");
        type_text(&mut d, "9999");
        key(&mut d, "ENTER");
        assert!(d.phone.locked);
    }
}
