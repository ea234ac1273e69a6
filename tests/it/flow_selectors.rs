//! Maestro's selectors on the simulator's inbox (five rows, each with the same Delete button; Row
//! 3's shows "Row 3 deleted", any other's "Another row deleted"): `ui` takes one as its target
//! over MCP, and flows using each key replay through `droidmcp replay`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;

use crate::common::*;

/// The built-in profile booting into the inbox.
fn inbox_profile(dir: &Path) -> PathBuf {
    let folder = dir.join("inbox");
    Profile::at(&folder).edit("profile.toml", |toml| {
        toml.replace("home = \"launcher\"", "home = \"inbox\"")
    });
    folder
}

/// `droidmcp replay FLOW --sim PROFILE`, its output printed.
fn replay(flow: &Path, home: &Path, profile: &Path) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .arg("replay")
        .arg(flow)
        .args(["--step-timeout-ms", "1500", "--sim"])
        .arg(profile)
        .env("HOME", home)
        .env_remove("ANDROID_SERIAL")
        .output()
        .expect("droidmcp replay runs");
    println!(
        "replay {}: {}\n{}{}",
        flow.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Issue 35: our flow using every selector key replays on the simulator; each `assertNotVisible`
/// in it holds only because its key filters as Maestro's does, and its last tap deletes Row 3.
#[test]
fn the_inbox_flow_replays_each_selector_key() {
    let (home, dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let profile = inbox_profile(dir.path());
    let out = replay(
        &repo_dir().join("tests/flows/maestro/inbox.yaml"),
        home.path(),
        &profile,
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    let tap = said
        .lines()
        .find(|l| l.contains("14 tap text \"Delete\", below (text \"Row 3\")"))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(tap.starts_with("ok "), "{tap}");
}

/// Each way a flow can name Row 3's Delete taps it and no other (the transition says which was
/// tapped); the same text alone taps Maestro's first, Row 1's.
#[test]
fn each_way_to_name_row_3s_delete_taps_it_and_no_other() {
    let (home, dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let profile = inbox_profile(dir.path());
    let ways = [
        ("below", "text: Delete\n    below: \"Row 3\""),
        ("above, index", "id: delete\n    above: \"Row 4\"\n    index: 2"),
        ("index", "text: Delete\n    index: 2"),
        (
            "childOf, containsChild",
            "text: Delete\n    childOf:\n      containsChild: \"Row 3\"",
        ),
        (
            "childOf, containsDescendants",
            "text: Delete\n    childOf:\n      id: row\n      containsDescendants: [\"Row 3\", Unread]",
        ),
        ("rightOf, nearest first", "rightOf: \"Row 3\""),
        (
            "an id with a pattern",
            "id: del.*\n    text: \"De.*\"\n    below: \"Row 3\"\n    above: \"Row 4\"",
        ),
    ];
    for (way, selector) in ways {
        let flow = dir.path().join("delete.yaml");
        std::fs::write(
            &flow,
            format!(
                "appId: org.droidmcp.demo.login\n---\n- tapOn:\n    {selector}\n- assertVisible: \"Row 3 deleted\"\n"
            ),
        )
        .unwrap();
        let out = replay(&flow, home.path(), &profile);
        assert!(out.status.success(), "{way}: {}", String::from_utf8_lossy(&out.stdout));
    }
    // The text alone: Maestro's first match, Row 1's (so the ways above are what chose Row 3's).
    let flow = dir.path().join("first.yaml");
    std::fs::write(
        &flow,
        "appId: org.droidmcp.demo.login\n---\n- tapOn:\n    text: Delete\n    enabled: true\n- assertVisible: \"Another row deleted\"\n",
    )
    .unwrap();
    assert!(replay(&flow, home.path(), &profile).status.success());
}

/// `ui` takes a Maestro selector (`selector`) for find, wait and tap, resolved as Maestro does;
/// the check before acting (`recorded`) still applies to the element it resolves; a selector
/// beside a text query, or one Maestro would not read, is refused saying what to do.
#[tokio::test]
async fn ui_takes_a_maestro_selector_and_checks_it_before_acting() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    ok(&call(
        &client,
        "adb-shell",
        json!({"operation": "run", "command": "am start -n org.droidmcp.demo.login/.InboxActivity"}),
    )
    .await);
    let row3 = json!({"text": "Delete", "below": {"text": "Row 3"}});
    // find lists Maestro's order: the rows' Deletes below Row 3's title, its own first.
    let found = ok(&call(&client, "ui", json!({"operation": "find", "selector": row3})).await);
    let ats: Vec<i64> = found["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["at"][1].as_i64().unwrap())
        .collect();
    assert_eq!(ats, [1210, 1510, 1810], "{found}");
    let waited = ok(&call(
        &client,
        "ui",
        json!({"operation": "wait", "selector": {"id": "row_title", "index": 4}, "timeoutMs": 2000}),
    )
    .await);
    assert_eq!(waited["target"]["label"], "Row 5", "{waited}");
    // What was recorded of the element must hold on the one the selector resolves.
    let refused = err(&call(
        &client,
        "ui",
        json!({"operation": "tap", "selector": row3, "recorded": {"label": "Archive"}}),
    )
    .await);
    assert!(
        refused.contains("is now \"Delete\"") && refused.contains("not the recorded \"Archive\"; nothing was done"),
        "{refused}"
    );
    for (args, says) in [
        (
            json!({"operation": "tap", "selector": row3, "text": "Delete"}),
            "give `selector`",
        ),
        (
            json!({"operation": "find", "selector": {"text": "Delete", "index": "third"}}),
            "index \"third\" is not a number",
        ),
        (
            json!({"operation": "find", "selector": {"text": "Delete", "nearby": "Row 3"}}),
            "unknown field `nearby`",
        ),
        (json!({"operation": "dump", "selector": row3}), "selector"),
    ] {
        let message = err(&call(&client, "ui", args.clone()).await);
        assert!(message.contains(says), "{args}: {message}");
    }
    // Nothing above was tapped; now the tap lands on Row 3's Delete.
    let tapped = ok(&call(
        &client,
        "ui",
        json!({"operation": "tap", "selector": row3, "recorded": {"label": "Delete", "class": "Button"}}),
    )
    .await);
    assert_eq!(tapped["at"], json!([920, 1210]), "{tapped}");
    let now = ok(&call(&client, "ui", json!({"operation": "find", "text": "Row 3 deleted"})).await);
    assert_eq!(now["count"], 1, "{now}");
    client.cancel().await.unwrap();
}

/// Maestro's `swipe: {from, direction}` starts at the element's own centre (the text, not its
/// row) and ends a tenth of the screen from the edge the finger moves toward.
#[test]
fn a_swipe_from_an_element_starts_at_its_centre() {
    let (home, dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let flow = dir.path().join("swipe.yaml");
    std::fs::write(
        &flow,
        "appId: com.google.android.contacts\n---\n- launchApp\n- swipe:\n    from:\n      text: Alan Turing\n    direction: UP\n    duration: 300\n- assertVisible: Ken Thompson\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .arg("replay")
        .arg(&flow)
        .args(["--step-timeout-ms", "1500", "--sim"])
        .env("HOME", home.path())
        .env("RUST_LOG", "droidmcp=debug")
        .env_remove("ANDROID_SERIAL")
        .output()
        .unwrap();
    let (said, log) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{said}");
    let contacts = std::fs::read_to_string(repo_dir().join("fixtures/pixel-emulator/screens/contacts.xml")).unwrap();
    let (x, y) = center_of(&contacts, "text", "Alan Turing");
    let swipe = format!("input swipe {x} {y} {x} 240 300");
    assert!(log.contains(&swipe), "no {swipe:?} in {log}");
}

/// A Maestro selector in `scrollUntilVisible` and in a `runFlow when` condition: the list scrolls
/// until the selector's element shows, and a block runs only when its selector finds something.
#[test]
fn scroll_until_visible_and_run_flow_when_take_a_maestro_selector() {
    let (home, dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let flow = dir.path().join("scroll.yaml");
    std::fs::write(
        &flow,
        "appId: com.google.android.contacts\n---\n- launchApp\n\
         - scrollUntilVisible:\n    element:\n      text: \"Linus.*\"\n      below: Ken Thompson\n    direction: DOWN\n\
         - runFlow:\n    when:\n      visible:\n        text: \"\\\\+1 555 \\\\d+\"\n        below: Linus Torvalds\n    commands:\n      - tapOn: Linus Torvalds\n\
         - runFlow:\n    when:\n      visible:\n        text: Linus Torvalds\n        below: \"\\\\+1 555 0118\"\n    commands:\n      - tapOn: Ken Thompson\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .arg("replay")
        .arg(&flow)
        .args(["--step-timeout-ms", "1500", "--sim"])
        .env("HOME", home.path())
        .env_remove("ANDROID_SERIAL")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    println!("{said}");
    assert!(out.status.success(), "{said}");
    let line = |n: &str| {
        said.lines()
            .find(|l| l.contains(n))
            .unwrap_or_else(|| panic!("{n}: {said}"))
    };
    assert!(line("2 scroll down until text \"Linus.*\", below (text \"Ken Thompson\")").starts_with("ok"));
    // The first block's selector finds Linus's number below his name: it runs.
    assert!(!line("3 tap text \"Linus Torvalds\"").contains("not run"), "{said}");
    // Nothing named Linus Torvalds is below his own number: the second block does not run.
    assert!(
        line("4 tap text \"Ken Thompson\"").contains("not run: its runFlow condition does not hold"),
        "{said}"
    );
}

/// A `${…}` in a Maestro selector's text (nested too) is evaluated as the step runs, then read as
/// Maestro reads the text: the row given by the flow's env is the one deleted.
#[test]
fn a_template_in_a_selector_is_evaluated_before_it_is_resolved() {
    let (home, dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let profile = inbox_profile(dir.path());
    let flow = dir.path().join("row.yaml");
    std::fs::write(
        &flow,
        "appId: org.droidmcp.demo.login\nenv:\n  ROW: \"2\"\n---\n- tapOn:\n    text: \"${'Del' + 'ete'}\"\n    below: \"Row ${Number(ROW) + 1}\"\n- assertVisible: \"Row 3 deleted\"\n",
    )
    .unwrap();
    let out = replay(&flow, home.path(), &profile);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    // An index given as a ${…}: evaluated, then read as a number.
    std::fs::write(
        &flow,
        "appId: org.droidmcp.demo.login\nenv:\n  ROW: \"2\"\n---\n- tapOn:\n    id: delete\n    index: ${ROW}\n- assertVisible: \"Row 3 deleted\"\n",
    )
    .unwrap();
    let out = replay(&flow, home.path(), &profile);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}
