//! The `getevent -lp` parser on public captures, the event encoder's widths, the one-command
//! write, and generated display points round-tripping through every capture and rotation.

use proptest::prelude::{Just, ProptestConfig, prop_oneof};
use proptest::test_runner::TestRunner;

use super::{
    ABS_MT_POSITION_X, ABS_MT_POSITION_Y, Axis, EV_ABS, MAX_PAUSE_S, Touchscreen, Width, decode, encode, from_axis,
    key_device, parse_getevent, to_axis, to_natural, to_shown, touch_down, touchscreen, write_command,
};

/// Public `getevent -lp` captures (fixtures/README.md cites each), their displays in pixels.
pub const CAPTURES: [(&str, &str, [u32; 2]); 3] = [
    (
        "samsung-galaxy-s5",
        include_str!("../../../../fixtures/getevent/samsung-galaxy-s5.txt"),
        [1080, 1920],
    ),
    (
        "vivo",
        include_str!("../../../../fixtures/getevent/vivo.txt"),
        [1080, 2400],
    ),
    (
        "xiaomi-mi-mix-2",
        include_str!("../../../../fixtures/getevent/xiaomi-mi-mix-2.txt"),
        [1080, 2160],
    ),
];

#[test]
fn each_vendors_touchscreen_and_its_ranges_are_found() {
    let found: Vec<(String, i32, i32, bool, bool)> = CAPTURES
        .iter()
        .map(|(_, text, _)| {
            let ts = touchscreen(&parse_getevent(text)).expect("a touchscreen");
            (ts.path, ts.x.max, ts.y.max, ts.touch_major.is_some(), ts.slot.is_some())
        })
        .collect();
    assert_eq!(
        found,
        [
            ("/dev/input/event2".to_string(), 4095, 4095, true, true),
            ("/dev/input/event5".to_string(), 1619, 3599, false, true),
            ("/dev/input/event1".to_string(), 1079, 2159, true, true),
        ]
    );
    let xiaomi = parse_getevent(CAPTURES[2].1);
    assert_eq!(key_device(&xiaomi, "KEY_POWER"), Some("/dev/input/event0"));
    assert_eq!(key_device(&xiaomi, "KEY_BACK"), None, "its BACK is on the screen");
    let samsung = parse_getevent(CAPTURES[0].1);
    assert_eq!(key_device(&samsung, "KEY_HOMEPAGE"), Some("/dev/input/event2"));
    assert_eq!(
        touchscreen(&parse_getevent(
            "add device 1: /dev/input/event0\n  name: \"gpio-keys\"\n"
        )),
        None
    );
}

#[test]
fn events_are_24_bytes_on_64_bit_and_16_on_32_bit_and_decode_back() {
    let ts = touchscreen(&parse_getevent(CAPTURES[1].1)).unwrap();
    let events = touch_down(&ts, [540, 1200], [1080, 2400], 0);
    assert_eq!(Width::of_abi("arm64-v8a"), Width::Bits64);
    assert_eq!(Width::of_abi("armeabi-v7a"), Width::Bits32);
    for width in [Width::Bits64, Width::Bits32] {
        let bytes = encode(&events, width);
        assert_eq!(bytes.len(), events.len() * width.event_bytes());
        assert_eq!(decode(&bytes, width), events);
    }
    // 540 of 1080 → the middle of the 1620-wide axis.
    assert!(
        events
            .iter()
            .any(|e| e.kind == EV_ABS && e.code == ABS_MT_POSITION_X && e.value == 810)
    );
    assert!(
        events
            .iter()
            .any(|e| e.kind == EV_ABS && e.code == ABS_MT_POSITION_Y && e.value == 1800)
    );
}

#[test]
fn the_write_is_staged_by_printf_handed_over_by_cat_and_cleaned_up_after_test_w() {
    let cmd = write_command("/dev/input/event2", &[(vec![0, 37, 39, 255], 0.05), (vec![1], 0.0)]).unwrap();
    let file = cmd
        .split(" > ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .expect("a staging file");
    assert!(file.starts_with("'/data/local/tmp/.droidmcp-input-"), "{cmd}");
    assert_eq!(
        cmd,
        format!(
            r"test -w '/dev/input/event2' && printf '\000\045\047\377' > {file} && cat {file} > '/dev/input/event2' && sleep 0.050 && printf '\001' > {file} && cat {file} > '/dev/input/event2' && rm -f {file} || ! rm -f {file}"
        )
    );
    let again = write_command("/dev/input/event2", &[(vec![0, 37, 39, 255], 0.05)]).unwrap();
    assert!(!again.contains(file), "each command stages in its own file: {again}");
    assert!(
        write_command("/dev/input/event2", &[(vec![0; 2000], 0.0)]).is_none(),
        "over one write"
    );
    for pause in [f64::NAN, f64::INFINITY, -1.0, MAX_PAUSE_S + 1.0] {
        assert!(
            write_command("/dev/input/event2", &[(vec![0; 24], pause)]).is_none(),
            "pause {pause}"
        );
    }
}

/// Every shown point of every capture, in every rotation, encoded and decoded as the simulator
/// does, lands on the same pixel ±1.
#[test]
fn generated_points_round_trip_through_every_capture_and_rotation() {
    let screens: Vec<(Touchscreen, [u32; 2])> = CAPTURES
        .iter()
        .map(|(_, text, display)| (touchscreen(&parse_getevent(text)).unwrap(), *display))
        .collect();
    let strategy = (
        0..screens.len(),
        0u8..4,
        0.0f64..1.0,
        0.0f64..1.0,
        prop_oneof![Just(Width::Bits64), Just(Width::Bits32)],
    );
    let mut runner = TestRunner::new(ProptestConfig::with_cases(2000));
    let count = std::cell::Cell::new(0);
    runner
        .run(&strategy, |(i, rotation, fx, fy, width)| {
            let (ts, natural) = &screens[i];
            let shown = match rotation % 2 {
                0 => *natural,
                _ => [natural[1], natural[0]],
            };
            let at = [(fx * shown[0] as f64) as i32, (fy * shown[1] as f64) as i32];
            let bytes = encode(&touch_down(ts, at, *natural, rotation), width);
            let events = decode(&bytes, width);
            let raw = |code| events.iter().find(|e| e.code == code).unwrap().value;
            let natural_at = [
                from_axis(raw(ABS_MT_POSITION_X), natural[0], ts.x),
                from_axis(raw(ABS_MT_POSITION_Y), natural[1], ts.y),
            ];
            let back = to_shown(natural_at, *natural, rotation);
            assert!(
                (back[0] - at[0]).abs() <= 1 && (back[1] - at[1]).abs() <= 1,
                "{at:?} → {back:?}"
            );
            count.set(count.get() + 1);
            Ok(())
        })
        .unwrap();
    println!(
        "generated: {} points × {} captures × 4 rotations × 2 widths round-tripped",
        count.get(),
        screens.len()
    );
    assert_eq!(to_natural(to_shown([3, 4], [10, 20], 1), [10, 20], 1), [3, 4]);
    // A one-pixel display and a one-value axis still map in range.
    assert_eq!(to_axis(0, 1, Axis { min: 5, max: 5 }), 5);
}
