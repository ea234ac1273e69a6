//! Handles, not sessions: MCP 2026-07-28 clients send every request on its own, so a cacheId,
//! a ref, a run and the default device must work from one request to the next; they belong to
//! the principal (the token), and two tokens are isolated. Driven by rmcp's client in both
//! protocol modes over both transports, and by the official Python SDK 2.x `Client`.

use rmcp::ClientServiceExt;
use serde_json::{Value, json};

use crate::common::*;

const ALICE: &str = "alice-0123456789abcdef";
const BOB: &str = "bob-0123456789abcdef0";

/// The journey a model makes with handles: dump → tap by ref → properties → cache get → a
/// script run → script list → select → a call without `device`. Returns what it saw.
async fn journey(client: &McpClient) -> Value {
    let dump = ok(&call(client, "ui", json!({"operation": "dump"})).await);
    let settings = dump["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["label"] == "Settings")
        .unwrap_or_else(|| panic!("Settings in {dump}"))
        .clone();
    let tapped = ok(&call(
        client,
        "ui",
        json!({"operation": "tap", "ref": settings["ref"], "observe": true}),
    )
    .await);
    let props = ok(&call(client, "adb-device", json!({"operation": "properties"})).await);
    let id = props["cacheId"].as_str().unwrap();
    let model = ok(&call(
        client,
        "cache",
        json!({"operation": "get", "id": id, "prefix": "ro.product.model"}),
    )
    .await);
    let run = ok(&call(
        client,
        "script",
        json!({"operation": "run", "code": "console.log((await device.list()).devices.length)"}),
    )
    .await);
    let runs = ok(&call(client, "script", json!({"operation": "list"})).await);
    let device = props["device"].as_str().unwrap();
    ok(&call(client, "adb-device", json!({"operation": "select", "device": device})).await);
    let listed = ok(&call(client, "adb-device", json!({"operation": "list"})).await);
    json!({
        "tappedInto": tapped["observed"]["focused"]["package"],
        "model": model["items"]["ro.product.model"],
        "runListed": runs["runs"].as_array().unwrap().iter().any(|r| r["id"] == run["runId"]),
        "selected": listed["device"] == device,
        "cacheId": id,
        "runId": run["runId"],
        "ref": settings["ref"],
    })
}

fn assert_journey(seen: &Value, how: &str) {
    println!("{how}: {seen}");
    assert_eq!(seen["tappedInto"], "com.android.settings", "{how}: the ref tapped");
    assert_eq!(
        seen["model"], "Pixel 7 (droidmcp sim)",
        "{how}: the cacheId led to its data"
    );
    assert_eq!(seen["runListed"], true, "{how}: the run is listed");
    assert_eq!(seen["selected"], true, "{how}: the default device held");
}

#[tokio::test]
async fn handles_work_across_stateless_requests_on_both_transports_and_legacy_sessions() {
    // stdio, MCP 2026-07-28.
    let home = tempfile::tempdir().unwrap();
    let stdio = Server::new(home.path())
        .args(&["--sim"])
        .transport(Transport::Stdio)
        .era(modern())
        .client()
        .await;
    assert_eq!(stdio.peer_info().unwrap().protocol_version.as_str(), "2026-07-28");
    assert_journey(&journey(&stdio).await, "stdio, 2026-07-28");
    stdio.cancel().await.unwrap();

    // HTTP, MCP 2026-07-28: no session, each request on its own.
    let server = HttpServer::start(&["--sim", "--token", &format!("alice={ALICE}")], &[], home.path()).await;
    let modern_client =
        ().serve_with_lifecycle(server.transport(Some(ALICE)), modern())
            .await
            .expect("server/discover over HTTP");
    assert_eq!(
        modern_client.peer_info().unwrap().protocol_version.as_str(),
        "2026-07-28"
    );
    let seen = journey(&modern_client).await;
    // The home screen again, for the legacy session's own journey.
    ok(&call(&modern_client, "ui", json!({"operation": "key", "name": "HOME"})).await);
    assert_journey(&seen, "HTTP, 2026-07-28");

    // A legacy session of the same token is the same principal: it reads the handles the
    // stateless client made, and makes its own.
    let legacy =
        ().serve_with_lifecycle(server.transport(Some(ALICE)), rmcp::ClientLifecycleMode::Initialize)
            .await
            .expect("initialize over HTTP");
    assert_ne!(legacy.peer_info().unwrap().protocol_version.as_str(), "2026-07-28");
    ok(&call(
        &legacy,
        "cache",
        json!({"operation": "get", "id": seen["cacheId"], "limit": 1}),
    )
    .await);
    assert_journey(&journey(&legacy).await, "HTTP, a legacy session");
    legacy.cancel().await.unwrap();
    modern_client.cancel().await.unwrap();
    server.terminate().await;
}

#[tokio::test]
async fn two_tokens_are_two_principals_that_cannot_see_each_others_handles() {
    let home = tempfile::tempdir().unwrap();
    let (a, b) = (format!("alice={ALICE}"), format!("bob={BOB}"));
    let server = HttpServer::start(&["--sim", "--token", &a, "--token", &b], &[], home.path()).await;
    let alice = ().serve_with_lifecycle(server.transport(Some(ALICE)), modern()).await.unwrap();
    let bob = ().serve_with_lifecycle(server.transport(Some(BOB)), modern()).await.unwrap();
    let seen = journey(&alice).await;
    assert_journey(&seen, "alice");

    // Bob gets, for Alice's handles, the very answer he gets for handles nobody made.
    let same = |theirs: String, nobodys: String, what: &str| {
        println!("bob asking for alice's {what}: {theirs}");
        assert_eq!(theirs, nobodys, "{what}: the answer must not tell that it exists");
    };
    let id = seen["cacheId"].as_str().unwrap();
    let nobody_id = format!("props-{}", ulid::Ulid::generate());
    let ask = |id: String| {
        let bob = &bob;
        async move { err(&call(bob, "cache", json!({"operation": "get", "id": id})).await) }
    };
    same(
        ask(id.to_string()).await.replace(id, "ID"),
        ask(nobody_id.clone()).await.replace(&nobody_id, "ID"),
        "cacheId",
    );
    let run = seen["runId"].as_str().unwrap();
    let nobody_run = ulid::Ulid::generate().to_string();
    let clear = |id: String| {
        let bob = &bob;
        async move { err(&call(bob, "script", json!({"operation": "clear", "id": id})).await) }
    };
    same(
        clear(run.to_string()).await.replace(run, "ID"),
        clear(nobody_run.clone()).await.replace(&nobody_run, "ID"),
        "runId",
    );
    let reference = seen["ref"].as_str().unwrap();
    let tap = |r: &str| {
        let bob = &bob;
        let r = r.to_string();
        async move { err(&call(bob, "ui", json!({"operation": "tap", "ref": r})).await) }
    };
    same(
        tap(reference).await.replace(reference, "REF"),
        tap("e999").await.replace("e999", "REF"),
        "ref",
    );
    let runs = ok(&call(&bob, "script", json!({"operation": "list"})).await);
    assert_eq!(runs["runs"], json!([]), "bob lists none of alice's runs");
    let resources = bob.list_all_resources().await.unwrap();
    assert!(
        !resources.iter().any(|r| r.uri.contains(id)),
        "bob's resources hold none of alice's entries"
    );
    // Alice's default device is hers: Bob's list names none.
    let listed = ok(&call(&bob, "adb-device", json!({"operation": "list"})).await);
    assert!(listed.get("device").is_none_or(Value::is_null), "{listed}");
    // And Alice still has all of hers.
    ok(&call(&alice, "cache", json!({"operation": "get", "id": id, "limit": 1})).await);
    alice.cancel().await.unwrap();
    bob.cancel().await.unwrap();
    server.terminate().await;
}

/// Twenty principals, each storing an output of 4.1 MB (83 MB in all), under
/// `--sessions-cache-mib 64`: their caches together stay within it.
#[tokio::test]
async fn twenty_principals_stay_within_the_shared_cache_bound() {
    let home = tempfile::tempdir().unwrap();
    let names: Vec<(String, String)> = (0..20)
        .map(|i| (format!("p{i}"), format!("token-{i:02}-0123456789abcdef")))
        .collect();
    let file = home.path().join("tokens");
    let lines: Vec<String> = names.iter().map(|(n, t)| format!("{n}={t}")).collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let args = [
        "--sim",
        "--tokens-file",
        file.to_str().unwrap(),
        "--sessions-cache-mib",
        "64",
    ];
    let server = HttpServer::start(&args, &[], home.path()).await;
    let pid = server.pid();
    let before = status_kib(pid, "VmRSS") / 1024;
    let mut clients = Vec::new();
    for (_, token) in &names {
        clients.push(
            ().serve_with_lifecycle(server.transport(Some(token)), modern())
                .await
                .unwrap(),
        );
    }
    for client in &clients {
        ok(&call(
            client,
            "adb-shell",
            json!({"operation": "run", "command": "seq 1 600000"}),
        )
        .await);
        ok(&call(client, "adb-device", json!({"operation": "properties"})).await);
    }
    let mut total = 0u64;
    for client in &clients {
        let stats = ok(&call(client, "cache", json!({"operation": "stats"})).await);
        total += stats["stats"]["bytes"]
            .as_u64()
            .unwrap_or_else(|| panic!("bytes in {stats}"));
    }
    let after = status_kib(pid, "VmRSS") / 1024;
    println!(
        "20 principals, 83 MB stored: their caches hold {} MiB together (bound 64); server RSS {before} MiB before, {after} MiB after",
        total >> 20
    );
    assert!(total <= 64 << 20, "{total} bytes held");
    for client in clients {
        client.cancel().await.unwrap();
    }
    server.terminate().await;
}

/// The official MCP Python SDK 2.x `Client`, mode "auto", over HTTP and stdio: a client we did
/// not write makes the journey (tests/clients/python_journey.py).
#[tokio::test]
async fn the_official_python_sdk_client_keeps_its_handles() {
    let has_sdk = std::process::Command::new("python3")
        .args(["-c", "import mcp, httpx2; from mcp import Client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_sdk {
        skip_or_fail("the MCP Python SDK 2.x is not installed (pip install 'mcp>=2,<3')");
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/python_journey.py");
    let home = tempfile::tempdir().unwrap();
    let server = HttpServer::start(&["--sim", "--token", &format!("alice={ALICE}")], &[], home.path()).await;
    let run = |args: Vec<String>| {
        let home = home.path().to_path_buf();
        async move {
            let out = tokio::process::Command::new("python3")
                .arg(script)
                .args(args)
                .env("HOME", home)
                .output()
                .await
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
            serde_json::from_str::<Value>(stdout.trim()).unwrap()
        }
    };
    for (how, args) in [
        ("HTTP", vec!["http".to_string(), server.url.clone(), ALICE.to_string()]),
        (
            "stdio",
            vec!["stdio".to_string(), env!("CARGO_BIN_EXE_droidmcp").to_string()],
        ),
    ] {
        let seen = run(args).await;
        println!("Python SDK over {how}: {seen}");
        assert_eq!(seen["protocol"], "2026-07-28", "{how}");
        assert_eq!(seen["tappedInto"], "com.android.settings", "{how}");
        assert_eq!(seen["flowPreview"], json!(["1 tap text \"Settings\""]), "{how}");
        assert!(
            seen["model"].as_str().unwrap().contains("Pixel 7 (droidmcp sim)"),
            "{how}"
        );
        assert_eq!(seen["runListed"], true, "{how}");
        // The script's one tool call came as progress, to a client we did not write.
        assert_eq!(
            seen["scriptProgress"],
            json!([[1.0, "001 adb-device list ok"]]),
            "{how}"
        );
        assert!(seen["resourceChars"].as_u64().unwrap() > 10_000, "{how}");
    }
    server.terminate().await;
}

/// A client that takes the Tasks extension.
#[derive(Clone)]
pub(crate) struct TaskClient;

impl rmcp::ClientHandler for TaskClient {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::builder().enable_tasks().build(),
            rmcp::model::Implementation::new("droidmcp-tests", "0"),
        )
    }
}

/// A long call (a script run) from a client that takes tasks runs as a task of its principal:
/// polled to its result, cancelled on request; another token cannot see it; a short call, and
/// any call from a client without the extension, answers as always.
#[tokio::test]
async fn long_calls_run_as_tasks_for_clients_that_take_them() {
    use rmcp::model::{CallToolRequestParams, CallToolResponse, GetTaskParams, TaskPayload};
    let home = tempfile::tempdir().unwrap();
    let (a, b) = (format!("alice={ALICE}"), format!("bob={BOB}"));
    let server = HttpServer::start(&["--sim", "--token", &a, "--token", &b], &[], home.path()).await;
    let alice = TaskClient
        .serve_with_lifecycle(server.transport(Some(ALICE)), modern())
        .await
        .unwrap();
    let bob = TaskClient
        .serve_with_lifecycle(server.transport(Some(BOB)), modern())
        .await
        .unwrap();
    let args = |value: Value| value.as_object().cloned().unwrap();
    let run = CallToolRequestParams::new("script").with_arguments(args(
        json!({"operation": "run", "code": "await sleep(300); console.log((await device.list()).devices.length)"}),
    ));
    let CallToolResponse::Task(created) = alice.call_tool_once(run).await.unwrap() else {
        panic!("a script run from a client that takes tasks is a task");
    };
    let id = created.task.task_id.clone();
    // Bob cannot see it: the same answer as for a task nobody made.
    let theirs = bob
        .peer()
        .get_task(GetTaskParams::new(id.clone()))
        .await
        .unwrap_err()
        .to_string();
    let nobodys = bob
        .peer()
        .get_task(GetTaskParams::new("no-such-task"))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(theirs.replace(&id, "ID"), nobodys.replace("no-such-task", "ID"));
    let done = loop {
        let got = alice.peer().get_task(GetTaskParams::new(id.clone())).await.unwrap();
        if got.task.status().is_terminal() {
            break got.task;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let TaskPayload::Completed { result } = done.payload else {
        panic!("completed: {:?}", done.payload);
    };
    let output = result["structuredContent"]["output"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    println!("a script run as a task: {output:?}");
    assert_eq!(output.trim(), "1");

    // A busy script, cancelled: the task ends cancelled.
    let busy = CallToolRequestParams::new("script").with_arguments(args(
        json!({"operation": "run", "code": "for (;;) {}", "timeoutMs": 60000}),
    ));
    let CallToolResponse::Task(created) = alice.call_tool_once(busy).await.unwrap() else {
        panic!("a task");
    };
    alice
        .peer()
        .cancel_task(rmcp::model::CancelTaskParams::new(created.task.task_id.clone()))
        .await
        .unwrap();
    let ended = loop {
        let got = alice
            .peer()
            .get_task(GetTaskParams::new(created.task.task_id.clone()))
            .await
            .unwrap();
        if got.task.status().is_terminal() {
            break got.task;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert!(matches!(ended.payload, TaskPayload::Cancelled), "{:?}", ended.payload);

    // A short call answers at once, even for a client that takes tasks.
    ok(&call(&alice, "adb-device", json!({"operation": "list"})).await);
    alice.cancel().await.unwrap();
    bob.cancel().await.unwrap();
    server.terminate().await;
}

/// `server/discover` as MCP 2026-07-28 asks it, by hand: the versions served (legacy and
/// current), the capabilities (tools, resources, the Tasks extension), the instructions and
/// `resultType`; an unsupported version gets -32022 with the supported list.
#[tokio::test]
async fn server_discover_names_the_versions_capabilities_and_refuses_an_unknown_version() {
    let home = tempfile::tempdir().unwrap();
    let server = HttpServer::start(&["--sim"], &[], home.path()).await;
    let discover = |version: &'static str| {
        let url = server.url.clone();
        async move {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": version,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}}}});
            let text = http_client()
                .post(url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", version)
                .header("mcp-method", "server/discover")
                .body(body.to_string())
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            // A JSON body, or one SSE event.
            let json = text
                .lines()
                .find_map(|l| l.strip_prefix("data:"))
                .unwrap_or(&text)
                .trim()
                .to_string();
            serde_json::from_str::<Value>(&json).unwrap_or_else(|e| panic!("{e}: {text}"))
        }
    };
    let found = discover("2026-07-28").await;
    println!("server/discover: {found}");
    let result = &found["result"];
    let versions = result["supportedVersions"].as_array().unwrap();
    assert!(
        versions.contains(&json!("2026-07-28")) && versions.contains(&json!("2025-11-25")),
        "{found}"
    );
    assert_eq!(result["resultType"], "complete");
    assert!(result["capabilities"]["tools"].is_object() && result["capabilities"]["resources"].is_object());
    assert!(
        result["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "{found}"
    );
    assert!(result["instructions"].as_str().unwrap().contains("cacheId"));
    let refused = discover("2099-01-01").await;
    assert_eq!(refused["error"]["code"], -32022, "{refused}");
    assert!(
        refused["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    server.terminate().await;
}

/// Claude Code (npm `@anthropic-ai/claude-code`), a client we did not write: `claude mcp add`
/// then `claude mcp list` connects to droidmcp over stdio and over HTTP with a token, without a
/// model (its health check), in a HOME of its own.
#[tokio::test]
async fn claude_code_connects_over_stdio_and_http() {
    if std::process::Command::new("claude").arg("--version").output().is_err() {
        skip_or_fail("Claude Code is not installed (npm i -g @anthropic-ai/claude-code)");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let server = HttpServer::start(&["--sim", "--token", &format!("claude={ALICE}")], &[], home.path()).await;
    let claude_home = tempfile::tempdir().unwrap();
    let claude = |args: &[&str]| {
        let out = std::process::Command::new("claude")
            .args(args)
            .env("HOME", claude_home.path())
            .current_dir(claude_home.path())
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "claude {args:?}: {said}");
        said
    };
    claude(&["mcp", "add", "droidmcp", "--", env!("CARGO_BIN_EXE_droidmcp"), "--sim"]);
    let header = format!("Authorization: Bearer {ALICE}");
    claude(&[
        "mcp",
        "add",
        "--transport",
        "http",
        "droidmcp-http",
        &server.url,
        "--header",
        &header,
    ]);
    let listed = claude(&["mcp", "list"]);
    println!("claude mcp list:\n{listed}");
    for name in ["droidmcp:", "droidmcp-http:"] {
        let line = listed
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} in {listed}"));
        assert!(line.contains("Connected"), "{line}");
    }
    server.terminate().await;
}

/// A principal idle for `--session-idle-secs` loses its state, as an idle session did, and its
/// old cacheId says so; a principal that keeps calling keeps its own.
#[tokio::test]
async fn an_idle_principals_state_expires() {
    let home = tempfile::tempdir().unwrap();
    let (a, b) = (format!("alice={ALICE}"), format!("bob={BOB}"));
    let args = ["--sim", "--token", &a, "--token", &b, "--session-idle-secs", "1"];
    let server = HttpServer::start(&args, &[], home.path()).await;
    let alice = ().serve_with_lifecycle(server.transport(Some(ALICE)), modern()).await.unwrap();
    let bob = ().serve_with_lifecycle(server.transport(Some(BOB)), modern()).await.unwrap();
    let id = |answer: Value| answer["cacheId"].as_str().unwrap().to_string();
    let alices = id(ok(&call(&alice, "adb-device", json!({"operation": "properties"})).await));
    let bobs = id(ok(&call(&bob, "adb-device", json!({"operation": "properties"})).await));
    // Bob keeps calling every 300 ms for 2.5 s; Alice says nothing.
    for _ in 0..8 {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        ok(&call(&bob, "cache", json!({"operation": "get", "id": bobs, "limit": 1})).await);
    }
    let gone = err(&call(&alice, "cache", json!({"operation": "get", "id": alices})).await);
    println!("alice after 2.5 s idle: {gone}");
    assert!(
        gone.contains("went with this client's earlier state") && gone.contains("--session-idle-secs"),
        "{gone}"
    );
    alice.cancel().await.unwrap();
    bob.cancel().await.unwrap();
    server.terminate().await;
}
