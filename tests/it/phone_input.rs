//! Input without a JVM, and taps aimed by a reading already taken, on the `phone` profile: a tap
//! and a swipe written to the touchscreen of each public `getevent -lp` capture (axes of other
//! sizes than the display), on a turned screen, a phone that refuses the writes (`input` then,
//! and the answer says so), what each way costs in device programs; and a tap that must read
//! the screen again (the reading too old, an acting call since, another principal's).

use std::time::Duration;

use rmcp::ClientServiceExt;
use serde_json::{Value, json};

use crate::common::*;

/// The captures the simulator plays, with their touchscreen's node.
const CAPTURES: [(&str, &str); 3] = [
    ("samsung-galaxy-s5", "/dev/input/event2"),
    ("vivo", "/dev/input/event5"),
    ("xiaomi-mi-mix-2", "/dev/input/event1"),
];

async fn ui(phone: &PhoneRig, args: Value) -> Value {
    ok(&call(&phone.client, "ui", args).await)
}

/// What the phone's own window dump shows now (the test's route, not the server's).
fn screen_text(phone: &PhoneRig) -> String {
    phone.sh("uiautomator dump /dev/tty")
}

async fn start_phone() -> Option<PhoneRig> {
    PhoneRig::start(
        &repo_dir().join("fixtures/phone"),
        &[("RUST_LOG", "warn,droidmcp::tools::ui::input=info")],
    )
    .await
}

#[tokio::test]
async fn a_tap_and_a_swipe_land_through_each_captures_touchscreen() {
    for (capture, node) in CAPTURES {
        let Some(phone) = start_phone().await else { return };
        phone.sh(&format!("sim-state input capture {capture}"));
        ui(&phone, json!({"operation": "dump"})).await;
        // The launcher's Contacts icon, by its label: written to the touchscreen, scaled to its axes.
        let tap = ui(&phone, json!({"operation": "tap", "contentDesc": "Contacts"})).await;
        assert_eq!(tap["via"], format!("input device {node}"), "{capture}: {tap}");
        assert!(
            screen_text(&phone).contains("Ada Lovelace"),
            "{capture}: the tap opened Contacts"
        );
        ui(&phone, json!({"operation": "dump"})).await;
        // The finger moves up: the list scrolls to its second page.
        let swipe = ui(&phone, json!({"operation": "swipe", "direction": "up"})).await;
        assert_eq!(swipe["via"], format!("input device {node}"), "{capture}: {swipe}");
        assert!(
            screen_text(&phone).contains("Zhang Wei") && !screen_text(&phone).contains("Ada Lovelace"),
            "{capture}: the swipe scrolled the list"
        );
        let writes = phone.sh("sim-state input writes");
        println!("{capture}: tap and swipe landed through {node}, {}", writes.trim());
        assert_ne!(writes.trim(), "writes=0", "{capture}");
        phone.client.cancel().await.unwrap();
    }
}

/// A screen turned a quarter (auto-rotate off, `user_rotation` 1): a point on the shown screen
/// is turned back to the touchscreen's natural axes, and the tap lands on what it aimed at.
#[tokio::test]
async fn a_tap_on_a_turned_screen_lands_where_it_aimed() {
    let Some(phone) = start_phone().await else { return };
    phone.sh("settings put system accelerometer_rotation 0");
    phone.sh("settings put system user_rotation 1");
    let dump = ui(&phone, json!({"operation": "dump"})).await;
    assert_eq!(dump["screen"], json!([2400, 1080]), "{}", dump["screen"]);
    let tap = ui(
        &phone,
        json!({"operation": "tap", "contentDesc": "Settings", "observe": true}),
    )
    .await;
    assert_eq!(tap["via"], "input device /dev/input/event5", "{tap}");
    assert_eq!(
        tap["focused"]["activity"], "com.android.settings.Settings",
        "the tap on the turned screen opened Settings: {tap}"
    );
    phone.client.cancel().await.unwrap();
}

/// A phone whose shell may not write its input devices: found by the probe (`input` from the
/// first gesture), or when a write is refused later (`input` from then on); the tap lands either
/// way, the answer and the log say which way it took.
#[tokio::test]
async fn a_phone_that_refuses_writes_is_tapped_with_input_and_says_so() {
    let Some(phone) = start_phone().await else { return };
    phone.sh("sim-state input refuse");
    ui(&phone, json!({"operation": "dump"})).await;
    let tap = ui(&phone, json!({"operation": "tap", "contentDesc": "Contacts"})).await;
    assert_eq!(tap["via"], "input (the shell may not write /dev/input/event5)", "{tap}");
    assert!(screen_text(&phone).contains("Ada Lovelace"), "the tap landed");
    assert_eq!(phone.sh("sim-state input writes").trim(), "writes=0");
    phone.client.cancel().await.unwrap();

    // Writable when probed, refused later: the write's own `test -w` fails, `input` taps.
    let Some(phone) = start_phone().await else { return };
    ui(&phone, json!({"operation": "dump"})).await;
    let first = ui(&phone, json!({"operation": "tap", "x": 540, "y": 1200})).await;
    assert_eq!(first["via"], "input device /dev/input/event5", "{first}");
    phone.sh("sim-state input refuse");
    ui(&phone, json!({"operation": "key", "name": "HOME"})).await;
    ui(&phone, json!({"operation": "dump"})).await;
    let tap = ui(&phone, json!({"operation": "tap", "contentDesc": "Contacts"})).await;
    assert_eq!(tap["via"], "input (the device refused the write)", "{tap}");
    assert!(screen_text(&phone).contains("Ada Lovelace"), "the tap landed");
    let next = ui(&phone, json!({"operation": "key", "name": "HOME"})).await;
    assert!(next["via"].as_str().unwrap().starts_with("input ("), "{next}");
    for _ in 0..100 {
        if phone.log.lock().unwrap().contains("refused the write") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let log = phone.log.lock().unwrap().clone();
    let lines: Vec<&str> = log.lines().filter(|l| l.contains("via=")).collect();
    let written = lines.iter().position(|l| l.contains("via=input device"));
    let refused = lines
        .iter()
        .position(|l| l.contains("via=input (the device refused the write)"));
    assert!(
        written.is_some() && refused.is_some() && written < refused,
        "each way is logged: {lines:?}"
    );
    phone.client.cancel().await.unwrap();
}

/// What a tap costs the phone each way, as the profile's model charges it: the probe once
/// (`getevent -lp`, `getprop`: 2 programs, 10 ms), then a write (`printf` stages it, `cat`
/// hands it to the kernel, `rm` cleans up: 3 programs, 20 ms) or `input` (1 program, 40 ms).
/// Counted, not timed.
#[tokio::test]
async fn a_tap_written_to_the_touchscreen_costs_three_short_programs() {
    let mut seen = Vec::new();
    for refuse in [false, true] {
        let Some(phone) = start_phone().await else { return };
        if refuse {
            phone.sh("sim-state input refuse");
        }
        ui(&phone, json!({"operation": "dump"})).await;
        let mut costs = Vec::new();
        for _ in 0..2 {
            let before = phone.spent();
            ui(&phone, json!({"operation": "tap", "x": 540, "y": 1200})).await;
            let after = phone.spent();
            costs.push(format!("{} programs, {:.1} ms", after.1 - before.1, after.0 - before.0));
        }
        seen.push(costs);
        phone.client.cancel().await.unwrap();
    }
    println!("written: {:?}; input: {:?}", seen[0], seen[1]);
    assert_eq!(
        seen,
        [
            ["5 programs, 30.0 ms", "3 programs, 20.0 ms"],
            ["3 programs, 50.0 ms", "1 programs, 40.0 ms"]
        ]
    );
}

/// A tap by label aims by the remembered reading only while nothing can have changed it: the
/// phone's screen is changed between the reading and the tap, and the tap reads it again and
/// finds its target gone (nothing is tapped), whether the reading is older than the bound
/// (changed behind the server's back) or an acting call ran since.
#[tokio::test]
async fn a_tap_reads_again_when_its_reading_is_too_old_or_another_call_acted() {
    let Some(phone) = start_phone().await else { return };
    // Within the bound, nothing acted: aimed by the dump (no uiautomator run).
    ui(&phone, json!({"operation": "dump"})).await;
    let before = phone.spent();
    let tap = ui(&phone, json!({"operation": "tap", "contentDesc": "Contacts"})).await;
    assert!(tap["aimedByReadingMs"].as_u64().is_some(), "{tap}");
    assert_eq!(
        phone.spent().1 - before.1,
        5,
        "probe (2) and write (3), no reading: {tap}"
    );

    // Older than the bound: the screen changed behind the server's back.
    ui(&phone, json!({"operation": "key", "name": "HOME"})).await;
    ui(&phone, json!({"operation": "dump"})).await;
    phone.sh("am start -n com.android.settings/.Settings");
    tokio::time::sleep(Duration::from_millis(5_300)).await;
    let gone = call(
        &phone.client,
        "ui",
        json!({"operation": "tap", "contentDesc": "Contacts"}),
    )
    .await;
    assert!(err(&gone).contains("nothing on the screen matches"), "{gone:?}");
    assert!(
        screen_text(&phone).contains("Network &amp; internet"),
        "nothing was tapped"
    );

    // An acting call since (adb-shell's run, by the server): the reading no longer aims.
    ui(&phone, json!({"operation": "key", "name": "HOME"})).await;
    ui(&phone, json!({"operation": "dump"})).await;
    ok(&call(
        &phone.client,
        "adb-shell",
        json!({"operation": "run", "command": "am start -n com.android.settings/.Settings"}),
    )
    .await);
    let gone = call(
        &phone.client,
        "ui",
        json!({"operation": "tap", "contentDesc": "Contacts"}),
    )
    .await;
    assert!(err(&gone).contains("nothing on the screen matches"), "{gone:?}");
    assert!(
        screen_text(&phone).contains("Network &amp; internet"),
        "nothing was tapped"
    );
    phone.client.cancel().await.unwrap();
}

const ALICE: &str = "alice-0123456789abcdef";
const BOB: &str = "bob-0123456789abcdef0";

/// Input is per device: Bob's acting call on the phone Alice read makes her tap read again.
#[tokio::test]
async fn a_tap_reads_again_when_another_principal_acted_on_the_device() {
    let home = tempfile::tempdir().unwrap();
    let profile = repo_dir().join("fixtures/phone");
    let (a, b) = (format!("alice={ALICE}"), format!("bob={BOB}"));
    let server = HttpServer::start(
        &["--sim", profile.to_str().unwrap(), "--token", &a, "--token", &b],
        &[],
        home.path(),
    )
    .await;
    let alice = ().serve_with_lifecycle(server.transport(Some(ALICE)), modern()).await.unwrap();
    let bob = ().serve_with_lifecycle(server.transport(Some(BOB)), modern()).await.unwrap();
    ok(&call(&alice, "ui", json!({"operation": "dump"})).await);
    ok(&call(
        &bob,
        "adb-app",
        json!({"operation": "launch", "package": "com.android.settings"}),
    )
    .await);
    let gone = call(&alice, "ui", json!({"operation": "tap", "contentDesc": "Contacts"})).await;
    assert!(err(&gone).contains("nothing on the screen matches"), "{gone:?}");
    // Without Bob's call in between, Alice's tap aims by her reading.
    ok(&call(&alice, "ui", json!({"operation": "key", "name": "HOME"})).await);
    ok(&call(&alice, "ui", json!({"operation": "dump"})).await);
    let tap = ok(&call(&alice, "ui", json!({"operation": "tap", "contentDesc": "Contacts"})).await);
    assert!(tap["aimedByReadingMs"].as_u64().is_some(), "{tap}");
    alice.cancel().await.unwrap();
    bob.cancel().await.unwrap();
}
