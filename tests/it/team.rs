//! Several instances serve one team (issue 45): three `droidmcp serve --http` sharing one
//! `redis-server` (`--state`), behind Debian's haproxy balancing each request round robin, all
//! on one simulated device. Clients speak MCP 2026-07-28: every request stands on its own (no
//! `Mcp-Session-Id`), so any instance can answer any request and the balancer needs no
//! stickiness; what a client finds again it finds by its handles, kept in Redis. A cacheId made
//! through one instance is read through the others, another principal's id stays unknown to
//! them, a lease taken through one holds on all, and when an instance is killed the client's
//! work goes on through the rest (haproxy re-sends a refused connection to another). A legacy
//! client (the official Python SDK, one `Mcp-Session-Id`) is pinned to its instance by the
//! stickiness docs/http.md gives; when that instance dies it gets 404, initialises again, and
//! its handles and lease go on. Refs, skills (saved and removed), runs, the skills quota and
//! flow recordings (never a password typed) are shared by two instances as cache entries are.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{HttpServer, SimProcess, http_client, shell_run};

pub(crate) const ALICE: &str = "alice-token-0123456789abcdef";
pub(crate) const BOB: &str = "bob-token-0123456789abcdef0";

/// haproxy round robin over the instances (`testkit::haproxy`), with `sticky`'s lines.
fn balancer(servers: &[&HttpServer], sticky: &str) -> Option<testkit::Haproxy> {
    let authorities: Vec<String> = servers
        .iter()
        .map(|s| {
            s.url
                .strip_prefix("http://")
                .and_then(|u| u.strip_suffix("/mcp"))
                .unwrap()
                .to_string()
        })
        .collect();
    testkit::haproxy(&authorities, sticky)
}

/// A 2026-07-28 `tools/call` on its own through `url`: the tool's answer and whether it is an error.
pub(crate) async fn call(url: &str, token: &str, tool: &str, arguments: Value) -> (Value, bool) {
    let message = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": tool, "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "team", "version": "1"}}}});
    let response = http_client()
        .post(url)
        .header("authorization", format!("Bearer {token}"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .body(message.to_string())
        .send()
        .await
        .expect("the balancer answers");
    let status = response.status().as_u16();
    let text = tokio::time::timeout(Duration::from_secs(60), response.text())
        .await
        .expect("the answer ends")
        .unwrap_or_default();
    assert_eq!(status, 200, "{tool}: {text}");
    let json = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|l| l.starts_with('{'))
        .unwrap_or(text.as_str());
    let message: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {text}"));
    let result = &message["result"];
    let is_error = result["isError"] == true;
    let answer = match &result["structuredContent"] {
        Value::Null => json!(result["content"][0]["text"].as_str().unwrap_or_default()),
        structured => structured.clone(),
    };
    (answer, is_error)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_instances_behind_haproxy_share_handles_and_leases_and_outlive_one_of_them() {
    let Some(redis) = testkit::redis_server() else { return };
    let home = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let target = format!("tcp:{}", sim.addr);
    let (alice, bob, state) = (format!("alice={ALICE}"), format!("bob={BOB}"), redis.url(0));
    let args = ["--adb", &target, "--token", &alice, "--token", &bob, "--state", &state];
    let mut instances = Vec::new();
    for _ in 0..3 {
        instances.push(HttpServer::start(&args, &[], home.path()).await);
    }
    let Some(lb) = balancer(&instances.iter().collect::<Vec<_>>(), "") else {
        return;
    };
    let url = lb.url.as_str();

    // A cacheId made through one instance reads through each (round robin: three gets, three
    // instances), and stays unknown to another principal on every one.
    let (props, failed) = call(url, ALICE, "adb-device", json!({"operation": "properties"})).await;
    assert!(!failed, "{props}");
    let id = props["cacheId"].as_str().expect("a cacheId").to_string();
    for round in 0..3 {
        let (got, failed) = call(
            url,
            ALICE,
            "cache",
            json!({"operation": "get", "id": id, "prefix": "ro.build"}),
        )
        .await;
        assert!(!failed, "round {round}: {got}");
        assert!(got.to_string().contains("ro.build.version.sdk"), "round {round}: {got}");
        let (theirs, failed) = call(url, BOB, "cache", json!({"operation": "get", "id": id})).await;
        assert!(
            failed && theirs.to_string().contains("unknown to this client"),
            "round {round}: {theirs}"
        );
    }

    // A lease taken through one instance holds on every one.
    let (leased, failed) = call(url, ALICE, "adb-device", json!({"operation": "lease", "ttlSecs": 600})).await;
    assert!(!failed, "{leased}");
    for round in 0..3 {
        let (refused, failed) = call(url, BOB, "adb-shell", shell_run("echo bob-acts")).await;
        assert!(
            failed && refused.to_string().contains("is leased to alice until"),
            "round {round}: {refused}"
        );
        let (own, failed) = call(url, ALICE, "adb-shell", shell_run("echo alice-acts")).await;
        assert!(
            !failed && own.to_string().contains("alice-acts"),
            "round {round}: {own}"
        );
    }

    // One instance dies mid-work: Alice's next calls, her earlier cacheId and her lease go on
    // through the two left.
    let pid = instances[1].pid();
    std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    for round in 0..6 {
        let (got, failed) = call(
            url,
            ALICE,
            "cache",
            json!({"operation": "get", "id": id, "prefix": "ro.build"}),
        )
        .await;
        assert!(
            !failed && got.to_string().contains("ro.build.version.sdk"),
            "after the kill, round {round}: {got}"
        );
        let (refused, failed) = call(url, BOB, "adb-shell", shell_run("echo bob-acts")).await;
        assert!(
            failed && refused.to_string().contains("is leased to alice"),
            "after the kill, round {round}: {refused}"
        );
    }
    let (released, failed) = call(url, ALICE, "adb-device", json!({"operation": "release"})).await;
    assert!(!failed, "{released}");
    let (free, failed) = call(url, BOB, "adb-shell", shell_run("echo bob-acts")).await;
    assert!(!failed && free.to_string().contains("bob-acts"), "{free}");
    println!("3 instances, 1 redis-server, haproxy: 3 rounds shared, 1 instance killed, 6 rounds after");
}

/// The stickiness docs/http.md gives haproxy for legacy sessions: an `initialize` is balanced as
/// any request, and the instance that answered it (`Mcp-Session-Id` in its response) gets the
/// session's every request after.
const STICKY: &str = "    stick-table type string len 64 size 10k expire 30m\n    stick match req.hdr(mcp-session-id)\n    stick store-response res.hdr(mcp-session-id)\n";

/// Which of `instances` holds legacy session `session` of `token` (a ping answered 200 there).
async fn holder_of(instances: &[HttpServer], token: &str, session: &str) -> Option<usize> {
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    for (at, instance) in instances.iter().enumerate() {
        let status = http_client()
            .post(&instance.url)
            .header("authorization", format!("Bearer {token}"))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-06-18")
            .header("mcp-session-id", session)
            .body(ping.clone())
            .send()
            .await
            .map(|r| r.status().as_u16());
        if status.is_ok_and(|s| s == 200) {
            return Some(at);
        }
    }
    None
}

/// A legacy client (the official Python SDK, `Mcp-Session-Id`) through haproxy with the docs'
/// stickiness: its session lives in one instance, which is killed mid-session. Its next call
/// gets the spec's answer for a session the server does not know (404, which the SDK reads as
/// "Session terminated"; when haproxy sent it on a connection the kill cut, a 502 first, and the
/// client's one retry gets the 404); it initialises again, as the spec tells a client to, through the
/// balancer to an instance still up, and its cacheId and its lease (kept in Redis, bound to its
/// principal, not to the session) still work there: the session goes on through the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_session_whose_instance_dies_initialises_again_and_keeps_its_handles_and_lease() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let Some(redis) = testkit::redis_server() else { return };
    let has_sdk = std::process::Command::new("python3")
        .args(["-c", "import mcp, httpx2; from mcp import Client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_sdk {
        testkit::skip_or_fail("the MCP Python SDK 2.x is not installed (pip install 'mcp>=2,<3')");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let target = format!("tcp:{}", sim.addr);
    let (alice, bob, state) = (format!("alice={ALICE}"), format!("bob={BOB}"), redis.url(0));
    let args = ["--adb", &target, "--token", &alice, "--token", &bob, "--state", &state];
    let mut instances = Vec::new();
    for _ in 0..2 {
        instances.push(HttpServer::start(&args, &[], home.path()).await);
    }
    let Some(lb) = balancer(&instances.iter().collect::<Vec<_>>(), STICKY) else {
        return;
    };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/python_failover.py");
    let mut client = tokio::process::Command::new("python3")
        .args([script, &lb.url, ALICE])
        .env("HOME", home.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("python3 starts");
    let mut said = tokio::io::BufReader::new(client.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(Duration::from_secs(120), said.next_line())
        .await
        .expect("the client takes its handles")
        .unwrap();
    let Some(first) = first else {
        let out = client.wait_with_output().await.unwrap();
        panic!("the client ended early: {}", String::from_utf8_lossy(&out.stderr));
    };
    let first: Value = serde_json::from_str(&first).unwrap();
    let session = first["session"].as_str().unwrap();
    let held = holder_of(&instances, ALICE, session)
        .await
        .expect("one instance holds the session");
    let (refused, failed) = call(&lb.url, BOB, "adb-shell", shell_run("echo bob-acts")).await;
    assert!(
        failed && refused.to_string().contains("is leased to alice"),
        "{refused}"
    );

    std::process::Command::new("kill")
        .args(["-KILL", &instances[held].pid().to_string()])
        .status()
        .unwrap();
    client.stdin.as_mut().unwrap().write_all(b"killed\n").await.unwrap();
    let last = tokio::time::timeout(Duration::from_secs(120), said.next_line())
        .await
        .expect("the client goes on")
        .unwrap();
    let out = client.wait_with_output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let seen: Value = serde_json::from_str(&last.unwrap_or_default()).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    println!("legacy session through haproxy, its instance killed: {seen}");
    assert_ne!(seen["protocol"], "2026-07-28", "a legacy session: {seen}");
    assert_eq!(
        seen["afterKill"]["message"], "Session terminated",
        "the call after the kill gets the spec's 404: {seen}"
    );
    // The SDK's GET stream reconnects on its own clock (1 s after the cut), so a GET's 404 or
    // 502 may fall anywhere among the POSTs: every error is one of the two, and the last POST
    // is the spec's 404.
    let statuses: Vec<&str> = seen["statuses"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        statuses.iter().all(|s| s.ends_with(" 404") || s.ends_with(" 502")),
        "{seen}"
    );
    assert_eq!(
        statuses.iter().rev().find(|s| s.starts_with("POST ")),
        Some(&"POST 404"),
        "{seen}"
    );
    assert!(
        seen["cacheAgain"].as_str().unwrap().contains("ro.build.version.sdk"),
        "{seen}"
    );
    assert!(seen["actsAgain"].as_str().unwrap().contains("still-mine"), "{seen}");
    let sessions = seen["sessions"].as_array().unwrap();
    assert!(
        sessions.len() == 2 && sessions[0] != sessions[1],
        "a new session: {seen}"
    );
    let (free, failed) = call(&lb.url, BOB, "adb-shell", shell_run("echo bob-acts")).await;
    assert!(!failed && free.to_string().contains("bob-acts"), "released: {free}");
}

/// Two instances behind haproxy, one redis-server: round robin sends each request to the other
/// instance than the one before, so every step below is made through one instance and used
/// through the other. A ref from a dump taps; a skill saved is listed and run; a run's record
/// and saved results read; the skills quota is counted once across both; another principal
/// sees none of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refs_skills_runs_and_the_skills_quota_are_shared_by_instances_behind_haproxy() {
    let Some(redis) = testkit::redis_server() else { return };
    let home = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let target = format!("tcp:{}", sim.addr);
    let (alice, bob, state) = (format!("alice={ALICE}"), format!("bob={BOB}"), redis.url(0));
    let args = [
        "--adb",
        &target,
        "--token",
        &alice,
        "--token",
        &bob,
        "--state",
        &state,
        "--skills-max",
        "2",
    ];
    let mut instances = Vec::new();
    for _ in 0..2 {
        instances.push(HttpServer::start(&args, &[], home.path()).await);
    }
    let Some(lb) = balancer(&instances.iter().collect::<Vec<_>>(), "") else {
        return;
    };
    let url = lb.url.as_str();

    // A ref a dump gave through one instance taps through the other (twice: both ways).
    for round in 0..2 {
        let (dump, failed) = call(url, ALICE, "ui", json!({"operation": "dump"})).await;
        assert!(!failed, "{dump}");
        let element = dump["elements"]
            .as_array()
            .and_then(|els| els.iter().find(|e| e["ref"].is_string()))
            .unwrap_or_else(|| panic!("a dump with refs: {dump}"))
            .clone();
        let (tapped, failed) = call(url, ALICE, "ui", json!({"operation": "tap", "ref": element["ref"]})).await;
        assert!(
            !failed,
            "round {round}: {} ({}) through the other instance: {tapped}",
            element["ref"], element["label"]
        );
    }

    // A skill saved by a run through one instance is listed and run through the other.
    let save = "await skills.save('hello', 'console.log(\"hi \" + args.who)', 'says hi'); const p = await device.properties(); console.log('saved')";
    let (saved, failed) = call(url, ALICE, "script", json!({"operation": "run", "code": save})).await;
    assert!(
        !failed && saved["output"].as_str().unwrap_or_default().contains("saved"),
        "{saved}"
    );
    let run_id = saved["runId"].as_str().expect("a runId").to_string();
    let (listed, failed) = call(url, ALICE, "script", json!({"operation": "list"})).await;
    assert!(!failed, "{listed}");
    assert!(
        listed["skills"]
            .as_array()
            .is_some_and(|s| s.iter().any(|s| s["name"] == "hello")),
        "the other instance lists the skill: {listed}"
    );
    let (ran, failed) = call(
        url,
        ALICE,
        "script",
        json!({"operation": "run", "skill": "hello", "args": {"who": "team"}}),
    )
    .await;
    assert!(
        !failed && ran["output"].as_str().unwrap_or_default().contains("hi team"),
        "{ran}"
    );

    // The first run is listed and its saved result read through both instances; the one that
    // did not run it names the one that did.
    let result = format!("{run_id}/results/002-device-properties.json");
    let mut named = 0;
    for round in 0..2 {
        let (listed, failed) = call(url, ALICE, "script", json!({"operation": "list"})).await;
        let run = listed["runs"]
            .as_array()
            .and_then(|runs| runs.iter().find(|r| r["id"] == run_id.as_str()))
            .unwrap_or_else(|| panic!("round {round}: run {run_id} listed: {listed}"));
        assert!(!failed && run["running"] == false, "{listed}");
        named += usize::from(run["instance"].as_str().is_some_and(|i| i.starts_with("pid ")));
    }
    for round in 0..2 {
        let (got, failed) = call(url, ALICE, "cache", json!({"operation": "get", "id": result})).await;
        assert!(!failed && got.to_string().contains("ro.build"), "round {round}: {got}");
    }
    assert_eq!(
        named, 1,
        "exactly the instance that did not run it names the one that did"
    );

    // Bob sees none of Alice's: her skill, her run, its result.
    let (theirs, failed) = call(url, BOB, "script", json!({"operation": "list"})).await;
    assert!(
        !failed && !theirs.to_string().contains("hello") && !theirs.to_string().contains(&run_id),
        "{theirs}"
    );
    let (theirs, failed) = call(url, BOB, "cache", json!({"operation": "get", "id": result})).await;
    assert!(failed, "{theirs}");

    // The skills quota (--skills-max 2) counts both instances' saves: the second lands (two
    // in all), the third is refused through whichever instance it reaches, each instance
    // holding fewer than two of its own.
    let save = |name: &str| json!({"operation": "run", "code": format!("await skills.save('{name}', 'console.log(1)'); console.log('saved {name}')")});
    let (second, failed) = call(url, ALICE, "script", save("second")).await;
    assert!(!failed, "{second}");
    for round in 0..2 {
        let (third, failed) = call(url, ALICE, "script", save("third")).await;
        assert!(
            failed && third.to_string().contains("skills quota is 2 skills"),
            "round {round}: {third}"
        );
    }
    let (replaced, failed) = call(url, ALICE, "script", save("hello")).await;
    assert!(!failed, "a skill replacing one of its name fits: {replaced}");
    println!("2 instances, 1 redis-server, haproxy: refs 2 ways, a skill, a run, the skills quota shared");
}

/// Several instances on one phone: one does not see another's acting calls, so a tap never aims
/// by a reading it remembers. Alice reads the launcher through one instance; Bob opens Settings
/// through the other; Alice's tap by label through the first reads again and finds the launcher's
/// "Contacts" gone, rather than tapping where it was on Settings' screen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tap_reads_again_when_another_instance_acted_on_the_phone() {
    let Some(redis) = testkit::redis_server() else { return };
    let home = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let target = format!("tcp:{}", sim.addr);
    let (alice, bob, state) = (format!("alice={ALICE}"), format!("bob={BOB}"), redis.url(0));
    let args = ["--adb", &target, "--token", &alice, "--token", &bob, "--state", &state];
    let (a, b) = (
        HttpServer::start(&args, &[], home.path()).await,
        HttpServer::start(&args, &[], home.path()).await,
    );
    let (read, failed) = call(&a.url, ALICE, "ui", json!({"operation": "dump"})).await;
    assert!(!failed && read.to_string().contains("Contacts"), "{read}");
    let (opened, failed) = call(
        &b.url,
        BOB,
        "adb-app",
        json!({"operation": "launch", "package": "com.android.settings"}),
    )
    .await;
    assert!(!failed, "{opened}");
    let (tap, failed) = call(
        &a.url,
        ALICE,
        "ui",
        json!({"operation": "tap", "contentDesc": "Contacts"}),
    )
    .await;
    assert!(
        failed && tap.to_string().contains("nothing on the screen matches"),
        "a tap aimed by a reading another instance's call made stale: {tap}"
    );
}

/// A way to Redis that holds each of its answers `delay` (requests go straight on): an
/// instance's reading fetches the ref book at once but writes it back long after, so readings
/// at once overlap between the two (a race the real network makes rare, not impossible).
async fn slow_path_to(port: u16, delay: Duration) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
                continue;
            };
            let (client_in, client_out) = client.into_split();
            let (server_in, server_out) = server.into_split();
            tokio::spawn(held(client_in, server_out, Duration::ZERO));
            tokio::spawn(held(server_in, client_out, delay));
        }
    });
    format!("redis://{address}/0")
}

async fn held(mut from: tokio::net::tcp::OwnedReadHalf, mut to: tokio::net::tcp::OwnedWriteHalf, delay: Duration) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // Each chunk goes on `delay` after it came, whatever follows it (a latency, not a queue).
    let (send, mut due) = tokio::sync::mpsc::unbounded_channel::<(tokio::time::Instant, Vec<u8>)>();
    tokio::spawn(async move {
        while let Some((at, chunk)) = due.recv().await {
            tokio::time::sleep_until(at).await;
            if to.write_all(&chunk).await.is_err() {
                break;
            }
        }
    });
    let mut buffer = vec![0u8; 64 * 1024];
    while let Ok(n @ 1..) = from.read(&mut buffer).await {
        if send
            .send((tokio::time::Instant::now() + delay, buffer[..n].to_vec()))
            .is_err()
        {
            break;
        }
    }
}

/// Two readings of one device at once through two instances, each a request straight to one,
/// while the screen changes between them: the first instance reads the launcher and is slow to
/// the store (a path to Redis that holds each chunk), the screen turns to Settings, and the
/// second reads it and numbers before the first writes its book back. Each round a principal
/// of its own (its book starts empty). In every answer through either instance a ref names one
/// element (label, type, place), never two (issue 45: the book is written by compare and set;
/// the first reading loses the race and numbers again on the second's book).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readings_at_once_through_two_instances_never_give_one_ref_to_two_elements() {
    let Some(redis) = testkit::redis_server() else { return };
    let home = tempfile::tempdir().unwrap();
    let sim = SimProcess::start_logged(&[]);
    let target = format!("tcp:{}", sim.addr);
    let rounds = 3;
    let tokens: Vec<String> = (0..rounds)
        .map(|r| format!("p{r}=team-token-{r}-0123456789abcdef"))
        .collect();
    let slow = slow_path_to(redis.port, Duration::from_millis(500)).await;
    let direct = redis.url(0);
    let mut instances = Vec::new();
    for state in [&slow, &direct] {
        let mut args = vec!["--adb", &target, "--state", state];
        for token in &tokens {
            args.extend(["--token", token]);
        }
        instances.push(HttpServer::start(&args, &[], home.path()).await);
    }
    let (slow_url, fast_url) = (instances[0].url.clone(), instances[1].url.clone());
    let flips = ["am start -n com.android.settings/.Settings", "input keyevent 3"];
    let dump = json!({"operation": "dump", "limit": 200});
    let (mut clashes, mut refs) = (Vec::new(), 0);
    let mut screens = std::collections::BTreeSet::new();
    for (round, token) in tokens.iter().enumerate() {
        let token: &'static str = token.split_once('=').unwrap().1.to_string().leak();
        let dumps_before = sim.log().matches("uiautomator").count();
        let (url, first_dump) = (slow_url.clone(), dump.clone());
        let first = tokio::spawn(async move { call(&url, token, "ui", first_dump).await });
        // Once the first instance has the screen from the device, the screen changes and the
        // second instance reads it.
        for _ in 0..500 {
            if sim.log().matches("uiautomator").count() > dumps_before {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let (said, failed) = call(&fast_url, token, "adb-shell", shell_run(flips[round % 2])).await;
        assert!(!failed, "{said}");
        let second = call(&fast_url, token, "ui", dump.clone()).await;
        let mut named: std::collections::BTreeMap<String, (String, Value)> = Default::default();
        for (reading, failed) in [first.await.unwrap(), second] {
            assert!(!failed, "{reading}");
            let elements = reading["elements"].as_array().cloned().unwrap_or_default();
            screens.insert(
                elements
                    .iter()
                    .map(|e| e["label"].to_string())
                    .collect::<Vec<_>>()
                    .join("|"),
            );
            for e in elements.iter().filter(|e| e["ref"].is_string()) {
                let reference = e["ref"].as_str().unwrap().to_string();
                let what = (e["label"].to_string(), json!([e["type"], e["at"]]));
                match named.get(&reference) {
                    Some(first) if *first != what => {
                        clashes.push(format!("round {round}, {reference}: {first:?} and {what:?}"))
                    }
                    Some(_) => {}
                    None => {
                        named.insert(reference, what);
                    }
                }
            }
        }
        refs += named.len();
    }
    assert!(
        screens.len() >= 2,
        "the readings saw one screen only: nothing could clash"
    );
    assert!(clashes.is_empty(), "refs naming two elements: {clashes:#?}");
    println!(
        "{rounds} rounds of 2 readings at once through 2 instances, {} screens, {refs} refs: each names one element",
        screens.len()
    );
}

/// A skill removed through one instance is gone from every one, its place in the skills quota
/// freed across them (issue 45): with `--skills-max 2`, two saved through A fill it (A's
/// refusal names a way to free a place that works with `--state`); one removed through B; the
/// third saved through A lands, and A neither lists, runs nor reads (its folder's copy) the
/// removed one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_removed_through_one_instance_is_gone_from_all_and_frees_its_place() {
    let Some(redis) = testkit::redis_server() else { return };
    let home = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let target = format!("tcp:{}", sim.addr);
    let (alice, state) = (format!("alice={ALICE}"), redis.url(0));
    let args = [
        "--adb",
        &target,
        "--token",
        &alice,
        "--state",
        &state,
        "--skills-max",
        "2",
    ];
    let a = HttpServer::start(&args, &[], home.path()).await;
    let b = HttpServer::start(&args, &[], home.path()).await;
    let run = |code: &str| json!({"operation": "run", "code": code});
    let save = |name: &str| {
        run(&format!(
            "await skills.save('{name}', 'console.log(\"{name}\")'); console.log('saved {name}')"
        ))
    };
    for name in ["one", "two"] {
        let (saved, failed) = call(&a.url, ALICE, "script", save(name)).await;
        assert!(!failed, "{saved}");
    }
    let (full, failed) = call(&a.url, ALICE, "script", save("three")).await;
    assert!(
        failed
            && full.to_string().contains("skills quota is 2 skills")
            && full.to_string().contains("skills.remove(name)"),
        "the refusal names skills.remove: {full}"
    );
    let (removed, failed) = call(
        &b.url,
        ALICE,
        "script",
        run("console.log(JSON.stringify(await skills.remove('one')))"),
    )
    .await;
    assert!(
        !failed
            && removed["output"]
                .as_str()
                .unwrap_or_default()
                .contains("\"removed\":\"one\""),
        "{removed}"
    );
    let (again, failed) = call(&b.url, ALICE, "script", run("await skills.remove('one')")).await;
    assert!(
        failed && again.to_string().contains("no skill named \\\"one\\\""),
        "removing it twice: {again}"
    );
    let (third, failed) = call(&a.url, ALICE, "script", save("three")).await;
    assert!(
        !failed,
        "the place one freed through B takes the third through A: {third}"
    );

    let (listed, failed) = call(&a.url, ALICE, "script", json!({"operation": "list"})).await;
    let names: Vec<&str> = listed["skills"]
        .as_array()
        .map(|s| s.iter().filter_map(|s| s["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(!failed && names == ["three", "two"], "A lists: {listed}");
    let (ran, failed) = call(&a.url, ALICE, "script", json!({"operation": "run", "skill": "one"})).await;
    assert!(
        failed && ran.to_string().contains("no skill named"),
        "A runs the removed one: {ran}"
    );
    let (read, failed) = call(&a.url, ALICE, "script", run("await workspace.read('skills/one.js')")).await;
    assert!(failed, "A's copy of the removed one is gone: {read}");
    let (read, failed) = call(
        &a.url,
        ALICE,
        "script",
        run("console.log(await workspace.read('skills/two.js'))"),
    )
    .await;
    assert!(
        !failed && read["output"].as_str().unwrap_or_default().contains("two"),
        "{read}"
    );
    println!("2 instances, 1 redis-server: a skill removed through one, gone from both, its place freed");
}

/// Everything a Redis holds, keys and values (strings, hashes, sets, sorted sets, lists), as one
/// text to search (Debian's redis-cli).
pub(crate) fn everything_in(port: u16) -> String {
    let cli = |args: &[&str]| {
        let out = std::process::Command::new("redis-cli")
            .args(["-p", &port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli runs");
        assert!(out.status.success(), "redis-cli {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let mut all = String::new();
    for key in cli(&["--scan"]).lines().filter(|k| !k.is_empty()) {
        let kind = cli(&["TYPE", key]).trim().to_string();
        let values = match kind.as_str() {
            "string" => cli(&["GET", key]),
            "hash" => cli(&["HGETALL", key]),
            "set" => cli(&["SMEMBERS", key]),
            "zset" => cli(&["ZRANGE", key, "0", "-1"]),
            "list" => cli(&["LRANGE", key, "0", "-1"]),
            other => panic!("{key} is a {other}: read it too"),
        };
        all.push_str(&format!("{key} ({kind}): {values}\n"));
    }
    all
}

/// A recording made through one instance exports through another (issue 45): on the login demo,
/// through A, a launch, a tap and a type into the user name, a tap and a type into the password;
/// through B, `flow export` gives the very flow A exports, in both formats. The password is
/// in neither export nor anywhere in Redis (keys and values), where the recording is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_made_through_one_instance_exports_through_another_without_its_secrets() {
    const LOGIN: &str = "org.droidmcp.demo.login";
    let Some(redis) = testkit::redis_server() else { return };
    let home = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let target = format!("tcp:{}", sim.addr);
    let (alice, state) = (format!("alice={ALICE}"), redis.url(0));
    let mut instances = Vec::new();
    let mut workspaces = Vec::new();
    for _ in 0..2 {
        let workspace = tempfile::tempdir().unwrap();
        let ws = workspace.path().to_str().unwrap().to_string();
        let args = [
            "--adb",
            &target,
            "--token",
            &alice,
            "--state",
            &state,
            "--workspace",
            &ws,
        ];
        instances.push(HttpServer::start(&args, &[], home.path()).await);
        workspaces.push(workspace);
    }
    let (a, b) = (&instances[0].url, &instances[1].url);
    let secret = "Hunter2-secret!";
    let steps = [
        ("adb-app", json!({"operation": "launch", "package": LOGIN})),
        (
            "ui",
            json!({"operation": "tap", "resourceId": format!("{LOGIN}:id/username")}),
        ),
        ("ui", json!({"operation": "type", "text": "ada@example.com"})),
        (
            "ui",
            json!({"operation": "tap", "resourceId": format!("{LOGIN}:id/password")}),
        ),
        ("ui", json!({"operation": "type", "text": secret, "observe": true})),
    ];
    for (tool, args) in steps {
        let (done, failed) = call(a, ALICE, tool, args.clone()).await;
        assert!(!failed, "{tool} {args}: {done}");
    }
    let mut formats = 0;
    for format in ["js", "maestro"] {
        let export = json!({"operation": "export", "format": format, "name": "login"});
        let mut texts = Vec::new();
        for url in [b, a] {
            let (exported, failed) = call(url, ALICE, "flow", export.clone()).await;
            assert!(!failed && exported["steps"] == 5, "{format}: {exported}");
            assert!(!exported.to_string().contains(secret), "{exported}");
            let text = std::fs::read_to_string(exported["path"].as_str().unwrap()).unwrap();
            texts.push(text);
        }
        let (on_b, on_a) = (&texts[0], &texts[1]);
        assert_eq!(on_b, on_a, "{format}: B exports what A does");
        assert!(on_b.contains("ada@example.com") && !on_b.contains(secret), "{on_b}");
        assert!(
            on_b.contains("PASSWORD"),
            "the password typed as its placeholder: {on_b}"
        );
        formats += 1;
    }
    let kept = everything_in(redis.port);
    assert!(kept.contains(":recording"), "the recording is in Redis: {kept}");
    assert!(!kept.contains(secret), "the password is in Redis: {kept}");
    println!(
        "2 instances, 1 redis-server: 5 steps recorded through A, exported through B in {formats} formats, no secret in Redis"
    );
}
