//! `serve --http` shared by two tokens, one of them hostile: each case plays an abuse from
//! `alice` (raw sockets where a client library would not send it) and asserts that `bob`'s
//! calls are still answered, and answered right. No case asserts a time: a bounded wait only
//! keeps a case from hanging on a server that never answers (the p99 figures are in
//! `benches/abuse.rs`).

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{HttpServer, SimProcess, http_client, shell_run, status_kib};

const ALICE: &str = "alice-token-0123456789abcdef";
const BOB: &str = "bob-token-0123456789abcdef0";

async fn two_tokens(home: &std::path::Path, extra: &[&str]) -> HttpServer {
    let alice = format!("alice={ALICE}");
    let bob = format!("bob={BOB}");
    let mut args = vec!["--sim", "--token", &alice, "--token", &bob];
    args.extend_from_slice(extra);
    HttpServer::start(&args, &[], home).await
}

/// `host:port` of the server.
fn authority(server: &HttpServer) -> String {
    server
        .url
        .strip_prefix("http://")
        .and_then(|u| u.strip_suffix("/mcp"))
        .unwrap()
        .to_string()
}

/// One request with a token and headers; the status, the session id it gave, the whole body
/// (an answer's SSE stream ends with its answer).
async fn send(
    server: &HttpServer,
    method: reqwest::Method,
    token: &str,
    headers: &[(&str, &str)],
    body: Option<Vec<u8>>,
) -> (u16, Option<String>, String) {
    let mut request = http_client()
        .request(method, &server.url)
        .header("authorization", format!("Bearer {token}"))
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = body {
        request = request.header("content-type", "application/json").body(body);
    }
    let response = request.send().await.expect("HTTP request");
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let text = tokio::time::timeout(Duration::from_secs(60), response.text())
        .await
        .expect("the answer ends")
        .unwrap_or_default();
    (status, session, text)
}

const LEGACY: (&str, &str) = ("mcp-protocol-version", "2025-06-18");

/// A legacy session of `token`, initialized.
async fn session(server: &HttpServer, token: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let (status, session, text) = send(server, reqwest::Method::POST, token, &[LEGACY], Some(body(&init))).await;
    assert_eq!(status, 200, "initialize: {text}");
    let session = session.expect("Mcp-Session-Id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let headers = [LEGACY, ("mcp-session-id", session.as_str())];
    let (status, _, text) = send(server, reqwest::Method::POST, token, &headers, Some(body(&initialized))).await;
    assert_eq!(status, 202, "initialized: {text}");
    session
}

fn body(value: &Value) -> Vec<u8> {
    value.to_string().into_bytes()
}

/// A raw `tools/call` of `adb-shell run LINE` (these cases speak HTTP by hand, not through a
/// client).
fn run(id: u64, line: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "adb-shell", "arguments": shell_run(line)}})
}

/// A call in a legacy session: the status and the body.
async fn in_session(server: &HttpServer, token: &str, session: &str, message: &Value) -> (u16, String) {
    let headers = [LEGACY, ("mcp-session-id", session)];
    let (status, _, text) = send(server, reqwest::Method::POST, token, &headers, Some(body(message))).await;
    (status, text)
}

/// A 2026-07-28 request on its own (no session): the status and the body.
async fn stateless(server: &HttpServer, token: &str, method: &str, params: Value) -> (u16, String) {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}});
    let message = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", method)];
    let (status, _, text) = send(server, reqwest::Method::POST, token, &headers, Some(body(&message))).await;
    (status, text)
}

/// Bob's calls, the ones every case asserts stay answered: a stateless tools/list, a new
/// session and a device call in it.
async fn bob_is_answered(server: &HttpServer, case: &str) {
    let (status, text) = stateless(server, BOB, "tools/list", json!({})).await;
    assert_eq!(status, 200, "{case}: bob's stateless tools/list: {text}");
    assert!(text.contains("adb-shell"), "{case}: {text}");
    let session = session(server, BOB).await;
    let (status, text) = in_session(server, BOB, &session, &run(2, "echo bob-answered")).await;
    assert_eq!(status, 200, "{case}: bob's call: {text}");
    assert!(text.contains("bob-answered"), "{case}: {text}");
}

/// Writes `request` on a new connection and reads what comes back until the server closes it
/// (or `wait` passes: then `None`, the connection still open).
async fn raw(server: &HttpServer, request: &[u8], wait: Duration) -> Option<String> {
    let mut stream = TcpStream::connect(authority(server)).await.expect("connect");
    stream.write_all(request).await.expect("write");
    let mut got = Vec::new();
    let read = tokio::time::timeout(wait, stream.read_to_end(&mut got)).await;
    match read {
        Ok(_) => Some(String::from_utf8_lossy(&got).into_owned()),
        Err(_) => None,
    }
}

fn status_of(response: &str) -> u16 {
    response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {response:?}"))
}

/// Alice opens 70 legacy sessions and never ends one. Bob's sessions and stateless calls are
/// answered, and so are Alice's own: past her cap her least recently used idle session goes
/// (it then answers as an unknown session), and stateless requests hold no session at all.
#[tokio::test]
async fn one_token_filling_its_sessions_locks_out_no_one() {
    let home = tempfile::tempdir().unwrap();
    let server = two_tokens(home.path(), &["--max-sessions", "64"]).await;
    let first = session(&server, ALICE).await;
    let mut last = String::new();
    for _ in 0..69 {
        last = session(&server, ALICE).await;
    }
    bob_is_answered(&server, "alice holds 70 sessions").await;
    let (status, text) = stateless(&server, ALICE, "tools/list", json!({})).await;
    assert_eq!(status, 200, "alice's own stateless call holds no session: {text}");
    let (status, text) = in_session(&server, ALICE, &last, &run(3, "echo alice-last")).await;
    assert_eq!(status, 200, "alice's newest session: {text}");
    assert!(text.contains("alice-last"), "{text}");
    let (status, text) = in_session(&server, ALICE, &first, &run(4, "echo alice-first")).await;
    assert_eq!(status, 404, "alice's least recently used session was evicted: {text}");
    println!(
        "70 sessions of one token under --max-sessions 64: the other token answered; the oldest idle one evicted (404)"
    );
    server.terminate().await;
}

/// With Alice's sessions all busy (each holding a stream) at her cap, her next session gets
/// 503, saying why, and Bob's does not.
#[tokio::test]
async fn a_token_whose_sessions_are_all_busy_is_refused_alone() {
    let home = tempfile::tempdir().unwrap();
    let server = two_tokens(home.path(), &["--max-sessions", "3"]).await;
    let mut streams = Vec::new();
    for _ in 0..3 {
        let id = session(&server, ALICE).await;
        // A GET stream open on each: none is idle.
        let response = http_client()
            .get(&server.url)
            .header("authorization", format!("Bearer {ALICE}"))
            .header("accept", "text/event-stream")
            .header(LEGACY.0, LEGACY.1)
            .header("mcp-session-id", &id)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200);
        streams.push(response);
    }
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let (status, _, text) = send(&server, reqwest::Method::POST, ALICE, &[LEGACY], Some(body(&init))).await;
    assert_eq!(status, 503, "{text}");
    assert!(text.contains("--max-sessions 3"), "the refusal says why: {text}");
    let evil = [LEGACY, ("origin", "http://evil.example")];
    let (status, _, text) = send(&server, reqwest::Method::POST, ALICE, &evil, Some(body(&init))).await;
    assert_eq!(
        status, 403,
        "a forbidden Origin is refused before any cap answers: {text}"
    );
    bob_is_answered(&server, "alice's sessions all busy").await;
    drop(streams);
    server.terminate().await;
}

/// Bob, with his own token and Alice's session id, gets for every request exactly what he gets
/// for a session id nobody made: he cannot call in it, open a stream on it, resume its running
/// call (an `adb-shell` output) with `Last-Event-ID`, nor end it. Alice's call and session go on.
#[tokio::test]
async fn another_tokens_session_is_an_unknown_session() {
    let home = tempfile::tempdir().unwrap();
    let server = two_tokens(home.path(), &[]).await;
    let alice = session(&server, ALICE).await;

    // Alice's call, running: its first event's id is what a resume names.
    let mut running = http_client()
        .post(&server.url)
        .header("authorization", format!("Bearer {ALICE}"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header(LEGACY.0, LEGACY.1)
        .header("mcp-session-id", &alice)
        .body(body(&run(2, "sleep 2; echo ALICE-SECRET")))
        .send()
        .await
        .unwrap();
    assert_eq!(running.status().as_u16(), 200);
    let mut first = String::new();
    while !first.contains("\n\n") {
        let chunk = running.chunk().await.unwrap().expect("an event");
        first.push_str(&String::from_utf8_lossy(&chunk));
    }
    let event_id = first
        .lines()
        .find_map(|l| l.strip_prefix("id:"))
        .expect("an event id")
        .trim()
        .to_string();

    let made_up = "0123456789abcdef0123456789abcdef";
    let list = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"});
    let mut cases = 0;
    for (what, method, extra, message) in [
        ("POST tools/list", reqwest::Method::POST, None, Some(&list)),
        ("GET stream", reqwest::Method::GET, None, None),
        ("GET Last-Event-ID", reqwest::Method::GET, Some(event_id.as_str()), None),
        ("DELETE", reqwest::Method::DELETE, None, None),
    ] {
        let answer = |session: &str| {
            let mut headers = vec![LEGACY, ("mcp-session-id", session)];
            if let Some(id) = extra {
                headers.push(("last-event-id", id));
            }
            let headers: Vec<(String, String)> = headers.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
            let method = method.clone();
            let server = &server;
            async move {
                let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
                let (status, _, text) = tokio::time::timeout(
                    Duration::from_secs(10),
                    send(server, method, BOB, &headers, message.map(body)),
                )
                .await
                .unwrap_or((0, None, "(an open stream: the session was found)".into()));
                (status, text)
            }
        };
        let for_alices = answer(&alice).await;
        let for_nobodys = answer(made_up).await;
        println!("bob's {what} on alice's session: {for_alices:?}");
        assert_eq!(
            for_alices, for_nobodys,
            "{what}: alice's session id answered as an unknown one"
        );
        assert!(!for_alices.1.contains("ALICE-SECRET"), "{what} read alice's output");
        cases += 1;
    }
    // Alice's call ends on her own stream, and her session was not ended.
    let mut rest = String::new();
    while let Ok(Some(chunk)) = running.chunk().await {
        rest.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(rest.contains("ALICE-SECRET"), "alice's answer: {rest}");
    let (status, text) = in_session(&server, ALICE, &alice, &run(3, "echo alice-goes-on")).await;
    assert_eq!(status, 200, "bob's DELETE did not end alice's session: {text}");
    assert!(text.contains("alice-goes-on"), "{text}");
    println!("{cases} requests of bob's on alice's session, each answered as for an unknown session");
    bob_is_answered(&server, "bob tried alice's session").await;
    server.terminate().await;
}

/// A client whose stream broke and who asks again after the call ended still gets the answer
/// (docs/http.md: events are kept 60 s after a call ends).
#[tokio::test]
async fn a_call_resumed_after_it_ended_gets_its_answer() {
    let home = tempfile::tempdir().unwrap();
    let sim = SimProcess::start_logged(&[]);
    let adb = format!("tcp:{}", sim.serial());
    let alice = format!("alice={ALICE}");
    let server = HttpServer::start(&["--adb", &adb, "--token", &alice], &[], home.path()).await;
    let id = session(&server, ALICE).await;
    let mut response = http_client()
        .post(&server.url)
        .header("authorization", format!("Bearer {ALICE}"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header(LEGACY.0, LEGACY.1)
        .header("mcp-session-id", &id)
        .body(body(&run(2, "echo ENDED-CALL")))
        .send()
        .await
        .unwrap();
    let mut first = String::new();
    while !first.contains("\n\n") {
        let chunk = response.chunk().await.unwrap().expect("an event");
        first.push_str(&String::from_utf8_lossy(&chunk));
    }
    drop(response);
    let event_id = first
        .lines()
        .find_map(|l| l.strip_prefix("id:"))
        .expect("an event id")
        .trim()
        .to_string();
    // The device ran it; a second later its answer is long sent.
    assert!(sim.wait_for_log("ENDED-CALL"), "the call reached the device");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let headers = [
        LEGACY,
        ("mcp-session-id", id.as_str()),
        ("last-event-id", event_id.as_str()),
    ];
    let (status, _, text) = tokio::time::timeout(
        Duration::from_secs(20),
        send(&server, reqwest::Method::GET, ALICE, &headers, None),
    )
    .await
    .expect("the resumed stream ends with the answer");
    assert_eq!(status, 200, "{text}");
    assert!(
        text.contains("ENDED-CALL\\n") && text.contains("\"id\":2"),
        "the answer after the end: {text:?}"
    );
    println!("resumed after event {event_id}, the call ended: {} chars", text.len());
    server.terminate().await;
}

/// Cheap-to-send bodies: too many JSON values, too deep, a repeated key. Each is refused with a
/// 400 JSON-RPC error saying what was wrong, 24 of the 4 MiB `[[],[],…]` at once cost the server
/// little memory, and Bob is answered meanwhile.
#[tokio::test]
async fn cheap_bodies_are_refused_without_holding_the_others() {
    let home = tempfile::tempdir().unwrap();
    let server = two_tokens(home.path(), &[]).await;
    let pid = server.pid();
    bob_is_answered(&server, "before").await;
    let before = status_kib(pid, "VmHWM");

    let mut flood = String::with_capacity(4 << 20);
    flood.push('[');
    while flood.len() < (4 << 20) - 8 {
        flood.push_str("[],");
    }
    flood.push_str("[]]");
    let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
    let cases: [(&str, Vec<u8>, &str); 3] = [
        ("4 MiB of []", flood.clone().into_bytes(), "JSON values"),
        ("100 deep", deep.into_bytes(), "deep"),
        (
            "a repeated key",
            br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"cache","arguments":{"operation":"list","operation":"clear"}}}"#.to_vec(),
            "`operation`",
        ),
    ];
    for (what, bytes, says) in cases {
        let (status, _, text) = send(&server, reqwest::Method::POST, ALICE, &[LEGACY], Some(bytes)).await;
        println!("{what}: {status} {}", &text[..text.len().min(300)]);
        assert_eq!(status, 400, "{what}: {text}");
        let error: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what}: {e}: {text}"));
        assert_eq!(error["error"]["code"], -32600, "{what}: {text}");
        assert!(
            error["error"]["message"].as_str().unwrap().contains(says),
            "{what} says {says}: {text}"
        );
    }

    let floods: Vec<_> = (0..24)
        .map(|_| {
            let bytes = flood.clone().into_bytes();
            let server = &server;
            async move {
                send(server, reqwest::Method::POST, ALICE, &[LEGACY], Some(bytes))
                    .await
                    .0
            }
        })
        .collect();
    let bob = async {
        for _ in 0..5 {
            bob_is_answered(&server, "during 24 floods").await;
        }
    };
    let (statuses, ()) = tokio::join!(futures::future::join_all(floods), bob);
    assert!(statuses.iter().all(|s| *s == 400), "each flood refused: {statuses:?}");
    let grown = status_kib(pid, "VmHWM").saturating_sub(before);
    println!("24 floods of 4 MiB at once: peak RSS grew {} MiB", grown / 1024);
    assert!(
        grown < 160 << 10,
        "24 floods at once grew the server's peak by {} MiB",
        grown / 1024
    );
    bob_is_answered(&server, "after").await;
    server.terminate().await;
}

/// A declared `Content-Length` past the bound gets 413 before a byte of the body is sent; a
/// body that stops coming gets 408; a forbidden Origin with either gets 403 first.
#[tokio::test]
async fn oversized_and_stalled_bodies_are_refused_without_waiting_for_them() {
    let home = tempfile::tempdir().unwrap();
    let server = two_tokens(home.path(), &[]).await;
    let host = authority(&server);
    let head = |length: usize, origin: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {ALICE}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{origin}Content-Length: {length}\r\n\r\n"
        )
    };
    let wait = Duration::from_secs(90);
    let big = raw(&server, head(100 << 20, "").as_bytes(), wait)
        .await
        .expect("an answer without the body");
    assert_eq!(status_of(&big), 413, "{big}");
    assert!(big.contains("4194304"), "says the bound: {big}");
    let evil = raw(
        &server,
        head(100 << 20, "Origin: http://evil.example\r\n").as_bytes(),
        wait,
    )
    .await
    .expect("an answer");
    assert_eq!(status_of(&evil), 403, "{evil}");

    let mut stalled = head(100, "").into_bytes();
    stalled.extend_from_slice(br#"{"jsonrpc":"#);
    let (stall, ()) = tokio::join!(raw(&server, &stalled, wait), bob_is_answered(&server, "a body stalled"));
    let stall = stall.expect("the server gives up on a stalled body");
    assert_eq!(status_of(&stall), 408, "{stall}");
    println!(
        "100 MiB declared: {}; stalled body: {}",
        big.lines().next().unwrap(),
        stall.lines().next().unwrap()
    );
    server.terminate().await;
}

/// Connections that drip their header a byte at a time, or send nothing at all, are closed by
/// the server; Bob is answered meanwhile.
#[tokio::test]
async fn dripping_and_idle_connections_are_closed() {
    let home = tempfile::tempdir().unwrap();
    let server = two_tokens(home.path(), &[]).await;
    let idle: Vec<_> = (0..20).map(|_| raw(&server, b"", Duration::from_secs(90))).collect();
    let drip = async {
        let mut stream = TcpStream::connect(authority(&server)).await.unwrap();
        let header = format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nX-Drip: ", authority(&server));
        stream.write_all(header.as_bytes()).await.unwrap();
        // One byte a second for up to 90 s: a write or read fails once the server closed it.
        for _ in 0..90 {
            tokio::time::sleep(Duration::from_secs(1)).await;
            if stream.write_all(b"a").await.is_err() {
                return true;
            }
            let mut byte = [0u8; 512];
            if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(10), stream.read(&mut byte)).await {
                return n == 0 || String::from_utf8_lossy(&byte[..n]).starts_with("HTTP/1.1 408");
            }
        }
        false
    };
    let (idle, dripped, ()) = tokio::join!(
        futures::future::join_all(idle),
        drip,
        bob_is_answered(&server, "20 idle connections and a drip")
    );
    assert!(
        idle.iter().all(Option::is_some),
        "every idle connection was closed by the server"
    );
    assert!(dripped, "the dripping connection was closed by the server");
    println!("20 idle connections and one dripping its header: all closed by the server");
    server.terminate().await;
}

/// Two `Host` headers, an absolute request target naming another authority, and a repeated
/// header the checks read one of: each refused with 400 naming what was wrong.
#[tokio::test]
async fn ambiguous_hosts_and_repeated_headers_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let server = two_tokens(home.path(), &[]).await;
    let host = authority(&server);
    let message = body(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}));
    let request = |target: &str, headers: &str| {
        let mut bytes = format!(
            "POST {target} HTTP/1.1\r\n{headers}Authorization: Bearer {ALICE}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
            message.len()
        )
        .into_bytes();
        bytes.extend_from_slice(&message);
        bytes
    };
    let mut cases = vec![
        (
            "two Host headers",
            request("/mcp", &format!("Host: {host}\r\nHost: evil.example\r\n")),
            "Host",
        ),
        (
            "an absolute target of another authority",
            request("http://evil.example/mcp", &format!("Host: {host}\r\n")),
            "evil.example",
        ),
    ];
    // Authorization and MCP-Protocol-Version are in every request above: one more repeats them.
    for (name, repeated) in [
        (
            "Origin",
            "Origin: http://127.0.0.1\r\nOrigin: http://evil.example\r\n".to_string(),
        ),
        ("Authorization", format!("Authorization: Bearer {BOB}\r\n")),
        (
            "Mcp-Session-Id",
            "Mcp-Session-Id: a\r\nMcp-Session-Id: b\r\n".to_string(),
        ),
        (
            "Last-Event-ID",
            "Last-Event-ID: 0/1\r\nLast-Event-ID: 0/2\r\n".to_string(),
        ),
        (
            "MCP-Protocol-Version",
            "MCP-Protocol-Version: 2025-03-26\r\n".to_string(),
        ),
    ] {
        cases.push((name, request("/mcp", &format!("Host: {host}\r\n{repeated}")), name));
    }
    let total = cases.len();
    for (what, bytes, says) in cases {
        let answer = raw(&server, &bytes, Duration::from_secs(30)).await.expect("an answer");
        println!("{what}: {}", answer.lines().next().unwrap_or_default());
        assert_eq!(status_of(&answer), 400, "{what}: {answer}");
        assert!(answer.contains(says), "{what}: the refusal names {says}: {answer}");
    }
    let fine = raw(
        &server,
        &request(&format!("http://{host}/mcp"), &format!("Host: {host}\r\n")),
        Duration::from_secs(30),
    )
    .await
    .expect("an answer");
    assert_eq!(
        status_of(&fine),
        200,
        "an absolute target naming the Host itself: {fine}"
    );
    println!("{total} ambiguous requests refused with 400; an absolute target naming the Host served");
    bob_is_answered(&server, "after ambiguous requests").await;
    server.terminate().await;
}
