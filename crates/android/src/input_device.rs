//! The kernel's input devices, as `getevent -lp` lists them, and the events a touch or a key is
//! made of there: the touchscreen (INPUT_PROP_DIRECT with ABS_MT_POSITION_X/Y), its axis ranges,
//! the key devices; multitouch protocol B events encoded as the kernel's `struct input_event`
//! (24 bytes on a 64-bit kernel, 16 on a 32-bit one), decoded again (the simulator plays them),
//! and written by one `printf` of octal escapes. Display points are turned to the natural
//! orientation and scaled to the axis as Android's TouchInputMapper scales back.

use crate::text::quote;

/// One axis: `ABS_MT_POSITION_X : value 0, min 0, max 4095, …`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Axis {
    pub min: i32,
    pub max: i32,
}

impl Axis {
    /// The raw values the axis covers; at least one, so an axis that describes nothing
    /// (`min 0, max -1`) never divides.
    fn span(&self) -> i64 {
        (i64::from(self.max) - i64::from(self.min) + 1).max(1)
    }

    /// An axis that covers more than one value: Android disables a touch device whose position
    /// axes do not ("did not report support for X or Y axis").
    fn valid(&self) -> bool {
        self.max > self.min
    }

    /// `num / den` of the way from `min` to `max`, without overflow at any i32 range.
    fn part(&self, num: i64, den: i64) -> i32 {
        (i64::from(self.min) + (i64::from(self.max) - i64::from(self.min)) * num / den) as i32
    }
}

/// One device of `getevent -lp`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputDevice {
    pub path: String,
    pub name: String,
    pub keys: Vec<String>,
    pub axes: Vec<(String, Axis)>,
    pub props: Vec<String>,
}

impl InputDevice {
    pub fn axis(&self, name: &str) -> Option<Axis> {
        self.axes.iter().find(|(n, _)| n == name).map(|(_, a)| *a)
    }
}

/// Reads `getevent -lp`. Lines it does not know (bus, vendor, switches) are skipped.
pub fn parse_getevent(text: &str) -> Vec<InputDevice> {
    let mut devices: Vec<InputDevice> = Vec::new();
    let mut section = "";
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(rest) = line.strip_prefix("add device ") {
            let path = rest.split_once(':').map(|(_, p)| p.trim()).unwrap_or_default();
            devices.push(InputDevice {
                path: path.split_whitespace().next().unwrap_or_default().to_string(),
                ..InputDevice::default()
            });
            section = "";
            continue;
        }
        let Some(device) = devices.last_mut() else { continue };
        if let Some(name) = line.strip_prefix("name:") {
            device.name = name.trim().trim_matches('"').to_string();
            continue;
        }
        if line == "input props:" {
            section = "props";
            continue;
        }
        // `KEY (0001): …`, `ABS (0003): …`, `SW  (0005): …`: a new event type; its list goes on
        // over the lines below without the prefix.
        let body = match line.split_once("):") {
            Some((kind, body)) if kind.contains(" (") || kind.contains("  (") => {
                section = match kind.split_whitespace().next() {
                    Some("KEY") => "key",
                    Some("ABS") => "abs",
                    _ => "other",
                };
                body.trim()
            }
            _ => line,
        };
        match section {
            "key" => device.keys.extend(body.split_whitespace().map(str::to_string)),
            "abs" => {
                if let Some((name, info)) = body.split_once(':')
                    && let (Some(min), Some(max)) = (field(info, "min"), field(info, "max"))
                {
                    device.axes.push((name.trim().to_string(), Axis { min, max }));
                }
            }
            "props" if line != "<none>" && !line.is_empty() => device.props.push(line.to_string()),
            _ => {}
        }
    }
    devices
}

fn field(info: &str, name: &str) -> Option<i32> {
    info.split(',').find_map(|part| {
        let (k, v) = part.trim().split_once(' ')?;
        (k == name).then(|| v.trim().parse().ok()).flatten()
    })
}

/// What a touchscreen reports: its node, the position axes and the optional ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touchscreen {
    pub path: String,
    pub name: String,
    pub x: Axis,
    pub y: Axis,
    pub slot: Option<Axis>,
    pub tracking: Axis,
    pub pressure: Option<Axis>,
    pub touch_major: Option<Axis>,
}

/// The touchscreen: a direct device (INPUT_PROP_DIRECT) with both multitouch position axes valid.
/// A device listed without its props (older `getevent`) counts when no other is direct. Where
/// several qualify (an emulator's `virtio_input_multi_touch_1…11`, one per possible display; a
/// vivo's `vivo_ts` beside `synaptics_tcm_touch`), the lowest-numbered node: the one display 0's
/// panel was bound to first on the devices published, whatever order `getevent` lists them in.
pub fn touchscreen(devices: &[InputDevice]) -> Option<Touchscreen> {
    let positional = |d: &&InputDevice| {
        let valid = |name| d.axis(name).is_some_and(|a: Axis| a.valid());
        valid("ABS_MT_POSITION_X") && valid("ABS_MT_POSITION_Y")
    };
    let direct = |d: &&InputDevice| d.props.iter().any(|p| p == "INPUT_PROP_DIRECT");
    let device = match devices.iter().filter(positional).any(|d| direct(&d)) {
        true => devices
            .iter()
            .filter(positional)
            .filter(direct)
            .min_by_key(|d| node_number(&d.path)),
        false => devices
            .iter()
            .filter(positional)
            .filter(|d| d.props.is_empty())
            .min_by_key(|d| node_number(&d.path)),
    }?;
    Some(Touchscreen {
        path: device.path.clone(),
        name: device.name.clone(),
        x: device.axis("ABS_MT_POSITION_X")?,
        y: device.axis("ABS_MT_POSITION_Y")?,
        slot: device.axis("ABS_MT_SLOT"),
        tracking: device.axis("ABS_MT_TRACKING_ID").unwrap_or(Axis { min: 0, max: 65535 }),
        pressure: device.axis("ABS_MT_PRESSURE"),
        touch_major: device.axis("ABS_MT_TOUCH_MAJOR"),
    })
}

/// `/dev/input/event12` → 12; a node not named so sorts last, then by name.
fn node_number(path: &str) -> (u64, String) {
    let number = path.rsplit_once("event").and_then(|(_, n)| n.parse().ok());
    (number.unwrap_or(u64::MAX), path.to_string())
}

/// The node that has `key` (`KEY_BACK`, `KEY_POWER`…) in its key list.
pub fn key_device<'a>(devices: &'a [InputDevice], key: &str) -> Option<&'a str> {
    devices
        .iter()
        .find(|d| d.keys.iter().any(|k| k == key))
        .map(|d| d.path.as_str())
}

/// Linux key codes of the Android keys a key device may have (input-event-codes.h), by the
/// Android key name (`android::keys`).
pub const LINUX_KEYS: [(&str, &str, u16); 9] = [
    ("BACK", "KEY_BACK", 158),
    ("HOME", "KEY_HOMEPAGE", 172),
    ("APP_SWITCH", "KEY_APPSELECT", 580),
    ("POWER", "KEY_POWER", 116),
    ("VOLUME_UP", "KEY_VOLUMEUP", 115),
    ("VOLUME_DOWN", "KEY_VOLUMEDOWN", 114),
    ("MENU", "KEY_MENU", 139),
    ("ENTER", "KEY_ENTER", 28),
    ("WAKEUP", "KEY_WAKEUP", 143),
];

pub const EV_SYN: u16 = 0;
pub const EV_KEY: u16 = 1;
pub const EV_ABS: u16 = 3;
pub const SYN_REPORT: u16 = 0;
pub const BTN_TOUCH: u16 = 0x14a;
pub const ABS_MT_SLOT: u16 = 0x2f;
pub const ABS_MT_TOUCH_MAJOR: u16 = 0x30;
pub const ABS_MT_POSITION_X: u16 = 0x35;
pub const ABS_MT_POSITION_Y: u16 = 0x36;
pub const ABS_MT_TRACKING_ID: u16 = 0x39;
pub const ABS_MT_PRESSURE: u16 = 0x3a;

/// One `input_event`, without its time (the kernel stamps a written event itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub kind: u16,
    pub code: u16,
    pub value: i32,
}

const fn ev(kind: u16, code: u16, value: i32) -> Event {
    Event { kind, code, value }
}

/// `struct input_event`'s size: a `struct timeval` of two longs, then type, code, value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    Bits64,
    Bits32,
}

impl Width {
    /// From `ro.product.cpu.abi`: arm64-v8a, x86_64 (and riscv64) are 64-bit kernels.
    pub fn of_abi(abi: &str) -> Width {
        match abi.trim().contains("64") {
            true => Width::Bits64,
            false => Width::Bits32,
        }
    }

    pub fn event_bytes(self) -> usize {
        match self {
            Width::Bits64 => 24,
            Width::Bits32 => 16,
        }
    }
}

/// The events as the kernel reads them (little-endian: every Android ABI is).
pub fn encode(events: &[Event], width: Width) -> Vec<u8> {
    let mut out = Vec::with_capacity(events.len() * width.event_bytes());
    for e in events {
        out.extend(std::iter::repeat_n(0u8, width.event_bytes() - 8));
        out.extend_from_slice(&e.kind.to_le_bytes());
        out.extend_from_slice(&e.code.to_le_bytes());
        out.extend_from_slice(&e.value.to_le_bytes());
    }
    out
}

/// Whole events back out of written bytes; a trailing part of one is dropped, as evdev does.
pub fn decode(bytes: &[u8], width: Width) -> Vec<Event> {
    bytes
        .chunks_exact(width.event_bytes())
        .map(|c| {
            let t = c.len() - 8;
            ev(
                u16::from_le_bytes([c[t], c[t + 1]]),
                u16::from_le_bytes([c[t + 2], c[t + 3]]),
                i32::from_le_bytes([c[t + 4], c[t + 5], c[t + 6], c[t + 7]]),
            )
        })
        .collect()
}

/// A point on the shown display (rotated `rotation` quarter turns, as uiautomator's `rotation`)
/// in the natural (rotation 0) display of `natural` pixels.
pub fn to_natural(at: [i32; 2], natural: [u32; 2], rotation: u8) -> [i32; 2] {
    let (w, h) = (natural[0] as i32, natural[1] as i32);
    let [x, y] = at;
    match rotation % 4 {
        1 => [w - 1 - y, x],
        2 => [w - 1 - x, h - 1 - y],
        3 => [y, h - 1 - x],
        _ => [x, y],
    }
}

/// `to_natural`'s inverse.
pub fn to_shown(at: [i32; 2], natural: [u32; 2], rotation: u8) -> [i32; 2] {
    let (w, h) = (natural[0] as i32, natural[1] as i32);
    let [x, y] = at;
    match rotation % 4 {
        1 => [y, w - 1 - x],
        2 => [w - 1 - x, h - 1 - y],
        3 => [h - 1 - y, x],
        _ => [x, y],
    }
}

/// A natural display pixel on the axis: the middle of the raw cells Android maps to it
/// (`(raw - min) * pixels / span`).
pub fn to_axis(pixel: i32, pixels: u32, axis: Axis) -> i32 {
    let pixels = i64::from(pixels.max(1));
    let pixel = i64::from(pixel).clamp(0, pixels - 1);
    (i64::from(axis.min) + (2 * pixel + 1) * axis.span() / (2 * pixels)) as i32
}

/// A raw axis value to the natural display pixel Android maps it to.
pub fn from_axis(raw: i32, pixels: u32, axis: Axis) -> i32 {
    ((i64::from(raw) - i64::from(axis.min)) * i64::from(pixels) / axis.span()) as i32
}

/// The finger's id while it is down: any id in the device's range.
const TRACKING_ID: i32 = 7;

/// The events that put a finger down at a shown point.
pub fn touch_down(ts: &Touchscreen, at: [i32; 2], natural: [u32; 2], rotation: u8) -> Vec<Event> {
    let [nx, ny] = to_natural(at, natural, rotation);
    let mut events = Vec::new();
    if ts.slot.is_some() {
        events.push(ev(EV_ABS, ABS_MT_SLOT, 0));
    }
    events.push(ev(EV_ABS, ABS_MT_TRACKING_ID, TRACKING_ID.min(ts.tracking.max)));
    events.push(ev(EV_ABS, ABS_MT_POSITION_X, to_axis(nx, natural[0], ts.x)));
    events.push(ev(EV_ABS, ABS_MT_POSITION_Y, to_axis(ny, natural[1], ts.y)));
    if let Some(p) = ts.pressure {
        events.push(ev(EV_ABS, ABS_MT_PRESSURE, p.part(1, 2)));
    }
    if let Some(m) = ts.touch_major {
        events.push(ev(EV_ABS, ABS_MT_TOUCH_MAJOR, m.part(1, 8)));
    }
    events.push(ev(EV_KEY, BTN_TOUCH, 1));
    events.push(ev(EV_SYN, SYN_REPORT, 0));
    events
}

/// The events that move the finger that is down.
pub fn touch_move(ts: &Touchscreen, at: [i32; 2], natural: [u32; 2], rotation: u8) -> Vec<Event> {
    let [nx, ny] = to_natural(at, natural, rotation);
    vec![
        ev(EV_ABS, ABS_MT_POSITION_X, to_axis(nx, natural[0], ts.x)),
        ev(EV_ABS, ABS_MT_POSITION_Y, to_axis(ny, natural[1], ts.y)),
        ev(EV_SYN, SYN_REPORT, 0),
    ]
}

/// The events that lift the finger.
pub fn touch_up() -> Vec<Event> {
    vec![
        ev(EV_ABS, ABS_MT_TRACKING_ID, -1),
        ev(EV_KEY, BTN_TOUCH, 0),
        ev(EV_SYN, SYN_REPORT, 0),
    ]
}

/// A key pressed and let go.
pub fn key_press(code: u16) -> Vec<Event> {
    vec![
        ev(EV_KEY, code, 1),
        ev(EV_SYN, SYN_REPORT, 0),
        ev(EV_KEY, code, 0),
        ev(EV_SYN, SYN_REPORT, 0),
    ]
}

/// The most one write carries: a staged file this small is one `read` and one `write` for
/// `cat` (toybox's buffer is 4 KiB), so evdev never sees part of an event.
pub const MAX_WRITE: usize = 1008;
/// The longest pause between two writes: a gesture's pace, never a wait.
pub const MAX_PAUSE_S: f64 = 60.0;
/// Where writes are staged on the device: the folder the shell user may write.
pub const STAGING: &str = "/data/local/tmp";

/// One shell command that writes each of `writes` to `path` if the shell may (`test -w`),
/// pausing between them (seconds), so a gesture keeps its pace on the device. evdev refuses a
/// `write()` shorter than one event, and toybox 0.8.5-0.8.10's `printf` (Android 12-14) writes
/// a byte at a time, so each write's bytes are staged in a file by `printf` and handed over by
/// `cat`, whole; the file is removed whatever happened, and the status is the writes'.
/// `None` when a write is over `MAX_WRITE` or a pause is not a number of seconds up to
/// `MAX_PAUSE_S`.
pub fn write_command(path: &str, writes: &[(Vec<u8>, f64)]) -> Option<String> {
    write_command_in(STAGING, path, writes)
}

/// `write_command`, staging in `folder` (tests run it in a host's shell).
pub fn write_command_in(folder: &str, path: &str, writes: &[(Vec<u8>, f64)]) -> Option<String> {
    let node = quote(path);
    let file = quote(&format!("{folder}/.droidmcp-input-{}", staging_name(path, writes)));
    let mut line = format!("test -w {node}");
    for (bytes, pause) in writes {
        if bytes.len() > MAX_WRITE || !(pause.is_finite() && (0.0..=MAX_PAUSE_S).contains(pause)) {
            return None;
        }
        let octal: String = bytes.iter().map(|b| format!("\\{b:03o}")).collect();
        line.push_str(&format!(" && printf {} > {file} && cat {file} > {node}", quote(&octal)));
        if *pause > 0.0 {
            line.push_str(&format!(" && sleep {pause:.3}"));
        }
    }
    line.push_str(&format!(" && rm -f {file} || ! rm -f {file}"));
    Some(line)
}

/// A staging file's name no other writer shares: this process, a count, and a randomly keyed
/// hash of what is written (two servers may drive one phone).
fn staging_name(path: &str, writes: &[(Vec<u8>, f64)]) -> String {
    use std::hash::{BuildHasher, Hash, Hasher};
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    // Randomly keyed per process: two servers in containers are both pid 1 and count from 0.
    let mut hash = std::collections::hash_map::RandomState::new().build_hasher();
    path.hash(&mut hash);
    for (bytes, _) in writes {
        bytes.hash(&mut hash);
    }
    let count = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{count}-{:08x}", std::process::id(), hash.finish() as u32)
}

#[cfg(test)]
mod tests;
