//! Bad inputs, in one suite. Here, generated from the tools' own schemas (tools/list, walked by
//! common/schema.rs): for every tool and operation, a call the server takes is found, then each
//! field is broken in turn (an unknown field, a wrong type, a value outside its enum, a number
//! outside its range, a required field left out, a field the operation does not take, hostile
//! strings: shell metacharacters, NUL, 100,000 chars; lone UTF-16 surrogates in raw JSON). Each
//! answer must be an error naming the field (a JSON-RPC error where the JSON itself is bad),
//! within the budget, before the device hears of it; a hostile string may also be taken as
//! text, but never runs on the device (a marker file the simulator's shell would make must not
//! exist). cases.rs holds the hand-written cases a schema cannot generate (grammars, ids,
//! refs, what each message says).

mod cases;
mod messages;

use crate::common::*;
use serde_json::{Value, json};

const BUDGET: usize = 4000;

/// The file a hostile string's injected command would make on the device.
const MARKER: &str = "/data/local/tmp/pwned";

/// Whether `message` names `field`: quoted as `field`, or as a word of its own ("limit must be
/// between", "needs from and to").
fn names(message: &str, field: &str) -> bool {
    message.contains(&format!("`{field}`"))
        || message
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|word| word == field)
}

/// A value of another JSON type than the schema's (the text of a number where a number belongs).
fn wrong_type(schema: &Value) -> Option<Value> {
    Some(match schema["type"].as_str()? {
        "integer" | "number" => json!("7"),
        "boolean" => json!("yes"),
        "array" => json!("notalist"),
        "object" => json!(7),
        _ => json!(7),
    })
}

/// Ranges the schema's descriptions give for an operation: "list: 1-100", "max 600000".
fn described_range(op: &str, schema: &Value) -> Option<(i64, i64)> {
    let text = schema["description"].as_str()?;
    let text = match text.split_once(": ") {
        Some((named, rest)) if named.chars().all(|c| c.is_ascii_lowercase() || c == '-') => {
            if named != op {
                return None;
            }
            rest
        }
        _ => text,
    };
    let number = |s: &str| {
        s.chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .ok()
    };
    if let Some(at) = text.find("max ") {
        return Some((0, number(&text[at + 4..])?));
    }
    let dash = text.find('-')?;
    let low: String = text[..dash].chars().rev().take_while(char::is_ascii_digit).collect();
    let low = low.chars().rev().collect::<String>().parse().ok()?;
    Some((low, number(&text[dash + 1..])?))
}

/// "`f` does not apply to TOOL OP; it takes a, b" → the fields TOOL OP takes.
fn takes(message: &str) -> Option<Vec<String>> {
    let list = message.split("; it takes ").nth(1)?;
    if list.starts_with("no other field") {
        return Some(Vec::new());
    }
    Some(list.split(", ").map(|f| f.trim().to_string()).collect())
}

/// "f must be between A and B" → (A, B).
fn range_in(message: &str, field: &str) -> Option<(i64, i64)> {
    let rest = message.split(&format!("{field} must be between ")).nth(1)?;
    let mut numbers = rest
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<i64>());
    Some((numbers.next()?.ok()?, numbers.next()?.ok()?))
}

/// Shell metacharacters that would make the marker file if a string reached a shell unquoted,
/// NUL, direction marks, combining and astral characters, and plain words between them.
fn hostile() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let piece = prop_oneof![
        Just(format!("; touch {MARKER}")),
        Just(format!("$(touch {MARKER})")),
        Just(format!("`touch {MARKER}`")),
        Just(format!("&& echo x > {MARKER}")),
        Just(format!("| touch {MARKER}")),
        Just(format!("' ; touch {MARKER} #")),
        Just(format!("\" ; touch {MARKER} #")),
        Just(format!("\n touch {MARKER}\n")),
        Just("\\".to_string()),
        Just("\0".to_string()),
        Just("${IFS}*?[a-z]~!{}".to_string()),
        Just("\u{202e}😀e\u{301}".to_string()),
        "[a-zA-Z0-9 ._-]{1,12}",
    ];
    proptest::collection::vec(piece, 1..6).prop_map(|p| p.concat())
}

/// One call's answer: the error message (a tool error or a JSON-RPC error), and its size.
async fn answer(client: &McpClient, tool: &str, args: &Value) -> (Option<String>, usize) {
    let params = rmcp::model::CallToolRequestParams::new(tool.to_string())
        .with_arguments(args.as_object().cloned().unwrap_or_default());
    let asked = tokio::time::timeout(std::time::Duration::from_secs(120), client.call_tool(params)).await;
    match asked {
        Err(_) => (Some("HUNG: no answer in 120 s".into()), 0),
        Ok(Err(e)) => {
            let e = e.to_string();
            let size = e.chars().count();
            (Some(e), size)
        }
        Ok(Ok(result)) => {
            let size = response_chars(&result);
            match result.is_error {
                Some(true) => (Some(err(&result)), size),
                _ => (None, size),
            }
        }
    }
}

/// A broken call and what its answer must do.
struct Case {
    what: &'static str,
    args: Value,
    field: String,
    /// Taking it as text is allowed (hostile strings); otherwise it must be refused.
    may_pass: bool,
}

fn cut(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

#[tokio::test]
async fn every_field_of_every_operation_is_refused_by_name_when_broken() {
    use proptest::strategy::{Strategy, ValueTree};
    let sim = SimProcess::start_logged(&[]);
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--adb", &format!("tcp:{}", sim.addr)], &[], home.path()).await;
    // The marker can be seen: a file the simulator's shell makes is listed.
    ok(&shell(&client, "touch /data/local/tmp/control-file").await);
    let listed = ok(&shell(&client, "ls /data/local/tmp").await);
    assert!(listed["stdout"].as_str().unwrap().contains("control-file"), "{listed}");
    let props = ok(&call(&client, "adb-device", json!({"operation": "properties"})).await);
    let mut seen = Seen {
        ids: vec![props["cacheId"].as_str().unwrap().to_string()],
        refs: Vec::new(),
        package: "com.android.settings".into(),
        text: "Settings".into(),
        code: "console.log(1)".into(),
    };
    refs_in(
        &ok(&call(&client, "ui", json!({"operation": "dump"})).await),
        &mut seen.refs,
    );
    assert!(sim.wait_for_log("getprop"), "the simulator logs the streams it opens");
    let streams = || sim.log().matches("stream opened").count();
    // The hostile strings come from a seed, printed, so a failing run can be replayed.
    let seed = std::env::var("DROIDMCP_BAD_INPUT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    println!("hostile strings seed {seed} (DROIDMCP_BAD_INPUT_SEED={seed} replays it)");
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = proptest::test_runner::TestRng::from_seed(proptest::test_runner::RngAlgorithm::ChaCha, &seed_bytes);
    let mut runner = proptest::test_runner::TestRunner::new_with_rng(proptest::test_runner::Config::default(), rng);
    let (mut count, mut kinds, mut failures) = (0usize, std::collections::BTreeMap::new(), Vec::new());
    let every = operations(&client).await;
    for operation in &every {
        let (tool, op, properties) = (operation.tool.as_str(), operation.op.as_str(), &operation.properties);
        let (mut base, _) = complete(&client, operation, &seen).await;
        // What the operation takes: the fields a "does not apply" refusal lists, and its own.
        let mut taken: Option<Vec<String>> = None;
        let mut ranges: Vec<(String, i64, i64)> = Vec::new();
        let mut not_taken = Vec::new();
        // Fields a benign value of is taken (or refused by name) beside the found call.
        let mut accepts = Vec::new();
        let mut passed = Vec::new();
        let fields: Vec<&String> = properties.keys().filter(|f| *f != "operation").collect();
        for field in &fields {
            let schema = &properties[field.as_str()];
            if base.get(field.as_str()).is_some() {
                continue;
            }
            let mut args = base.clone();
            args[field.as_str()] = placeholder(tool, field, schema, &seen);
            let (error, _) = answer(&client, tool, &args).await;
            match error {
                Some(m) if m.contains(&format!("`{field}` does not apply")) => {
                    taken = takes(&m).or(taken);
                    not_taken.push(field.to_string());
                }
                Some(m) => {
                    if let Some((low, high)) = range_in(&m, field) {
                        ranges.push((field.to_string(), low, high));
                    }
                    if names(&m, field) {
                        accepts.push(field.to_string());
                    }
                }
                None => {
                    accepts.push(field.to_string());
                    passed.push(field.to_string());
                }
            }
        }
        // A field taken without a word must be one the operation says it takes (or the device
        // every call may name): otherwise it was ignored.
        if let Some(taken) = &taken {
            for field in passed.iter().filter(|f| *f != "device" && !taken.contains(f)) {
                failures.push(format!(
                    "{tool} {op}: took `{field}`, which it says it does not take: ignored?"
                ));
            }
        }
        // The range of each number it takes, as its refusal of 0 or of 2^40 states it.
        for field in fields.iter().filter(|f| properties[f.as_str()]["type"] == "integer") {
            if not_taken.contains(field) {
                continue;
            }
            for probe in [0u64, 1 << 40] {
                let mut args = base.clone();
                args[field.as_str()] = json!(probe);
                if let (Some(m), _) = answer(&client, tool, &args).await
                    && let Some((low, high)) = range_in(&m, field)
                {
                    ranges.push((field.to_string(), low, high));
                }
            }
        }
        // A short timeout where the operation takes one: a wait that passes ends soon.
        if base.get("timeoutMs").is_none() && !not_taken.iter().any(|f| f == "timeoutMs") {
            let mut args = base.clone();
            args["timeoutMs"] = json!(1000);
            if !answer(&client, tool, &args)
                .await
                .0
                .is_some_and(|m| names(&m, "timeoutMs"))
            {
                base = args;
            }
        }
        let base_fields: Vec<String> = base.as_object().unwrap().keys().cloned().collect();
        let takes_field = |f: &str| {
            base_fields.iter().any(|b| b == f)
                || taken.as_ref().is_none_or(|t| t.iter().any(|x| x == f)) && !not_taken.iter().any(|x| x == f)
        };
        // Each field the operation does not take, refused by name (not ignored).
        let with = |field: &str, value: Value| {
            let mut args = base.clone();
            args[field] = value;
            args
        };
        let mut cases: Vec<Case> = Vec::new();
        let mut add = |what: &'static str, args: Value, field: &str, may_pass: bool| {
            cases.push(Case {
                what,
                args,
                field: field.to_string(),
                may_pass,
            })
        };
        for field in &not_taken {
            add(
                "a field the operation does not take",
                with(field, placeholder(tool, field, &properties[field.as_str()], &seen)),
                field,
                false,
            );
        }
        add("an unknown field", with("bogusField", json!(1)), "bogusField", false);
        add(
            "a field named in another case",
            with("Operation", json!(op)),
            "Operation",
            false,
        );
        for field in &fields {
            let schema = &properties[field.as_str()];
            if let Some(value) = wrong_type(schema) {
                add("a field of the wrong type", with(field, value), field, false);
            }
            if schema["enum"].is_array() {
                for value in ["bogus-value", "", &op.to_uppercase()] {
                    if !schema["enum"].as_array().unwrap().contains(&json!(value)) {
                        add("a value outside the enum", with(field, json!(value)), field, false);
                    }
                }
            }
            if schema["type"] == "array"
                && let (Some(min), Some(max)) = (schema["minItems"].as_u64(), schema["maxItems"].as_u64())
            {
                add(
                    "too few items",
                    with(field, json!(vec![1; min as usize - 1])),
                    field,
                    false,
                );
                add(
                    "too many items",
                    with(field, json!(vec![1; max as usize + 1])),
                    field,
                    false,
                );
            }
            if !takes_field(field) {
                continue;
            }
            if let Some((low, high)) = described_range(op, schema) {
                ranges.push((field.to_string(), low, high));
            }
        }
        ranges.sort();
        ranges.dedup();
        for (field, low, high) in &ranges {
            add("a number below its range", with(field, json!(low - 1)), field, false);
            add("a number above its range", with(field, json!(high + 1)), field, false);
        }
        for field in base_fields
            .iter()
            .filter(|f| !["operation", "timeoutMs", "device"].contains(&f.as_str()))
        {
            let mut args = base.clone();
            args.as_object_mut().unwrap().remove(field.as_str());
            add("a required field left out", args, field, false);
        }
        let mut args = base.clone();
        args.as_object_mut().unwrap().remove("operation");
        add("the operation left out", args, "operation", false);
        // (A device is never required: calls go to the selected one.)
        // Refused before the device hears of it: the streams the simulator opened, counted
        // around them, with one control call that does reach it.
        // A barrier first: a probe above that ran into its 1 s timeout on a loaded machine may
        // have its stream opened by the simulator only now; once this call's command is in the
        // log, every stream asked for before it has been counted.
        let barrier = format!("barrier-{tool}-{op}");
        ok(&shell(&client, &format!("echo {barrier}")).await);
        assert!(
            sim.wait_for_log(&format!("echo {barrier}")),
            "the barrier reached the log"
        );
        let before = streams();
        let structural = cases.len();
        for case in &cases {
            check(&client, tool, case, &mut failures).await;
        }
        let control = format!("control-{tool}-{op}");
        ok(&shell(&client, &format!("echo {control}")).await);
        assert!(
            sim.wait_for_log(&format!("echo {control}")),
            "the control reached the log"
        );
        if streams() != before + 1 {
            failures.push(format!(
                "{tool} {op}: one of its {structural} refused calls reached the device"
            ));
        }
        // Hostile strings in every text field it takes (not the shell's own command, nor a
        // script's code: running those is what they are for).
        let mut hostile_cases = Vec::new();
        for field in fields
            .iter()
            .filter(|f| properties[f.as_str()]["type"] == "string" && properties[f.as_str()]["enum"].is_null())
        {
            let beside = base_fields.contains(field) || accepts.contains(field);
            if !beside
                || (tool, field.as_str()) == ("adb-shell", "command")
                || (tool, field.as_str()) == ("script", "code")
            {
                continue;
            }
            let text = hostile().new_tree(&mut runner).unwrap().current();
            let long: String = text.chars().cycle().take(100_000).collect();
            hostile_cases.push(Case {
                what: "a hostile string",
                args: with(field, json!(text)),
                field: field.to_string(),
                may_pass: true,
            });
            hostile_cases.push(Case {
                what: "a 100,000-char string",
                args: with(field, json!(long)),
                field: field.to_string(),
                may_pass: true,
            });
        }
        for case in &hostile_cases {
            let mut wrong = Vec::new();
            check(&client, tool, case, &mut wrong).await;
            failures.extend(wrong);
        }
        for case in cases.iter().chain(&hostile_cases) {
            *kinds.entry(case.what).or_insert(0usize) += 1;
        }
        count += cases.len() + hostile_cases.len();
    }
    let listed = ok(&shell(&client, "ls /data/local/tmp").await);
    assert!(
        !listed["stdout"].as_str().unwrap().contains("pwned"),
        "a hostile string ran on the device: {listed}"
    );
    println!(
        "{count} cases generated from tools/list over {} operations: {kinds:?}",
        every.len()
    );
    assert!(every.len() >= 35, "tools/list declares {} operations", every.len());
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    ok(&shell(&client, "echo still serving").await);
}

/// One case's answer checked: refused by name (or, for a hostile string, taken as text),
/// within the budget, never a panic or a hang.
async fn check(client: &McpClient, tool: &str, case: &Case, failures: &mut Vec<String>) {
    let (error, size) = answer(client, tool, &case.args).await;
    let shown = format!("{tool} {} ({})", cut(&case.args.to_string(), 120), case.what);
    // A text taken as a query may be answered about the text ("… is not on the screen"),
    // quoting it, when the answer still says so in full.
    let quoted = |m: &str| {
        let value = case.args[case.field.as_str()].as_str().unwrap_or_default();
        let start = format!("{:?}", cut(value, 8));
        case.may_pass && !m.contains("[cut:") && m.contains(start.trim_end_matches('"'))
    };
    // A hostile text taken as a query runs like any other; on a loaded machine it may run into
    // the 1 s timeout the case set, which the guard's answer says (naming `timeoutMs`).
    let ran_out = |m: &str| case.may_pass && m.contains("ran past its") && names(m, "timeoutMs");
    let wrong = match &error {
        None if !case.may_pass => Some("accepted".to_string()),
        None => None,
        Some(m) if ran_out(m) => None,
        Some(m) if m.to_lowercase().contains("panick") || m.starts_with("HUNG") => Some(cut(m, 300)),
        Some(m) if !names(m, &case.field) && !quoted(m) => {
            Some(format!("does not name `{}`: {}", case.field, cut(m, 300)))
        }
        Some(_) => None,
    };
    if let Some(wrong) = wrong {
        failures.push(format!("{shown}: {wrong}"));
    } else if size > BUDGET {
        failures.push(format!("{shown}: {size} chars, over the budget"));
    }
}

/// Lone UTF-16 surrogates in a raw JSON line (rmcp's client cannot send them: a Rust string
/// cannot hold one): each line gets a JSON-RPC parse error whose column lies inside the field
/// that held it, and the session goes on.
#[tokio::test]
async fn lone_surrogates_in_any_text_field_get_a_parse_error_pointing_into_that_field() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let every = operations(&client).await;
    client.cancel().await.unwrap();
    let mut child = Server::new(home.path()).args(&["--sim"]).raw_stdio();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    stdin
        .write_all(
            format!(
                "{init}\n{}\n",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    assert!(lines.next_line().await.unwrap().unwrap().contains("\"id\":0"));
    let mut count = 0;
    let mut seen_fields = std::collections::BTreeSet::new();
    for operation in &every {
        for (field, schema) in &operation.properties {
            if schema["type"] != "string"
                || field == "operation"
                || !seen_fields.insert((operation.tool.clone(), field.clone()))
            {
                continue;
            }
            for escape in [r"\ud800", r"\udc00", r"a\ud83dz"] {
                let head = format!(
                    r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"{}","arguments":{{"operation":"{}","{field}":""#,
                    count + 1,
                    operation.tool,
                    operation.op
                );
                let line = format!("{head}{escape}\"}}}}}}");
                stdin.write_all(format!("{line}\n").as_bytes()).await.unwrap();
                let reply = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
                    .await
                    .expect("an answer, not a hang")
                    .unwrap()
                    .expect("the session goes on");
                let reply: Value = serde_json::from_str(&reply).unwrap();
                let message = reply["error"]["message"].as_str().unwrap_or_default();
                assert_eq!(reply["error"]["code"], -32700, "{line}: {reply}");
                let column: usize = message
                    .rsplit("column ")
                    .next()
                    .and_then(|c| c.trim().parse().ok())
                    .unwrap_or_else(|| panic!("{line}: no column in {message:?}"));
                assert!(
                    column > head.len() && column <= line.len(),
                    "{line}: column {column} is not inside `{field}` ({}..{}): {message}",
                    head.len(),
                    line.len()
                );
                assert!(message.contains("escape") || message.contains("surrogate"), "{message}");
                count += 1;
            }
        }
    }
    // Still serving on the same session.
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"method\":\"tools/list\"}\n")
        .await
        .unwrap();
    let last = lines.next_line().await.unwrap().unwrap();
    assert!(last.contains("\"id\":\"last\"") && last.contains("\"tools\""), "{last}");
    println!(
        "{count} cases: lone surrogates in {} text fields, each a -32700 pointing into its field",
        seen_fields.len()
    );
    assert!(count >= 60, "{count} cases");
}
