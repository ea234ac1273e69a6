//! The device layer seen from an MCP client, on both routes (our own adbd connection, and the
//! real adb server): calls run side by side, a cancel or a timeout ends the device command and
//! frees the device at once, stdin is closed, a restarted device is found again, a dead one is
//! reported, faults get errors that name their cause, and a device without shell v2 still gives
//! exit codes.

use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::json;

/// The two ways the server reaches a simulator: straight to its adbd, or through an adb server.
enum Route {
    Direct,
    Server,
}

/// A server (and, for the adb-server route, a private adb server) in front of `sim`.
/// `None` when adb is missing (skip locally, fail under CI).
async fn server_for(
    route: &Route,
    sim: &SimProcess,
    extra: &[&str],
    home: &std::path::Path,
) -> Option<(McpClient, Option<AdbServer>)> {
    match route {
        Route::Direct => {
            let target = format!("tcp:{}", sim.addr);
            let mut args = vec!["--adb", target.as_str()];
            args.extend_from_slice(extra);
            Some((mcp_server(&args, &[], home).await, None))
        }
        Route::Server => {
            let adb = AdbServer::start()?;
            adb.connect(sim);
            let port = adb.port.to_string();
            let client = mcp_server(extra, &[("ANDROID_ADB_SERVER_PORT", &port)], home).await;
            Some((client, Some(adb)))
        }
    }
}

fn name(route: &Route) -> &'static str {
    match route {
        Route::Direct => "direct",
        Route::Server => "adb server",
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn calls_on_one_device_run_side_by_side_with_a_slow_one() {
    for route in [Route::Direct, Route::Server] {
        let sim = SimProcess::start(&[]);
        let home = tempfile::tempdir().unwrap();
        let Some((client, _adb)) = server_for(&route, &sim, &[], home.path()).await else {
            return;
        };
        let client = std::sync::Arc::new(client);
        ok(&shell(&client, "true").await); // connected before the clock starts
        let started = Instant::now();
        let slow = {
            let client = client.clone();
            tokio::spawn(async move { shell(&client, "sleep 3").await })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut quick = Vec::new();
        for i in 0..9 {
            let client = client.clone();
            quick.push(tokio::spawn(async move {
                let t = Instant::now();
                let out = ok(&shell(&client, &format!("echo call-{i}")).await);
                assert_eq!(out["stdout"], format!("call-{i}\n"));
                t.elapsed()
            }));
        }
        let mut slowest = Duration::ZERO;
        for q in quick {
            slowest = slowest.max(q.await.unwrap());
        }
        // All nine answered while `sleep 3` still ran: none waited behind it.
        assert!(
            !slow.is_finished(),
            "{}: the quick calls waited for the slow one",
            name(&route)
        );
        println!(
            "{}: 9 calls beside `sleep 3`: slowest {} ms; all done {} ms after the slow call began",
            name(&route),
            slowest.as_millis(),
            started.elapsed().as_millis()
        );
        let out = ok(&slow.await.unwrap());
        assert_eq!(out["exitCode"], 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_stops_its_command_on_the_device_and_frees_it() {
    for route in [Route::Direct, Route::Server] {
        let sim = SimProcess::start_logged(&[]);
        let home = tempfile::tempdir().unwrap();
        let Some((client, _adb)) = server_for(&route, &sim, &[], home.path()).await else {
            return;
        };
        let mut params = rmcp::model::CallToolRequestParams::new("adb-shell");
        params.arguments = json!({"operation": "run", "command": "sleep 20"}).as_object().cloned();
        let request = rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
        let handle = client
            .peer()
            .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let cancelled_at = Instant::now();
        handle.cancel(Some("the test changed its mind".into())).await.unwrap();
        // The device sees its stream closed while `sleep 20` runs...
        assert!(
            sim.wait_for_log("host closed the stream before the command ended"),
            "{}: the simulator never saw the stream closed:\n{}",
            name(&route),
            sim.log()
        );
        assert!(sim.log().contains("sleep 20"));
        // ...and the next call runs at once, long before the 20 s were up.
        let out = ok(&shell(&client, "echo free").await);
        assert_eq!(out["stdout"], "free\n");
        let freed = cancelled_at.elapsed();
        assert!(
            freed < Duration::from_secs(10),
            "{}: freed only after {freed:?}",
            name(&route)
        );
        println!(
            "{}: device free {} ms after the cancel",
            name(&route),
            freed.as_millis()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calls_own_timeout_stops_the_command_too() {
    for route in [Route::Direct, Route::Server] {
        let sim = SimProcess::start_logged(&[]);
        let home = tempfile::tempdir().unwrap();
        let Some((client, _adb)) = server_for(&route, &sim, &[], home.path()).await else {
            return;
        };
        let result = call(
            &client,
            "adb-shell",
            json!({"operation": "run", "command": "sleep 20", "timeoutMs": 400}),
        )
        .await;
        let message = err(&result);
        assert!(message.contains("400 ms timeout"), "{message}");
        assert!(
            sim.wait_for_log("host closed the stream before the command ended"),
            "{}",
            sim.log()
        );
        assert_eq!(ok(&shell(&client, "echo next").await)["stdout"], "next\n");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_before_the_device_opened_the_stream_still_ends_the_command() {
    const LATENCY_MS: u64 = 800;
    for route in [Route::Direct, Route::Server] {
        let sim = SimProcess::start_logged(&["--latency-ms", &LATENCY_MS.to_string()]);
        let home = tempfile::tempdir().unwrap();
        let Some((client, _adb)) = server_for(&route, &sim, &["--timeout-ms", "20000"], home.path()).await else {
            return;
        };
        // Warm the connection, so only this command's OPEN is in flight.
        assert_eq!(ok(&shell(&client, "echo warm").await)["stdout"], "warm\n");
        let result = call(
            &client,
            "adb-shell",
            json!({"operation": "run", "command": "sleep 30", "timeoutMs": 300}),
        )
        .await;
        let answered = Instant::now();
        let message = err(&result);
        assert!(message.contains("300 ms timeout"), "{message}");
        // The device's OKAY comes ~800 ms after the OPEN, after the answer: its CLSE must follow
        // (about two latencies later; unfixed, `sleep 30` ran until the session closed).
        let mut closed_after = None;
        while answered.elapsed() < Duration::from_secs(10) {
            if sim.log().contains("host closed the stream before the command ended") {
                closed_after = Some(answered.elapsed());
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let closed_after = closed_after
            .unwrap_or_else(|| panic!("{}: sleep 30 kept running on the device:\n{}", name(&route), sim.log()));
        println!(
            "{}: latency {LATENCY_MS} ms, the device ended the command {} ms after the answer",
            name(&route),
            closed_after.as_millis()
        );
        // The session goes on.
        assert_eq!(ok(&shell(&client, "echo next").await)["stdout"], "next\n");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_reads_stdin_gets_eof_at_once() {
    for route in [Route::Direct, Route::Server] {
        let sim = SimProcess::start(&[]);
        let home = tempfile::tempdir().unwrap();
        let Some((client, _adb)) = server_for(&route, &sim, &["--timeout-ms", "5000"], home.path()).await else {
            return;
        };
        // Without close-stdin this waits out the whole timeout and fails.
        let out = ok(&call(
            &client,
            "adb-shell",
            json!({"operation": "run", "command": "cat", "timeoutMs": 5000}),
        )
        .await);
        assert_eq!(out["exitCode"], 0, "{}", name(&route));
        assert_eq!(out["stdout"], "");
        let wc = ok(&shell(&client, "wc -l").await);
        assert_eq!(wc["stdout"].as_str().unwrap().trim(), "0");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_device_is_reconnected_on_the_next_call() {
    let mut sim = SimProcess::start_at("127.0.0.1:0", &[]);
    let listen = sim.addr.to_string();
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--adb", &format!("tcp:{listen}")], &[], home.path()).await;
    ok(&call(&client, "adb-device", json!({"operation": "properties"})).await);
    let mut first_call_failures = 0;
    for _ in 0..3 {
        sim.kill();
        sim = SimProcess::start_at(&listen, &[]);
        let result = call(&client, "adb-device", json!({"operation": "properties"})).await;
        if result.is_error == Some(true) {
            first_call_failures += 1;
            eprintln!("first call after a restart failed: {}", err(&result));
        }
    }
    assert_eq!(first_call_failures, 0, "the first call after a restart must succeed");
    println!("3 restarts: 0 failed first calls");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_device_is_reported_by_list_and_health_and_fails_fast() {
    let mut sim = SimProcess::start_logged(&[]);
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--adb", &format!("tcp:{}", sim.addr)], &[], home.path()).await;
    let list = ok(&call(&client, "adb-device", json!({"operation": "list"})).await);
    assert_eq!(list["devices"][0]["state"], "device");
    sim.kill();

    let list = ok(&call(&client, "adb-device", json!({"operation": "list"})).await);
    assert_eq!(list["devices"][0]["state"], "offline", "{list}");
    assert!(
        list["devices"][0]["error"]
            .as_str()
            .unwrap()
            .contains("cannot reach the device")
    );
    let health = ok(&call(&client, "adb-device", json!({"operation": "health"})).await);
    assert_eq!(health["health"]["adbReachable"], false, "{health}");
    let t = Instant::now();
    let message = err(&shell(&client, "echo hi").await);
    assert!(message.contains("cannot reach the device"), "{message}");
    // Within the cool-down the refusal is immediate and says so.
    let message = err(&shell(&client, "echo hi").await);
    println!(
        "dead device: two calls refused in {} ms: {message}",
        t.elapsed().as_millis()
    );
    assert!(
        message.contains("not retried") || message.contains("refused"),
        "{message}"
    );
}

/// Each simulator fault, on the direct route: a correct answer or an error that names the cause
/// (never a bare "early eof"), and then a call the fault does not touch works on a fresh
/// connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fault_gets_an_error_that_names_its_cause() {
    let cases: [(&[&str], &str, &[&str]); 5] = [
        (
            &["--drop-after-bytes", "2000"],
            "getprop",
            &["disconnected", "during `getprop`"],
        ),
        (
            &["--drop-after-bytes", "50000"],
            "logcat -d",
            &["disconnected", "during `logcat -d`"],
        ),
        (
            &["--garbage-after-bytes", "100"],
            "getprop",
            &["bad data from the device", "bytes "],
        ),
        (
            &["--garbage-after-bytes", "20000"],
            "getprop",
            &["bad data from the device", "bytes "],
        ),
        (
            &["--stall-on", "getprop"],
            "getprop",
            &["past its 1500 ms timeout", "closed its stream"],
        ),
    ];
    let (mut answered, mut named) = (0, 0);
    for (flags, command, phrases) in cases {
        let sim = SimProcess::start(flags);
        let home = tempfile::tempdir().unwrap();
        let client = mcp_server(
            &["--adb", &format!("tcp:{}", sim.addr), "--timeout-ms", "1500"],
            &[],
            home.path(),
        )
        .await;
        for attempt in [command, command, "echo after"] {
            let result = call(
                &client,
                "adb-shell",
                json!({"operation": "run", "command": attempt, "timeoutMs": 1500}),
            )
            .await;
            if result.is_error != Some(true) {
                answered += 1;
                continue;
            }
            let message = err(&result);
            println!("{flags:?} `{attempt}`: {message}");
            assert!(!message.to_lowercase().contains("early eof"), "{message}");
            // Garbage at byte 100 hits every connection's first stream: each call says why.
            let expected: &[&str] = if attempt == command {
                phrases
            } else {
                &["bad data from the device"]
            };
            for phrase in expected {
                assert!(message.contains(phrase), "{flags:?}: {message:?} lacks {phrase:?}");
            }
            named += 1;
        }
    }
    println!("faults: {answered} correct answers, {named} errors naming the cause, 0 unclear");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_without_shell_v2_still_gives_exit_codes_on_both_routes() {
    for route in [Route::Direct, Route::Server] {
        let sim = SimProcess::start(&["--no-shell-v2"]);
        let home = tempfile::tempdir().unwrap();
        let Some((client, _adb)) = server_for(&route, &sim, &[], home.path()).await else {
            return;
        };
        let out = ok(&shell(&client, "echo hello").await);
        assert_eq!(out["stdout"], "hello\n", "{}", name(&route));
        assert_eq!(out["exitCode"], 0);
        let out = ok(&shell(&client, "false").await);
        assert_eq!(out["exitCode"], 1, "{}: {out}", name(&route));
        let out = ok(&shell(&client, "echo -n partial; ls /no/such/file").await);
        assert_ne!(out["exitCode"], 0);
        assert!(out["stdout"].as_str().unwrap().starts_with("partial"), "{out}");
        assert!(!out["stdout"].as_str().unwrap().contains("droidmcp-exit"), "{out}");
        // The tools built on the shell work too.
        let props = ok(&call(&client, "adb-device", json!({"operation": "properties"})).await);
        assert!(props["summary"]["model"].is_string(), "{props}");
    }
}

#[tokio::test]
async fn a_new_adb_key_is_private_to_its_owner() {
    let sim = SimProcess::start(&["--auth-any"]);
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--adb", &format!("tcp:{}", sim.addr)], &[], home.path()).await;
    ok(&shell(&client, "true").await);
    let key = home.path().join(".android/adbkey");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key).expect("adbkey made").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "adbkey mode {mode:o}");
    }
    assert!(std::fs::read_to_string(&key).unwrap().contains("PRIVATE KEY"));
}

#[tokio::test]
async fn the_android6_profile_is_driven_over_shell_v1_with_real_exit_codes() {
    let home = tempfile::tempdir().unwrap();
    let profile = repo_dir().join("fixtures/android6-emulator");
    let client = mcp_server(&["--sim", profile.to_str().unwrap()], &[], home.path()).await;
    let props = ok(&call(&client, "adb-device", json!({"operation": "properties"})).await);
    assert_eq!(props["summary"]["androidVersion"], "6.0", "{props}");
    assert_eq!(props["summary"]["sdkVersion"], 23);
    let out = ok(&shell(&client, "getprop ro.build.version.sdk; false").await);
    assert_eq!(out["stdout"], "23\n");
    assert_eq!(out["exitCode"], 1);
    let apps = ok(&call(&client, "adb-app", json!({"operation": "list", "kind": "user"})).await);
    assert_eq!(apps["totalCount"], 2, "{apps}");
}
