//! The kernel's input devices as a phone has them: `getevent -lp` prints one of the public
//! captures (`fixtures/getevent/`, the profile's `[input] capture` or `sim-state input
//! capture NAME`), and what the shell writes to one of its `/dev/input/eventN` is decoded as the
//! kernel reads it (`android::input_device`) and lands where a phone puts it: the touchscreen's
//! raw axes scaled back to the display and turned by its rotation, a key device's keys pressed.
//! A phone whose shell may not write them (`sim-state input refuse`) says "Permission denied".

use android::input_device::{
    self, ABS_MT_POSITION_X, ABS_MT_POSITION_Y, ABS_MT_TRACKING_ID, BTN_TOUCH, EV_ABS, EV_KEY, InputDevice, Width,
};

use crate::device::Device;

/// The captures by name, with the display each belongs to.
pub const CAPTURES: [(&str, &str); 3] = [
    (
        "samsung-galaxy-s5",
        include_str!("../../../fixtures/getevent/samsung-galaxy-s5.txt"),
    ),
    ("vivo", include_str!("../../../fixtures/getevent/vivo.txt")),
    (
        "xiaomi-mi-mix-2",
        include_str!("../../../fixtures/getevent/xiaomi-mi-mix-2.txt"),
    ),
];

#[derive(Debug, Clone, Default)]
pub struct Touch {
    /// The capture `getevent -lp` prints (none: `getevent` lists nothing).
    pub capture: Option<&'static str>,
    /// The shell may not write the devices.
    pub refused: bool,
    /// Where the finger went down and where it is now, in raw axis values.
    down: Option<([i32; 2], [i32; 2])>,
    pending: [Option<i32>; 2],
    /// Writes decoded so far (what tests count).
    pub writes: u64,
}

impl Touch {
    pub fn named(name: &str) -> Result<Touch, String> {
        let (_, text) = CAPTURES
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| format!("no getevent capture {name:?}; there are {:?}", CAPTURES.map(|c| c.0)))?;
        Ok(Touch {
            capture: Some(text),
            ..Touch::default()
        })
    }

    fn devices(&self) -> Vec<InputDevice> {
        self.capture.map(input_device::parse_getevent).unwrap_or_default()
    }

    pub fn is_node(&self, path: &str) -> bool {
        self.devices().iter().any(|d| d.path == path)
    }
}

/// `getevent -lp`: the capture.
pub fn getevent(d: &Device, args: &[&str]) -> crate::shell::Output {
    match args {
        ["-lp"] | ["-pl"] => crate::shell::Output::ok(d.touch.capture.unwrap_or_default()),
        _ => crate::shell::Output::err(1, "the simulator's getevent answers -lp\n"),
    }
}

/// `program`'s output redirected to input node `path`: opened (refused on a phone whose shell
/// may not), then handed over in the `write()`s the program makes. toybox's `printf` writes a
/// byte at a time on Android 12-14 (toybox 0.8.5-0.8.10 left stdout unbuffered), otherwise
/// through bionic's 1 KiB stdio buffer; `cat` writes what one read of its 4 KiB buffer got; any
/// other program writes its output whole. The first refused write ends the program.
pub fn redirect(d: &mut Device, program: &str, path: &str, output: &[u8]) -> Result<(), String> {
    if d.touch.refused {
        return Err(format!("/system/bin/sh: can't create {path}: Permission denied"));
    }
    if !d.touch.is_node(path) {
        return Err(format!(
            "/system/bin/sh: can't create {path}: No such file or directory"
        ));
    }
    let sdk: u32 = d
        .prop("ro.build.version.sdk")
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    let chunk = match program {
        "printf" if (31..=34).contains(&sdk) => 1,
        "printf" => 1024,
        "cat" => 4096,
        _ => output.len().max(1),
    };
    for piece in output.chunks(chunk) {
        write(d, path, piece).map_err(|why| format!("{program}: write: {why}"))?;
    }
    Ok(())
}

/// One `write()` of `bytes` to input node `path`, as evdev takes it: shorter than one event is
/// refused whole (EINVAL); otherwise each whole event is taken and a trailing part dropped.
fn write(d: &mut Device, path: &str, bytes: &[u8]) -> Result<(), String> {
    let devices = d.touch.devices();
    let Some(device) = devices.iter().find(|dev| dev.path == path) else {
        return Err("No such file or directory".into());
    };
    let width = Width::of_abi(&d.prop("ro.product.cpu.abi").unwrap_or_default());
    if bytes.len() < width.event_bytes() {
        return Err("Invalid argument".into());
    }
    d.touch.writes += 1;
    let screen = input_device::touchscreen(&devices).filter(|t| t.path == device.path);
    for e in input_device::decode(bytes, width) {
        match (e.kind, e.code) {
            (EV_ABS, ABS_MT_POSITION_X) => d.touch.pending[0] = Some(e.value),
            (EV_ABS, ABS_MT_POSITION_Y) => d.touch.pending[1] = Some(e.value),
            (EV_ABS, ABS_MT_TRACKING_ID) if e.value < 0 => {
                if let (Some((from, to)), Some(ts)) = (d.touch.down.take(), &screen) {
                    lift(d, ts, from, to);
                }
            }
            (EV_KEY, BTN_TOUCH) => {}
            (EV_KEY, code) if e.value == 1 => {
                if let Some((name, ..)) = input_device::LINUX_KEYS.iter().find(|(_, _, c)| *c == code) {
                    crate::phone::key(d, name);
                }
            }
            (0, 0) => {
                if let [Some(x), Some(y)] = d.touch.pending {
                    let at = [x, y];
                    d.touch.down = Some(d.touch.down.map_or((at, at), |(from, _)| (from, at)));
                }
                d.touch.pending = [None, None];
            }
            _ => {}
        }
    }
    Ok(())
}

/// The finger lifted: a tap where it went down, or a swipe (as `input swipe` is taken).
fn lift(d: &mut Device, ts: &input_device::Touchscreen, from: [i32; 2], to: [i32; 2]) {
    let natural = [d.display.width, d.display.height];
    let rotation = d.emulator.rotation;
    let shown = |raw: [i32; 2]| {
        let at = [
            input_device::from_axis(raw[0], natural[0], ts.x),
            input_device::from_axis(raw[1], natural[1], ts.y),
        ];
        input_device::to_shown(at, natural, rotation)
    };
    let (a, b) = (shown(from), shown(to));
    if !crate::phone::swipe_between(d, a, b) {
        tracing::debug!(target: "droidmcp::sim::touch", x = a[0], y = a[1], "touchscreen tap");
        crate::phone::tap(d, a[0], a[1]);
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use android::input_device::{self, Width};

    use crate::shell::run_script;

    fn phone() -> Arc<crate::Simulator> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/phone");
        Arc::new(crate::Simulator::load(&dir, None, crate::AuthPolicy::None).unwrap())
    }

    /// A key written to the key device that has it presses it; a phone that refuses the write
    /// fails `test -w` and writes nothing.
    #[tokio::test]
    async fn writes_to_input_devices_press_keys_and_a_refusing_phone_writes_nothing() {
        let sim = phone();
        run_script(&sim, "sim-state input capture xiaomi-mi-mix-2", Vec::new()).await;
        let listed = run_script(&sim, "getevent -lp", Vec::new()).await;
        let devices = input_device::parse_getevent(&String::from_utf8_lossy(&listed.stdout));
        let power = input_device::key_device(&devices, "KEY_POWER").unwrap();
        let bytes = input_device::encode(&input_device::key_press(116), Width::Bits64);
        let command = input_device::write_command(power, &[(bytes, 0.0)]).unwrap();
        run_script(&sim, "sim-state input refuse", Vec::new()).await;
        let refused = run_script(&sim, &command, Vec::new()).await;
        assert_ne!(refused.code, 0, "test -w fails on a refusing phone");
        assert!(sim.with_device(|d| d.phone.awake) && sim.with_device(|d| d.touch.writes) == 0);
        run_script(&sim, "sim-state input allow", Vec::new()).await;
        let out = run_script(&sim, &command, Vec::new()).await;
        assert_eq!(out.code, 0, "{out:?}");
        assert!(!sim.with_device(|d| d.phone.awake), "POWER put the phone to sleep");
        // A refused write itself says so, as a phone's shell does.
        run_script(&sim, "sim-state input refuse", Vec::new()).await;
        let denied = run_script(&sim, &format!("printf x > {power}"), Vec::new()).await;
        assert!(
            String::from_utf8_lossy(&denied.stderr).contains("Permission denied"),
            "{denied:?}"
        );
    }
}
