//! Outside attack on the JVM-free input path at the simulator (issue 46): the `phone` profile is
//! Android 14, whose `printf` is toybox's; toybox 0.8.5 through 0.8.10 leave stdout unbuffered
//! (main.c's `setvbuf(stdout, 0, … _IONBF, 0)`, https://github.com/landley/toybox tags
//! 0.8.5-0.8.10), so `printf '\000…' > /dev/input/eventN` is one `write()` per byte, and evdev
//! refuses every write shorter than one event (-EINVAL). Debian's toybox 0.8.9 shows the byte
//! writes (crates/android/tests/attack_input.rs). The simulator plays what such a phone does.

use std::path::Path;

use crate::common::*;
use droidmcp::android::input_device::{Width, encode, key_device, key_press, parse_getevent, write_command};
use serde_json::json;

fn phone() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/phone")
}

/// POWER puts the phone to sleep. KEY_WAKEUP printed by `printf` straight to the key device
/// (byte by byte on this phone) is refused by evdev and must leave it asleep, saying so; the
/// command droidmcp writes (staged by `printf`, handed over whole by `cat`) wakes it.
#[tokio::test]
async fn a_byte_per_write_printf_on_android_14_does_not_press_a_key_and_the_staged_write_does() {
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

    let bytes = encode(&key_press(143), Width::Bits64);
    let octal: String = bytes.iter().map(|b| format!("\\{b:03o}")).collect();
    let direct = shell(&client, &format!("printf '{octal}' > {node}")).await;
    let after = ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    println!("printf straight to {node}: {direct:?}\nthen: {}", after["state"]);
    assert_eq!(
        after["state"]["name"], "asleep",
        "a byte-per-write printf pressed WAKEUP"
    );
    let refused = direct.structured_content.expect("a shell answer");
    assert_ne!(refused["exitCode"], 0, "{refused}");
    assert!(
        refused["stderr"].as_str().unwrap().contains("Invalid argument"),
        "evdev's refusal is shown: {refused}"
    );

    let command = write_command(&node, &[(bytes, 0.0)]).unwrap();
    let staged = ok(&shell(&client, &command).await);
    assert_eq!(staged["exitCode"], 0, "{staged}");
    let woke = ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    assert!(
        woke["state"].is_null(),
        "the staged write woke the phone: {}",
        woke["state"]
    );
    let left = ok(&shell(&client, "ls -a /data/local/tmp").await);
    assert!(
        !left["stdout"].as_str().unwrap().contains(".droidmcp-input"),
        "the staging file is removed: {left}"
    );
}
