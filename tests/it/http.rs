//! `droidmcp serve --http`: the bearer token and Origin checks (nothing reaches a device
//! before they pass), the refusal of an open bind without a token, session isolation, one cache
//! bound shared by all sessions, a broken answer stream resumed with `Last-Event-ID`, and the
//! official MCP Inspector CLI listing and calling the tools over HTTP.

use std::process::Stdio;

use crate::common::{HttpServer, SimProcess, call, err, http_client, ok, status_kib};
use rmcp::ServiceExt;
use serde_json::{Value, json};

const TOKEN: &str = "test-token-0123456789abcdef";

/// One raw JSON-RPC POST to the MCP endpoint: status, the session id it gave, the body.
async fn post(
    server: &HttpServer,
    token: Option<&str>,
    origin: Option<&str>,
    session: Option<&str>,
    body: Value,
) -> (u16, Option<String>, String) {
    let mut request = http_client()
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.body(body.to_string()).send().await.expect("HTTP request");
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let text = if status == 200 && body.get("id").is_some() {
        // The answer is one SSE event; read up to it.
        let mut response = response;
        let mut text = String::new();
        while let Ok(Some(chunk)) = response.chunk().await {
            text.push_str(&String::from_utf8_lossy(&chunk));
            if text.contains("\"result\"") || text.contains("\"error\"") {
                break;
            }
        }
        text
    } else {
        response.text().await.unwrap_or_default()
    };
    (status, session, text)
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
}

#[tokio::test]
async fn a_wrong_token_or_origin_is_refused_before_the_device_hears_of_it() {
    let home = tempfile::tempdir().unwrap();
    let sim = SimProcess::start_logged(&[]);
    let adb = format!("tcp:{}", sim.serial());
    let server = HttpServer::start(&["--adb", &adb, "--token", TOKEN], &[], home.path()).await;

    let (status, _, body) = post(&server, None, None, None, initialize()).await;
    assert_eq!(status, 401, "no token: {body}");
    assert!(body.contains("Bearer"), "the refusal says what to send: {body}");
    let (status, ..) = post(&server, Some("test-token-0123456789abcdeX"), None, None, initialize()).await;
    assert_eq!(status, 401, "a wrong token of the same length");
    let (status, ..) = post(&server, Some("short"), None, None, initialize()).await;
    assert_eq!(status, 401, "a wrong token of another length");

    // A real session, then a call to the device sent with each wrong credential.
    let (status, session, _) = post(&server, Some(TOKEN), None, None, initialize()).await;
    assert_eq!(status, 200);
    let session = session.expect("Mcp-Session-Id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, ..) = post(&server, Some(TOKEN), None, Some(&session), initialized).await;
    assert_eq!(status, 202);
    let shell = |marker: &str| {
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "adb-shell", "arguments": {"operation": "run", "command": format!("echo {marker}")}}})
    };
    let (status, ..) = post(&server, None, None, Some(&session), shell("MARKER-NO-TOKEN")).await;
    assert_eq!(status, 401);
    let (status, ..) = post(&server, Some("x"), None, Some(&session), shell("MARKER-BAD-TOKEN")).await;
    assert_eq!(status, 401);
    let evil = Some("http://evil.example");
    let (status, _, body) = post(&server, Some(TOKEN), evil, Some(&session), shell("MARKER-ORIGIN")).await;
    assert_eq!(status, 403, "a browser page of another origin: {body}");
    let (status, _, body) = post(&server, Some(TOKEN), None, Some(&session), shell("MARKER-GOOD")).await;
    assert_eq!(status, 200);
    assert!(body.contains("MARKER-GOOD"), "{body}");
    assert!(sim.wait_for_log("MARKER-GOOD"), "the accepted call reached the device");
    let log = sim.log();
    for refused in ["MARKER-NO-TOKEN", "MARKER-BAD-TOKEN", "MARKER-ORIGIN"] {
        assert!(!log.contains(refused), "{refused} reached the device");
    }
    assert!(
        !server.log.lock().unwrap().contains(TOKEN),
        "the token never reaches the log"
    );
    println!("401 without or with a wrong token, 403 for a foreign Origin; 3 refused calls, none reached the device");
    server.terminate().await;
}

#[tokio::test]
async fn an_open_bind_needs_a_long_token() {
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_droidmcp"))
            .args(args)
            .env("HOME", home.path())
            .env_remove("DROIDMCP_TOKEN")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let open = run(&["serve", "--http", "0.0.0.0:0", "--sim"]);
    assert!(!open.status.success());
    let said = String::from_utf8_lossy(&open.stderr);
    assert!(
        said.contains("not a loopback address") && said.contains("--token"),
        "{said}"
    );
    let short = run(&["serve", "--http", "127.0.0.1:0", "--sim", "--token", "abc"]);
    assert!(String::from_utf8_lossy(&short.stderr).contains("shorter than 16"));
    // Closed by default: even on loopback, no token takes an explicit --no-auth.
    let bare = run(&["serve", "--http", "127.0.0.1:0", "--sim"]);
    assert!(!bare.status.success());
    let said = String::from_utf8_lossy(&bare.stderr);
    assert!(said.contains("needs a token") && said.contains("--no-auth"), "{said}");
    println!(
        "serve --http without a token: exit {:?}, {}",
        bare.status.code(),
        said.trim()
    );
    // A token in the environment (a team's shell profile) leaves stdio and `call` working.
    let stdio = std::process::Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .args(["call", "adb-device", r#"{"operation":"list"}"#, "--sim"])
        .env("HOME", home.path())
        .env("DROIDMCP_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert!(stdio.status.success(), "{}", String::from_utf8_lossy(&stdio.stderr));
}

/// Two tokens are two principals: one cannot read the other's cache entries, run files or runs
/// (`principals.rs` checks refs, and that the answers do not tell whether they exist).
#[tokio::test]
async fn one_principal_cannot_read_another_principals_cache_or_runs() {
    let home = tempfile::tempdir().unwrap();
    let ws = home.path().join("ws");
    let (file, tokens) = tokens_file(home.path(), 2);
    let server = HttpServer::start(
        &[
            "--sim",
            "--tokens-file",
            file.to_str().unwrap(),
            "--workspace",
            ws.to_str().unwrap(),
        ],
        &[],
        home.path(),
    )
    .await;
    let a = ().serve(server.transport(Some(&tokens[0]))).await.expect("session A");
    let b = ().serve(server.transport(Some(&tokens[1]))).await.expect("session B");

    let props = ok(&call(&a, "adb-device", json!({"operation": "properties"})).await);
    let id = props["cacheId"].as_str().unwrap();
    ok(&call(&a, "cache", json!({"operation": "get", "id": id, "limit": 1})).await);
    let refused = err(&call(&b, "cache", json!({"operation": "get", "id": id})).await);
    assert!(refused.contains("unknown to this client"), "{refused}");
    println!("session B asking for session A's {id}: {refused}");
    let listed = ok(&call(&b, "cache", json!({"operation": "list"})).await);
    assert!(
        !listed.to_string().contains(id),
        "B's listing shows none of A's entries"
    );

    let run = ok(&call(
        &a,
        "script",
        json!({"operation": "run", "code": "await device.list(); console.log(1)"}),
    )
    .await);
    let result = format!("{}/results/001-device-list.json", run["runId"].as_str().unwrap());
    ok(&call(&a, "cache", json!({"operation": "get", "id": result})).await);
    let refused = err(&call(&b, "cache", json!({"operation": "get", "id": result})).await);
    assert!(refused.contains("another session"), "{refused}");
    let runs = ok(&call(&b, "script", json!({"operation": "list"})).await);
    assert_eq!(runs["runs"], json!([]), "B sees none of A's runs");
    let clear = err(&call(&b, "script", json!({"operation": "clear", "id": run["runId"]})).await);
    assert!(clear.contains("another session"), "{clear}");

    // Both still see the same device, and A's default device choice is A's alone.
    let la = ok(&call(&a, "adb-device", json!({"operation": "list"})).await);
    let lb = ok(&call(&b, "adb-device", json!({"operation": "list"})).await);
    assert_eq!(la["devices"], lb["devices"]);
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
    server.terminate().await;
}

/// All principals' caches together stay within `--sessions-cache-mib`: past it, the principal
/// that stores gives up its own oldest entry, never another's.
#[tokio::test]
async fn principals_share_one_cache_bound_and_the_one_storing_makes_room() {
    let home = tempfile::tempdir().unwrap();
    let (file, tokens) = tokens_file(home.path(), 2);
    let args = [
        "--sim",
        "--tokens-file",
        file.to_str().unwrap(),
        "--cache-mib",
        "1",
        "--sessions-cache-mib",
        "1",
    ];
    let server = HttpServer::start(&args, &[], home.path()).await;
    let a = ().serve(server.transport(Some(&tokens[0]))).await.expect("session A");
    let b = ().serve(server.transport(Some(&tokens[1]))).await.expect("session B");
    // 469 KB of output each: two fit in 1 MiB, three do not.
    let big = |session| async move {
        let out = ok(&call(
            session,
            "adb-shell",
            json!({"operation": "run", "command": "seq 1 80000"}),
        )
        .await);
        out["stdoutCacheId"]
            .as_str()
            .expect("a cacheId for the whole output")
            .to_string()
    };
    let a1 = big(&a).await;
    let b1 = big(&b).await;
    let b2 = big(&b).await;
    ok(&call(&a, "cache", json!({"operation": "get", "id": a1, "limit": 1})).await);
    ok(&call(&b, "cache", json!({"operation": "get", "id": b2, "limit": 1})).await);
    let gone = err(&call(&b, "cache", json!({"operation": "get", "id": b1})).await);
    assert!(gone.contains("evicted"), "{gone}");
    let stats = ok(&call(&b, "cache", json!({"operation": "stats"})).await);
    println!("session B after storing past the shared bound: {stats}");
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
    server.terminate().await;
}

/// A client whose answer stream broke asks again with `Last-Event-ID` (a GET) and gets the
/// answer it missed: rmcp's session manager keeps each request's events (60 s once done).
#[tokio::test]
async fn a_broken_answer_stream_is_resumed_with_last_event_id() {
    let home = tempfile::tempdir().unwrap();
    let server = HttpServer::start(&["--sim", "--token", TOKEN], &[], home.path()).await;
    let (status, session, _) = post(&server, Some(TOKEN), None, None, initialize()).await;
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, _) = post(&server, Some(TOKEN), None, Some(&session), initialized).await;
    assert_eq!(status, 202);

    let client = http_client();
    let with_headers = |request: reqwest::RequestBuilder| {
        request
            .header("authorization", format!("Bearer {TOKEN}"))
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .header("mcp-session-id", &session)
    };
    let slow = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "adb-shell",
        "arguments": {"operation": "run", "command": "sleep 1; echo resumed"}}});
    let mut response = with_headers(client.post(&server.url))
        .header("content-type", "application/json")
        .body(slow.to_string())
        .send()
        .await
        .expect("POST tools/call");
    assert_eq!(response.status().as_u16(), 200);
    // Read the first event only (it carries an id), then hang up before the answer.
    let mut first = String::new();
    while !first.contains("\n\n") {
        let chunk = response.chunk().await.expect("read").expect("an event before the end");
        first.push_str(&String::from_utf8_lossy(&chunk));
    }
    let event_id = first
        .lines()
        .find_map(|line| line.strip_prefix("id:"))
        .unwrap_or_else(|| panic!("no event id in {first:?}"))
        .trim()
        .to_string();
    assert!(
        !first.contains("resumed"),
        "the answer came before the hang-up: {first}"
    );
    drop(response);

    let mut resumed = with_headers(client.get(&server.url))
        .header("last-event-id", &event_id)
        .send()
        .await
        .expect("GET with Last-Event-ID");
    assert_eq!(resumed.status().as_u16(), 200);
    let mut text = String::new();
    let read = async {
        while let Ok(Some(chunk)) = resumed.chunk().await {
            text.push_str(&String::from_utf8_lossy(&chunk));
            if text.contains("resumed") {
                break;
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(20), read)
        .await
        .expect("the resumed stream brought the answer within 20 s");
    assert!(text.contains("\"id\":2") && text.contains("resumed\\n"), "{text}");
    println!("resumed after event {event_id}: {} chars", text.len());
    server.terminate().await;
}

/// The official MCP Inspector's CLI lists and calls the tools over HTTP.
#[tokio::test]
async fn the_mcp_inspector_cli_lists_and_calls_tools_over_http() {
    let Some(inspector) = inspector_command() else {
        crate::common::skip_or_fail(
            "the MCP Inspector CLI is not installed (npm i -g @modelcontextprotocol/inspector)",
        );
        return;
    };
    let home = tempfile::tempdir().unwrap();
    // On loopback without a token: this Inspector CLI sends no headers of its own choosing.
    let server = HttpServer::start(&["--sim"], &[], home.path()).await;
    let run = |extra: &[&str]| {
        let mut command = std::process::Command::new(&inspector[0]);
        command
            .args(&inspector[1..])
            .args(["--cli", &server.url, "--transport", "http"]);
        command.args(extra).stdin(Stdio::null());
        let out = command.output().expect("run the inspector");
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "inspector {extra:?}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str::<Value>(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
    };
    let tools = run(&["--method", "tools/list"]);
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 8, "{names:?}");
    // It does not offer MCP Apps: no device panel declared, linked or listed (tests/it/panel.rs).
    assert!(
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t.get("_meta").is_none()),
        "{tools}"
    );
    assert!(names.contains(&"adb-device") && names.contains(&"script"));
    let listed = run(&[
        "--method",
        "tools/call",
        "--tool-name",
        "adb-device",
        "--tool-arg",
        "operation=list",
    ]);
    let text = listed.to_string();
    assert!(text.contains("emulator") || text.contains("127.0.0.1"), "{text}");
    println!(
        "MCP Inspector CLI over HTTP: tools/list gave {} tools; tools/call adb-device list answered",
        names.len()
    );
    server.terminate().await;
}

/// `mcp-inspector` when installed globally, else none (npx would download it mid-test).
fn inspector_command() -> Option<Vec<String>> {
    let found = std::process::Command::new("mcp-inspector")
        .arg("--help")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    found.then(|| vec!["mcp-inspector".to_string()])
}

/// The bearer scheme in any case is accepted; a token of another length is refused like any
/// wrong one.
#[tokio::test]
async fn the_bearer_scheme_is_matched_in_any_case() {
    let home = tempfile::tempdir().unwrap();
    let server = HttpServer::start(&["--sim", "--token", TOKEN], &[], home.path()).await;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let post = |authorization: String| {
        let url = server.url.clone();
        async move {
            http_client()
                .post(url)
                .header("authorization", authorization)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(init)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    assert_eq!(post(format!("bearer {TOKEN}")).await, 200);
    assert_eq!(post(format!("BEARER {TOKEN}")).await, 200);
    assert_eq!(post(format!("Bearer {TOKEN}x")).await, 401);
    assert_eq!(post("Bearer x".into()).await, 401);
    server.terminate().await;
}

/// A body that is not JSON, or JSON that is no message, gets 400 and a JSON-RPC error (-32700 or
/// -32600, with the request's id where it has one), never rmcp's plain-text 415; the server then
/// serves the next request as before.
#[tokio::test]
async fn unreadable_bodies_get_json_rpc_errors_and_the_server_goes_on() {
    let home = tempfile::tempdir().unwrap();
    let server = HttpServer::start(&["--sim", "--token", TOKEN], &[], home.path()).await;
    let raw = |body: Vec<u8>| {
        let url = server.url.clone();
        async move {
            let response = http_client()
                .post(url)
                .header("authorization", format!("Bearer {TOKEN}"))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(body)
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            let kind = response
                .headers()
                .get("content-type")
                .map(|v| v.to_str().unwrap().to_string());
            (status, kind, response.text().await.unwrap())
        }
    };
    let cases: [(&[u8], i64, Value); 4] = [
        (b"\xff\xfe{\"jsonrpc\"", -32700, Value::Null),
        (br#"{"jsonrpc":"2.0","id":3,"method":"initialize""#, -32700, Value::Null),
        (b"[]", -32600, Value::Null),
        (br#"{"jsonrpc":"2.0","id":"x7","params":{}}"#, -32600, json!("x7")),
    ];
    for (body, code, id) in cases {
        let (status, kind, text) = raw(body.to_vec()).await;
        println!("{:?} -> {status} {text}", String::from_utf8_lossy(body));
        assert_eq!(status, 400, "{text}");
        assert_eq!(kind.as_deref(), Some("application/json"));
        let error: Value = serde_json::from_str(&text).expect("a JSON-RPC error object");
        assert_eq!(error["error"]["code"], code, "{text}");
        assert_eq!(error["id"], id, "{text}");
    }
    let (status, _, _) = post(&server, Some(TOKEN), None, None, initialize()).await;
    assert_eq!(status, 200, "the server goes on");
    server.terminate().await;
}

/// Past --max-sessions (per token), with every session busy (each holds its stream open), a
/// new session gets 503 with the reason; the open ones go on. The streams are raw GETs whose
/// answers have begun, so every session is busy before the 65th arrives (an rmcp client opens
/// its stream in the background, which raced the 65th under load).
#[tokio::test]
async fn sessions_past_the_bound_get_503() {
    let home = tempfile::tempdir().unwrap();
    let server = HttpServer::start(&["--sim", "--max-sessions", "64"], &[], home.path()).await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let mut sessions = Vec::new();
    let mut streams = Vec::new();
    for _ in 0..64 {
        let (status, session, body) = post(&server, None, None, None, initialize()).await;
        assert_eq!(status, 200, "a session within the bound: {body}");
        let session = session.expect("Mcp-Session-Id");
        let (status, ..) = post(&server, None, None, Some(&session), initialized.clone()).await;
        assert_eq!(status, 202);
        let stream = http_client()
            .get(server.url.clone())
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-06-18")
            .send()
            .await
            .unwrap();
        assert_eq!(stream.status().as_u16(), 200, "the session's stream opens");
        streams.push(stream);
        sessions.push(session);
    }
    let (status, session, why) = post(&server, None, None, None, initialize()).await;
    assert_eq!(status, 503, "{why}");
    assert_eq!(session, None, "a refused session gets no id");
    assert!(why.contains("--max-sessions 64"), "{why}");
    println!("the 65th session against --max-sessions 64: 503, {}", why.trim());
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "adb-device", "arguments": {"operation": "list"}}});
    for session in [&sessions[0], &sessions[63]] {
        let (status, _, body) = post(&server, None, None, Some(session), list.clone()).await;
        assert_eq!(status, 200, "an open session goes on: {body}");
        assert!(body.contains("\"result\""), "{body}");
        assert!(!body.contains("\"isError\":true"), "{body}");
    }
    drop(streams);
    server.terminate().await;
}

/// A tokens file of `n` principals (`p0`…), and their tokens.
fn tokens_file(dir: &std::path::Path, n: usize) -> (std::path::PathBuf, Vec<String>) {
    let tokens: Vec<String> = (0..n).map(|i| format!("token-{i:02}-0123456789abcdef")).collect();
    let lines: Vec<String> = tokens.iter().enumerate().map(|(i, t)| format!("p{i}={t}")).collect();
    let file = dir.join("tokens");
    std::fs::write(&file, lines.join("\n")).unwrap();
    (file, tokens)
}

/// The bound all principals share holds strictly: ten principals each storing a 4M-line output
/// (31 MB) under `--sessions-cache-mib 64` keep the server within that bound plus a small
/// overhead each; an entry the pool has no room for keeps its head and tail, and says so.
#[tokio::test]
async fn ten_principals_of_big_outputs_stay_within_the_shared_bound() {
    let sim = SimProcess::start(&[]);
    let home = tempfile::tempdir().unwrap();
    let target = format!("tcp:{}", sim.addr);
    let (file, tokens) = tokens_file(home.path(), 10);
    let args = [
        "--adb",
        &target,
        "--sessions-cache-mib",
        "64",
        "--tokens-file",
        file.to_str().unwrap(),
    ];
    let server = HttpServer::start(&args, &[], home.path()).await;
    let pid = server.pid();
    let mut sessions = Vec::new();
    for token in &tokens {
        sessions.push(().serve(server.transport(Some(token))).await.expect("a session"));
    }
    ok(&call(&sessions[0], "adb-device", json!({"operation": "list"})).await);
    let idle = status_kib(pid, "VmRSS") / 1024;
    let mut cut = 0;
    for session in &sessions {
        let out = ok(&call(
            session,
            "adb-shell",
            json!({"operation": "run", "command": "seq 1 4000000"}),
        )
        .await);
        let id = out["stdoutCacheId"].as_str().expect("an id for the output").to_string();
        let last = ok(&call(
            session,
            "cache",
            json!({"operation": "get", "id": id, "filter": "dropped here"}),
        )
        .await);
        if last["matching"].as_u64().unwrap_or(0) > 0 {
            cut += 1;
        }
    }
    let after = status_kib(pid, "VmRSS") / 1024;
    let bound = idle + 64 + 16 * 10;
    println!(
        "ten principals × 31 MB outputs under --sessions-cache-mib 64: RSS {idle} MiB idle, {after} MiB after (bound {bound}); {cut} entries kept head and tail"
    );
    assert!(after <= bound, "RSS {after} MiB past {bound}");
    assert!(cut >= 8, "most entries found the pool full: {cut}");
    for session in sessions {
        session.cancel().await.unwrap();
    }
    server.terminate().await;
}
