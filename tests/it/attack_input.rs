//! Outside attack on the JVM-free input path at the simulator (issue 46): the `phone` profile is
//! Android 14, whose `printf` is toybox's; toybox 0.8.5 through 0.8.10 leave stdout unbuffered
//! (main.c's `setvbuf(stdout, 0, … _IONBF, 0)`, https://github.com/landley/toybox tags
//! 0.8.5-0.8.10), so `printf '\000…' > /dev/input/eventN` is one `write()` per byte, and evdev
//! refuses every write shorter than one event (-EINVAL). Debian's toybox 0.8.9 shows the byte
//! writes (crates/android/tests/attack_input.rs). The simulator takes the printf's output as one
//! write and lands it: it must play what such a phone does.

use std::path::Path;

use crate::common::*;
use droidmcp::android::input_device::{Width, encode, key_device, key_press, parse_getevent, write_command};
use serde_json::json;

fn phone() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/phone")
}

/// POWER puts the phone to sleep; KEY_WAKEUP written by the one-printf command to the device
/// that lists it must not wake an Android 14 phone (its printf writes byte by byte), or the
/// command must say it failed. Today the simulator wakes it and answers success.
#[tokio::test]
async fn a_byte_per_write_printf_on_android_14_does_not_press_a_key() {
    let home = tempfile::tempdir().unwrap();
    let profile = phone();
    let client = mcp_server(&["--sim", profile.to_str().unwrap()], &[], home.path()).await;
    let sdk = ok(&shell(&client, "getprop ro.build.version.sdk").await);
    assert_eq!(sdk["stdout"], "34\n", "the phone profile is Android 14");
    let listed = ok(&shell(&client, "getevent -lp").await);
    let devices = parse_getevent(listed["stdout"].as_str().unwrap());
    let node = key_device(&devices, "KEY_WAKEUP")
        .expect("the capture lists KEY_WAKEUP")
        .to_string();
    ok(&call(&client, "ui", json!({"operation": "key", "name": "POWER"})).await);
    let asleep = ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    assert_eq!(asleep["state"]["name"], "asleep", "{asleep}");

    let command = write_command(&node, &[(encode(&key_press(143), Width::Bits64), 0.0)]).unwrap();
    let written = shell(&client, &command).await;
    let after = ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    println!("wrote WAKEUP to {node}: {written:?}\nthen: {}", after["state"]);
    assert!(
        after["state"]["name"] == "asleep"
            || written.is_error == Some(true)
            || written.structured_content.as_ref().is_some_and(|r| r["exitCode"] != 0),
        "a printf that writes one byte per write() pressed WAKEUP (the phone woke, exit 0): {}",
        after["state"]
    );
}
