//! Two devices behind one adb server: calls split between them run side by side, each result
//! comes from the device it named, and a selected device that disappears is reported, never
//! silently replaced by the other one.

use std::sync::Arc;
use std::time::Instant;

use crate::common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_calls_split_across_two_devices_each_land_on_their_own() {
    let Some(adb) = AdbServer::start() else { return };
    let mut sims = [SimProcess::start(&[]), SimProcess::start(&[])];
    let serials: Vec<String> = sims.iter().map(|s| adb.connect(s)).collect();
    let home = tempfile::tempdir().unwrap();
    let port = adb.port.to_string();
    let client = Arc::new(mcp_server(&[], &[("ANDROID_ADB_SERVER_PORT", &port)], home.path()).await);

    // Each device holds its own name, so an answer shows where the command really ran.
    for (name, serial) in ["A", "B"].iter().zip(&serials) {
        let out = ok(&call(
            &client,
            "adb-shell",
            json!({"operation": "run", "device": serial, "command": format!("echo {name} > /data/local/tmp/who")}),
        )
        .await);
        assert_eq!(out["exitCode"], 0);
    }
    let started = Instant::now();
    let mut calls = Vec::new();
    for i in 0..100 {
        let client = client.clone();
        let (name, serial) = if i % 2 == 0 {
            ("A", serials[0].clone())
        } else {
            ("B", serials[1].clone())
        };
        calls.push(tokio::spawn(async move {
            let command = format!("echo token-{i}; cat /data/local/tmp/who");
            let result = call(
                &client,
                "adb-shell",
                json!({"operation": "run", "device": serial, "command": command}),
            )
            .await;
            let out = ok(&result);
            assert_eq!(out["device"], serial.as_str(), "call {i}");
            assert_eq!(
                out["stdout"],
                format!("token-{i}\n{name}\n"),
                "call {i} ran on the wrong device"
            );
        }));
    }
    for c in calls {
        c.await.expect("a call's answer was wrong");
    }
    println!(
        "two devices: 100 concurrent calls, 50 each, all attributed right, in {} ms",
        started.elapsed().as_millis()
    );

    // Select A; A vanishes; a call without `device` names A instead of running on B.
    let selected = ok(&call(
        &client,
        "adb-device",
        json!({"operation": "select", "device": serials[0]}),
    )
    .await);
    assert_eq!(selected["device"], serials[0].as_str(), "{selected}");
    sims[0].kill();
    adb.run(&["disconnect", &serials[0]]);
    let result = call(
        &client,
        "adb-shell",
        json!({"operation": "run", "command": "cat /data/local/tmp/who"}),
    )
    .await;
    let message = err(&result);
    assert!(
        message.contains(&serials[0]),
        "the error must name the selected device: {message}"
    );
    println!("selected device gone: {message}");
    // B still answers when named.
    let out = ok(&call(
        &client,
        "adb-shell",
        json!({"operation": "run", "device": serials[1], "command": "cat /data/local/tmp/who"}),
    )
    .await);
    assert_eq!(out["stdout"], "B\n");
}
