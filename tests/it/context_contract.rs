//! The context contract: the id in an over-budget answer leads to the whole data, resources
//! declare the size and type they serve, and a wrong id is told what is wrong with it.

use crate::budget::check_answer;
use crate::common::*;
use serde_json::{Value, json};

/// Pages an entry from the start with `cache get`: every item, checking that each page starts
/// where the last one ended.
pub(crate) async fn page_all(client: &McpClient, id: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut offset = 0;
    loop {
        let page = ok(&call(
            client,
            "cache",
            json!({"operation": "get", "id": id, "offset": offset, "limit": 1000}),
        )
        .await);
        assert_eq!(page["offset"], offset, "{id}: a page began elsewhere: {page}");
        // Lists and text page as arrays, properties as an object of key → value.
        let got: Vec<Value> = match &page["items"] {
            Value::Array(items) => items.clone(),
            Value::Object(map) => map.values().cloned().collect(),
            Value::String(text) => text.split('\n').map(|l| json!(l)).collect(),
            other => panic!("{id}: items is {other}"),
        };
        assert_eq!(page["count"], got.len(), "{id}: count and items disagree");
        offset += got.len();
        items.extend(got);
        if page["hasMore"] != true {
            assert_eq!(
                page["total"],
                items.len(),
                "{id}: total {} but paged {}",
                page["total"],
                items.len()
            );
            return items;
        }
        assert_eq!(page["nextOffset"], offset, "{id}: a gap between pages");
    }
}

#[tokio::test]
async fn each_tools_biggest_answer_has_an_id_that_pages_its_whole_total() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let cases = [
        (
            "adb-device",
            json!({"operation": "properties"}),
            "cacheId",
            "propertyCount",
        ),
        (
            "adb-app",
            json!({"operation": "list", "limit": 100}),
            "cacheId",
            "totalCount",
        ),
        (
            "adb-logcat",
            json!({"operation": "read", "lines": 200}),
            "cacheId",
            "matchingLines",
        ),
    ];
    for (tool, args, id_field, total_field) in cases {
        let answer = ok(&call(&client, tool, args.clone()).await);
        let id = answer[id_field]
            .as_str()
            .unwrap_or_else(|| panic!("{tool}: no {id_field}: {answer}"));
        let total = answer[total_field]
            .as_u64()
            .unwrap_or_else(|| panic!("{tool}: no {total_field}"));
        let items = page_all(&client, id).await;
        println!(
            "{tool} {args}: {id_field} pages {} of {total_field} {total}",
            items.len()
        );
        assert_eq!(
            items.len() as u64,
            total,
            "{tool}: the id does not lead to the whole data"
        );
        if let Some(budget) = answer.get("budget") {
            assert_eq!(budget["total"], total, "{tool}: the budget note counts something else");
        }
    }
    // ui dump's id holds the whole window tree: every node of the device's own dump, not only
    // the elements the answer lists.
    let answer = ok(&call(&client, "ui", json!({"operation": "dump", "limit": 200})).await);
    let nodes = page_all(&client, answer["cacheId"].as_str().unwrap()).await;
    let shell = ok(&call(
        &client,
        "adb-shell",
        json!({"operation": "run", "command": "uiautomator dump /dev/tty"}),
    )
    .await);
    let xml = match shell["stdoutCacheId"].as_str() {
        Some(id) => {
            let read = client
                .read_resource(rmcp::model::ReadResourceRequestParams::new(format!(
                    "droidmcp://cache/{id}"
                )))
                .await
                .expect("resources/read");
            match &read.contents[0] {
                rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
                other => panic!("not text: {other:?}"),
            }
        }
        None => shell["stdout"].as_str().unwrap().to_string(),
    };
    let on_device = xml.matches("<node").count();
    println!(
        "ui dump: cacheId pages {} nodes; the device's dump has {on_device}",
        nodes.len()
    );
    assert_eq!(nodes.len(), on_device);
    assert!(nodes.len() as u64 >= answer["totalCount"].as_u64().unwrap());

    // A shell stream: every line, in order.
    let answer = ok(&call(
        &client,
        "adb-shell",
        json!({"operation": "run", "command": "seq 1 3000"}),
    )
    .await);
    let id = answer["stdoutCacheId"]
        .as_str()
        .expect("stdout over the budget has an id");
    let lines = page_all(&client, id).await;
    assert_eq!(lines.len(), 3000);
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(line.as_str(), Some((i + 1).to_string().as_str()), "line {i}");
    }
}

#[tokio::test]
async fn resources_declare_the_size_and_type_they_serve() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let mut linked = Vec::new();
    for (tool, args) in [
        ("adb-device", json!({"operation": "properties"})),
        ("adb-app", json!({"operation": "list", "limit": 100})),
        ("ui", json!({"operation": "dump", "limit": 200})),
        ("adb-logcat", json!({"operation": "read", "lines": 200})),
        ("adb-shell", json!({"operation": "run", "command": "seq 1 3000"})),
    ] {
        let result = call(&client, tool, args).await;
        linked.extend(result.content.iter().filter_map(|c| c.as_resource_link()).cloned());
    }
    let listed = client.list_all_resources().await.expect("resources/list");
    assert!(listed.len() >= 5, "{} resources", listed.len());
    for resource in listed.iter().chain(linked.iter()) {
        let read = client
            .read_resource(rmcp::model::ReadResourceRequestParams::new(resource.uri.clone()))
            .await
            .expect("resources/read");
        let (text, mime) = match &read.contents[0] {
            rmcp::model::ResourceContents::TextResourceContents { text, mime_type, .. } => (text, mime_type),
            other => panic!("{}: not text: {other:?}", resource.uri),
        };
        assert_eq!(
            resource.size,
            Some(text.len() as u64),
            "{}: declared size",
            resource.uri
        );
        assert_eq!(&resource.mime_type, mime, "{}: declared type", resource.uri);
        if mime.as_deref() == Some("application/json") {
            serde_json::from_str::<Value>(text).expect("JSON as declared");
        }
    }
    println!(
        "{} listed and {} linked resources: sizes and types true",
        listed.len(),
        linked.len()
    );
}

/// Crockford base32, as ULIDs are written.
fn ulid_at(ms: u64, tail: &str) -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let time: String = (0..10)
        .rev()
        .map(|i| ALPHABET[((ms >> (5 * i)) & 31) as usize] as char)
        .collect();
    format!("{time}{tail}")
}

#[tokio::test]
async fn a_wrong_id_is_told_what_is_wrong_with_it() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let props = ok(&call(&client, "adb-device", json!({"operation": "properties"})).await);
    let id = props["cacheId"].as_str().unwrap();
    let ulid = id.split_once('-').unwrap().1;
    let get = |id: String| {
        let client = &client;
        async move { err(&call(client, "cache", json!({"operation": "get", "id": id})).await) }
    };
    let wrong_kind = get(format!("sh-{ulid}")).await;
    assert!(wrong_kind.contains(id) && wrong_kind.contains("prefix"), "{wrong_kind}");
    let wrong_case = get(id.to_lowercase()).await;
    assert!(wrong_case.contains(id) && wrong_case.contains("case"), "{wrong_case}");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let earlier_run = get(format!("props-{}", ulid_at(now - 120_000, "0000000000000000"))).await;
    assert!(earlier_run.contains("earlier run"), "{earlier_run}");
    let expired = get(format!("props-{}", ulid_at(now - 86_400_000, "0000000000000000"))).await;
    assert!(expired.contains("expired") && expired.contains("min ago"), "{expired}");
    let not_an_id = get("props-nonsense".into()).await;
    assert!(not_an_id.contains("not a cache id"), "{not_an_id}");
    for message in [wrong_kind, wrong_case, earlier_run, expired, not_an_id] {
        println!("{message}");
    }
}

#[tokio::test]
async fn paging_a_300k_text_entry_costs_little_more_than_its_text() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let out = ok(&call(
        &client,
        "adb-shell",
        json!({"operation": "run", "command": "logcat -d"}),
    )
    .await);
    let id = out["stdoutCacheId"].as_str().expect("the log is over the budget");
    let (mut read, mut offset, mut calls, mut text) = (0, 0, 0, String::new());
    loop {
        let result = call(
            &client,
            "cache",
            json!({"operation": "get", "id": id, "offset": offset}),
        )
        .await;
        read += response_chars(&result);
        calls += 1;
        let page = ok(&result);
        assert!(response_chars(&result) <= 4000, "a page over the budget");
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(page["items"].as_str().expect("a text page is one string"));
        match page["nextOffset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    let entry = out["stdoutChars"].as_u64().unwrap() as usize;
    let ratio = read as f64 / entry as f64;
    println!("paging {entry} chars of text: {read} chars read in {calls} calls, {ratio:.3}× the text");
    assert_eq!(text.chars().count() + 1, entry, "the pages, joined, are the text");
    assert!(ratio <= 1.1, "{ratio:.3}×");
}

/// A client that asks for an older protocol version.
#[derive(Clone)]
struct OlderClient(rmcp::model::ProtocolVersion);

impl rmcp::ClientHandler for OlderClient {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::default().with_protocol_version(self.0.clone())
    }
}

#[tokio::test]
async fn resource_links_go_only_to_sessions_whose_protocol_has_them() {
    use rmcp::model::ProtocolVersion;
    for (version, links) in [
        (ProtocolVersion::V_2024_11_05, false),
        (ProtocolVersion::V_2025_03_26, false),
        (ProtocolVersion::V_2025_06_18, true),
    ] {
        let home = tempfile::tempdir().unwrap();
        let legacy = rmcp::ClientLifecycleMode::Initialize;
        let server = Server::new(home.path()).args(&["--sim"]).era(legacy);
        let client = server.serve_with(OlderClient(version.clone())).await.client;
        let result = call(&client, "adb-logcat", json!({"operation": "read", "lines": 200})).await;
        let answer = ok(&result); // also checks that the text twin still matches
        let linked = result.content.iter().any(|c| c.as_resource_link().is_some());
        assert_eq!(linked, links, "{version}: resource_link sent: {linked}");
        let hint = answer["budget"]["hint"].as_str().unwrap();
        if !links {
            let uri = format!("droidmcp://cache/{}", answer["cacheId"].as_str().unwrap());
            assert!(hint.contains(&uri), "{version}: the hint must name the URI: {hint}");
        }
        println!("{version}: resource_link {linked}; hint: {hint}");
    }
}

/// The pixel-emulator profile, with its log replaced by `log` (a real capture, read from
/// ../shared into a temporary folder, never into the repository).
pub(crate) fn profile_with_log(log: &std::path::Path) -> Profile {
    let profile = Profile::new();
    profile.copy_in(log, "logcat.txt");
    profile
}

/// Checks a default read: every crash listed with its exception (and cause where the log has
/// one), within 2,500 chars; then grep and `lines: 0`.
async fn check_log(name: &str, client: &McpClient) {
    let result = call(client, "adb-logcat", json!({"operation": "read"})).await;
    let size = response_chars(&result);
    let read = ok(&result);
    let crashes = read["crashes"].as_array().unwrap();
    // A long crash list shows its head; the rest is behind crashesCacheId.
    let every = match read["crashesCacheId"].as_str() {
        Some(id) => page_all(client, id).await,
        None => crashes.clone(),
    };
    let listed: u64 = every.iter().map(|c| c["count"].as_u64().unwrap_or(1)).sum();
    println!(
        "{name}: {size} chars, crashCount {}, {} listed ({} entries), {} window lines",
        read["crashCount"],
        listed,
        crashes.len(),
        read["lines"].as_array().unwrap().len()
    );
    assert!(size <= 2500, "{name}: {size} chars");
    assert_eq!(
        listed,
        read["crashCount"].as_u64().unwrap(),
        "{name}: a crash is missing"
    );
    for crash in crashes {
        assert!(crash["what"].as_str().is_some_and(|w| !w.is_empty()), "{name}: {crash}");
        assert!(crash["process"].is_string(), "{name}: {crash}");
        if crash["kind"] == "java" {
            assert!(
                crash["what"].as_str().unwrap().contains("Exception")
                    || crash["what"].as_str().unwrap().contains("Error"),
                "{name}: the exception line: {crash}"
            );
        }
    }
    // grep narrows the lines, never the crash summaries.
    let grep = ok(&call(client, "adb-logcat", json!({"operation": "read", "grep": "FATAL"})).await);
    assert_eq!(grep["crashes"], read["crashes"], "{name}: grep changed the crash list");
    assert!(grep["matchingLines"].as_u64().unwrap() < read["matchingLines"].as_u64().unwrap());
    // lines: 0 is the summary alone.
    let summary = ok(&call(client, "adb-logcat", json!({"operation": "read", "lines": 0})).await);
    assert_eq!(summary["lines"], json!([]), "{name}");
    assert_eq!(summary["crashes"], read["crashes"]);
}

#[tokio::test]
async fn a_default_log_read_accounts_for_every_crash_within_2500_chars() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    check_log("simulator log", &client).await;
    for (name, capture) in captures("logcat") {
        let profile = profile_with_log(&capture);
        let client = mcp_server(&["--sim", profile.path().to_str().unwrap()], &[], home.path()).await;
        check_log(&name, &client).await;
    }
}

#[tokio::test]
async fn the_workspace_never_names_a_file_it_does_not_hold() {
    let home = tempfile::tempdir().unwrap();
    let workspace = home.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    // A leftover of a write that never finished, from an earlier run (the one door's temp name).
    let leftover = workspace.join(".sh-01M82TGJWEX7Q56M2GP7S6ZV9P.txt.01M82TGJWEX7Q56M2GP7S6ZV9P.partial");
    std::fs::write(&leftover, "half").unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(600);
    std::fs::File::options()
        .write(true)
        .open(&leftover)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let stranger = workspace.join("notes.txt");
    std::fs::write(&stranger, "mine").unwrap();

    let args = [
        "--sim",
        "--workspace",
        workspace.to_str().unwrap(),
        "--workspace-mib",
        "1",
    ];
    let client = mcp_server(&args, &[], home.path()).await;
    assert!(!leftover.exists(), "a leftover .partial file is swept at start");
    let small = ok(&call(
        &client,
        "adb-shell",
        json!({"operation": "run", "command": "seq 1 20000"}),
    )
    .await);
    let small_file = std::path::PathBuf::from(small["stdoutFile"].as_str().expect("written"));
    assert!(small_file.exists());

    // 1.29 MB of output against a 1 MiB quota: kept in the cache, not written, and said so.
    let big = ok(&call(
        &client,
        "adb-shell",
        json!({"operation": "run", "command": "seq 1 200000"}),
    )
    .await);
    assert!(big.get("stdoutFile").is_none(), "{big}");
    let note = big["stdoutFileNote"].as_str().expect("a note on the file");
    assert!(note.contains("over the workspace quota"), "{note}");
    assert!(
        small_file.exists() && stranger.exists(),
        "nothing else was deleted for it"
    );
    let page = ok(&call(
        &client,
        "cache",
        json!({"operation": "get", "id": big["stdoutCacheId"], "offset": 199_999}),
    )
    .await);
    assert_eq!(page["items"], "200000");
    println!("workspace: {note}");
}

#[tokio::test]
async fn every_answer_validates_against_its_tools_output_schema() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let schemas: std::collections::HashMap<String, Value> = tools
        .iter()
        .map(|t| {
            let schema = Value::Object((*t.output_schema.clone().expect("an output schema")).clone());
            (t.name.to_string(), schema)
        })
        .collect();
    let whole = serde_json::to_string(&json!({ "tools": tools }))
        .unwrap()
        .chars()
        .count();
    println!("tools/list: {whole} chars with output schemas");
    assert!(whole <= 12_000, "{whole}");
    for (tool, schema) in &schemas {
        let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        println!("{tool}: {keys:?}");
        assert!(keys.len() >= 3, "{tool} declares only {keys:?}");
    }
    let props = ok(&call(&client, "adb-device", json!({"operation": "properties"})).await);
    let calls = [
        ("adb-device", json!({"operation": "list"})),
        ("adb-device", json!({"operation": "properties"})),
        ("adb-device", json!({"operation": "health"})),
        ("adb-app", json!({"operation": "list", "limit": 100})),
        (
            "adb-app",
            json!({"operation": "info", "package": "com.android.settings"}),
        ),
        ("ui", json!({"operation": "dump"})),
        ("ui", json!({"operation": "find", "text": "Settings"})),
        ("ui", json!({"operation": "screenshot"})),
        ("adb-logcat", json!({"operation": "read"})),
        ("adb-logcat", json!({"operation": "read", "lines": 200})),
        ("adb-shell", json!({"operation": "run", "command": "echo hi; exit 3"})),
        ("adb-shell", json!({"operation": "run", "command": "seq 1 100000"})),
        ("cache", json!({"operation": "get", "id": props["cacheId"]})),
        ("cache", json!({"operation": "list"})),
        ("cache", json!({"operation": "stats"})),
    ];
    for (tool, args) in calls {
        let answer = ok(&call(&client, tool, args.clone()).await);
        let validator = jsonschema::draft202012::new(&schemas[tool]).expect("a valid draft 2020-12 schema");
        let errors: Vec<String> = validator.iter_errors(&answer).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{tool} {args}: {errors:?}");
    }
}

#[tokio::test]
async fn a_log_of_200_distinct_crashes_answers_within_the_budget_and_counts_them_all() {
    let mut log = String::from("--------- beginning of crash\n");
    for c in 0..200u32 {
        let pid = 4000 + c;
        let at = format!("11-20 11:{:02}:{:02}.000", c / 60, c % 60);
        log.push_str(&format!("{at}  {pid}  {pid} E AndroidRuntime: FATAL EXCEPTION: main\n"));
        log.push_str(&format!(
            "{at}  {pid}  {pid} E AndroidRuntime: Process: com.crashy.app{c}, PID: {pid}\n"
        ));
        log.push_str(&format!(
            "{at}  {pid}  {pid} E AndroidRuntime: java.lang.RuntimeException: failure number {c}\n"
        ));
        for f in 0..12 {
            log.push_str(&format!(
                "{at}  {pid}  {pid} E AndroidRuntime: \tat android.os.Frame{f}.run(Frame.java:{f})\n"
            ));
        }
        log.push_str(&format!(
            "{at}  {pid}  {pid} E AndroidRuntime: \tat com.crashy.app{c}.Main.go(Main.kt:{c})\n"
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("logcat.txt");
    std::fs::write(&log_path, log).unwrap();
    let profile = profile_with_log(&log_path);
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim", profile.path().to_str().unwrap()], &[], home.path()).await;
    let result = call(&client, "adb-logcat", json!({"operation": "read"})).await;
    let size = check_answer("read of 200 crashes", &result, 4000);
    let read = ok(&result);
    assert_eq!(read["crashCount"], 200);
    let listed = read["crashes"].as_array().unwrap().len();
    assert_eq!(read["crashesListed"], listed);
    assert!(listed >= 3, "{listed}");
    let first = &read["crashes"][0];
    assert_eq!(
        first["what"], "java.lang.RuntimeException: failure number 199",
        "most recent first"
    );
    assert_eq!(first["appFrame"], "com.crashy.app199.Main.go(Main.kt:199)");
    let all = page_all(&client, read["crashesCacheId"].as_str().unwrap()).await;
    assert_eq!(all.len(), 200, "the id pages every crash");
    println!("200 distinct crashes: {size} chars, {listed} listed, crashesCacheId pages all 200");
}
