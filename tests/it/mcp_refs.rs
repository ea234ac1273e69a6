//! Refs over MCP against the simulator: a ref names one element by its whole label, so a row
//! that looks the same in a listing (labels are listed cut) is never tapped for another.

use crate::common::*;
use serde_json::{Value, json};

const YEAR: &str = "Automatically delete messages and attachments that are older than one year";
const HOUR: &str = "Automatically delete messages and attachments that are older than one hour";

/// An AlertDialog single-choice list, as `theme_dialog.xml`: rows are CheckedTextViews with the
/// id `android:id/text1`, at the same places in every such dialog.
fn cleanup_dialog(first_row: &str) -> String {
    let row = |index: usize, label: &str| {
        let top = 950 + 144 * index;
        format!(
            r#"<node index="{index}" text="{label}" resource-id="android:id/text1" class="android.widget.CheckedTextView" package="com.google.android.apps.messaging" checkable="true" checked="false" clickable="true" enabled="true" focusable="true" bounds="[77,{top}][1003,{}]"/>"#,
            top + 144
        )
    };
    format!(
        r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" class="android.widget.FrameLayout" package="com.google.android.apps.messaging" bounds="[0,0][1080,2400]"><node index="0" text="Clean up messages" resource-id="android:id/alertTitle" class="android.widget.TextView" package="com.google.android.apps.messaging" bounds="[140,840][940,930]"/><node index="1" text="" resource-id="android:id/select_dialog_listview" class="android.widget.ListView" package="com.google.android.apps.messaging" bounds="[77,950][1003,1238]">{}{}</node><node index="2" text="Cancel" resource-id="android:id/button2" class="android.widget.Button" package="com.google.android.apps.messaging" clickable="true" enabled="true" focusable="true" bounds="[700,1460][950,1580]"/></node></hierarchy>"#,
        row(0, first_row),
        row(1, "Never delete messages")
    )
}

/// The bundled profile plus two cleanup dialogs: `am start` opens the "one year" one, whose
/// Cancel opens the "one hour" one (the same rows at the same places, labels equal for 70 chars).
fn cleanup_profile() -> Profile {
    let profile = Profile::new();
    for (name, label) in [("cleanup_year", YEAR), ("cleanup_hour", HOUR)] {
        profile.write(&format!("screens/{name}.xml"), cleanup_dialog(label));
    }
    profile.append(
        "profile.toml",
        r#"
[[screen]]
name = "cleanup_year"
xml = "screens/cleanup_year.xml"
activity = "com.google.android.apps.messaging/.CleanupYearActivity"

[[screen]]
name = "cleanup_hour"
xml = "screens/cleanup_hour.xml"
activity = "com.google.android.apps.messaging/.CleanupHourActivity"

[[transition]]
from = "cleanup_year"
tap = "text=Cancel"
to = "cleanup_hour"
"#,
    );
    profile
}

fn row(page: &Value, index: usize) -> &Value {
    page["elements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "CheckedTextView")
        .nth(index)
        .unwrap_or_else(|| panic!("no row {index} in {page}"))
}

fn checked(element: &Value) -> bool {
    element["flags"]
        .as_array()
        .is_some_and(|f| f.iter().any(|x| x == "checked"))
}

#[tokio::test]
async fn a_ref_of_a_long_label_is_refused_where_another_row_shares_its_first_60_chars() {
    let profile = cleanup_profile();
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim", profile.path().to_str().unwrap()], &[], home.path()).await;
    let opened = call(
        &client,
        "adb-shell",
        json!({"operation": "run", "command": "am start -n com.google.android.apps.messaging/.CleanupYearActivity"}),
    )
    .await;
    assert_eq!(ok(&opened)["exitCode"], 0);
    let year_dialog = ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    let year = row(&year_dialog, 0).clone();
    let never = row(&year_dialog, 1)["ref"].clone();
    let listed = year["label"].as_str().unwrap();
    println!(
        "listed label {} chars of {}: {listed}",
        listed.chars().count(),
        YEAR.chars().count()
    );
    assert!(
        listed.ends_with('…') && YEAR.starts_with(listed.trim_end_matches('…')),
        "{year}"
    );

    ok(&call(&client, "ui", json!({"operation": "tap", "text": "Cancel"})).await);
    let hour_dialog = ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    // The "one year" ref on the "one hour" dialog: refused, and nothing was tapped.
    let refused = err(&call(&client, "ui", json!({"operation": "tap", "ref": year["ref"]})).await);
    assert!(
        refused.contains("no longer on the screen") && refused.contains("nothing was done"),
        "{refused}"
    );
    let after = ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    assert!(!checked(row(&after, 0)), "the one-hour row was tapped: {after}");
    assert_eq!(after["elements"], hour_dialog["elements"]);
    let hour = row(&hour_dialog, 0);
    assert_eq!(hour["label"], year["label"], "the two rows look alike in a listing");
    assert_ne!(hour["ref"], year["ref"], "they are two elements: {hour}");

    // A row whose whole label is the same, at the same place, is the same element: its ref holds.
    ok(&call(&client, "ui", json!({"operation": "tap", "ref": never})).await);
    let chosen = ok(&call(&client, "ui", json!({"operation": "dump"})).await);
    assert!(checked(row(&chosen, 1)), "{chosen}");
    assert_eq!(row(&chosen, 1)["ref"], never);
    client.cancel().await.unwrap();
}
