//! `ui` over time: scrolling until a text shows, waits for a text to appear or go (each lasting
//! its whole timeout), and time queued behind another call on the device not counted against a
//! call's own timeout.

use crate::common::*;
use serde_json::json;

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
