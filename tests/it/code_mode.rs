//! Code mode through the real MCP protocol: real tasks as one `script` call against the
//! simulator, each compared with doing the same through the individual tools (chars a model
//! reads, calls it makes).

use crate::common::{McpClient, call, ok, response_chars};
use serde_json::{Value, json};

/// What a way of doing a task cost the model: chars read and calls made, and its answer.
struct Cost {
    chars: usize,
    calls: usize,
    answer: String,
}

async fn by_script(client: &McpClient, code: &str) -> Cost {
    let result = call(client, "script", json!({"operation": "run", "code": code})).await;
    let chars = response_chars(&result);
    let out = ok(&result);
    Cost {
        chars,
        calls: 1,
        answer: out["output"].as_str().unwrap().trim().to_string(),
    }
}

/// Calls the tools one by one, adding up what the model reads.
struct ByTools<'a> {
    client: &'a McpClient,
    chars: usize,
    calls: usize,
}

impl ByTools<'_> {
    async fn call(&mut self, tool: &str, args: Value) -> Value {
        let result = call(self.client, tool, args).await;
        self.chars += response_chars(&result);
        self.calls += 1;
        ok(&result)
    }

    fn done(self, answer: String) -> Cost {
        Cost {
            chars: self.chars,
            calls: self.calls,
            answer,
        }
    }
}

fn report(task: &str, script: &Cost, tools: &Cost) {
    println!(
        "{task}: script {} chars in {} call, tools {} chars in {} calls ({:.2}x)",
        script.chars,
        script.calls,
        tools.chars,
        tools.calls,
        script.chars as f64 / tools.chars as f64
    );
    assert_eq!(script.answer, tools.answer, "{task}: both ways give the same answer");
    assert!(
        script.chars * 3 <= tools.chars,
        "{task}: the script returns at most a third"
    );
}

#[tokio::test]
async fn three_tasks_as_one_script_each_cost_a_fraction_of_the_tool_calls() {
    let home = tempfile::tempdir().unwrap();
    // Two servers, two fresh devices: each way starts from the same launcher.
    let scripted = crate::common::mcp_server(&["--sim"], &[], home.path()).await;
    let manual = crate::common::mcp_server(&["--sim"], &[], home.path()).await;

    // 1. Open Settings, tap "Network & internet", and say whether the screen changed.
    let script = by_script(
        &scripted,
        "await app.launch({package: 'com.android.settings'});
         const found = await ui.find({text: 'Network & internet'});
         const tapped = await ui.tap({ref: found.matches[0].ref, observe: true});
         console.log(tapped.observed.changed, tapped.focused.activity);",
    )
    .await;
    let mut tools = ByTools {
        client: &manual,
        chars: 0,
        calls: 0,
    };
    tools
        .call(
            "adb-app",
            json!({"operation": "launch", "package": "com.android.settings"}),
        )
        .await;
    let found = tools
        .call("ui", json!({"operation": "find", "text": "Network & internet"}))
        .await;
    let target = found["matches"][0]["ref"].clone();
    let tapped = tools
        .call("ui", json!({"operation": "tap", "ref": target, "observe": true}))
        .await;
    let answer = format!(
        "{} {}",
        tapped["observed"]["changed"],
        tapped["focused"]["activity"].as_str().unwrap()
    );
    report("open Settings, tap Network & internet", &script, &tools.done(answer));

    // 2. Which packages crashed, according to the log?
    let script = by_script(
        &scripted,
        "const log = await logcat.read({lines: 0});
         console.log([...new Set(log.crashes.map((c) => c.process))].sort().join(' '));",
    )
    .await;
    let mut tools = ByTools {
        client: &manual,
        chars: 0,
        calls: 0,
    };
    let log = tools.call("adb-logcat", json!({"operation": "read"})).await;
    let mut crashed: Vec<&str> = log["crashes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["process"].as_str())
        .collect();
    crashed.sort();
    crashed.dedup();
    report("crashing packages", &script, &tools.done(crashed.join(" ")));

    // 3. Page through the user apps, 5 at a time, and count them.
    let script = by_script(
        &scripted,
        "let count = 0, offset = 0, page;
         do {
           page = await app.list({kind: 'user', limit: 5, offset});
           count += page.count; offset = page.nextOffset;
         } while (page.hasMore);
         console.log(count);",
    )
    .await;
    let mut tools = ByTools {
        client: &manual,
        chars: 0,
        calls: 0,
    };
    let (mut count, mut offset) = (0, 0);
    loop {
        let page = tools
            .call(
                "adb-app",
                json!({"operation": "list", "kind": "user", "limit": 5, "offset": offset}),
            )
            .await;
        count += page["count"].as_u64().unwrap();
        if page["hasMore"] != true {
            break;
        }
        offset = page["nextOffset"].as_u64().unwrap();
    }
    report("count the user apps", &script, &tools.done(count.to_string()));
    scripted.cancel().await.unwrap();
    manual.cancel().await.unwrap();
}

#[tokio::test]
async fn script_errors_and_limits_come_back_as_tool_errors() {
    let home = tempfile::tempdir().unwrap();
    let client = crate::common::mcp_server(&["--sim"], &[], home.path()).await;
    let failed = call(
        &client,
        "script",
        json!({"operation": "run", "code": "console.log('so far');\nawait app.info({package: 'no.such.app'});"}),
    )
    .await;
    assert_eq!(failed.is_error, Some(true));
    let body = failed.structured_content.expect("the run's record");
    assert_eq!(
        body["output"], "so far\n",
        "what was printed before the error comes back"
    );
    let error = body["error"].as_str().unwrap();
    assert!(error.contains("not installed") && error.contains("line 2"), "{error}");

    let spin = call(
        &client,
        "script",
        json!({"operation": "run", "code": "for (;;) {}", "timeoutMs": 300}),
    )
    .await;
    assert_eq!(spin.is_error, Some(true));
    let error = spin.structured_content.unwrap()["error"].as_str().unwrap().to_string();
    assert!(error.contains("time limit of 300 ms"), "{error}");

    // The server goes on serving.
    ok(&call(&client, "adb-device", json!({"operation": "list"})).await);
    client.cancel().await.unwrap();
}

fn resource_text(read: &rmcp::model::ReadResourceResult) -> String {
    match &read.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("not text: {other:?}"),
    }
}

/// The typed API declares every operation tools/list offers, and every worked example runs.
#[tokio::test]
async fn the_api_resource_matches_tools_list_and_its_examples_run() {
    let home = tempfile::tempdir().unwrap();
    let client = crate::common::mcp_server(&["--sim"], &[], home.path()).await;
    let read = |uri: &str| client.read_resource(rmcp::model::ReadResourceRequestParams::new(uri.to_string()));
    let dts = resource_text(&read("droidmcp://api/droidmcp.d.ts").await.unwrap());
    let namespaces = [
        ("adb-device", "device"),
        ("adb-app", "app"),
        ("ui", "ui"),
        ("adb-logcat", "logcat"),
        ("adb-shell", "shell"),
        ("cache", "cache"),
    ];
    let tools = client.list_all_tools().await.unwrap();
    let mut operations = 0;
    for tool in &tools {
        if tool.name == "script" {
            continue;
        }
        let (_, ns) = namespaces
            .iter()
            .find(|(t, _)| *t == tool.name)
            .unwrap_or_else(|| panic!("{} has no namespace in the script API", tool.name));
        let start = dts
            .find(&format!("declare const {ns}: {{\n"))
            .unwrap_or_else(|| panic!("{ns} is not declared"));
        let block = &dts[start..start + dts[start..].find("};").unwrap()];
        for op in tool.input_schema["properties"]["operation"]["enum"].as_array().unwrap() {
            let op = op.as_str().unwrap();
            let name = droidmcp::script::api::function_name(op);
            assert!(
                block.contains(&format!("  {name}(args?")),
                "{ns}.{name} ({op}) is not declared"
            );
            operations += 1;
        }
    }

    // What the sandbox adds beside the tools (args, sleep, workspace, skills) is there as declared.
    let mut members = Vec::new();
    for block in dts.split("declare ").skip(1) {
        let head = block.split([':', '(', ' ']).nth(1).unwrap_or_default();
        if block.starts_with("function ") {
            members.push(head.to_string());
        } else if block.starts_with("const ") && !namespaces.iter().any(|(_, ns)| *ns == head) {
            let body = &block[..block.find("\n}").or_else(|| block.find(";\n")).unwrap()];
            let methods: Vec<String> = body
                .lines()
                .filter_map(|l| {
                    l.strip_prefix("  ")?
                        .split_once('(')
                        .map(|(m, _)| format!("{head}.{m}"))
                })
                .collect();
            if methods.is_empty() {
                members.push(head.to_string());
            }
            members.extend(methods);
        }
    }
    assert!(members.len() >= 8, "{members:?}");
    let code: String = members
        .iter()
        .map(|m| format!("console.log('{m}', typeof {m});\n"))
        .collect();
    let out = ok(&call(&client, "script", json!({"operation": "run", "code": code})).await);
    for line in out["output"].as_str().unwrap().lines() {
        assert!(
            !line.ends_with(" undefined"),
            "declared but missing in the sandbox: {line}"
        );
    }

    let examples = resource_text(&read("droidmcp://api/examples.md").await.unwrap());
    let scripts: Vec<&str> = examples
        .split("```js\n")
        .skip(1)
        .map(|s| s.split("```").next().unwrap())
        .collect();
    assert!((5..=8).contains(&scripts.len()), "{} examples", scripts.len());
    for code in &scripts {
        let result = call(&client, "script", json!({"operation": "run", "code": code})).await;
        let out = ok(&result);
        assert!(!out["output"].as_str().unwrap().is_empty(), "{code} printed nothing");
    }
    println!(
        "droidmcp.d.ts: {} chars, {operations} operations as tools/list, {} sandbox members ({}); {} examples ran",
        dts.chars().count(),
        members.len(),
        members.join(" "),
        scripts.len()
    );
    client.cancel().await.unwrap();
}

/// At most four runs at once: the fifth is refused at once, and a slot frees when a run ends.
#[tokio::test]
async fn concurrent_runs_are_bounded() {
    let home = tempfile::tempdir().unwrap();
    let client = std::sync::Arc::new(crate::common::mcp_server(&["--sim"], &[], home.path()).await);
    let slow = json!({"operation": "run", "code": "await shell.run({command: 'sleep 1'}); console.log('done')"});
    let runs: Vec<_> = (0..5)
        .map(|_| {
            let (client, slow) = (client.clone(), slow.clone());
            tokio::spawn(async move { call(&client, "script", slow).await })
        })
        .collect();
    let mut refused = 0;
    for run in runs {
        let result = run.await.unwrap();
        if result.is_error == Some(true) {
            let text = crate::common::err(&result);
            assert!(text.contains("already running"), "{text}");
            refused += 1;
        } else {
            assert_eq!(ok(&result)["output"], "done\n");
        }
    }
    assert_eq!(refused, 1, "four ran, one was refused");
    let again = call(&client, "script", json!({"operation": "run", "code": "console.log(1)"})).await;
    assert_eq!(ok(&again)["output"], "1\n", "the slots are free again");
}
