//! Outside attack on the JVM-free input path (issue 46): `getevent -lp` listings from other
//! vendors and eras, hostile text, geometry against Android's own mapping, and the write that
//! must reach evdev as whole `struct input_event`s. Each listing here is synthetic text that
//! reproduces one property of a public capture (cited beside it); no capture is copied.
//! Tests that fail on main are traps (see the report of branch attack46); the rest hold.

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::Command;

use droidmcp_android::input_device::{
    ABS_MT_POSITION_X, ABS_MT_POSITION_Y, Axis, EV_ABS, Touchscreen, Width, decode, encode, from_axis, key_press,
    parse_getevent, to_axis, to_natural, touch_down, touch_move, touch_up, touchscreen, write_command,
    write_command_in,
};
use proptest::prelude::{Just, ProptestConfig, any, prop_oneof};
use proptest::strategy::Strategy;
use proptest::test_runner::TestRunner;

/// One device of a listing, in `getevent -lp`'s layout.
fn device(number: u32, name: &str, axes: &[(&str, i64, i64)], direct: bool) -> String {
    let mut text = format!("add device {number}: /dev/input/event{number}\n  name:     \"{name}\"\n  events:\n");
    text.push_str("    KEY (0001): BTN_TOUCH\n");
    for (i, (axis, min, max)) in axes.iter().enumerate() {
        let lead = if i == 0 { "    ABS (0003): " } else { "                " };
        text.push_str(&format!(
            "{lead}{axis:<22}: value 0, min {min}, max {max}, fuzz 0, flat 0, resolution 0\n"
        ));
    }
    text.push_str("  input props:\n");
    text.push_str(if direct {
        "    INPUT_PROP_DIRECT\n"
    } else {
        "    <none>\n"
    });
    text
}

fn mt(x: i64, y: i64) -> Vec<(&'static str, i64, i64)> {
    vec![
        ("ABS_MT_SLOT", 0, 9),
        ("ABS_MT_POSITION_X", 0, x),
        ("ABS_MT_POSITION_Y", 0, y),
        ("ABS_MT_TRACKING_ID", 0, 65535),
    ]
}

/// The Android emulator (API 30+) has eleven `virtio_input_multi_touch_N`, one per possible
/// display, all direct with 0-32767 axes; only `_1` (event1) is bound to display 0, the others
/// are "inoperable until the display size becomes available" (InputReader's log in
/// https://github.com/software-mansion/react-native-screens/issues/1340; the eleven nodes in
/// `dumpsys input` in https://github.com/google-research/android_world/issues/284). getevent
/// walks /dev/input in directory order, which on the emulator's tmpfs lists the newest node
/// (event11) first. A tap written to `_11` goes nowhere.
#[test]
fn the_emulators_touchscreen_is_virtio_input_multi_touch_1_not_the_first_listed() {
    let mut text = String::new();
    text.push_str(&device(12, "qwerty2", &[], false));
    for n in (1..=11).rev() {
        text.push_str(&device(
            n,
            &format!("virtio_input_multi_touch_{n}"),
            &mt(32767, 32767),
            true,
        ));
    }
    text.push_str(&device(0, "gpio-keys", &[], false));
    let ts = touchscreen(&parse_getevent(&text)).expect("a touchscreen");
    assert_eq!(
        (ts.path.as_str(), ts.name.as_str()),
        ("/dev/input/event1", "virtio_input_multi_touch_1"),
        "the emulator's display-0 touchscreen"
    );
}

/// A vivo phone lists two direct multitouch devices; the first listed (`synaptics_tcm_touch`,
/// event5, the one fixtures/getevent/vivo.txt was cut to) is not the one the panel drives: "I
/// have two similar devices, but event2 is real touch device" (`vivo_ts`,
/// https://github.com/kp7742/TouchSimulation/issues/1). Listing order is no way to choose: with
/// more than one candidate, the lowest node (what the emulator case needs too) or none (fall back
/// to `input`, always right) are the only safe answers.
#[test]
fn two_direct_touchscreens_are_not_chosen_by_listing_order() {
    let text = device(5, "synaptics_tcm_touch", &mt(1619, 3599), true) + &device(2, "vivo_ts", &mt(1619, 3599), true);
    let chosen = touchscreen(&parse_getevent(&text)).map(|t| t.path);
    assert!(
        matches!(chosen.as_deref(), None | Some("/dev/input/event2")),
        "chose {chosen:?}: the first listed of two direct touchscreens"
    );
}

/// Drivers publish axes that describe nothing: the Galaxy S5's `sec_touchscreen` lists
/// `003e : value 0, min 0, max -1` (fixtures/getevent/samsung-galaxy-s5.txt, from
/// https://github.com/KonradStanski/androidAutomate), and unconfigured axes read `min 0, max 0`
/// (https://github.com/libts/tslib/issues/140). Android disables a touch device whose X or Y
/// axis is not valid ("did not report support for X or Y axis"). A position axis like that is no
/// touchscreen; the valid device listed after it is; and mapping never divides by zero.
#[test]
fn a_device_with_empty_position_axes_is_no_touchscreen_and_mapping_never_divides_by_zero() {
    for (min, max) in [(0, -1), (0, 0), (100, 50)] {
        let text = device(
            3,
            "hbtp_vm",
            &[("ABS_MT_POSITION_X", min, max), ("ABS_MT_POSITION_Y", min, max)],
            true,
        ) + &device(1, "fts_ts", &mt(1079, 2399), true);
        let ts = touchscreen(&parse_getevent(&text)).map(|t| (t.path, t.x));
        assert_eq!(
            ts,
            Some(("/dev/input/event1".to_string(), Axis { min: 0, max: 1079 })),
            "axis min {min} max {max}"
        );
    }
    let mapped = catch_unwind(|| from_axis(0, 1080, Axis { min: 0, max: -1 }));
    assert!(mapped.is_ok(), "from_axis on a `min 0, max -1` axis panicked");
}

/// A pressure axis up to i32::MAX (hostile or odd text: nothing in the format bounds it) must
/// not overflow the "middle of the range" sum: debug builds panic, release builds wrap to a
/// negative pressure.
#[test]
fn a_pressure_axis_up_to_i32_max_does_not_overflow() {
    let text = device(
        1,
        "touch",
        &[
            ("ABS_MT_SLOT", 0, 9),
            ("ABS_MT_POSITION_X", 0, 1079),
            ("ABS_MT_POSITION_Y", 0, 2399),
            ("ABS_MT_TRACKING_ID", 0, 65535),
            ("ABS_MT_PRESSURE", 1, i64::from(i32::MAX)),
            ("ABS_MT_TOUCH_MAJOR", 1, i64::from(i32::MAX)),
        ],
        true,
    );
    let ts = touchscreen(&parse_getevent(&text)).unwrap();
    let events = catch_unwind(AssertUnwindSafe(|| touch_down(&ts, [10, 10], [1080, 2400], 0)));
    let events = events.expect("touch_down panicked on a pressure axis up to i32::MAX");
    assert!(events.iter().all(|e| e.value >= 0), "{events:?}");
}

/// Generated axes (any i32 min/max for every axis the crate reads) and displays: building the
/// events never panics.
#[test]
fn generated_axis_ranges_never_panic() {
    let range = || (any::<i32>(), any::<i32>()).prop_map(|(a, b)| Axis { min: a, max: b });
    let strategy = (
        range(),
        range(),
        proptest::option::of(range()),
        range(),
        proptest::option::of(range()),
        proptest::option::of(range()),
        (1u32..5000, 1u32..5000, 0u8..4, -10_000i32..10_000, -10_000i32..10_000),
    );
    let mut runner = TestRunner::new(ProptestConfig::with_cases(3000));
    let panicked = RefCell::new(Vec::new());
    let cases = Cell::new(0usize);
    runner
        .run(
            &strategy,
            |(x, y, slot, tracking, pressure, touch_major, (w, h, rotation, px, py))| {
                cases.set(cases.get() + 1);
                let ts = Touchscreen {
                    path: "/dev/input/event1".into(),
                    name: "t".into(),
                    x,
                    y,
                    slot,
                    tracking,
                    pressure,
                    touch_major,
                };
                let result = catch_unwind(AssertUnwindSafe(|| {
                    let mut events = touch_down(&ts, [px, py], [w, h], rotation);
                    events.extend(touch_move(&ts, [py, px], [w, h], rotation));
                    for e in &events {
                        if e.code == ABS_MT_POSITION_X {
                            from_axis(e.value, w, ts.x);
                        }
                        if e.code == ABS_MT_POSITION_Y {
                            from_axis(e.value, h, ts.y);
                        }
                    }
                }));
                if result.is_err() && panicked.borrow().len() < 5 {
                    panicked
                        .borrow_mut()
                        .push(format!("{ts:?} display {w}x{h} rotation {rotation} at {px},{py}"));
                }
                Ok(())
            },
        )
        .unwrap();
    println!(
        "generated: {} touchscreens (any i32 axis ranges) × displays × rotations built; panics below if any",
        cases.get()
    );
    let panicked = panicked.into_inner();
    assert!(panicked.is_empty(), "panicked on:\n{}", panicked.join("\n"));
}

/// Lines of `getevent -lp` as found in the wild and as an attacker would write them: the parser
/// never panics, and a device it reports always has a path from an `add device` line.
#[test]
fn generated_hostile_listings_never_panic() {
    let line = prop_oneof![
        Just("add device 1: /dev/input/event1".to_string()),
        Just("add device 2: /dev/input/event1;reboot".to_string()),
        Just("add device 3:".to_string()),
        Just("add device".to_string()),
        Just("  name:     \"a\"b$(reboot)`id`\"".to_string()),
        Just("  name:".to_string()),
        Just("  events:".to_string()),
        Just("    KEY (0001): KEY_POWER  KEY_BACK".to_string()),
        Just("    ABS (0003): ABS_MT_POSITION_X     : value 0, min 0, max 1079, fuzz 0".to_string()),
        Just("                ABS_MT_POSITION_Y     : value 0, min -5, max 99999999999999999999".to_string()),
        Just("                ABS_MT_POSITION_Y     : value 0, min 0, max 2399\r".to_string()),
        Just("                003e                  : value 0, min 0, max -1".to_string()),
        Just("    SW  (0005): 0020*".to_string()),
        Just("  input props:".to_string()),
        Just("    INPUT_PROP_DIRECT".to_string()),
        Just("    <none>".to_string()),
        Just("could not get driver version for /dev/input/mice, Not a typewriter".to_string()),
        Just("):::: ( ): , , min max".to_string()),
        any::<String>(),
    ];
    let strategy = proptest::collection::vec(line, 0..40).prop_map(|lines| lines.join("\n"));
    let mut runner = TestRunner::new(ProptestConfig::with_cases(4000));
    let cases = Cell::new(0usize);
    let found = Cell::new(0usize);
    runner
        .run(&strategy, |text| {
            cases.set(cases.get() + 1);
            let devices = catch_unwind(|| parse_getevent(&text)).expect("parse_getevent panicked");
            if let Some(ts) = catch_unwind(|| touchscreen(&devices)).expect("touchscreen panicked") {
                found.set(found.get() + 1);
                assert!(text.contains("add device"), "{ts:?}");
                assert!(!ts.path.contains('\n'), "{ts:?}");
            }
            Ok(())
        })
        .unwrap();
    println!(
        "generated: {} hostile listings parsed without panic, {} with a touchscreen",
        cases.get(),
        found.get()
    );
}

/// The node's path is one shell word whatever it holds: generated names of shell metacharacters
/// are created in a scratch directory (where the write is staged too), the command runs in
/// Debian's `sh`, and exactly that file gets exactly the bytes; nothing else appears (no `$(…)`, backtick, `;` or glob took effect).
#[test]
fn generated_hostile_paths_stay_one_quoted_word_in_a_real_shell() {
    let chars = prop_oneof![
        Just('\''),
        Just('"'),
        Just('$'),
        Just('('),
        Just(')'),
        Just('`'),
        Just(';'),
        Just('&'),
        Just('|'),
        Just('<'),
        Just('>'),
        Just('\\'),
        Just(' '),
        Just('*'),
        Just('?'),
        Just('!'),
        Just('{'),
        Just('}'),
        Just('#'),
        Just('~'),
        Just('\t'),
        Just('\n'),
        Just('a'),
        Just('b'),
    ];
    let name = proptest::collection::vec(chars, 1..16).prop_map(|c| c.into_iter().collect::<String>());
    let mut runner = TestRunner::new(ProptestConfig::with_cases(300));
    let cases = Cell::new(0usize);
    let bytes = encode(&key_press(116), Width::Bits64);
    runner
        .run(&name, |name| {
            if name == "." || name == ".." {
                return Ok(());
            }
            cases.set(cases.get() + 1);
            let dir = Scratch::new(cases.get());
            let path = dir.path().join(&name);
            std::fs::write(&path, b"").unwrap();
            let command = write_command_in(
                dir.path().to_str().unwrap(),
                path.to_str().unwrap(),
                &[(bytes.clone(), 0.0)],
            )
            .unwrap();
            let out = Command::new("sh")
                .arg("-c")
                .arg(&command)
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(out.status.success(), "{name:?}: {command}\n{out:?}");
            assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name:?}: {command}");
            let listed: BTreeSet<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(listed.len(), 1, "{name:?}: {command} made {listed:?}");
            Ok(())
        })
        .unwrap();
    println!(
        "generated: {} hostile node names written through a real sh, each one quoted word",
        cases.get()
    );
}

/// A scratch directory, removed when dropped.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(n: usize) -> Scratch {
        let dir = std::env::temp_dir().join(format!("attack46-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A pause that never ends is no pause: `sleep inf` (or a 10^20-second sleep) hangs the shell
/// that holds the finger down. A gesture's pace must be finite and bounded, or refused.
#[test]
fn a_non_finite_or_absurd_pause_is_refused_not_slept() {
    let bytes = encode(&touch_up(), Width::Bits64);
    for pause in [f64::INFINITY, 1e20] {
        let command = write_command("/dev/input/event1", &[(bytes.clone(), pause)]);
        assert!(command.is_none(), "pause {pause}: {command:?}");
    }
}

/// evdev takes only whole events per `write()` ("count < input_event_size() → -EINVAL", the
/// kernel's evdev_write). On Android the command's `printf` and `cat` are toybox's, and toybox
/// 0.8.5 through 0.8.10 set stdout unbuffered (main.c: `setvbuf(stdout, 0, … _IONBF, 0)`,
/// https://github.com/landley/toybox, tags 0.8.5-0.8.10; block buffering came with 0.8.11): its
/// `printf` is one `write()` per byte. Debian's toybox 0.8.9 (the same code) plays them here, in
/// a real `sh`, and strace counts every `write()` that reaches the node.
#[test]
fn every_write_the_command_makes_to_the_node_is_whole_events() {
    let ts = touchscreen(&parse_getevent(&device(1, "fts_ts", &mt(1079, 2399), true))).unwrap();
    let width = Width::Bits64;
    let (down, up) = (touch_down(&ts, [540, 1200], [1080, 2400], 0), touch_up());
    let writes = [(encode(&down, width), 0.01), (encode(&up, width), 0.0)];
    let scratch = Scratch::new(1000);
    let node = scratch.path().join("event1");
    std::fs::write(&node, b"").unwrap();
    let command = write_command_in(scratch.path().to_str().unwrap(), node.to_str().unwrap(), &writes)
        .unwrap()
        .replace("printf ", "toybox printf ")
        .replace("cat ", "toybox cat ");
    let trace = std::env::temp_dir().join(format!("attack46-trace-{}", std::process::id()));
    let run = Command::new("strace")
        .args([
            "-f",
            "-y",
            "-qq",
            "-xx",
            "-s",
            "4096",
            "-e",
            "trace=write",
            "-e",
            "signal=none",
            "-o",
        ])
        .arg(&trace)
        .args(["sh", "-c", &command])
        .status();
    let Ok(status) = run else {
        testkit::skip_or_fail("strace is not installed (apt-get install strace)");
        return;
    };
    let traced = std::fs::read_to_string(&trace).unwrap_or_default();
    let _ = std::fs::remove_file(&trace);
    assert!(status.success(), "{command}\n{traced}");
    // `-xx` shows the path in hex too.
    let hex: String = node.to_str().unwrap().bytes().map(|b| format!("\\x{b:02x}")).collect();
    let marker = format!("<{hex}>");
    // `write(3</…/event1>, "\x00\x01…", 144) = 144`: each write's bytes, as strace shows them.
    let written: Vec<Vec<u8>> = traced
        .lines()
        .filter(|l| l.contains(&marker))
        .filter_map(|l| {
            let quoted = l.split_once(", \"")?.1.split_once('"')?.0;
            quoted
                .split("\\x")
                .skip(1)
                .map(|h| u8::from_str_radix(h, 16).ok())
                .collect::<Option<Vec<u8>>>()
        })
        .collect();
    let sizes: Vec<usize> = written.iter().map(Vec::len).collect();
    println!("writes to the node: {sizes:?}");
    assert_eq!(sizes.len(), 2, "one write per staged write: {traced}");
    assert!(
        sizes.iter().all(|n| n % width.event_bytes() == 0),
        "evdev refuses part of an event: {sizes:?}"
    );
    assert_eq!(decode(&written.concat(), width), [down, up].concat());
    let left: Vec<_> = std::fs::read_dir(scratch.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        [std::ffi::OsString::from("event1")],
        "the staging file is removed"
    );
}

/// Android's own mapping as the oracle (TouchInputMapper since Android 13: raw minus min, times
/// display size over `max - min + 1`, as floats; then the display's rotation as ui::Transform
/// applies it: 90° → (y, W - x), 180° → (W - x, H - y), 270° → (H - y, x)): every generated shown
/// point, on generated axes (nonzero and negative minimums, ranges smaller and larger than the
/// display), non-square displays, every rotation and the display's corners, lands in the
/// intended pixel, or within the pixels one raw step covers where the axis is coarser than the
/// display.
#[test]
fn generated_points_land_where_androids_own_mapping_puts_them() {
    let strategy = (
        -5000i32..5000,
        50i32..40_000,
        -5000i32..5000,
        50i32..40_000,
        200u32..3200,
        200u32..3600,
        0u8..4,
        prop_oneof![
            Just((0.0, 0.0)),
            Just((1.0, 1.0)),
            Just((0.0, 1.0)),
            Just((1.0, 0.0)),
            (0.0f64..1.0, 0.0f64..1.0)
        ],
    );
    let mut runner = TestRunner::new(ProptestConfig::with_cases(5000));
    let (cases, exact) = (Cell::new(0usize), Cell::new(0usize));
    runner
        .run(&strategy, |(xmin, xspan, ymin, yspan, w, h, rotation, (fx, fy))| {
            let ts = Touchscreen {
                path: "/dev/input/event1".into(),
                name: "t".into(),
                x: Axis {
                    min: xmin,
                    max: xmin + xspan - 1,
                },
                y: Axis {
                    min: ymin,
                    max: ymin + yspan - 1,
                },
                slot: Some(Axis { min: 0, max: 9 }),
                tracking: Axis { min: 0, max: 65535 },
                pressure: None,
                touch_major: None,
            };
            let shown = if rotation % 2 == 0 { [w, h] } else { [h, w] };
            // Corners included: (0,0) and (w-1, h-1) of the shown display.
            let at = [
                ((fx * shown[0] as f64) as i32).min(shown[0] as i32 - 1),
                ((fy * shown[1] as f64) as i32).min(shown[1] as i32 - 1),
            ];
            let events = touch_down(&ts, at, [w, h], rotation);
            let raw = |code| {
                events
                    .iter()
                    .find(|e| e.kind == EV_ABS && e.code == code)
                    .unwrap()
                    .value
            };
            let nx = f64::from(raw(ABS_MT_POSITION_X) - xmin) * f64::from(w) / f64::from(xspan);
            let ny = f64::from(raw(ABS_MT_POSITION_Y) - ymin) * f64::from(h) / f64::from(yspan);
            let (wf, hf) = (f64::from(w), f64::from(h));
            let (sx, sy) = match rotation {
                1 => (ny, wf - nx),
                2 => (wf - nx, hf - ny),
                3 => (hf - ny, nx),
                _ => (nx, ny),
            };
            let landed = [sx.floor() as i32, sy.floor() as i32];
            // One raw step covers this many display pixels on each shown axis.
            let step = |pixels: u32, span: i32| (f64::from(pixels) / f64::from(span)).ceil() as i32;
            let (sx_step, sy_step) = match rotation % 2 {
                0 => (step(w, xspan), step(h, yspan)),
                _ => (step(h, yspan), step(w, xspan)),
            };
            assert!(
                (landed[0] - at[0]).abs() <= sx_step.max(1) && (landed[1] - at[1]).abs() <= sy_step.max(1),
                "{at:?} landed at {landed:?} ({sx:.3}, {sy:.3}) on {w}x{h} rotation {rotation}, axes {:?} {:?}",
                ts.x,
                ts.y
            );
            cases.set(cases.get() + 1);
            exact.set(exact.get() + usize::from(landed == at));
            Ok(())
        })
        .unwrap();
    println!(
        "generated: {} points on generated axes × displays × 4 rotations checked against Android's mapping; {} landed on the exact pixel",
        cases.get(),
        exact.get()
    );
    // The corner of the natural display maps inside the axis, never past it.
    let corner = to_axis(1079, 1080, Axis { min: 0, max: 1079 });
    assert!((0..=1079).contains(&corner));
    assert_eq!(to_natural([0, 0], [1080, 2400], 1), [1079, 0]);
}
