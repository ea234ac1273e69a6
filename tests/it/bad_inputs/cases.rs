//! The hand-written bad inputs a schema cannot generate (mod.rs generates the rest): values
//! that break a grammar or a meaning (package names, paths, refs, times, ids, key names, regexes,
//! the deny-list) across every tool. Each must be refused with an error that names the field,
//! inside the budget, before anything reaches the device (the simulator's log of opened streams
//! must not grow). Strings that do reach a device shell are checked apart: the exact command line
//! the device got is run by a real POSIX shell on the host, which must see the text as one quoted
//! word and run nothing else.

use super::BUDGET;
use crate::common::*;
use serde_json::{Value, json};

/// (tool, arguments, a word the error must contain: the field, or the operation at fault).
fn corpus(big: &str, props_id: &str) -> Vec<(&'static str, Value, String)> {
    let mut cases: Vec<(&'static str, Value, String)> = Vec::new();
    let mut add = |tool: &'static str, args: Value, field: &str| cases.push((tool, args, field.to_string()));

    // The same mistakes on every tool.
    let tools = [
        ("adb-device", "properties"),
        ("adb-app", "list"),
        ("ui", "dump"),
        ("adb-logcat", "read"),
        ("adb-shell", "run"),
        ("cache", "list"),
        ("script", "run"),
    ];
    for (tool, op) in tools {
        // A valid call but for the one field at fault.
        let with = |field: &str, value: Value| {
            let mut args = json!({"operation": op, field: value});
            if tool == "adb-shell" {
                args["command"] = json!("true");
            }
            if tool == "script" {
                args["code"] = json!("console.log(1)");
            }
            args
        };
        if tool != "cache" {
            add(tool, with("device", json!(12)), "device");
            add(tool, with("device", json!("")), "device");
            add(tool, with("device", json!(big)), "device");
            add(tool, with("device", json!("emulator\u{0}5554")), "device");
            add(tool, with("device", json!("x; reboot")), "device");
            add(tool, with("device", json!("📱\u{202e}\u{0301}")), "device");
        }
    }

    // adb-device
    add("adb-device", json!({"operation": "list", "device": "x"}), "device");
    add("adb-device", json!({"operation": "wait", "timeoutMs": 0}), "timeoutMs");
    add("adb-device", json!({"operation": "wait", "timeoutMs": -5}), "timeoutMs");
    add(
        "adb-device",
        json!({"operation": "wait", "timeoutMs": 1e30}),
        "timeoutMs",
    );
    add(
        "adb-device",
        json!({"operation": "properties", "timeoutMs": 99_999_999_999u64}),
        "timeoutMs",
    );

    // adb-app
    add("adb-app", json!({"operation": "list", "limit": -1}), "limit");
    add("adb-app", json!({"operation": "list", "limit": 0}), "limit");
    add("adb-app", json!({"operation": "list", "limit": 1e20}), "limit");
    add("adb-app", json!({"operation": "list", "offset": -5}), "offset");
    add("adb-app", json!({"operation": "info"}), "package");
    add("adb-app", json!({"operation": "info", "package": ""}), "package");
    add(
        "adb-app",
        json!({"operation": "info", "package": "com.x; reboot"}),
        "package",
    );
    add(
        "adb-app",
        json!({"operation": "info", "package": "$(reboot)"}),
        "package",
    );
    add(
        "adb-app",
        json!({"operation": "info", "package": "../../etc/passwd"}),
        "package",
    );
    add(
        "adb-app",
        json!({"operation": "info", "package": "com.exa\u{0}mple"}),
        "package",
    );
    add(
        "adb-app",
        json!({"operation": "info", "package": "com.😀.app"}),
        "package",
    );
    add("adb-app", json!({"operation": "info", "package": big}), "package");
    add(
        "adb-app",
        json!({"operation": "launch", "package": "com.x`id`"}),
        "package",
    );
    add(
        "adb-app",
        json!({"operation": "launch", "package": "com.android.settings", "activity": "a b;reboot"}),
        "activity",
    );
    add(
        "adb-app",
        json!({"operation": "stop", "package": "com.x|reboot"}),
        "package",
    );
    add(
        "adb-app",
        json!({"operation": "clear-data", "package": "com.x&&reboot"}),
        "package",
    );
    add(
        "adb-app",
        json!({"operation": "clear-data", "package": "com.android.settings", "keepData": true}),
        "keepData",
    );
    add(
        "adb-app",
        json!({"operation": "uninstall", "package": "com.x\nreboot"}),
        "package",
    );
    add("adb-app", json!({"operation": "install"}), "path");
    add("adb-app", json!({"operation": "install", "path": ""}), "path");
    add(
        "adb-app",
        json!({"operation": "install", "path": "/etc/passwd"}),
        "path",
    );
    add(
        "adb-app",
        json!({"operation": "install", "path": "../../../../etc/shadow"}),
        "path",
    );
    add(
        "adb-app",
        json!({"operation": "install", "path": "/no/such/app.apk"}),
        "path",
    );
    add("adb-app", json!({"operation": "install", "path": "/tmp"}), "path");

    // ui
    add("ui", json!({"operation": "tap"}), "ref");
    add("ui", json!({"operation": "tap", "ref": "e0"}), "e0");
    add("ui", json!({"operation": "tap", "ref": "e-1"}), "ref");
    add("ui", json!({"operation": "tap", "ref": "e99999999999999999999"}), "ref");
    add("ui", json!({"operation": "tap", "ref": "E1"}), "ref");
    add("ui", json!({"operation": "tap", "ref": "1"}), "ref");
    add("ui", json!({"operation": "tap", "ref": ""}), "ref");
    add("ui", json!({"operation": "tap", "ref": "e1; reboot"}), "ref");
    add("ui", json!({"operation": "tap", "x": 10}), "y");
    add("ui", json!({"operation": "tap", "x": -5, "y": 10}), "x");
    add(
        "ui",
        json!({"operation": "tap", "x": 1_099_511_627_776u64, "y": 10}),
        "x",
    );
    add("ui", json!({"operation": "tap", "x": 1.5, "y": 10}), "x");
    add(
        "ui",
        json!({"operation": "tap", "text": "OK", "resourceId": "id/ok"}),
        "one",
    );
    add("ui", json!({"operation": "tap", "gridCell": 0}), "gridCell");
    add("ui", json!({"operation": "tap", "gridCell": 99_999}), "gridCell");
    add("ui", json!({"operation": "swipe", "from": [1]}), "from");
    add("ui", json!({"operation": "swipe", "from": [1, 2, 3]}), "from");
    add(
        "ui",
        json!({"operation": "swipe", "direction": "up", "distance": 1000}),
        "distance",
    );
    add(
        "ui",
        json!({"operation": "swipe", "direction": "up", "durationMs": -1}),
        "durationMs",
    );
    add("ui", json!({"operation": "swipe"}), "direction");
    add("ui", json!({"operation": "type", "text": ""}), "text");
    add("ui", json!({"operation": "type", "text": "a\u{0}b"}), "text");
    // Non-ASCII and a literal %s are no bad input: ADBKeyBoard types them (phone_states.rs).
    add("ui", json!({"operation": "type", "text": big}), "text");
    add("ui", json!({"operation": "key", "name": "NOPE"}), "name");
    add("ui", json!({"operation": "key", "name": "3; reboot"}), "name");
    add("ui", json!({"operation": "key", "name": big}), "name");
    add("ui", json!({"operation": "key"}), "name");
    add("ui", json!({"operation": "screenshot", "maxSize": 5}), "maxSize");
    add("ui", json!({"operation": "screenshot", "maxSize": 99_999}), "maxSize");
    add("ui", json!({"operation": "wait"}), "text");
    add(
        "ui",
        json!({"operation": "wait", "text": "OK", "timeoutMs": 0}),
        "timeoutMs",
    );
    add(
        "ui",
        json!({"operation": "wait", "text": "OK", "timeoutMs": -1}),
        "timeoutMs",
    );
    add(
        "ui",
        json!({"operation": "find", "text": "x", "match": "regex", "ref": "e1"}),
        "ref",
    );
    add(
        "ui",
        json!({"operation": "find", "text": "(unclosed", "match": "regex"}),
        "regex",
    );
    add("ui", json!({"operation": "find", "limit": 0, "text": "x"}), "limit");
    add("ui", json!({"operation": "find", "offset": -1, "text": "x"}), "offset");
    add("ui", json!({"operation": "dump", "filter": ["a"]}), "filter");

    // adb-logcat
    add("adb-logcat", json!({"operation": "read", "lines": -1}), "lines");
    add("adb-logcat", json!({"operation": "read", "lines": 1e9}), "lines");
    add("adb-logcat", json!({"operation": "read", "level": "verbose"}), "level");
    add("adb-logcat", json!({"operation": "read", "pid": -1}), "pid");
    add("adb-logcat", json!({"operation": "read", "tags": [1, 2]}), "tags");
    add(
        "adb-logcat",
        json!({"operation": "read", "since": "yesterday"}),
        "since",
    );
    add(
        "adb-logcat",
        json!({"operation": "read", "since": "13-45 99:99:99"}),
        "since",
    );
    add(
        "adb-logcat",
        json!({"operation": "read", "since": "01-20 14:05:00; reboot"}),
        "since",
    );
    add(
        "adb-logcat",
        json!({"operation": "read", "package": "bad pkg;rm -rf /"}),
        "package",
    );
    // A multi-byte character where a digit belongs: a clear refusal, not a panic.
    add(
        "adb-logcat",
        json!({"operation": "read", "since": "2025é1-20 14:05:00"}),
        "since",
    );

    // adb-shell
    add("adb-shell", json!({"operation": "run"}), "command");
    add("adb-shell", json!({"operation": "run", "command": ""}), "command");
    add("adb-shell", json!({"operation": "run", "command": "   "}), "command");
    add(
        "adb-shell",
        json!({"operation": "run", "command": ["ls", "/"]}),
        "command",
    );
    add(
        "adb-shell",
        json!({"operation": "run", "command": "ls", "timeoutMs": 0}),
        "timeoutMs",
    );
    add(
        "adb-shell",
        json!({"operation": "run", "command": "ls", "timeoutMs": 1_000_000_000}),
        "timeoutMs",
    );
    add("adb-shell", json!({"operation": "run", "command": "reboot"}), "deny");

    // script: no code, code that is not text or too long, a timeout out of range
    add("script", json!({"operation": "run"}), "code");
    add("script", json!({"operation": "run", "code": ""}), "code");
    add("script", json!({"operation": "run", "code": big}), "code");
    add(
        "script",
        json!({"operation": "run", "code": "1", "timeoutMs": 0}),
        "timeoutMs",
    );
    add(
        "script",
        json!({"operation": "run", "code": "1", "timeoutMs": 10_000_000}),
        "timeoutMs",
    );

    // cache: ids that are not ids, of another kind, or from elsewhere
    let (kind, ulid) = props_id.split_once('-').expect("kind-ULID");
    add("cache", json!({"operation": "get"}), "id");
    add("cache", json!({"operation": "get", "id": ""}), "id");
    add("cache", json!({"operation": "get", "id": "../../etc/passwd"}), "id");
    add(
        "cache",
        json!({"operation": "get", "id": format!("{kind}-../../x")}),
        "id",
    );
    add("cache", json!({"operation": "get", "id": big}), "id");
    add("cache", json!({"operation": "get", "id": format!("sh-{ulid}")}), "id");
    add(
        "cache",
        json!({"operation": "get", "id": props_id.to_lowercase()}),
        "id",
    );
    add(
        "cache",
        json!({"operation": "get", "id": props_id, "offset": -1}),
        "offset",
    );
    add(
        "cache",
        json!({"operation": "get", "id": props_id, "limit": 0}),
        "limit",
    );
    add(
        "cache",
        json!({"operation": "get", "id": props_id, "limit": 100_000}),
        "limit",
    );
    add(
        "cache",
        json!({"operation": "get", "id": props_id, "filter": ["a"]}),
        "filter",
    );
    add(
        "cache",
        json!({"operation": "get", "id": "droidmcp://cache/../../etc"}),
        "id",
    );
    cases
}

#[tokio::test]
async fn every_malformed_argument_is_refused_by_name_before_the_device_hears_of_it() {
    let sim = SimProcess::start_logged(&[]);
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--adb", &format!("tcp:{}", sim.addr)], &[], home.path()).await;
    let props = ok(&call(&client, "adb-device", json!({"operation": "properties"})).await);
    let props_id = props["cacheId"].as_str().expect("properties has a cacheId").to_string();
    let big = "x".repeat(1 << 20);
    // The log comes through a pipe: the properties call's stream must be in it before counting.
    assert!(sim.wait_for_log("getprop"), "the simulator logged the properties call");
    let streams = || sim.log().matches("stream opened").count();

    let cases = corpus(&big, &props_id);
    let (mut refused, mut failures) = (0, Vec::new());
    for (n, (tool, args, field)) in cases.iter().enumerate() {
        let before = streams();
        let result = call(&client, tool, args.clone()).await;
        let size = response_chars(&result);
        let shown = cut(&args.to_string(), 90);
        if result.is_error != Some(true) {
            failures.push(format!(
                "{tool} {shown}: accepted: {}",
                cut(&format!("{:?}", result.structured_content), 200)
            ));
            continue;
        }
        let message = err(&result);
        let mut wrong = Vec::new();
        if !message.contains(field.as_str()) {
            wrong.push(format!("does not name `{field}`"));
        }
        if size > BUDGET {
            wrong.push(format!("{size} chars, over the budget"));
        }
        // A positive control: a command that does reach the device. Once its line is in the
        // (ordered) log, so is any stream this case opened; the control's own is not counted.
        let control = format!("control-{n}");
        let echoed = ok(&call(
            &client,
            "adb-shell",
            json!({"operation": "run", "command": format!("echo {control}")}),
        )
        .await);
        assert_eq!(echoed["stdout"], format!("{control}\n"));
        assert!(
            sim.wait_for_log(&format!("echo {control}")),
            "the control's stream reached the log"
        );
        if streams() != before + 1 {
            wrong.push("reached the device".into());
        }
        if wrong.is_empty() {
            refused += 1;
        } else {
            failures.push(format!("{tool} {shown}: {}: {}", wrong.join(", "), cut(&message, 300)));
        }
    }
    println!(
        "bad inputs: {} cases, {refused} refused by name within the budget with nothing sent, {} not",
        cases.len(),
        failures.len()
    );
    assert!(cases.len() >= 100, "the corpus holds {} cases", cases.len());
    assert!(
        failures.is_empty(),
        "{} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(refused, cases.len(), "every case was counted once");
    // The reliability notes quote the corpus's size: they must say what the test ran.
    let claim = format!("{}/{} refused", cases.len(), cases.len());
    let notes = std::fs::read_to_string(repo_dir().join("docs/reliability.md")).unwrap();
    assert!(notes.contains(&claim), "the reliability notes do not say \"{claim}\"");
    // After all that, the server still serves.
    let out = ok(&call(
        &client,
        "adb-shell",
        json!({"operation": "run", "command": "echo still"}),
    )
    .await);
    assert_eq!(out["stdout"], "still\n");
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// Text that reaches the device shell (`ui type`, the one free-text field that does; package
/// names and activities are refused unless they follow Android's grammar) arrives as one quoted
/// word: typed into the login demo's user name through the simulator's shell, each payload is
/// the field's whole text afterwards, and the marker file its injected command would make does
/// not exist. (The simulator's log leaves typed text out since it may be a secret, so the
/// command line itself is not read back.)
#[tokio::test]
async fn text_with_shell_metacharacters_reaches_the_device_as_one_quoted_word() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let launch = json!({"operation": "launch", "package": "org.droidmcp.demo.login"});
    ok(&call(&client, "adb-app", launch).await);
    let find = json!({"operation": "find", "resourceId": "username"});
    let field = ok(&call(&client, "ui", find.clone()).await)["matches"][0]["ref"].clone();
    // Short enough that each payload is listed whole (labels are cut at 60 chars).
    let marker = "/sdcard/I";
    // The check can see a file the simulator's shell makes.
    ok(&shell(&client, "touch /sdcard/control").await);
    let listed = ok(&shell(&client, "ls /sdcard").await);
    assert!(
        listed["stdout"].as_str().unwrap().lines().any(|l| l == "control"),
        "{listed}"
    );
    let payloads = [
        "it's; touch MARKER",
        "$(touch MARKER)",
        "`touch MARKER`",
        "a && touch MARKER || touch MARKER",
        "a | touch MARKER > MARKER < x",
        "'\"'\"' ; touch MARKER #",
        "\\'; touch MARKER; echo \\",
        "* ? [a-z] ~ ! { } $HOME ${IFS}touch${IFS}MARKER",
    ];
    for payload in payloads {
        let payload = payload.replace("MARKER", marker);
        let typed = json!({"operation": "type", "ref": field, "text": payload, "clear": true});
        ok(&call(&client, "ui", typed).await);
        let after = ok(&call(&client, "ui", find.clone()).await);
        assert_eq!(after["matches"][0]["label"], payload.as_str(), "{payload:?}: {after}");
        let listed = ok(&shell(&client, "ls /sdcard").await);
        assert!(
            !listed["stdout"].as_str().unwrap().lines().any(|l| l == "I"),
            "{payload:?} ran a command on the device: {listed}"
        );
    }
    println!(
        "{} payloads typed: each reached the device as one word, none ran",
        payloads.len()
    );
}

/// Resource URIs that are not a cache entry's are refused by the protocol, naming the URI.
#[tokio::test]
async fn resource_uris_outside_the_cache_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim", profile_dir().to_str().unwrap()], &[], home.path()).await;
    for uri in [
        "droidmcp://cache/../../etc/passwd",
        "droidmcp://cache/",
        "droidmcp://cache/props-NOTAULID",
        "droidmcp://cache/%2e%2e%2fetc%2fpasswd",
        "file:///etc/passwd",
        "droidmcp://other/x",
    ] {
        let answer = client
            .read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
            .await;
        let message = match answer {
            Ok(r) => panic!("{uri} was served: {r:?}"),
            Err(e) => e.to_string(),
        };
        assert!(message.contains("cache"), "{uri}: {message}");
        assert!(message.chars().count() < 1000, "{uri}: {message}");
    }
}
