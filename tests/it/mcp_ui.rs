//! `ui` over MCP against the simulator through a real adb server: a task end to end, checked at
//! each step through the device's own state (read with the `adb` program, not through droidmcp),
//! screenshots, the tap grid, and bad input.

use crate::common::*;
use serde_json::{Value, json};

/// The focused window, as the device reports it to the adb program.
fn focus(adb: &AdbServer, serial: &str) -> String {
    let (out, _, _) = adb.shell(serial, &["dumpsys", "window"]);
    out.lines()
        .find(|l| l.contains("mCurrentFocus"))
        .unwrap_or_default()
        .to_string()
}

fn element<'a>(page: &'a Value, label: &str) -> &'a Value {
    page["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["label"] == label)
        .unwrap_or_else(|| panic!("no element {label:?} in {page}"))
}

#[tokio::test]
async fn a_task_end_to_end_settings_network_back_then_login_with_symbols() {
    let Some((adb, _sim, serial)) = connected_sim(&[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let port = adb.port.to_string();
    let client = mcp_server(&[], &[("ANDROID_ADB_SERVER_PORT", &port)], home.path()).await;

    // The launcher.
    let result = call(&client, "ui", json!({"operation": "dump"})).await;
    println!("ui dump of the launcher: {} chars", response_chars(&result));
    let launcher = ok(&result);
    assert_eq!(launcher["screen"], json!([1080, 2400]));
    assert!(launcher["focused"]["package"].as_str().unwrap().contains("launcher"));
    let settings = element(&launcher, "Settings");
    let y = settings["at"][1].as_i64().unwrap();
    assert!((0..2400).contains(&y), "{settings}");

    // Open Settings by its label, and watch what changed.
    let tapped = ok(&call(
        &client,
        "ui",
        json!({"operation": "tap", "text": "Settings", "observe": true}),
    )
    .await);
    assert_eq!(tapped["observed"]["changed"], true);
    assert_eq!(tapped["observed"]["focused"]["package"], "com.android.settings");
    assert!(
        focus(&adb, &serial).contains("com.android.settings"),
        "{}",
        focus(&adb, &serial)
    );

    let result = call(&client, "ui", json!({"operation": "dump"})).await;
    println!("ui dump of Settings: {} chars", response_chars(&result));
    assert!(response_chars(&result) <= 3000);

    // Find the Network entry and tap it by ref.
    let result = call(
        &client,
        "ui",
        json!({"operation": "find", "text": "network & internet", "match": "exact"}),
    )
    .await;
    println!("ui find, one match: {} chars", response_chars(&result));
    assert!(response_chars(&result) <= 600, "{}", response_chars(&result));
    let found = ok(&result);
    assert_eq!(found["count"], 1);
    let best = &found["matches"][0];
    assert!(
        best["label"].as_str().unwrap().starts_with("Network & internet"),
        "{best}"
    );
    ok(&call(&client, "ui", json!({"operation": "tap", "ref": best["ref"]})).await);
    assert!(focus(&adb, &serial).contains("SubSettings"), "{}", focus(&adb, &serial));

    // BACK returns to Settings.
    ok(&call(&client, "ui", json!({"operation": "key", "name": "BACK"})).await);
    assert!(
        focus(&adb, &serial).contains("com.android.settings.Settings"),
        "{}",
        focus(&adb, &serial)
    );

    // Open the login app, type a user name with spaces and symbols, then submit.
    ok(&call(
        &client,
        "adb-app",
        json!({"operation": "launch", "package": "org.droidmcp.demo.login"}),
    )
    .await);
    let login = ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    let field = login["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "username")
        .expect("the user name field");
    let name = r#"Ada Lovelace & co; <tag> | $HOME `x` "q" 'a' \ 100%"#;
    ok(&call(
        &client,
        "ui",
        json!({"operation": "type", "ref": field["ref"], "text": name}),
    )
    .await);
    let (xml, _, _) = adb.shell(&serial, &["uiautomator", "dump", "/dev/tty"]);
    let typed = droidmcp::android::uiautomator::parse_ui_dump(&xml).unwrap();
    let value = typed
        .nodes
        .iter()
        .find(|n| n.resource_id().ends_with(":id/username"))
        .unwrap()
        .text()
        .to_string();
    assert_eq!(value, name, "the device got every character");
    let submitted = ok(&call(
        &client,
        "ui",
        json!({"operation": "key", "name": "ENTER", "observe": true}),
    )
    .await);
    assert_eq!(submitted["observed"]["changed"], true);
    assert!(
        focus(&adb, &serial).contains("HomeActivity"),
        "{}",
        focus(&adb, &serial)
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn screenshots_are_jpeg_image_blocks_with_their_scale_and_the_grid_maps_cells_to_pixels() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let result = call(&client, "ui", json!({"operation": "screenshot"})).await;
    let shot = ok(&result);
    assert_eq!(
        (shot["image"].clone(), shot["screen"].clone()),
        (json!([450, 1000]), json!([1080, 2400]))
    );
    assert_eq!(shot["scale"], 2.4);
    assert!(
        shot["hint"]
            .as_str()
            .unwrap()
            .contains("450×1000 of a 1080×2400 screen")
    );
    let image = result
        .content
        .iter()
        .find_map(|c| c.as_image())
        .expect("an image block");
    assert_eq!(image.mime_type, "image/jpeg");
    println!("screenshot: {} base64 chars", image.data.len());
    use base64::Engine;
    let jpeg = base64::engine::general_purpose::STANDARD.decode(&image.data).unwrap();
    let decoded = image::load_from_memory_with_format(&jpeg, image::ImageFormat::Jpeg).unwrap();
    assert_eq!((decoded.width(), decoded.height()), (450, 1000));
    assert_eq!(
        first_quantizer(&jpeg),
        10,
        "quality 70: 16 × (200 − 2·70) / 100, rounded"
    );
    assert!(
        !result
            .content
            .iter()
            .any(|c| c.as_text().is_some_and(|t| t.text.contains("/9j/"))),
        "no base64 in the text"
    );

    // Nothing matches on the launcher: the closest labels and a grid image.
    let miss = call(&client, "ui", json!({"operation": "find", "text": "Setings"})).await;
    let found = ok(&miss);
    assert_eq!(found["count"], 0);
    assert_eq!(found["matches"][0]["label"], "Settings", "the closest label");
    assert!(miss.content.iter().any(|c| c.as_image().is_some()));
    assert!(found["hint"].as_str().unwrap().contains("gridCell"));

    let small = call(
        &client,
        "ui",
        json!({"operation": "screenshot", "maxSize": 500, "grid": true}),
    )
    .await;
    assert_eq!(ok(&small)["image"], json!([225, 500]));

    // A grid cell and a position land on the device pixels they name.
    let tap = ok(&call(
        &client,
        "ui",
        json!({"operation": "tap", "gridCell": 14, "gridPosition": "top-left"}),
    )
    .await);
    assert_eq!(tap["at"], json!([338, 1300]));
    let tap = ok(&call(&client, "ui", json!({"operation": "tap", "gridCell": 1})).await);
    assert_eq!(tap["at"], json!([135, 200]));
    // Image pixels map back through the last screenshot's scale (225×500 → 1080×2400).
    let tap = ok(&call(
        &client,
        "ui",
        json!({"operation": "tap", "x": 100, "y": 250, "space": "image"}),
    )
    .await);
    assert_eq!(tap["at"], json!([480, 1200]));

    client.cancel().await.unwrap();
}

/// The first luminance quantizer value in a JPEG's DQT segment.
fn first_quantizer(jpeg: &[u8]) -> u8 {
    let at = jpeg.windows(2).position(|w| w == [0xFF, 0xDB]).expect("a DQT segment");
    jpeg[at + 5]
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
        (json!({"operation": "dump", "x": 5}), "`x` does not apply to ui dump"),
        (
            json!({"operation": "key", "name": "BACK", "text": "hi"}),
            "`text` does not apply to ui key",
        ),
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
            json!({"operation": "tap", "gridCell": 25}),
            "gridCell must be between 1 and 24",
        ),
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
        (json!({"operation": "dump", "limit": 0}), "limit must be between"),
        (
            json!({"operation": "screenshot", "maxSize": 50}),
            "maxSize must be between",
        ),
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

#[tokio::test]
async fn an_old_ref_is_refused_after_navigating_and_nothing_is_tapped() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let launcher = ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    let settings = element(&launcher, "Settings")["ref"].clone();
    ok(&call(&client, "ui", json!({"operation": "tap", "ref": settings})).await);
    let before = ok(&call(&client, "ui", json!({"operation": "dump", "limit": 200})).await);
    // The launcher's ref means the launcher's icon: on Settings it is refused, whatever sits there.
    for observe in [false, true] {
        let refused = err(&call(
            &client,
            "ui",
            json!({"operation": "tap", "ref": settings, "observe": observe}),
        )
        .await);
        assert!(
            refused.contains("no longer on the screen") && refused.contains("nothing was done"),
            "{refused}"
        );
    }
    // The device agrees: still on the same Settings screen, with the same elements.
    let after = ok(&call(&client, "ui", json!({"operation": "dump", "limit": 200})).await);
    assert_eq!(after["focused"], before["focused"]);
    assert_eq!(after["elements"], before["elements"]);
    // The refs a screen handed out stay the same on the next reading.
    assert!(
        after["elements"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["ref"] != settings)
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_ref_from_one_single_choice_dialog_never_taps_the_next_dialogs_row() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let opened = call(
        &client,
        "adb-shell",
        json!({"operation": "run", "command": "am start -n com.android.settings/.ThemeDialogActivity"}),
    )
    .await;
    assert_eq!(ok(&opened)["exitCode"], 0);
    let theme = ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    let light = element(&theme, "Light")["ref"].clone();
    ok(&call(&client, "ui", json!({"operation": "tap", "text": "Cancel"})).await);
    let reset = ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    let erase = element(&reset, "Erase all data");
    assert_ne!(
        erase["ref"], light,
        "a row at the same place with the same id is another element"
    );
    // Light's ref on the reset dialog: refused, and the device shows nothing was tapped.
    let refused = err(&call(&client, "ui", json!({"operation": "tap", "ref": light})).await);
    assert!(refused.contains("no longer on the screen"), "{refused}");
    let after = ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    let erase_after = element(&after, "Erase all data");
    assert!(
        !erase_after["flags"]
            .as_array()
            .is_some_and(|f| f.iter().any(|x| x == "checked")),
        "Erase all data was tapped: {erase_after}"
    );
    assert_eq!(after["elements"], reset["elements"]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_target_off_the_screen_is_refused_with_the_way_to_scroll() {
    let home = tempfile::tempdir().unwrap();
    let profile = Profile::new();
    // Settings with one more row below the bottom edge, as a long list reports it.
    let below = r#"<node index="9" text="Tips &amp; support" resource-id="com.android.settings:id/far" class="android.widget.TextView" package="com.android.settings" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,2450][1080,2600]" />"#;
    profile.edit("screens/settings.xml", |xml| {
        let at = xml.rfind("</node></hierarchy>").expect("the root's end");
        format!("{}{below}{}", &xml[..at], &xml[at..])
    });
    let client = mcp_server(&["--sim", profile.path().to_str().unwrap()], &[], home.path()).await;
    ok(&call(
        &client,
        "adb-app",
        json!({"operation": "launch", "package": "com.android.settings"}),
    )
    .await);
    let before = ok(&call(&client, "ui", json!({"operation": "dump", "limit": 200})).await);
    let far = element(&before, "Tips & support")["ref"].clone();
    for target in [json!({"text": "Tips & support"}), json!({"ref": far})] {
        let mut args = json!({"operation": "tap"});
        args.as_object_mut()
            .unwrap()
            .extend(target.as_object().unwrap().clone());
        let refused = err(&call(&client, "ui", args).await);
        assert!(refused.starts_with("off screen: scroll down first"), "{refused}");
        assert!(refused.contains("nothing was done"), "{refused}");
    }
    let after = ok(&call(&client, "ui", json!({"operation": "dump", "limit": 200})).await);
    assert_eq!(after["elements"], before["elements"], "nothing was tapped");
    client.cancel().await.unwrap();
}

/// A server on the simulator, showing the login demo's form.
async fn on_the_login_screen(home: &std::path::Path) -> McpClient {
    let client = mcp_server(&["--sim"], &[], home).await;
    ok(&call(
        &client,
        "adb-app",
        json!({"operation": "launch", "package": "org.droidmcp.demo.login"}),
    )
    .await);
    client
}

#[tokio::test]
async fn clear_empties_a_field_of_any_length_before_typing() {
    let home = tempfile::tempdir().unwrap();
    let client = on_the_login_screen(home.path()).await;
    let login = ok(&call(&client, "ui", json!({"operation": "find", "resourceId": "username"})).await);
    let field = login["matches"][0]["ref"].clone();
    let long = "abcdefghij".repeat(70); // 700 chars, past the 256 DELs that once were all
    ok(&call(&client, "ui", json!({"operation": "type", "ref": field, "text": long})).await);
    ok(&call(
        &client,
        "ui",
        json!({"operation": "type", "ref": field, "text": "bob", "clear": true}),
    )
    .await);
    let after = ok(&call(&client, "ui", json!({"operation": "find", "resourceId": "username"})).await);
    assert_eq!(after["matches"][0]["label"], "bob", "{after}");
    // Emptied with nothing typed, the field shows its hint again.
    ok(&call(
        &client,
        "ui",
        json!({"operation": "type", "ref": field, "text": "", "clear": true}),
    )
    .await);
    let empty = ok(&call(&client, "ui", json!({"operation": "find", "resourceId": "username"})).await);
    assert_eq!(empty["matches"][0]["label"], "name@example.com", "{empty}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_form_is_filled_and_submitted_with_the_refs_of_one_dump() {
    let home = tempfile::tempdir().unwrap();
    let client = on_the_login_screen(home.path()).await;
    let form = ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    let by_id = |id: &str| {
        form["elements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == id)
            .unwrap_or_else(|| panic!("no {id} in {form}"))["ref"]
            .clone()
    };
    let (user, pass, login) = (by_id("username"), by_id("password"), by_id("login_button"));
    ok(&call(&client, "ui", json!({"operation": "type", "ref": user, "text": "ada"})).await);
    // Typing into the first field left the others' refs valid.
    ok(&call(
        &client,
        "ui",
        json!({"operation": "type", "ref": pass, "text": "secret"}),
    )
    .await);
    let done = ok(&call(
        &client,
        "ui",
        json!({"operation": "tap", "ref": login, "observe": true}),
    )
    .await);
    assert_eq!(done["observed"]["changed"], true, "{done}");
    let activity = done["focused"]["activity"].as_str().unwrap_or("");
    assert!(activity.contains("HomeActivity"), "{done}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn scroll_until_text_wait_for_appear_and_gone_and_annotated_screenshots() {
    let home = tempfile::tempdir().unwrap();
    let recorder = ProgressRecorder::default();
    let client = mcp_server_with(recorder.clone(), &["--sim"], &[], home.path()).await;
    ok(&call(&client, "ui", json!({"operation": "tap", "text": "Contacts"})).await);

    // The contact is on the second page: one scroll down finds it.
    let found = ok(&call(
        &client,
        "ui",
        json!({"operation": "scroll", "direction": "down", "text": "+1 555 0120"}),
    )
    .await);
    assert_eq!(found["count"], 1, "{found}");
    assert!(found["target"]["label"].as_str().unwrap().contains("+1 555 0120"));
    // Further down there is nothing more: the end is reached, and it says so.
    let end = err(&call(
        &client,
        "ui",
        json!({"operation": "scroll", "direction": "down", "text": "no such contact"}),
    )
    .await);
    assert!(end.contains("end is reached"), "{end}");
    // `scroll up` shows what is above, and with observe says what changed.
    let up = ok(&call(
        &client,
        "ui",
        json!({"operation": "scroll", "direction": "up", "observe": true}),
    )
    .await);
    assert_eq!(up["observed"]["changed"], true, "{up}");
    assert!(!up["observed"]["appeared"].as_array().unwrap().is_empty(), "{up}");
    let top = ok(&call(
        &client,
        "ui",
        json!({"operation": "scroll", "direction": "up", "observe": true}),
    )
    .await);
    assert_eq!(top["observed"]["changed"], false, "{top}");
    assert!(top["hint"].as_str().unwrap().contains("end is reached"), "{top}");
    // A swipe by direction and distance; and an action that changes nothing says so.
    let swiped = ok(&call(
        &client,
        "ui",
        json!({"operation": "swipe", "direction": "left", "distance": 50}),
    )
    .await);
    assert_eq!(
        swiped["at"],
        json!([270, 1200]),
        "half the width, leftwards through the middle"
    );
    let still = ok(&call(
        &client,
        "ui",
        json!({"operation": "key", "name": "VOLUME_UP", "observe": true}),
    )
    .await);
    assert_eq!(still["observed"]["changed"], false);
    assert!(still["hint"].as_str().unwrap().starts_with("unchanged"));

    // Wait for something already there, and for something that goes away.
    let here = ok(&call(
        &client,
        "ui",
        json!({"operation": "wait", "text": "Contacts", "timeoutMs": 2000}),
    )
    .await);
    assert_eq!(here["count"], 1);
    ok(&call(&client, "ui", json!({"operation": "key", "name": "HOME"})).await);
    let gone = ok(&call(
        &client,
        "ui",
        json!({"operation": "wait", "text": "+1 555 0101", "gone": true, "timeoutMs": 2000}),
    )
    .await);
    assert_eq!(gone["operation"], "wait");
    // Waiting in vain sends progress, then says what did not happen.
    let never = call_with_progress(
        &client,
        "ui",
        json!({"operation": "wait", "text": "never-there", "timeoutMs": 1200}),
    )
    .await;
    let never = err(&never);
    assert!(never.contains("did not appear after 12"), "{never}");
    assert!(
        !recorder.0.lock().unwrap().is_empty(),
        "progress notifications while waiting"
    );

    // Annotated: the boxes are numbered as a fresh dump's refs.
    let shot = call(&client, "ui", json!({"operation": "screenshot", "annotate": true})).await;
    assert!(ok(&shot)["hint"].as_str().unwrap().contains("numbered as the refs"));
    assert!(shot.content.iter().any(|c| c.as_image().is_some()));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn text_targets_pick_the_row_a_person_would_tap() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    ok(&call(&client, "ui", json!({"operation": "tap", "text": "Settings"})).await);
    // One row holds "Network & internet": its title and summary are one target, and neither the
    // list around it nor the screen's containers count.
    let found = call(&client, "ui", json!({"operation": "find", "text": "Network"})).await;
    let size = response_chars(&found);
    let found = ok(&found);
    println!(
        "find \"Network\" on Settings: {} match(es), {size} chars",
        found["count"]
    );
    assert_eq!(found["totalCount"], 1, "{found}");
    assert!(size <= 600, "{size} chars: {found}");
    // With no `match`, the obvious row is tapped and the network screen opens.
    let tapped = ok(&call(
        &client,
        "ui",
        json!({"operation": "tap", "text": "Network & internet", "observe": true}),
    )
    .await);
    let activity = tapped["focused"]["activity"].as_str().unwrap_or("");
    assert!(activity.contains("SubSettings"), "{tapped}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn waits_last_their_whole_timeout_and_say_how_long_they_waited() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let started = std::time::Instant::now();
    let message = err(&call(
        &client,
        "ui",
        json!({"operation": "wait", "text": "zzz-never", "timeoutMs": 1500}),
    )
    .await);
    let waited = started.elapsed().as_millis();
    let said: u128 = message
        .split("after ")
        .nth(1)
        .and_then(|r| r.split(" ms").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no time in {message:?}"));
    println!("ui wait 1500 ms: said {said} ms, took {waited} ms");
    assert!(said >= 1500 && waited >= 1500, "ended early: {message}");
    assert!(said <= waited);

    let nowhere = format!("tcp:127.0.0.1:{}", free_port());
    let client = mcp_server(&["--adb", &nowhere], &[], home.path()).await;
    let started = std::time::Instant::now();
    let message = err(&call(&client, "adb-device", json!({"operation": "wait", "timeoutMs": 2000})).await);
    let waited = started.elapsed().as_millis();
    println!("adb-device wait 2000 ms: took {waited} ms: {message}");
    assert!(waited >= 2000, "ended early after {waited} ms: {message}");
    let said: u128 = message
        .split("not done after ")
        .nth(1)
        .and_then(|r| r.split(" ms").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no time in {message:?}"));
    assert!(said >= 2000 && said <= waited, "{message}");
}

/// A simulator profile whose one screen is the real permission-dialog capture (read from
/// ../shared, never copied into the repo): the dump's root is the dialog, not the screen.
fn dialog_profile(capture: &std::path::Path) -> Profile {
    let profile = Profile::new();
    profile.append("packages.tsv", "com.google.android.permissioncontroller\t/system/priv-app/PermissionController/PermissionController.apk\t10140\tsystem\t34\t340000\t-\tPermission controller\t2008-12-31 16:00:00\t2008-12-31 16:00:00\t34\t34\t-\n");
    let toml = format!(
        "name = \"dialog\"\nhome = \"dialog\"\n[display]\nwidth = 1080\nheight = 2400\ndensity = 420\n\n[[screen]]\nname = \"dialog\"\nxml = {:?}\nactivity = \"com.google.android.permissioncontroller/.permission.ui.GrantPermissionsActivity\"\n",
        capture.display().to_string()
    );
    profile.write("profile.toml", toml);
    profile
}

#[tokio::test]
async fn a_dialogs_dump_keeps_the_displays_screen_and_a_tap_outside_it_is_accepted() {
    let Some(captures) = captures_dir() else { return };
    let capture = captures.join("uiautomator_permission-dialog_permissioncontroller_emulator-1080x2400.xml");
    let profile = dialog_profile(&capture);
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim", profile.path().to_str().unwrap()], &[], home.path()).await;
    let dump = ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    println!("dialog dump: screen {} window {}", dump["screen"], dump["window"]);
    assert_eq!(
        dump["screen"],
        json!([1080, 2400]),
        "the display, not the dialog: {dump}"
    );
    assert_eq!(dump["window"], json!([27, 339, 1053, 1875]), "{dump}");
    assert!(dump["hint"].as_str().unwrap().contains("dialog"), "{dump}");
    // Below and right of the dialog, still on the screen.
    let tap = ok(&call(&client, "ui", json!({"operation": "tap", "x": 1060, "y": 2000})).await);
    assert_eq!(tap["at"], json!([1060, 2000]));
    let off = err(&call(&client, "ui", json!({"operation": "tap", "x": 1080, "y": 2000})).await);
    assert!(off.contains("off the 1080×2400 screen"), "{off}");
}

/// The JPEG of a screenshot answer, decoded, and its base64 size.
fn screenshot_image(result: &rmcp::model::CallToolResult) -> (image::RgbImage, usize) {
    use base64::Engine;
    let block = result
        .content
        .iter()
        .find_map(|c| c.as_image())
        .expect("an image block");
    let jpeg = base64::engine::general_purpose::STANDARD.decode(&block.data).unwrap();
    let decoded = image::load_from_memory_with_format(&jpeg, image::ImageFormat::Jpeg).unwrap();
    (decoded.to_rgb8(), block.data.len())
}

#[tokio::test]
async fn the_grid_is_thin_dashed_cheap_and_its_numbers_cover_no_elements_center() {
    use droidmcp::image::grid;
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    for screen in ["launcher", "settings", "network"] {
        match screen {
            "settings" => ok(&call(&client, "ui", json!({"operation": "tap", "text": "Settings"})).await),
            "network" => ok(&call(&client, "ui", json!({"operation": "tap", "text": "Network & internet"})).await),
            _ => json!(null),
        };
        let dump = ok(&call(&client, "ui", json!({"operation": "dump", "limit": 200})).await);
        let plain = call(&client, "ui", json!({"operation": "screenshot"})).await;
        let gridded = call(&client, "ui", json!({"operation": "screenshot", "grid": true})).await;
        let meta = ok(&gridded);
        assert!(meta["hint"].as_str().unwrap().contains("numbered row by row"), "{meta}");
        let ((plain_img, plain_size), (grid_img, grid_size)) = (screenshot_image(&plain), screenshot_image(&gridded));
        println!(
            "{screen}: JPEG {plain_size} base64 chars, {grid_size} with the grid (+{:.0}%)",
            (grid_size as f64 / plain_size as f64 - 1.0) * 100.0
        );
        assert!(grid_size * 4 <= plain_size * 5, "{screen}: the grid adds over 25%");
        // The first column line: dark in its block, as before just outside it (one block wide).
        let (w, h) = (grid_img.width(), grid_img.height());
        let x = w / 4 / 8 * 8;
        let luma = |img: &image::RgbImage, x: u32, y: u32| {
            let p = img.get_pixel(x, y);
            (u32::from(p[0]) + u32::from(p[1]) + u32::from(p[2])) / 3
        };
        let y = h / 2 / 32 * 32 + 4; // the middle of a dash's dark block (a light one follows)
        assert!(luma(&grid_img, x + 4, y) < 90, "{screen}: the dash starts dark");
        assert!(luma(&grid_img, x + 4, y + 8) > 170, "{screen}: and goes on light");
        for outside in [x.saturating_sub(3), x + 11] {
            let (a, b) = (luma(&grid_img, outside, y), luma(&plain_img, outside, y));
            assert!(
                a.abs_diff(b) < 40,
                "{screen}: the line is wider than a block at x={outside}"
            );
        }
        // No number box sits on the centre of a labelled element.
        let scale = meta["scale"].as_f64().unwrap();
        for e in dump["elements"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["label"].is_string())
        {
            let (cx, cy) = (
                e["at"][0].as_f64().unwrap() / scale,
                e["at"][1].as_f64().unwrap() / scale,
            );
            for cell in 1..=grid::CELLS {
                let (bx, by) = grid::number_box(cell, w, h);
                let digits = cell.to_string().len() as f64 * 8.0;
                let inside = cx >= bx as f64 && cx < bx as f64 + digits && cy >= by as f64 && cy < by as f64 + 8.0;
                assert!(!inside, "{screen}: cell {cell}'s number covers the centre of {e}");
            }
        }
    }
}

/// A call's timeout is its own work: time queued behind another call on the device (a long
/// press that lasts 3 s) is not counted against it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_waiting_for_the_devices_turn_is_not_the_calls_timeout() {
    let home = tempfile::tempdir().unwrap();
    let client = std::sync::Arc::new(mcp_server(&["--sim", "--timeout-ms", "2000"], &[], home.path()).await);
    ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    let pressing = {
        let client = client.clone();
        tokio::spawn(async move {
            call(
                &client,
                "ui",
                json!({"operation": "long-press", "text": "Settings", "durationMs": 3000}),
            )
            .await
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    // A key press: one short command of its own, so only the queue can make it late.
    let started = std::time::Instant::now();
    let key = call(&client, "ui", json!({"operation": "key", "name": "BACK"})).await;
    let took = started.elapsed();
    println!(
        "a key press queued behind a 3,000 ms long press (timeout 2,000 ms): answered after {} ms",
        took.as_millis()
    );
    ok(&key);
    assert!(
        took > std::time::Duration::from_millis(2000),
        "it did wait its turn ({took:?})"
    );
    ok(&pressing.await.unwrap());
}
