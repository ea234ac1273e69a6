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
    fn span(&self) -> i64 {
        i64::from(self.max) - i64::from(self.min) + 1
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

/// The touchscreen: a direct device (INPUT_PROP_DIRECT) with both multitouch position axes. A
/// device listed without its props (older `getevent`) counts when no other is direct.
pub fn touchscreen(devices: &[InputDevice]) -> Option<Touchscreen> {
    let positional = |d: &&InputDevice| d.axis("ABS_MT_POSITION_X").is_some() && d.axis("ABS_MT_POSITION_Y").is_some();
    let device = devices
        .iter()
        .filter(positional)
        .find(|d| d.props.iter().any(|p| p == "INPUT_PROP_DIRECT"))
        .or_else(|| devices.iter().filter(positional).find(|d| d.props.is_empty()))?;
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
        events.push(ev(EV_ABS, ABS_MT_PRESSURE, (p.min + p.max) / 2));
    }
    if let Some(m) = ts.touch_major {
        events.push(ev(EV_ABS, ABS_MT_TOUCH_MAJOR, (m.min + m.max) / 8));
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

/// A write stays under bionic's stdio buffer (1 KiB): `printf` hands it to the kernel in one
/// `write`, so evdev never sees part of an event.
pub const MAX_WRITE: usize = 1008;

/// One shell command that writes `bytes` to `path` if the shell may (`test -w`), one `printf` of
/// octal escapes per write; between writes, `sleep`s (seconds), so a gesture keeps its pace on
/// the device. `None` when a write is over `MAX_WRITE`.
pub fn write_command(path: &str, writes: &[(Vec<u8>, f64)]) -> Option<String> {
    let node = quote(path);
    let mut line = format!("test -w {node}");
    for (bytes, pause) in writes {
        if bytes.len() > MAX_WRITE {
            return None;
        }
        let octal: String = bytes.iter().map(|b| format!("\\{b:03o}")).collect();
        line.push_str(&format!(" && printf {} > {node}", quote(&octal)));
        if *pause > 0.0 {
            line.push_str(&format!(" && sleep {pause:.3}"));
        }
    }
    Some(line)
}

#[cfg(test)]
mod tests;
