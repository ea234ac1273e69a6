//! The MCP server end to end: the built binary spoken to with rmcp's client over stdio, against
//! the simulator, both through a real adb server and straight over TCP.

use std::collections::BTreeSet;

use crate::common::*;
use rmcp::model::ReadResourceRequestParams;
use serde_json::{Value, json};

#[tokio::test]
async fn initialize_names_the_server_and_tools_list_is_small_with_schemas_and_annotations() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let info = client.peer_info().expect("server info");
    let implementation = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(implementation.name, "droidmcp");
    assert_eq!(implementation.version, env!("CARGO_PKG_VERSION"));
    assert!(info.instructions.as_deref().unwrap_or("").contains("cache get"));

    let tools = client.list_all_tools().await.unwrap();
    let names: BTreeSet<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        names.is_superset(&BTreeSet::from([
            "adb-device",
            "adb-app",
            "adb-logcat",
            "adb-shell",
            "cache"
        ])),
        "{names:?}"
    );
    for tool in &tools {
        assert!(tool.output_schema.is_some(), "{} has no outputSchema", tool.name);
        let a = tool
            .annotations
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no annotations", tool.name));
        // readOnlyHint and idempotentHint are left at their default (false) but where they hold.
        assert!(a.destructive_hint.is_some() && a.open_world_hint.is_some());
        assert!(
            tool.input_schema
                .get("properties")
                .is_some_and(|p| p.get("operation").is_some())
        );
    }
    // The part a model reads on every turn: names, descriptions, input schemas, annotations.
    // (Output schemas are for clients; the whole list stays within 12,000, tested with them.)
    let without_outputs: Vec<_> = tools
        .iter()
        .cloned()
        .map(|mut t| {
            t.output_schema = None;
            t
        })
        .collect();
    let size = serde_json::to_string(&json!({ "tools": without_outputs }))
        .unwrap()
        .chars()
        .count();
    println!("tools/list: {} tools, {size} chars without output schemas", tools.len());
    assert!(size <= 6000, "tools/list is {size} chars, over the 6,000-char goal");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn properties_summary_is_small_and_cache_get_serves_every_property_through_pages_and_resources() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;

    let result = call(&client, "adb-device", json!({"operation": "properties"})).await;
    let props = ok(&result);
    let chars = response_chars(&result);
    println!("adb-device properties on the simulator: {chars} chars");
    assert!(chars <= 500, "{chars} chars");
    assert_eq!(props["summary"]["model"], "Pixel 7 (droidmcp sim)");
    assert_eq!(props["summary"]["sdkVersion"], 34);
    let total = props["propertyCount"].as_u64().unwrap() as usize;
    let id = props["cacheId"].as_str().unwrap().to_string();
    assert!(id.starts_with("props-"), "{id}");

    // A key prefix narrows the map.
    let build = ok(&call(
        &client,
        "cache",
        json!({"operation": "get", "id": id, "prefix": "ro.build.", "limit": 1000}),
    )
    .await);
    let keys: Vec<&String> = build["items"].as_object().unwrap().keys().collect();
    assert!(
        keys.len() > 5 && keys.iter().all(|k| k.starts_with("ro.build.")),
        "{keys:?}"
    );
    assert!(build["matching"].as_u64().unwrap() < total as u64);

    // Paging with nextOffset reproduces every key exactly once.
    let mut seen = BTreeSet::new();
    let mut offset = 0;
    let mut pages = 0;
    loop {
        let page = call(
            &client,
            "cache",
            json!({"operation": "get", "id": id, "offset": offset, "limit": 200}),
        )
        .await;
        assert!(response_chars(&page) <= 4000, "a cache page is over the budget");
        let page = ok(&page);
        for key in page["items"].as_object().unwrap().keys() {
            assert!(seen.insert(key.clone()), "{key} came twice");
        }
        pages += 1;
        match page["nextOffset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    assert_eq!(seen.len(), total);
    println!("{total} properties read back in {pages} budgeted pages");

    // The same entry is a resource, served whole.
    let resources = client.list_all_resources().await.unwrap();
    let uri = format!("droidmcp://cache/{id}");
    assert!(resources.iter().any(|r| r.uri == uri), "the entry is listed");
    let templates = client.list_all_resource_templates().await.unwrap();
    assert!(templates.iter().any(|t| t.uri_template == "droidmcp://cache/{id}"));
    let read = client.read_resource(ReadResourceRequestParams::new(uri)).await.unwrap();
    let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!("expected text contents")
    };
    let whole: serde_json::Map<String, Value> = serde_json::from_str(text).unwrap();
    assert_eq!(whole.len(), total);
    assert_eq!(whole.keys().cloned().collect::<BTreeSet<_>>(), seen);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn adb_device_works_through_a_real_adb_server() {
    let Some((adb, _sim, serial)) = connected_sim(&[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let port = adb.port.to_string();
    let client = mcp_server(&[], &[("ANDROID_ADB_SERVER_PORT", &port)], home.path()).await;

    let list = ok(&call(&client, "adb-device", json!({"operation": "list"})).await);
    let devices = list["devices"].as_array().unwrap();
    let sim = devices
        .iter()
        .find(|d| d["serial"] == serial.as_str())
        .expect("the simulator is listed");
    assert_eq!(sim["state"], "device");
    assert_eq!(sim["transport"], "tcp");
    assert_eq!(sim["model"], "Pixel_7__droidmcp_sim_", "adb's own sanitised form");

    let props = ok(&call(
        &client,
        "adb-device",
        json!({"operation": "properties", "device": serial}),
    )
    .await);
    assert_eq!(props["device"], serial.as_str());
    assert_eq!(props["summary"]["manufacturer"], "Google");

    let selected = ok(&call(&client, "adb-device", json!({"operation": "select", "device": serial})).await);
    assert_eq!(selected["device"], serial.as_str());
    let health = ok(&call(&client, "adb-device", json!({"operation": "health"})).await);
    assert_eq!(health["health"]["state"], "device");
    assert_eq!(health["health"]["bootCompleted"], true);
    assert_eq!(health["health"]["screen"], json!({"width": 1080, "height": 2400}));
    assert!(health["health"]["battery"]["level"].is_u64());
    let wait = ok(&call(&client, "adb-device", json!({"operation": "wait", "timeoutMs": 5000})).await);
    assert_eq!(wait["bootCompleted"], true);

    let unknown = err(&call(
        &client,
        "adb-device",
        json!({"operation": "properties", "device": "emulator-9999"}),
    )
    .await);
    assert!(
        unknown.contains("emulator-9999") && unknown.contains(&serial),
        "{unknown}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_direct_path_makes_an_adb_key_and_a_device_that_trusts_it_lets_it_in() {
    let home = tempfile::tempdir().unwrap();
    // First contact makes ~/.android/adbkey; a device that accepts any key lets it in.
    let open = SimProcess::start(&["--auth-any"]);
    let addr = format!("tcp:{}", open.addr);
    let client = mcp_server(&["--adb", &addr], &[], home.path()).await;
    let props = ok(&call(&client, "adb-device", json!({"operation": "properties"})).await);
    assert_eq!(props["summary"]["model"], "Pixel 7 (droidmcp sim)");
    client.cancel().await.unwrap();
    let public = home.path().join(".android/adbkey.pub");
    assert!(home.path().join(".android/adbkey").exists() && public.exists());

    // A device that knows only that public key accepts our signature.
    let trusting = SimProcess::start(&["--auth-keys", public.to_str().unwrap()]);
    let client = mcp_server(&["--adb", &format!("tcp:{}", trusting.addr)], &[], home.path()).await;
    let list = ok(&call(&client, "adb-device", json!({"operation": "list"})).await);
    assert_eq!(list["devices"][0]["state"], "device");
    assert_eq!(list["devices"][0]["transport"], "direct");
    client.cancel().await.unwrap();

    // A device that does not know it is offered the key and waited for (the prompt), then says
    // unauthorized, and what to do.
    let other_home = tempfile::tempdir().unwrap();
    let client = mcp_server(
        &["--adb", &format!("tcp:{}", trusting.addr), "--timeout-ms", "1200"],
        &[],
        other_home.path(),
    )
    .await;
    let refused = err(&call(&client, "adb-device", json!({"operation": "properties"})).await);
    assert!(
        refused.contains("unauthorized")
            && refused.contains("Allow USB debugging")
            && refused.contains("prompt within"),
        "{refused}"
    );
    let list = ok(&call(&client, "adb-device", json!({"operation": "list"})).await);
    assert_eq!(list["devices"][0]["state"], "unauthorized");
    client.cancel().await.unwrap();

    // Someone taps "Allow" after 2 s. The call that connects waits for it; a call made meanwhile
    // waits for that connection, and the wait is not its own timeout (1 s) but time queued.
    let allowing = SimProcess::start(&["--auth-keys", public.to_str().unwrap(), "--allow-after-ms", "2000"]);
    let third_home = tempfile::tempdir().unwrap();
    let target = format!("tcp:{}", allowing.addr);
    let client =
        std::sync::Arc::new(mcp_server(&["--adb", &target, "--timeout-ms", "4000"], &[], third_home.path()).await);
    let connecting = {
        let client = client.clone();
        tokio::spawn(async move { call(&client, "adb-device", json!({"operation": "properties"})).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let started = std::time::Instant::now();
    let queued = call(
        &client,
        "adb-shell",
        json!({"operation": "run", "command": "echo queued", "timeoutMs": 1000}),
    )
    .await;
    let took = started.elapsed();
    println!(
        "a call (timeout 1,000 ms) made while another waited 2,000 ms for the key prompt: answered after {} ms",
        took.as_millis()
    );
    assert_eq!(ok(&queued)["stdout"], "queued\n");
    assert!(
        took > std::time::Duration::from_millis(1000),
        "it waited for the connection ({took:?})"
    );
    assert_eq!(
        ok(&connecting.await.unwrap())["summary"]["model"],
        "Pixel 7 (droidmcp sim)"
    );
}

#[tokio::test]
async fn an_answer_over_the_budget_keeps_key_fields_and_a_working_cache_id() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim", "--budget", "600"], &[], home.path()).await;
    for _ in 0..6 {
        ok(&call(&client, "adb-device", json!({"operation": "properties"})).await);
    }
    let result = call(&client, "cache", json!({"operation": "list"})).await;
    let listing = ok(&result);
    let chars = response_chars(&result);
    assert!(chars <= 600, "{chars} chars over a 600-char budget");
    assert_eq!(listing["operation"], "list");
    assert_eq!(listing["budget"]["truncated"], true);
    assert_eq!(listing["budget"]["total"], 6);
    let id = listing["cacheId"].as_str().unwrap();
    assert!(
        result
            .content
            .iter()
            .any(|c| c.as_resource_link().is_some_and(|l| l.uri.ends_with(id)))
    );
    let whole = ok(&call(&client, "cache", json!({"operation": "get", "id": id, "limit": 2})).await);
    assert_eq!(whole["total"], 6);
    assert_eq!(whole["count"], 2);
    assert!(whole["hint"].as_str().unwrap().contains("offset 2"));

    // A page asked bigger than the budget is cut to fit, and says so.
    let props = ok(&call(&client, "adb-device", json!({"operation": "properties"})).await);
    let big = call(
        &client,
        "cache",
        json!({"operation": "get", "id": props["cacheId"], "limit": 1000}),
    )
    .await;
    assert!(response_chars(&big) <= 600);
    let big = ok(&big);
    assert!(big["count"].as_u64().unwrap() >= 3);
    assert!(
        big["hint"].as_str().unwrap().contains("to fit the budget"),
        "{}",
        big["hint"]
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn wait_sends_progress_and_stops_when_the_client_cancels() {
    let home = tempfile::tempdir().unwrap();
    // Nothing listens on this port: the device never comes.
    let nowhere = format!("tcp:127.0.0.1:{}", free_port());
    let recorder = ProgressRecorder::default();
    let client = mcp_server_with(recorder.clone(), &["--adb", &nowhere], &[], home.path()).await;

    let mut params = rmcp::model::CallToolRequestParams::new("adb-device");
    params.arguments = json!({"operation": "wait", "timeoutMs": 600000}).as_object().cloned();
    let request = rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
    let handle = client
        .peer()
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .unwrap();
    // Two progress notifications arrive (the first check, then one after a 200 ms pause).
    for _ in 0..100 {
        if recorder.0.lock().unwrap().len() >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    {
        let seen = recorder.0.lock().unwrap();
        assert!(seen.len() >= 2, "progress notifications: {}", seen.len());
        assert!(seen[1].progress >= seen[0].progress);
        assert_eq!(seen[0].total, Some(600000.0));
        let message = seen[0].message.as_deref().unwrap_or("");
        assert!(message.contains("cannot reach the device"), "{message}");
    }
    handle.cancel(Some("test is done waiting".into())).await.unwrap();
    // The server stopped the wait: progress ceases, and it still answers.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let after_cancel = recorder.0.lock().unwrap().len();
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(
        recorder.0.lock().unwrap().len(),
        after_cancel,
        "no progress after the cancel"
    );
    // list probes the device and says why it is not there.
    let list = ok(&call(&client, "adb-device", json!({"operation": "list"})).await);
    assert_eq!(list["devices"][0]["state"], "offline", "{list}");
    let why = list["devices"][0]["error"].as_str().unwrap_or("");
    assert!(why.contains("cannot reach the device"), "{why}");
    client.cancel().await.unwrap();
}

/// Raw JSON-RPC over the server's stdio: the edges rmcp leaves open get their proper codes
/// (-32700, -32602, -32601), and the session goes on.
#[tokio::test]
async fn json_rpc_edges_get_their_codes_over_raw_stdio() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let home = tempfile::tempdir().unwrap();
    let mut child = Server::new(home.path()).args(&["--sim"]).raw_stdio();
    let mut stdin = child.stdin.take().unwrap();
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{this is not json"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"prompts/list"}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"a","value":"b"}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"cache","arguments":{"operation":"stats"}}}"#,
    ];
    for line in lines {
        // The server reads until EOF: a closed pipe here means it died, which fails the test.
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("the server stopped reading its stdin");
    }
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut codes = std::collections::BTreeMap::new();
    let read_all = async {
        while codes.len() < 7 {
            let line = out.next_line().await.unwrap().expect("an answer");
            let answer: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
            let code = answer["error"]["code"].as_i64().unwrap_or(0);
            codes.insert(answer["id"].to_string(), code);
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), read_all)
        .await
        .expect("every request answered");
    println!("JSON-RPC edges: {codes:?}");
    assert_eq!(codes["null"], -32700, "a line that is not JSON");
    assert_eq!(
        (codes["2"], codes["3"]),
        (-32602, -32602),
        "tools/call without proper params"
    );
    assert_eq!((codes["4"], codes["5"]), (-32601, -32601), "capabilities not declared");
    assert_eq!((codes["1"], codes["6"]), (0, 0), "the session goes on");
    drop(stdin);
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait())
        .await
        .expect("the server ends at EOF")
        .unwrap();
    assert!(status.success(), "{status}");
}

/// Generated lines of every kind (random bytes, text that is not JSON, random JSON values and
/// JSON-RPC-shaped objects with random methods and params) sent to one stdio session: each line
/// that is not UTF-8 or not JSON gets -32700 with `id: null`, every request with a usable id gets
/// exactly one answer with that id (once, rmcp dropped the ones it could not read), and the
/// session still answers afterwards. Once, one 0xFF byte ended the session.
#[tokio::test]
async fn the_stdio_session_survives_any_line() {
    use proptest::prelude::*;
    use proptest::strategy::ValueTree;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let json_value = proptest::arbitrary::any::<String>()
        .prop_map(serde_json::Value::String)
        .boxed();
    // An id is usable (a string or an integer, made unique per line below) or not (null, a float,
    // a list, an object: answered with id null, or not at all).
    let rpc = (
        prop_oneof![
            Just("tools/call".to_string()),
            Just("ping".to_string()),
            Just("resources/read".to_string()),
            Just("tools/list".to_string()),
            "[a-z/]{1,12}"
        ],
        prop_oneof![
            Just(json!(null)),
            Just(json!(7)),
            Just(json!("x")),
            Just(json!({"name": 5})),
            Just(json!([1, 2]))
        ],
        prop_oneof![
            4 => Just(json!("usable")),
            1 => Just(json!(null)),
            1 => Just(json!(1.5)),
            1 => Just(json!([])),
            1 => Just(json!({}))
        ],
    )
        .prop_map(|(method, params, id)| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    #[derive(Clone, Debug)]
    enum Line {
        Bytes(Vec<u8>),
        Rpc(serde_json::Value),
    }
    let line = prop_oneof![
        prop::collection::vec(any::<u8>().prop_filter("one line", |b| *b != b'\n'), 0..300).prop_map(Line::Bytes),
        "[^\n]{0,200}".prop_map(|s| Line::Bytes(s.into_bytes())),
        json_value.prop_map(|v| Line::Bytes(v.to_string().into_bytes())),
        rpc.prop_map(Line::Rpc),
    ];
    let mut runner = proptest::test_runner::TestRunner::default();
    let mut expected_ids = std::collections::BTreeSet::new();
    let lines: Vec<Vec<u8>> = (0..400)
        .map(|n| match line.new_tree(&mut runner).unwrap().current() {
            Line::Bytes(bytes) => bytes,
            Line::Rpc(mut rpc) => {
                if rpc["id"] == "usable" {
                    let id = if n % 2 == 0 { json!(n) } else { json!(format!("g{n}")) };
                    expected_ids.insert(id.to_string());
                    rpc["id"] = id;
                }
                rpc.to_string().into_bytes()
            }
        })
        .collect();
    let parse_errors = lines
        .iter()
        .filter(|l| {
            let l = l.strip_suffix(b"\r").unwrap_or(l);
            match std::str::from_utf8(l) {
                Err(_) => true,
                Ok(text) => !text.trim().is_empty() && serde_json::from_str::<serde_json::Value>(text).is_err(),
            }
        })
        .count();

    let home = tempfile::tempdir().unwrap();
    let mut child = Server::new(home.path()).args(&["--sim"]).raw_stdio();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
"#)
        .await
        .unwrap();
    for (n, line) in lines.iter().enumerate() {
        let sent = async {
            stdin.write_all(line).await?;
            stdin.write_all(b"\n").await
        };
        sent.await.unwrap_or_else(|e| {
            panic!(
                "the session ended at generated line {n} ({e}): {:?}",
                String::from_utf8_lossy(line)
            )
        });
    }
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"method\":\"tools/call\",\"params\":{\"name\":\"cache\",\"arguments\":{\"operation\":\"stats\"}}}\n")
        .await
        .unwrap();
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut parse_answers = 0;
    let mut answered = std::collections::BTreeMap::<String, usize>::new();
    let mut last = None;
    let read_all = async {
        while let Ok(Some(line)) = out.next_line().await {
            let answer: serde_json::Value = serde_json::from_str(&line).expect("every answer is a JSON line");
            if answer["id"].is_null() && answer["error"]["code"] == -32700 {
                parse_answers += 1;
            }
            *answered.entry(answer["id"].to_string()).or_default() += 1;
            if answer["id"] == "last" {
                last = Some(answer);
            }
            // Answers may come in any order: read until the last request and every usable id.
            if last.is_some() && expected_ids.iter().all(|id| answered.contains_key(id)) {
                break;
            }
        }
    };
    // On a timeout the checks below name what went unanswered.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(30), read_all).await;
    let last = last.expect("the session ended early: the last request got no answer");
    assert!(
        last["result"]["structuredContent"].is_object() && last["result"]["isError"] != json!(true),
        "{last}"
    );
    assert_eq!(parse_answers, parse_errors);
    for id in &expected_ids {
        assert_eq!(answered.get(id), Some(&1), "request {id}: answers {answered:?}");
    }
    println!(
        "{} generated lines, {parse_errors} of them not UTF-8 or not JSON: {parse_answers} got -32700; {} requests with a usable id, each answered once; the session went on",
        lines.len(),
        expected_ids.len()
    );
    drop(stdin);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait()).await;
}
