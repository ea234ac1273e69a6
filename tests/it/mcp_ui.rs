//! `ui` over MCP against the simulator: a task end to end through a real adb server, checked at
//! each step through the device's own state (read with the `adb` program, not through droidmcp);
//! targets (refs, text, points) and what is refused; forms typed and submitted; bad input.
//! Screenshots and the grid are in mcp_ui_capture.rs, scrolling and waits in mcp_ui_waits.rs.

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
