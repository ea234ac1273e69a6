//! What each refusal says, tool by tool: the message a model reads names the field and the
//! next step (a dump first, a ref that is gone, a device to list, an id that expired). The
//! generated cases in mod.rs check that a field is named; these check the words.

use crate::common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn bad_input_gets_a_clear_tool_error_and_the_server_keeps_serving() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let id = ok(&call(&client, "adb-device", json!({"operation": "properties"})).await)["cacheId"]
        .as_str()
        .unwrap()
        .to_string();
    let expired_id = format!(
        "props-{}",
        ulid::Ulid::from_datetime(std::time::SystemTime::now() - std::time::Duration::from_secs(3 * 3600))
    );
    let unknown_id = format!("props-{}", ulid::Ulid::generate());

    let cases: Vec<(&str, Value, &[&str])> = vec![
        (
            "adb-device",
            json!({"operation": "properties", "device": "nope-123"}),
            &["no device `nope-123`", "adb-device list"],
        ),
        (
            "cache",
            json!({"operation": "get", "id": "props-; reboot"}),
            &["is not a cache id"],
        ),
        (
            "cache",
            json!({"operation": "get", "id": unknown_id}),
            &["unknown", "adb-device properties"],
        ),
        (
            "cache",
            json!({"operation": "get", "id": expired_id}),
            &["expired", "adb-device properties"],
        ),
        (
            "cache",
            json!({"operation": "get", "id": id, "limit": -1}),
            &["invalid value: integer `-1`"],
        ),
        (
            "cache",
            json!({"operation": "get", "id": id, "offset": 99999}),
            &["past the end"],
        ),
        (
            "cache",
            json!({"operation": "get", "id": id, "prefix": "ro.", "offset": -5}),
            &["invalid value: integer `-5`"],
        ),
    ];
    for (tool, args, expected) in cases {
        let message = err(&call(&client, tool, args.clone()).await);
        for e in expected {
            assert!(message.contains(e), "{tool} {args}: {message:?} should say {e:?}");
        }
    }
    // Shell metacharacters in a filter are a literal substring, matched locally, never run.
    let literal = ok(&call(
        &client,
        "cache",
        json!({"operation": "get", "id": id, "filter": "$(reboot); `id` | rm -rf /"}),
    )
    .await);
    assert_eq!(literal["matching"], 0);
    // Still serving, and the device is still there.
    let again = ok(&call(&client, "adb-device", json!({"operation": "properties"})).await);
    assert_eq!(again["propertyCount"], literal["total"]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn bad_app_input_is_refused_before_it_reaches_the_device() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let not_apk = home.path().join("notes.txt");
    std::fs::write(&not_apk, "hello").unwrap();
    let cases: Vec<(Value, &[&str])> = vec![
        (
            json!({"operation": "info", "package": "com.foo; reboot"}),
            &["is not a package name"],
        ),
        (
            json!({"operation": "launch", "package": "$(reboot)"}),
            &["is not a package name"],
        ),
        (
            json!({"operation": "launch", "package": "com.android.settings", "activity": ".Main;reboot"}),
            &["not an activity"],
        ),
        (
            json!({"operation": "info", "package": "com.not.installed"}),
            &["not installed", "adb-app list", "installed"],
        ),
        (
            json!({"operation": "uninstall", "package": "com.android.settings"}),
            &["pm uninstall failed", "system apps"],
        ),
        (
            json!({"operation": "list", "offset": -1}),
            &["invalid value: integer `-1`"],
        ),
        (json!({"operation": "list", "offset": 5000}), &["past the end"]),
        (
            json!({"operation": "install", "path": "relative/app.apk"}),
            &["not an absolute path"],
        ),
        (
            json!({"operation": "install", "path": "/no/such/file.apk"}),
            // An HTTP session installs only from its install folders, and says that first.
            if crate::common::over_http() {
                &["not under an install folder"]
            } else {
                &["cannot read"]
            },
        ),
        (
            json!({"operation": "install", "path": not_apk.to_str().unwrap()}),
            &["not an APK"],
        ),
    ];
    for (args, expected) in cases {
        let message = err(&call(&client, "adb-app", args.clone()).await);
        for e in expected {
            assert!(message.contains(e), "{args}: {message:?} should say {e:?}");
        }
    }
    // Still serving.
    ok(&call(&client, "adb-app", json!({"operation": "list", "limit": 1})).await);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn bad_ui_input_gets_clear_errors() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let no_dump_yet = err(&call(&client, "ui", json!({"operation": "tap", "ref": "e3"})).await);
    assert!(no_dump_yet.contains("ui dump"), "{no_dump_yet}");
    ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    let cases: Vec<(Value, &str)> = vec![
        (json!({"operation": "tap", "ref": "e999"}), "unknown ref e999"),
        (json!({"operation": "tap", "ref": "e0"}), "is not a ref"),
        (
            json!({"operation": "tap", "ref": "e1", "x": 1, "y": 2}),
            "takes one target",
        ),
        (json!({"operation": "tap", "ref": "e-1"}), "is not a ref"),
        (
            json!({"operation": "tap", "ref": "e99999999999999999999"}),
            "is not a ref",
        ),
        (
            json!({"operation": "tap", "x": 5000, "y": 10}),
            "off the 1080×2400 screen",
        ),
        (json!({"operation": "tap", "x": -1, "y": 10}), "0 or more"),
        (json!({"operation": "tap", "text": ""}), "empty"),
        (
            json!({"operation": "tap", "text": "zzzz-not-here"}),
            "nothing on the screen matches",
        ),
        (json!({"operation": "key", "name": "SELF_DESTRUCT"}), "is not a key"),
        (
            json!({"operation": "tap", "x": 10, "y": 10, "space": "image"}),
            "ui screenshot first",
        ),
        (json!({"operation": "type", "text": "café"}), "printable ASCII"),
        (
            json!({"operation": "find", "text": "(", "match": "regex"}),
            "not a valid regex",
        ),
        (json!({"operation": "tap"}), "say where"),
    ];
    for (args, expected) in cases {
        let message = err(&call(&client, "ui", args.clone()).await);
        assert!(message.contains(expected), "{args}: {message}");
    }
    // Ambiguous: several launcher labels contain an "o".
    let ambiguous = err(&call(&client, "ui", json!({"operation": "tap", "text": "o"})).await);
    assert!(
        ambiguous.contains("ambiguous") && ambiguous.contains("Tap one by ref"),
        "{ambiguous}"
    );

    client.cancel().await.unwrap();
}
