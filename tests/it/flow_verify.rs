//! Verify before act, through `droidmcp replay` on the simulator: a recorded tap on a dialog's
//! `android:id/button1` ("OK") replayed where that button is "Delete everything" is refused,
//! naming both, and the button is not tapped; and the Maestro options a replay honours
//! (`eraseText: N`, a flow's `name`) have their effect.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;

use crate::common::*;

/// The built-in profile plus two dialogs at the same place, each with `android:id/button1`: "OK"
/// (tapping it shows "All set") and "Delete everything" (tapping it shows "Phone erased"). The
/// device boots into `home`.
fn profile(dir: &Path, home: &str) -> PathBuf {
    let folder = dir.join(home);
    let profile = Profile::at(&folder);
    let dialog = |title: &str, button: &str| {
        format!(
            r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.android.settings" clickable="false" bounds="[0,0][1080,2400]"><node index="0" text="" resource-id="android:id/parentPanel" class="android.widget.LinearLayout" package="com.android.settings" clickable="false" bounds="[77,900][1003,1500]"><node index="0" text="{title}" resource-id="android:id/alertTitle" class="android.widget.TextView" package="com.android.settings" clickable="false" bounds="[140,940][940,1030]"/><node index="1" text="Cancel" resource-id="android:id/button2" class="android.widget.Button" package="com.android.settings" clickable="true" focusable="true" bounds="[300,1340][600,1460]"/><node index="2" text="{button}" resource-id="android:id/button1" class="android.widget.Button" package="com.android.settings" clickable="true" focusable="true" bounds="[620,1340][980,1460]"/></node></node></hierarchy>"#
        )
    };
    let note = |text: &str| {
        format!(
            r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.android.settings" clickable="false" bounds="[0,0][1080,2400]"><node index="0" text="{text}" resource-id="" class="android.widget.TextView" package="com.android.settings" clickable="false" bounds="[100,1100][980,1200]"/></node></hierarchy>"#
        )
    };
    profile.write("screens/confirm.xml", dialog("Finish setup?", "OK"));
    profile.write("screens/wipe.xml", dialog("Erase phone?", "Delete everything"));
    profile.write("screens/done.xml", note("All set"));
    profile.write("screens/erased.xml", note("Phone erased"));
    let mut toml = String::new();
    for (name, activity) in [
        ("confirm", "ConfirmActivity"),
        ("wipe", "WipeActivity"),
        ("done", "DoneActivity"),
        ("erased", "ErasedActivity"),
    ] {
        toml.push_str(&format!(
            "\n[[screen]]\nname = \"{name}\"\nxml = \"screens/{name}.xml\"\nactivity = \"com.android.settings/.{activity}\"\n"
        ));
    }
    for (from, to) in [("confirm", "done"), ("wipe", "erased")] {
        toml.push_str(&format!(
            "\n[[transition]]\nfrom = \"{from}\"\ntap = \"id=android:id/button1\"\nto = \"{to}\"\n"
        ));
    }
    profile.edit("profile.toml", |text| {
        text.replace("home = \"launcher\"", &format!("home = \"{home}\"")) + &toml
    });
    folder
}

/// `droidmcp replay FILE ARGS --sim PROFILE` in a fresh process, logging each device command
/// (`RUST_LOG=droidmcp=debug`, on stderr).
fn replay(file: &Path, home: &Path, profile: Option<&Path>, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_droidmcp"));
    command.arg("replay").arg(file).args(args).arg("--sim");
    command.env("RUST_LOG", "droidmcp=debug");
    if let Some(profile) = profile {
        command.arg(profile);
    }
    let out = command
        .env("HOME", home)
        .env_remove("ANDROID_SERIAL")
        .output()
        .expect("droidmcp replay runs");
    println!(
        "replay {}: {}\n{}",
        file.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

/// The failure a replay printed, and the screen it saw then: the dialog still there means its
/// button was not tapped ("Phone erased" would show).
fn refused_untouched(out: &Output) -> String {
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(1), "{said}");
    let failed = said
        .lines()
        .find(|l| l.starts_with("FAILED"))
        .unwrap_or_else(|| panic!("{said}"))
        .to_string();
    assert!(
        failed.contains("The screen shows com.android.settings.WipeActivity with")
            && failed.contains("Delete everything")
            && !said.contains("Phone erased"),
        "the button was tapped: {said}"
    );
    failed
}

/// Issue 33 item 2: a step recorded as `id: android:id/button1` showing "OK" (`text`, as Maestro
/// says an element with both), replayed on a dialog whose button1 is "Delete everything", is
/// refused before the tap, naming both.
#[test]
fn a_recorded_ok_is_not_tapped_where_its_id_now_deletes_everything() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (confirm, wipe) = (profile(dir.path(), "confirm"), profile(dir.path(), "wipe"));
    let flow = dir.path().join("finish.yaml");
    std::fs::write(
        &flow,
        "appId: com.android.settings\n---\n- tapOn:\n    id: \"android:id/button1\"\n    text: \"OK\"\n- assertVisible: \"All set\"\n",
    )
    .unwrap();
    // Where it was recorded, it passes.
    let out = replay(&flow, home.path(), Some(&confirm), &["--step-timeout-ms", "1500"]);
    assert!(out.status.success());
    let out = replay(&flow, home.path(), Some(&wipe), &["--step-timeout-ms", "1500"]);
    let failed = refused_untouched(&out);
    assert!(
        failed.contains(
            r#"resourceId "android:id/button1" is now "Delete everything" (Button android:id/button1), not the recorded "OK"; nothing was done"#
        ),
        "{failed}"
    );
}

/// The same dialog recorded over MCP (a wait for the button, then its tap): the tap keeps the
/// button's label, class and id, and no selector is the framework id alone; both exports pass where they were recorded and
/// tap nothing on the other dialog.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_dialog_button_keeps_its_label_and_taps_nothing_else_in_both_formats() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (confirm, wipe) = (profile(dir.path(), "confirm"), profile(dir.path(), "wipe"));
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().to_str().unwrap();
    let client = mcp_server(
        &["--sim", confirm.to_str().unwrap(), "--workspace", ws],
        &[],
        home.path(),
    )
    .await;
    ok(&call(
        &client,
        "ui",
        json!({"operation": "wait", "resourceId": "android:id/button1", "match": "exact", "timeoutMs": 1000}),
    )
    .await);
    ok(&call(
        &client,
        "ui",
        json!({"operation": "tap", "resourceId": "android:id/button1"}),
    )
    .await);
    let js = ok(&call(&client, "flow", json!({"operation": "export", "name": "finish"})).await);
    let script = std::fs::read_to_string(js["path"].as_str().unwrap()).unwrap();
    assert!(
        script.contains(
            r#"await acted(ui.tap, { text: "OK" }, { label: "OK", class: "Button", id: "android:id/button1" }, w);"#
        ),
        "{script}"
    );
    // The wait too names the button by its label, never by the framework id alone.
    assert!(
        script.contains(r#"await ui.wait({ match: "exact", text: "OK", timeoutMs: 1000 });"#)
            && !script.contains(r#"{ resourceId: "android:id/button1" }"#),
        "{script}"
    );
    let maestro = ok(&call(
        &client,
        "flow",
        json!({"operation": "export", "name": "finish", "format": "maestro"}),
    )
    .await);
    let yaml = std::fs::read_to_string(maestro["path"].as_str().unwrap()).unwrap();
    // Found by its text (the framework id names no button alone); `label` is Maestro's caption.
    assert!(
        yaml.contains("- tapOn:\n    text: \"OK\"\n") && !yaml.contains("label:"),
        "{yaml}"
    );
    client.cancel().await.unwrap();
    for flow in [js["path"].as_str().unwrap(), maestro["path"].as_str().unwrap()] {
        let out = replay(
            Path::new(flow),
            home.path(),
            Some(&confirm),
            &["--step-timeout-ms", "1500"],
        );
        assert!(out.status.success());
        let out = replay(Path::new(flow), home.path(), Some(&wipe), &["--step-timeout-ms", "800"]);
        refused_untouched(&out);
    }
}

/// Issue 35: `label` on a Maestro command is only its caption in Maestro's report, so a
/// hand-written `tapOn {id, label: "Tap the OK button"}` taps whatever has that id, as Maestro
/// does (it was taken for the element's expected label and refused); and a recorded element with
/// an app id is exported as `id` and the `text` it shows, which a replay checks before acting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_is_a_caption_and_an_exported_id_carries_its_text() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let confirm = profile(dir.path(), "confirm");
    let flow = dir.path().join("caption.yaml");
    std::fs::write(
        &flow,
        "appId: com.android.settings\n---\n- tapOn:\n    id: \"android:id/button1\"\n    label: \"Tap the OK button\"\n- assertVisible: \"All set\"\n",
    )
    .unwrap();
    let out = replay(&flow, home.path(), Some(&confirm), &["--step-timeout-ms", "1500"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    // Recorded over MCP: the login demo's button has an app id; the export names it by its id
    // and the text it showed, and replays.
    let workspace = tempfile::tempdir().unwrap();
    let client = mcp_server(
        &["--sim", "--workspace", workspace.path().to_str().unwrap()],
        &[],
        home.path(),
    )
    .await;
    ok(&call(
        &client,
        "adb-app",
        json!({"operation": "launch", "package": "org.droidmcp.demo.login"}),
    )
    .await);
    ok(&call(
        &client,
        "ui",
        json!({"operation": "tap", "resourceId": "org.droidmcp.demo.login:id/login_button"}),
    )
    .await);
    let maestro = ok(&call(
        &client,
        "flow",
        json!({"operation": "export", "name": "signin", "format": "maestro"}),
    )
    .await);
    client.cancel().await.unwrap();
    let path = maestro["path"].as_str().unwrap();
    let yaml = std::fs::read_to_string(path).unwrap();
    assert!(
        yaml.contains("- tapOn:\n    id: \"org.droidmcp.demo.login:id/login_button\"\n    text: \"LOG IN\"\n")
            && !yaml.contains("label:"),
        "{yaml}"
    );
    let out = replay(Path::new(path), home.path(), None, &["--step-timeout-ms", "1500"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

/// Issue 33 item 9: `eraseText: N` deletes N characters (it emptied the field), a direction
/// swipe lasts its `duration` (the device is asked for it: it was 300 ms whatever the flow said),
/// and a flow's header `name` is its name in the report (it was the file's).
#[test]
fn maestro_options_have_their_effect_on_the_device() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let flow = dir.path().join("erase.yaml");
    std::fs::write(
        &flow,
        "appId: org.droidmcp.demo.login\nname: Fix a typo\n---\n- launchApp\n- tapOn:\n    id: \"org.droidmcp.demo.login:id/username\"\n- inputText: \"ada@example.comx\"\n- eraseText: 1\n- assertVisible: \"ada@example\\\\.com\"\n- eraseText:\n    charactersToErase: 4\n- assertVisible: \"ada@example\"\n- swipe:\n    direction: UP\n    duration: 1500\n",
    )
    .unwrap();
    let out = replay(&flow, home.path(), None, &["--step-timeout-ms", "1500"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("erase 1 character (") && said.contains("erase 4 characters"),
        "{said}"
    );
    assert!(said.contains("Fix a typo: 6 steps, 6 passed, 0 failed"), "{said}");
    let log = String::from_utf8_lossy(&out.stderr);
    let swipes: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("droidmcp::adb::source") && l.contains("input swipe"))
        .collect();
    assert!(
        swipes.len() == 1 && swipes[0].contains(" 1500"),
        "the swipe's device command: {swipes:?}"
    );
}

/// Issue 42: verify before act compares the element's whole identity. A row recorded by its
/// title alone is not the row that now shows that title above another summary, and a choice
/// recorded reading "Off" is not the one that now reads "On" (a checkable row's word is its
/// label, not its state); both taps are refused, naming both, and nothing is tapped (the row
/// would open "Phone erased", the choice would be checked). The same calls with the whole label
/// act.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_by_its_title_alone_or_an_off_for_an_on_is_refused_before_the_tap() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("wipe");
    let profile = Profile::at(&folder);
    profile.write(
        "screens/wipe_settings.xml",
        r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.android.settings" clickable="false" bounds="[0,0][1080,2400]"><node index="0" text="" resource-id="com.android.settings:id/wipe_row" class="android.widget.LinearLayout" package="com.android.settings" clickable="true" bounds="[0,300][1080,500]"><node index="0" text="Remote wipe" resource-id="android:id/title" class="android.widget.TextView" package="com.android.settings" clickable="false" bounds="[40,320][1000,400]"/><node index="1" text="On: erases the phone when it is lost" resource-id="android:id/summary" class="android.widget.TextView" package="com.android.settings" clickable="false" bounds="[40,400][1000,480]"/></node><node index="1" text="On" resource-id="com.android.settings:id/wipe_choice" class="android.widget.CheckedTextView" package="com.android.settings" checkable="true" checked="false" clickable="true" bounds="[0,600][1080,740]"/></node></hierarchy>"#,
    );
    profile.write(
        "screens/erased.xml",
        r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.android.settings" clickable="false" bounds="[0,0][1080,2400]"><node index="0" text="Phone erased" resource-id="" class="android.widget.TextView" package="com.android.settings" clickable="false" bounds="[100,1100][980,1200]"/></node></hierarchy>"#,
    );
    profile.edit("profile.toml", |text| {
        text.replace("home = \"launcher\"", "home = \"wipe_settings\"")
            + "\n[[screen]]\nname = \"wipe_settings\"\nxml = \"screens/wipe_settings.xml\"\nactivity = \"com.android.settings/.WipeSettingsActivity\"\n\n[[screen]]\nname = \"erased\"\nxml = \"screens/erased.xml\"\nactivity = \"com.android.settings/.ErasedActivity\"\n\n[[transition]]\nfrom = \"wipe_settings\"\ntap = \"id=com.android.settings:id/wipe_row\"\nto = \"erased\"\n"
    });
    let client = mcp_server(&["--sim", profile.arg()], &[], home.path()).await;
    let choice_checked = || async {
        let found = ok(&call(
            &client,
            "ui",
            json!({"operation": "find", "resourceId": "com.android.settings:id/wipe_choice", "match": "exact"}),
        )
        .await);
        found["matches"][0]["flags"].to_string().contains("checked")
    };
    let tap = |id: &str, label: &str, class: &str| json!({"operation": "tap", "resourceId": id, "match": "exact", "recorded": {"label": label, "class": class, "id": id}});
    // The choice recorded reading "Off": refused where it reads "On".
    let refused = err(&call(
        &client,
        "ui",
        tap("com.android.settings:id/wipe_choice", "Off", "CheckedTextView"),
    )
    .await);
    println!("{refused}");
    assert!(
        refused
            .contains(r#"is now "On" (CheckedTextView com.android.settings:id/wipe_choice), not the recorded "Off""#)
            && refused.contains("nothing was done"),
        "{refused}"
    );
    assert!(!choice_checked().await, "the choice was tapped");
    // The row recorded by its title alone: refused where its summary says something else.
    let refused = err(&call(
        &client,
        "ui",
        tap("com.android.settings:id/wipe_row", "Remote wipe", "LinearLayout"),
    )
    .await);
    println!("{refused}");
    assert!(
        refused.contains(r#"is now "Remote wipe · On: erases the phone when it is lost" (LinearLayout"#)
            && refused.contains(r#"not the recorded "Remote wipe""#),
        "{refused}"
    );
    // Recorded whole, each is the element: the choice is checked, the row opens.
    ok(&call(
        &client,
        "ui",
        tap("com.android.settings:id/wipe_choice", "On", "CheckedTextView"),
    )
    .await);
    assert!(choice_checked().await, "the choice was not tapped");
    ok(&call(
        &client,
        "ui",
        tap(
            "com.android.settings:id/wipe_row",
            "Remote wipe · On: erases the phone when it is lost",
            "LinearLayout",
        ),
    )
    .await);
    let shown = ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    assert!(shown.to_string().contains("Phone erased"), "{shown}");
    client.cancel().await.unwrap();
}
