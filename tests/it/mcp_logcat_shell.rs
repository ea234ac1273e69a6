//! `adb-logcat` and `adb-shell` over MCP against the simulator, the workspace files, and the one
//! summary rule: every tool's biggest answer fits the budget and keeps its key fields.

use std::path::Path;

use crate::common::*;
use serde_json::{Value, json};

/// A copy of the bundled profile whose log is `lines` of the bundled one without crashes, plus
/// the first Java crash: "a 2,000-line logcat with a crash".
fn profile_with_one_crash(lines: usize) -> Profile {
    let profile = Profile::new();
    let log = std::fs::read_to_string(profile_dir().join("logcat.txt")).unwrap();
    let all: Vec<&str> = log.lines().collect();
    let crash_start = all.iter().position(|l| l.contains("FATAL EXCEPTION")).unwrap();
    let crash: Vec<&str> = all[crash_start..]
        .iter()
        .take_while(|l| l.contains(" AndroidRuntime: ") || l.starts_with("---"))
        .filter(|l| !l.starts_with("---"))
        .copied()
        .collect();
    let crashy = [
        "AndroidRuntime",
        "ActivityManager: ANR",
        " DEBUG: ",
        " libc: ",
        "beginning of",
    ];
    let quiet: Vec<&str> = all
        .iter()
        .filter(|l| !crashy.iter().any(|c| l.contains(c)))
        .copied()
        .collect();
    let mut out: Vec<&str> = quiet[..lines / 2].to_vec();
    out.extend(&crash);
    out.extend(&quiet[lines / 2..lines - crash.len()]);
    profile.write("logcat.txt", out.join("\n") + "\n");
    profile
}

#[tokio::test]
async fn a_two_thousand_line_log_with_a_crash_is_summarised_within_2500_chars_with_the_crash() {
    let home = tempfile::tempdir().unwrap();
    let profile = profile_with_one_crash(2000);
    let client = Server::new(home.path()).profile(&profile).client().await;
    let result = call(&client, "adb-logcat", json!({"operation": "read"})).await;
    let chars = response_chars(&result);
    let read = ok(&result);
    let log_chars = std::fs::read_to_string(profile.path().join("logcat.txt"))
        .unwrap()
        .chars()
        .count();
    println!(
        "adb-logcat read, {} lines ({log_chars} chars) with one crash: {chars} chars",
        read["totalLines"]
    );
    assert_eq!(read["totalLines"], 2000);
    assert!(chars <= 2500, "{chars} chars");
    assert_eq!(read["crashCount"], 1);
    let crash = &read["crashes"][0];
    assert_eq!(crash["kind"], "java");
    assert_eq!(crash["process"], "org.droidmcp.demo.login");
    assert_eq!(
        crash["what"],
        "java.lang.IllegalStateException: Password must not be empty"
    );
    // The root cause's own frame: where the app's bug is, in one call.
    assert_eq!(
        crash["appFrame"],
        "org.droidmcp.demo.login.Validator.require(Validator.kt:21)"
    );
    assert_eq!(read["lines"].as_array().unwrap().len(), 20);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn logcat_filters_crashes_and_the_cache_work_end_to_end() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;

    let result = call(&client, "adb-logcat", json!({"operation": "read", "lines": 20})).await;
    println!(
        "adb-logcat read, whole simulator log, 20 lines: {} chars",
        response_chars(&result)
    );
    assert!(response_chars(&result) <= 4000);
    let all = ok(&result);
    let total = all["totalLines"].as_u64().unwrap();
    assert!(total > 2000, "{total}");
    let counted: u64 = all["counts"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(counted, total);
    assert_eq!(all["crashCount"], 4, "two FATAL EXCEPTIONs, an ANR and a native crash");
    let kinds: Vec<&str> = all["crashes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["java", "native", "anr", "java"],
        "every crash, most recent first"
    );
    // The Strava OOM names the app's own frame, not just the framework's top frames.
    let strava = &all["crashes"][0];
    assert_eq!(strava["process"], "com.strava");
    assert_eq!(
        strava["appFrame"],
        "com.strava.upload.GpxEncoder.encode(GpxEncoder.kt:142)"
    );
    assert_eq!(strava["topFrame"], "java.util.Arrays.copyOf(Arrays.java:3585)");
    println!("Strava OOM summary in one call: {strava}");
    assert!(
        all["lines"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().contains("(×")),
        "runs collapse"
    );

    // Everything that matched is behind the cacheId: grep it and page it.
    let id = all["cacheId"].as_str().unwrap();
    let fatal = ok(&call(
        &client,
        "cache",
        json!({"operation": "get", "id": id, "filter": "FATAL EXCEPTION"}),
    )
    .await);
    assert_eq!(fatal["matching"], 2);
    assert_eq!(fatal["total"].as_u64().unwrap(), total);
    let page = ok(&call(
        &client,
        "cache",
        json!({"operation": "get", "id": id, "offset": 1000, "limit": 5}),
    )
    .await);
    // Unfiltered, a text page is its lines as one string.
    assert_eq!(page["items"].as_str().unwrap().lines().count(), 5);

    // A package's lines, even after its process died; its crash is found.
    let login = ok(&call(
        &client,
        "adb-logcat",
        json!({"operation": "read", "package": "org.droidmcp.demo.login"}),
    )
    .await);
    assert_eq!(login["crashCount"], 1);
    assert_eq!(login["crashes"][0]["process"], "org.droidmcp.demo.login");
    assert!(login["matchingLines"].as_u64().unwrap() < 100);

    let errors = ok(&call(
        &client,
        "adb-logcat",
        json!({"operation": "read", "level": "E", "lines": 5}),
    )
    .await);
    let levels: Vec<&String> = errors["counts"].as_object().unwrap().keys().collect();
    assert_eq!(levels, ["E", "F"]);
    assert_eq!(errors["lines"].as_array().unwrap().len(), 5);

    let am = ok(&call(
        &client,
        "adb-logcat",
        json!({"operation": "read", "tags": ["ActivityManager"], "grep": "anr in"}),
    )
    .await);
    assert_eq!(am["matchingLines"], 1);
    assert!(
        am["lines"][0]
            .as_str()
            .unwrap()
            .contains("ActivityManager: ANR in com.example.slowapp")
    );

    let segv = ok(&call(&client, "adb-logcat", json!({"operation": "read", "grep": "SIGSEGV"})).await);
    assert!(segv["matchingLines"].as_u64().unwrap() >= 2);

    // "last" starts after the newest line of the previous read.
    let since_last = ok(&call(&client, "adb-logcat", json!({"operation": "read", "since": "last"})).await);
    assert_eq!(since_last["matchingLines"], 0);
    let newest = all["newest"].as_str().unwrap();
    let at_newest = ok(&call(&client, "adb-logcat", json!({"operation": "read", "since": newest})).await);
    assert!(at_newest["matchingLines"].as_u64().unwrap() >= 1);

    ok(&call(&client, "adb-logcat", json!({"operation": "clear"})).await);
    let cleared = ok(&call(&client, "adb-logcat", json!({"operation": "read"})).await);
    assert_eq!(cleared["totalLines"], 0);

    for (args, expected) in [
        (
            json!({"operation": "read", "lines": 500}),
            "`lines` must be between 0 (the summary alone) and 200",
        ),
        (json!({"operation": "read", "since": "yesterday"}), "is not a time"),
        (
            json!({"operation": "read", "package": "a;reboot"}),
            "is not a package name",
        ),
        (json!({"operation": "read", "level": "X"}), "unknown variant `X`"),
    ] {
        let message = err(&call(&client, "adb-logcat", args.clone()).await);
        assert!(message.contains(expected), "{args}: {message}");
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn shell_exit_codes_streams_timeouts_binary_and_the_deny_list() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(
        &["--sim", "--shell-deny", "reboot", "--shell-deny", "pm clear"],
        &[],
        home.path(),
    )
    .await;

    let zero = ok(&shell(&client, "echo hello").await);
    assert_eq!(
        (zero["exitCode"].as_i64(), zero["stdout"].as_str()),
        (Some(0), Some("hello\n"))
    );
    let one = ok(&shell(&client, "echo out; echo err >&2; false").await);
    assert_eq!(one["exitCode"], 1);
    assert_eq!(
        (one["stdout"].as_str(), one["stderr"].as_str()),
        (Some("out\n"), Some("err\n"))
    );
    let missing = ok(&shell(&client, "nosuchprogram --flag").await);
    assert_eq!(missing["exitCode"], 127);
    assert!(missing["stderr"].as_str().unwrap().contains("nosuchprogram"));
    let stderr_only = ok(&shell(&client, "ls /no/such/dir").await);
    assert_eq!(
        (stderr_only["stdout"].as_str(), stderr_only["stdoutChars"].as_u64()),
        (Some(""), Some(0))
    );
    assert!(stderr_only["stderrChars"].as_u64().unwrap() > 0);
    assert_ne!(stderr_only["exitCode"], 0);

    let binary = ok(&shell(&client, "screencap | head -c 64").await);
    assert_eq!(binary["binary"], true);
    let binary_chars = binary["stdoutChars"].as_u64().unwrap();
    assert!(
        (17..=64).contains(&binary_chars),
        "64 bytes, invalid ones shown as U+FFFD: {binary_chars}"
    );

    let slow = err(&call(
        &client,
        "adb-shell",
        json!({"operation": "run", "command": "sleep 30", "timeoutMs": 300}),
    )
    .await);
    assert!(
        slow.contains("300 ms timeout") && slow.contains("closed its stream"),
        "{slow}"
    );
    // The server and the device are fine afterwards.
    ok(&shell(&client, "true").await);

    for (args, expected) in [
        (
            json!({"operation": "run", "command": "reboot"}),
            "deny-list rule `reboot`",
        ),
        (
            json!({"operation": "run", "command": "ls; pm clear com.android.settings"}),
            "deny-list rule `pm clear`",
        ),
        (json!({"operation": "run"}), "needs `command`"),
        (json!({"operation": "run", "command": "  "}), "needs `command`"),
        (
            json!({"operation": "run", "command": "true", "timeoutMs": 0}),
            "timeoutMs must be between",
        ),
        (
            json!({"operation": "exec", "command": "true"}),
            "unknown variant `exec`",
        ),
    ] {
        let message = err(&call(&client, "adb-shell", args.clone()).await);
        assert!(message.contains(expected), "{args}: {message}");
    }
    // Rules match the leading words of a command, not text anywhere.
    ok(&shell(&client, "echo pm clear is only text").await);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn five_megabytes_of_output_stay_within_the_budget_are_all_readable_and_memory_stays_bounded() {
    let home = tempfile::tempdir().unwrap();
    let server = Server::new(home.path())
        .args(&["--sim", "--cache-mib", "16"])
        .transport(Transport::Stdio);
    let Running { client, pid, .. } = server.serve_with(()).await;
    let pid = pid.expect("a stdio server's pid");
    let big = json!({"operation": "run", "command": "seq 1 700000"});
    let result = call(&client, "adb-shell", big.clone()).await;
    let chars = response_chars(&result);
    let out = ok(&result);
    println!(
        "adb-shell run `seq 1 700000` ({} chars of stdout): {chars} chars",
        out["stdoutChars"]
    );
    assert!(chars <= 4000, "{chars}");
    let stdout_chars = out["stdoutChars"].as_u64().unwrap();
    assert!(stdout_chars > 4_500_000, "{stdout_chars}");
    assert_eq!(out["exitCode"], 0);
    let shown = out["stdout"].as_str().unwrap();
    assert!(shown.starts_with("1\n2\n") && shown.ends_with("699999\n700000\n") && shown.contains("left out"));

    // The whole stream is behind the id: every line is there, and the resource serves it whole.
    let id = out["stdoutCacheId"].as_str().unwrap();
    let last = ok(&call(
        &client,
        "cache",
        json!({"operation": "get", "id": id, "offset": 699_990, "limit": 10}),
    )
    .await);
    assert_eq!(last["total"], 700_000);
    assert_eq!(last["items"].as_str().unwrap().lines().last(), Some("700000"));
    let middle = ok(&call(
        &client,
        "cache",
        json!({"operation": "get", "id": id, "filter": "350000"}),
    )
    .await);
    // Filtered, each line is led by its number, as `grep -n` prints it.
    assert_eq!(middle["items"], "350000:350000");
    let read = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(format!(
            "droidmcp://cache/{id}"
        )))
        .await
        .unwrap();
    let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!()
    };
    assert_eq!(text.len() as u64, stdout_chars);

    // Ten more runs: the cache holds to its 16 MiB, and the process does not keep growing.
    let rss_after_first = status_kib(pid, "VmRSS");
    for _ in 0..10 {
        ok(&call(&client, "adb-shell", big.clone()).await);
    }
    let stats = ok(&call(&client, "cache", json!({"operation": "stats"})).await);
    assert!(stats["stats"]["bytes"].as_u64().unwrap() <= 16 << 20, "{stats}");
    assert!(stats["stats"]["evictedForSize"].as_u64().unwrap() >= 8);
    let rss = status_kib(pid, "VmRSS");
    println!("server RSS: {rss_after_first} KiB after one 5 MB output, {rss} KiB after eleven");
    assert!(
        rss < rss_after_first + 64 * 1024,
        "RSS grew from {rss_after_first} to {rss} KiB"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_workspace_holds_big_entries_as_files_named_by_id() {
    let home = tempfile::tempdir().unwrap();
    let workspace = home.path().join("ws");
    let client = mcp_server(&["--sim", "--workspace", workspace.to_str().unwrap()], &[], home.path()).await;
    let props = ok(&call(&client, "adb-device", json!({"operation": "properties"})).await);
    let file = Path::new(props["file"].as_str().expect("properties name their file"));
    // Over HTTP each principal writes to a folder of its own (`local` without tokens).
    let folder = match over_http() {
        true => workspace.canonicalize().unwrap().join("principals").join("local"),
        false => workspace.canonicalize().unwrap(),
    };
    assert_eq!(
        file,
        folder.join(format!("{}.json", props["cacheId"].as_str().unwrap()))
    );
    let map: serde_json::Map<String, Value> = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(map.len() as u64, props["propertyCount"].as_u64().unwrap());

    let shell = ok(&call(
        &client,
        "adb-shell",
        json!({"operation": "run", "command": "seq 1 5000"}),
    )
    .await);
    let file = Path::new(shell["stdoutFile"].as_str().unwrap());
    assert!(file.starts_with(workspace.canonicalize().unwrap()));
    assert_eq!(std::fs::read_to_string(file).unwrap().lines().count(), 5000);
    // A small answer makes no file.
    let small = ok(&call(&client, "adb-shell", json!({"operation": "run", "command": "echo hi"})).await);
    assert!(small.get("stdoutFile").is_none());
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 2);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn every_tools_biggest_answer_fits_the_budget_and_keeps_its_key_fields() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let props = ok(&call(&client, "adb-device", json!({"operation": "properties"})).await);
    let cases: Vec<(&str, Value, &[&str])> = vec![
        ("adb-device", json!({"operation": "list"}), &["operation", "devices"]),
        (
            "adb-device",
            json!({"operation": "properties"}),
            &["operation", "device", "propertyCount", "cacheId"],
        ),
        (
            "adb-device",
            json!({"operation": "health"}),
            &["operation", "device", "health"],
        ),
        (
            "adb-app",
            json!({"operation": "list", "limit": 100}),
            &["operation", "count", "totalCount", "hasMore", "cacheId"],
        ),
        (
            "adb-app",
            json!({"operation": "info", "package": "com.android.settings"}),
            &["operation", "package", "cacheId"],
        ),
        (
            "adb-logcat",
            json!({"operation": "read", "lines": 200}),
            &[
                "operation",
                "totalLines",
                "matchingLines",
                "counts",
                "crashCount",
                "crashes",
                "cacheId",
            ],
        ),
        (
            "adb-shell",
            json!({"operation": "run", "command": "seq 1 700000; seq 1 100000 >&2; exit 4"}),
            &[
                "operation",
                "exitCode",
                "stdoutChars",
                "stderrChars",
                "stdoutCacheId",
                "stderrCacheId",
            ],
        ),
        (
            "cache",
            json!({"operation": "get", "id": props["cacheId"], "limit": 1000}),
            &["operation", "id", "total", "count", "hasMore", "nextOffset"],
        ),
        ("cache", json!({"operation": "list"}), &["operation"]),
    ];
    for (tool, args, keys) in cases {
        let result = call(&client, tool, args.clone()).await;
        let chars = response_chars(&result);
        let value = ok(&result);
        println!("{tool} {args}: {chars} chars");
        assert!(chars <= 4000, "{tool} {args}: {chars} chars");
        for key in keys {
            assert!(
                value.get(*key).is_some_and(|v| !v.is_null()),
                "{tool} {args}: no {key} in {value}"
            );
        }
    }
    let shell = ok(&call(
        &client,
        "adb-shell",
        json!({"operation": "run", "command": "seq 1 700000; seq 1 100000 >&2; exit 4"}),
    )
    .await);
    assert_eq!(shell["exitCode"], 4);
    client.cancel().await.unwrap();
}
