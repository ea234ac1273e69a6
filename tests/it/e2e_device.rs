//! An end-to-end journey any Android emulator can run: list, properties, a console command, apps,
//! Settings, a tap by text, BACK, a screenshot, the log, the shell and the cache, through the
//! real MCP protocol.
//!
//! By default it runs against the built-in simulated device. With `DROIDMCP_E2E_SERIAL` set it
//! drives that device through the local adb server (an emulator in `.github/workflows/
//! emulator.yml`, or your phone, which skips the console step): nothing in it depends on the simulator's fixtures then, only
//! on what every Android image has (the Settings app and AOSP's English labels).

use std::time::Instant;

use crate::common::{call, ok};
use serde_json::json;

/// Settings entries every recent AOSP image shows on its first page, in English.
const SETTINGS_ENTRIES: &[&str] = &["Network & internet", "Connected devices", "Display", "Battery", "Apps"];

#[tokio::test]
async fn journey_on_any_device() {
    let serial = std::env::var("DROIDMCP_E2E_SERIAL").ok().filter(|s| !s.is_empty());
    let home = tempfile::tempdir().unwrap();
    let args: Vec<&str> = match &serial {
        Some(serial) => vec!["--device", serial.as_str()],
        None => vec!["--sim"],
    };
    let target = serial.as_deref().unwrap_or("the built-in simulated device");
    println!("e2e journey on {target}");
    let client = crate::common::mcp_server(&args, &[], home.path()).await;
    let started = Instant::now();
    let step = |name: &str| println!("  {:>6} ms  {name}", started.elapsed().as_millis());

    let list = ok(&call(&client, "adb-device", json!({"operation": "list"})).await);
    let devices = list["devices"].as_array().expect("devices");
    assert!(!devices.is_empty(), "{list}");
    if let Some(serial) = &serial {
        assert!(
            devices.iter().any(|d| d["serial"] == serial.as_str()),
            "{serial} in {list}"
        );
    }
    step("adb-device list");

    let props = ok(&call(&client, "adb-device", json!({"operation": "properties"})).await);
    let sdk = props["summary"]["sdkVersion"].as_u64().expect("an SDK level");
    assert!(sdk >= 21, "{props}");
    assert!(!props["summary"]["model"].as_str().unwrap_or("").is_empty(), "{props}");
    let props_id = props["cacheId"].as_str().expect("the properties' cacheId").to_string();
    step("adb-device properties");

    // The emulator console (the simulator serves one too; a phone has none): the battery level
    // it sets is what the device reports. A real emulator's battery service takes a moment.
    if serial.as_deref().is_none_or(|s| s.starts_with("emulator-")) {
        let set = ok(&call(
            &client,
            "adb-device",
            json!({"operation": "emulator", "command": "power capacity 42"}),
        )
        .await);
        assert_eq!(set["reply"], "OK", "{set}");
        let mut level = None;
        for _ in 0..20 {
            let health = ok(&call(&client, "adb-device", json!({"operation": "health"})).await);
            level = health["health"]["battery"]["level"].as_u64();
            if level == Some(42) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        }
        assert_eq!(level, Some(42));
        step("adb-device emulator power capacity 42, then health");
    }

    let apps = ok(&call(&client, "adb-app", json!({"operation": "list", "filter": "settings"})).await);
    let names: Vec<&str> = apps["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str())
        .collect();
    assert!(names.contains(&"com.android.settings"), "{apps}");
    let info = ok(&call(
        &client,
        "adb-app",
        json!({"operation": "info", "package": "com.android.settings"}),
    )
    .await);
    assert_eq!(info["info"]["package"], "com.android.settings", "{info}");
    step("adb-app list, info");

    let launched = ok(&call(
        &client,
        "adb-app",
        json!({"operation": "launch", "package": "com.android.settings"}),
    )
    .await);
    assert_eq!(launched["focused"]["package"], "com.android.settings", "{launched}");
    let settings_activity = launched["focused"]["activity"].clone();
    step("adb-app launch Settings");

    // The first of the usual entries this device shows; tapping it opens another page.
    let mut entry = None;
    for text in SETTINGS_ENTRIES {
        let found = ok(&call(
            &client,
            "ui",
            json!({"operation": "find", "text": text, "match": "exact"}),
        )
        .await);
        if found["matches"].as_array().is_some_and(|m| !m.is_empty()) {
            entry = Some(*text);
            break;
        }
    }
    let entry = entry.unwrap_or_else(|| panic!("none of {SETTINGS_ENTRIES:?} on the Settings page"));
    let tapped = ok(&call(
        &client,
        "ui",
        json!({"operation": "tap", "text": entry, "match": "exact", "observe": true}),
    )
    .await);
    assert_eq!(
        tapped["observed"]["changed"], true,
        "tapping {entry} changed the screen: {tapped}"
    );
    step(&format!("ui find and tap {entry:?}"));

    let back = ok(&call(
        &client,
        "ui",
        json!({"operation": "key", "name": "BACK", "observe": true}),
    )
    .await);
    assert_eq!(
        back["focused"]["activity"], settings_activity,
        "BACK returned to Settings: {back}"
    );
    step("ui key BACK");

    let shot = call(&client, "ui", json!({"operation": "screenshot"})).await;
    let meta = ok(&shot);
    let image = shot
        .content
        .iter()
        .find_map(|c| match c {
            rmcp::model::ContentBlock::Image(i) => Some(i),
            _ => None,
        })
        .expect("an image block");
    assert_eq!(image.mime_type, "image/jpeg");
    let longest = meta["image"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_u64())
        .max();
    assert!(longest.is_some_and(|l| l <= 1000), "{meta}");
    step("ui screenshot");

    let log = ok(&call(&client, "adb-logcat", json!({"operation": "read", "lines": 20})).await);
    assert!(log["totalLines"].as_u64().is_some_and(|n| n > 0), "{log}");
    step("adb-logcat read");

    let shell = ok(&call(
        &client,
        "adb-shell",
        json!({"operation": "run", "command": "getprop ro.build.version.sdk; pm list packages | grep -c settings"}),
    )
    .await);
    let out = shell["stdout"].as_str().unwrap();
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some(sdk.to_string().as_str()), "{shell}");
    assert!(
        lines.next().and_then(|n| n.parse::<u32>().ok()).is_some_and(|n| n >= 1),
        "{shell}"
    );
    step("adb-shell getprop; pm list packages | grep -c");

    let build = ok(&call(
        &client,
        "cache",
        json!({"operation": "get", "id": props_id, "prefix": "ro.build.version."}),
    )
    .await);
    let text = build.to_string();
    assert!(text.contains("ro.build.version.sdk"), "{build}");
    step("cache get ro.build.version.*");
    client.cancel().await.unwrap();
}
