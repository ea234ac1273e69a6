//! Many device sources (`--adb` repeated): two adb servers and one direct endpoint in one list,
//! serials two sources share qualified and accepted back, and a source that is down reported
//! with its error while the others' devices go on working.

use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{Value, json};

fn names(list: &Value) -> Vec<String> {
    let mut names: Vec<String> = list["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["serial"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

fn source_row<'a>(list: &'a Value, label: &str) -> &'a Value {
    list["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["source"] == label)
        .unwrap_or_else(|| panic!("no source {label} in {list}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_adb_servers_and_a_direct_device_list_route_and_survive_one_going_down() {
    let Some(lab_a) = AdbServer::start() else { return };
    let Some(lab_b) = AdbServer::start() else { return };
    // `shared` is seen by both servers, `direct` by lab B and as its own source: two serials
    // that collide. `only_a` is seen by lab A alone.
    let shared = SimProcess::start(&[]);
    let only_a = SimProcess::start(&[]);
    let direct = SimProcess::start(&[]);
    let shared_serial = lab_a.connect(&shared);
    lab_b.connect(&shared);
    let only_a_serial = lab_a.connect(&only_a);
    let direct_serial = lab_b.connect(&direct);
    let home = tempfile::tempdir().unwrap();
    let (a, b, d) = (
        format!("labA=server:127.0.0.1:{}", lab_a.port),
        format!("labB=server:127.0.0.1:{}", lab_b.port),
        format!("bench=tcp:{}", direct.addr),
    );
    let client = mcp_server(&["--adb", &a, "--adb", &b, "--adb", &d], &[], home.path()).await;

    let result = call(&client, "adb-device", json!({"operation": "list"})).await;
    let list = ok(&result);
    println!("list of 3 sources, 5 devices: {} chars", response_chars(&result));
    let mut expected = vec![
        format!("labA/{shared_serial}"),
        format!("labB/{shared_serial}"),
        only_a_serial.clone(),
        format!("labB/{direct_serial}"),
        format!("bench/{direct_serial}"),
    ];
    expected.sort();
    assert_eq!(names(&list), expected, "{list}");
    for (label, count) in [("labA", 2), ("labB", 2), ("bench", 1)] {
        let row = source_row(&list, label);
        assert_eq!(row["devices"], count, "{row}");
        assert!(row.get("error").is_none(), "{row}");
    }
    assert_eq!(
        source_row(&list, "labB")["address"],
        format!("server 127.0.0.1:{}", lab_b.port)
    );

    // A bare serial that two sources see is refused with the two names to choose from.
    let refused = err(&shell_on(&client, Some(&shared_serial), "echo hi").await);
    assert!(
        refused.contains(&format!("labA/{shared_serial}")) && refused.contains(&format!("labB/{shared_serial}")),
        "{refused}"
    );

    // Each qualified name is accepted back and runs there; the same device by two routes
    // shows the same file.
    let out = ok(&shell_on(
        &client,
        Some(&format!("bench/{direct_serial}")),
        "echo direct > /data/local/tmp/who",
    )
    .await);
    assert_eq!(out["device"], format!("bench/{direct_serial}"));
    let out = ok(&shell_on(
        &client,
        Some(&format!("labB/{direct_serial}")),
        "cat /data/local/tmp/who",
    )
    .await);
    assert_eq!(out["stdout"], "direct\n");
    let out = ok(&shell_on(
        &client,
        Some(&format!("labA/{shared_serial}")),
        "echo shared > /data/local/tmp/who",
    )
    .await);
    assert_eq!(out["exitCode"], 0);

    // A serial one source sees works bare, and as `label/serial` too (answered by its bare name).
    let out = ok(&shell_on(&client, Some(&only_a_serial), "echo only-a").await);
    assert_eq!(out["stdout"], "only-a\n");
    let out = ok(&shell_on(&client, Some(&format!("labA/{only_a_serial}")), "echo again").await);
    assert_eq!(out["device"], only_a_serial.as_str());

    // A qualified name can be selected, and later calls go there.
    let picked = format!("labB/{shared_serial}");
    ok(&call(&client, "adb-device", json!({"operation": "select", "device": picked})).await);
    let out = ok(&call(
        &client,
        "adb-shell",
        json!({"operation": "run", "command": "cat /data/local/tmp/who"}),
    )
    .await);
    assert_eq!(out["device"], picked.as_str());
    assert_eq!(out["stdout"], "shared\n");

    // Lab A goes down: it is a row with its error, the others are listed and keep working.
    lab_a.kill_hard();
    let started = Instant::now();
    let result = call(&client, "adb-device", json!({"operation": "list"})).await;
    let list = ok(&result);
    println!(
        "list with lab A down: {} ms, {} chars",
        started.elapsed().as_millis(),
        response_chars(&result)
    );
    let row = source_row(&list, "labA");
    assert!(
        row["error"]
            .as_str()
            .is_some_and(|e| e.contains(&format!("cannot reach the adb server at 127.0.0.1:{}", lab_a.port))),
        "{row}"
    );
    assert_eq!(row["devices"], 0);
    assert!(list["hint"].as_str().unwrap().contains("not answering: labA"), "{list}");
    // `shared` is now seen by lab B alone, so its bare serial is its name again.
    let mut expected = vec![
        shared_serial.clone(),
        format!("labB/{direct_serial}"),
        format!("bench/{direct_serial}"),
    ];
    expected.sort();
    assert_eq!(names(&list), expected, "{list}");
    let out = ok(&shell_on(&client, Some(&picked), "echo still-here").await);
    assert_eq!(out["stdout"], "still-here\n");
    let out = ok(&shell_on(&client, Some(&format!("bench/{direct_serial}")), "echo direct-ok").await);
    assert_eq!(out["stdout"], "direct-ok\n");
    // A device only lab A saw names lab A's error, not "no such device".
    let gone = err(&shell_on(&client, Some(&only_a_serial), "echo x").await);
    assert!(
        gone.contains(&format!("cannot reach the adb server at 127.0.0.1:{}", lab_a.port)),
        "{gone}"
    );
}

/// A source that accepts connections and never answers (a hung host) costs a listing its
/// bounded probe once; calls to the other sources' devices never wait for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_source_is_reported_and_does_not_hold_up_the_others() {
    let hung = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let hung_port = hung.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for socket in hung.incoming().flatten() {
            held.push(socket);
        }
    });
    let sim = SimProcess::start(&[]);
    let home = tempfile::tempdir().unwrap();
    let (stuck, bench) = (
        format!("stuck=server:127.0.0.1:{hung_port}"),
        format!("bench=tcp:{}", sim.addr),
    );
    let client = mcp_server(&["--adb", &stuck, "--adb", &bench], &[], home.path()).await;

    let started = Instant::now();
    let list = ok(&call(&client, "adb-device", json!({"operation": "list"})).await);
    let first = started.elapsed();
    let row = source_row(&list, "stuck");
    assert!(
        row["error"]
            .as_str()
            .is_some_and(|e| e.contains("listing devices timed out")),
        "{row}"
    );
    assert_eq!(names(&list), [sim.serial()]);
    // The only device online is picked without naming it; a named one is asked of its source
    // alone.
    let started = Instant::now();
    let out = ok(&call(&client, "adb-shell", json!({"operation": "run", "command": "echo a"})).await);
    assert_eq!(out["stdout"], "a\n");
    let out = ok(&shell_on(&client, Some(&sim.serial()), "echo b").await);
    assert_eq!(out["stdout"], "b\n");
    let then = started.elapsed();
    println!(
        "hung source: first list {} ms (bounded probe); then 2 calls to the other source {} ms",
        first.as_millis(),
        then.as_millis()
    );
    // Bounds, not speed: the listing waits out the 3 s probe once and no more (slack for a busy
    // CI host), and calls to the other source never wait on the hung one (each would wait a 3 s
    // probe: the two, 6 s).
    assert!(
        first < Duration::from_secs(9),
        "the hung source held the list {first:?}"
    );
    assert!(
        then < Duration::from_millis(4500),
        "calls waited on the hung source: {then:?}"
    );
}

/// A call to a device among several direct sources opens its command's stream and no other: the
/// device is not probed with a command on every call (each probe is a round trip, which made
/// each flow of a sharded replay about 40% slower than on one device alone).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_to_a_direct_device_among_several_sources_does_not_probe_it_first() {
    let (a, b) = (SimProcess::start_logged(&[]), SimProcess::start_logged(&[]));
    let home = tempfile::tempdir().unwrap();
    let (da, db) = (format!("a=tcp:{}", a.addr), format!("b=tcp:{}", b.addr));
    let client = mcp_server(&["--adb", &da, "--adb", &db], &[], home.path()).await;
    // The listing probes each device once, and learns which source has which.
    ok(&call(&client, "adb-device", json!({"operation": "list"})).await);
    let streams = || a.log().matches("stream opened").count();
    assert!(a.wait_for_log("stream opened"), "the listing probed a");
    let before = streams();
    let calls = 5;
    for i in 0..calls {
        let out = ok(&shell_on(&client, Some(&a.serial()), &format!("echo {i}")).await);
        assert_eq!(out["stdout"], format!("{i}\n"));
    }
    assert!(a.wait_for_log("echo 4"), "{}", a.log());
    assert_eq!(streams() - before, calls, "one stream per call:\n{}", a.log());
    // A device that went away is still said to be: its call fails with why.
    let serial = a.serial();
    drop(a);
    let gone = err(&shell_on(&client, Some(&serial), "echo x").await);
    assert!(gone.contains(&serial), "{gone}");
}
