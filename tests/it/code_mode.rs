//! Code mode through the real MCP protocol: real tasks as one `script` call against the
//! simulator, each compared with doing the same through the individual tools (chars a model
//! reads, calls it makes).

use crate::common::{McpClient, Running, Server, Transport, call, ok, response_chars, status_kib};
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

/// An element not on the screen is an error of a kind (issue 43): the result's
/// `_meta["droidmcp/code"]` is `not_found`, and a script catches it as `e.code`, for a tap, a ref
/// and a wait alike; an error of no kind (an ambiguous target) has no code.
#[tokio::test]
async fn an_element_not_on_the_screen_is_a_not_found_error_in_a_script_too() {
    let home = tempfile::tempdir().unwrap();
    let client = crate::common::mcp_server(&["--sim"], &[], home.path()).await;
    let tapped = call(&client, "ui", json!({"operation": "tap", "text": "No such button"})).await;
    assert_eq!(tapped.is_error, Some(true));
    let meta = tapped.meta.as_ref().expect("the error's _meta");
    assert_eq!(meta.0["droidmcp/code"], "not_found", "{tapped:?}");
    let unknown = call(&client, "ui", json!({"operation": "tap", "ref": "e999"})).await;
    assert_eq!(unknown.meta, None, "an unknown ref is a mistake, no kind: {unknown:?}");
    let code = "const codes = [];\n\
        for (const f of [() => ui.tap({text: 'No such button'}), () => ui.wait({text: 'No such button', timeoutMs: 300}), () => app.info({package: 'no.such.app'})]) {\n\
          try { await f(); codes.push('ok'); } catch (e) { codes.push(String(e.code)); }\n\
        }\n\
        console.log(codes.join(' '));";
    let out = ok(&call(&client, "script", json!({"operation": "run", "code": code})).await);
    assert_eq!(out["output"], "not_found not_found undefined\n", "{out}");
    client.cancel().await.unwrap();
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
        ("flow", "flow"),
    ];
    let mut operations = 0;
    for listed in crate::common::operations(&client).await {
        if listed.tool == "script" {
            continue;
        }
        let (_, ns) = namespaces
            .iter()
            .find(|(t, _)| *t == listed.tool)
            .unwrap_or_else(|| panic!("{} has no namespace in the script API", listed.tool));
        let start = dts
            .find(&format!("declare const {ns}: {{\n"))
            .unwrap_or_else(|| panic!("{ns} is not declared"));
        let block = &dts[start..start + dts[start..].find("};").unwrap()];
        let name = droidmcp::script::api::function_name(&listed.op);
        assert!(
            block.contains(&format!("  {name}(args?")),
            "{ns}.{name} ({}) is not declared",
            listed.op
        );
        operations += 1;
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

/// At most four runs at once on the server (`--script-slots`): the fifth is refused at once, and
/// a slot frees when a run ends. A session's own bound (`--script-session-slots`, default 2)
/// is met first.
/// A client that asks for progress hears of each call a script makes as it ends: one step each,
/// numbered, with the call's line, and nothing from inside the tools (a wait's own polls would
/// count something else).
#[tokio::test]
async fn a_script_reports_each_call_as_progress() {
    let home = tempfile::tempdir().unwrap();
    let recorder = crate::common::ProgressRecorder::default();
    let client = crate::common::mcp_server_with(recorder.clone(), &["--sim"], &[], home.path()).await;
    let code = "await device.list(); await ui.dump({ limit: 1 }); \
        try { await ui.wait({ text: 'Nothing like this', timeoutMs: 600 }); } catch (e) {} \
        await app.list({ limit: 1 });";
    let result = crate::common::call_with_progress(&client, "script", json!({"operation": "run", "code": code})).await;
    assert_eq!(ok(&result)["callCount"], 4);
    // Notifications may trail the answer by a moment.
    for _ in 0..50 {
        if recorder.0.lock().unwrap().len() >= 4 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let seen = recorder.0.lock().unwrap().clone();
    let steps: Vec<(f64, String)> = seen
        .iter()
        .map(|p| (p.progress, p.message.clone().unwrap_or_default()))
        .collect();
    assert_eq!(
        steps,
        [
            (1.0, "001 adb-device list ok".to_string()),
            (2.0, "002 ui dump ok".to_string()),
            (3.0, "003 ui wait error".to_string()),
            (4.0, "004 adb-app list ok".to_string()),
        ]
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn concurrent_runs_are_bounded() {
    let home = tempfile::tempdir().unwrap();
    let client = std::sync::Arc::new(
        crate::common::mcp_server(&["--sim", "--script-session-slots", "4"], &[], home.path()).await,
    );
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
            assert!(text.contains("its limit"), "{text}");
            refused += 1;
        } else {
            assert_eq!(ok(&result)["output"], "done\n");
        }
    }
    assert_eq!(refused, 1, "four ran, one was refused");
    let again = call(&client, "script", json!({"operation": "run", "code": "console.log(1)"})).await;
    assert_eq!(ok(&again)["output"], "1\n", "the slots are free again");

    // The session's bound, at its default of 2.
    let home = tempfile::tempdir().unwrap();
    let client = std::sync::Arc::new(crate::common::mcp_server(&["--sim"], &[], home.path()).await);
    let runs: Vec<_> = (0..3)
        .map(|_| {
            let (client, slow) = (client.clone(), slow.clone());
            tokio::spawn(async move { call(&client, "script", slow).await })
        })
        .collect();
    let mut refusals = Vec::new();
    for run in runs {
        let result = run.await.unwrap();
        if result.is_error == Some(true) {
            refusals.push(crate::common::err(&result));
        }
    }
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert!(
        refusals[0].contains("this session already runs 2 scripts"),
        "{}",
        refusals[0]
    );
}

/// Sends `script run {code}` as a request the test can cancel.
async fn start_script(client: &McpClient, code: &str) -> rmcp::service::RequestHandle<rmcp::RoleClient> {
    let mut params = rmcp::model::CallToolRequestParams::new("script");
    params.arguments = json!({"operation": "run", "code": code, "timeoutMs": 60_000})
        .as_object()
        .cloned();
    let request = rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
    client
        .peer()
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .unwrap()
}

/// Scripts run on threads of their own: four busy loops on a 2-core host leave the server's
/// async workers free (a plain call once waited 5-7 s behind two or three).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_call_answers_while_four_scripts_spin() {
    let home = tempfile::tempdir().unwrap();
    let client = crate::common::mcp_server(&["--sim", "--script-session-slots", "4"], &[], home.path()).await;
    ok(&call(&client, "adb-device", json!({"operation": "list"})).await);
    let mut spinning = Vec::new();
    for _ in 0..4 {
        spinning.push(start_script(&client, "for (;;) {}").await);
    }
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let started = std::time::Instant::now();
    let listed = ok(&call(&client, "adb-device", json!({"operation": "list"})).await);
    let took = started.elapsed();
    println!("adb-device list while four scripts spin: {} ms", took.as_millis());
    assert!(!listed["devices"].as_array().unwrap().is_empty());
    // Behind the busy scripts, the call would wait for their 60 s deadline; the bound is wide so
    // a loaded host cannot fail it, and the printed figure is the measure.
    assert!(
        took < std::time::Duration::from_secs(10),
        "a plain call waited {took:?} behind busy scripts"
    );
    for run in spinning {
        run.cancel(Some("done".into())).await.unwrap();
    }
    client.cancel().await.unwrap();
}

/// A cancelled busy script stops in the sandbox, and its slot is free again at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_busy_script_frees_its_slot_at_once() {
    let home = tempfile::tempdir().unwrap();
    let client = crate::common::mcp_server(
        &["--sim", "--script-slots", "1", "--script-session-slots", "1"],
        &[],
        home.path(),
    )
    .await;
    let busy = start_script(&client, "for (;;) {}").await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let refused = call(&client, "script", json!({"operation": "run", "code": "console.log(1)"})).await;
    assert!(
        crate::common::err(&refused).contains("its limit"),
        "the one slot is taken"
    );
    let cancelled = std::time::Instant::now();
    busy.cancel(Some("enough".into())).await.unwrap();
    let freed = loop {
        let result = call(&client, "script", json!({"operation": "run", "code": "console.log(1)"})).await;
        if result.is_error != Some(true) {
            assert_eq!(ok(&result)["output"], "1\n");
            break cancelled.elapsed();
        }
        assert!(
            cancelled.elapsed() < std::time::Duration::from_secs(10),
            "the slot never came back"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    };
    println!(
        "a cancelled busy script's slot was free {} ms after the cancel",
        freed.as_millis()
    );
    // A slot held to the run's 60 s deadline is the failure; 10 s leaves room for a loaded host.
    assert!(freed < std::time::Duration::from_secs(10), "{freed:?}");
    client.cancel().await.unwrap();
}

/// A script's arguments are measured before they leave the sandbox (one over 1 MiB is refused),
/// and what its pending calls hold outside it is bounded (4 MiB): 150 calls of 100 KB each in
/// flight cost the server a bounded amount of memory.
#[tokio::test]
async fn big_and_many_pending_arguments_are_refused_and_memory_stays_bounded() {
    // The device in its own process, so only the server is measured.
    let sim = crate::common::SimProcess::start(&[]);
    let home = tempfile::tempdir().unwrap();
    let target = format!("tcp:{}", sim.addr);
    let server = Server::new(home.path())
        .args(&["--adb", &target])
        .transport(Transport::Stdio);
    let Running { client, pid, .. } = server.serve_with(()).await;
    let pid = pid.expect("a stdio server's pid");
    ok(&call(&client, "adb-device", json!({"operation": "list"})).await);
    let before = status_kib(pid, "VmRSS");
    let huge = call(
        &client,
        "script",
        json!({"operation": "run", "code": "await shell.run({command: 'echo ' + 'x'.repeat(20 << 20)})"}),
    )
    .await;
    let said = crate::common::err(&huge);
    assert!(
        said.contains("a call takes") && said.contains("workspace.write"),
        "{said}"
    );
    let code = "const big = 'x'.repeat(100000);\n\
                const runs = [];\n\
                for (let i = 0; i < 150; i++) runs.push(shell.run({command: 'sleep 1 #' + big}));\n\
                // Over the per-call limit: refused in the sandbox, never copied out.\n\
                const huge = 'y'.repeat(2 << 20);\n\
                for (let i = 0; i < 150; i++) runs.push(shell.run({command: huge}).catch((e) => { if (!e.message.includes('a call takes')) throw e; return 'refused'; }));\n\
                const settled = await Promise.allSettled(runs);\n\
                const held = settled.filter((r) => r.status === 'rejected' && r.reason.message.includes('await some')).length;\n\
                const done = settled.filter((r) => r.status === 'fulfilled' && r.value !== 'refused').length;\n\
                const big_refused = settled.filter((r) => r.value === 'refused').length;\n\
                const others = settled.filter((r) => r.status === 'rejected' && !r.reason.message.includes('await some')).map((r) => r.reason.message.slice(0, 120));\n\
                console.log(JSON.stringify({ held, done, big_refused, other: settled.length - held - done - big_refused, first_other: others[0] }));";
    let out = ok(&call(
        &client,
        "script",
        json!({"operation": "run", "code": code, "timeoutMs": 60000}),
    )
    .await);
    let counts: Value = serde_json::from_str(out["output"].as_str().unwrap().trim()).unwrap();
    let after = status_kib(pid, "VmRSS");
    println!(
        "150 pending calls of 100 KB and 150 of 2 MB: {counts}; server RSS {} MiB before, {} MiB after (+{} MiB)",
        before / 1024,
        after / 1024,
        after.saturating_sub(before) / 1024
    );
    assert!(
        counts["held"].as_u64().unwrap() >= 50,
        "most were refused while others were in flight: {counts}"
    );
    assert!(counts["done"].as_u64().unwrap() >= 1, "{counts}");
    assert_eq!(counts["big_refused"], 150, "{counts}");
    assert_eq!(counts["other"], 0, "{counts}");
    assert!(
        after.saturating_sub(before) <= 64 * 1024,
        "RSS grew by {} KiB",
        after - before
    );
    client.cancel().await.unwrap();
}

/// A script installs only from the install folders, with one refusal whether the path exists or
/// not: it learns nothing about the host's files.
#[tokio::test]
async fn a_script_installs_only_from_the_install_folders() {
    let home = tempfile::tempdir().unwrap();
    let client = crate::common::mcp_server(&["--sim"], &[], home.path()).await;
    let code = "for (const path of ['/etc/passwd', '/no/such/file.apk']) {\n\
                  try { await app.install({ path }); console.log('installed'); }\n\
                  catch (e) { console.log(e.message.split(path).join('PATH')); }\n\
                }";
    let out = ok(&call(&client, "script", json!({"operation": "run", "code": code})).await);
    let lines: Vec<&str> = out["output"].as_str().unwrap().lines().collect();
    println!("install from a script: {lines:?}");
    assert_eq!(lines.len(), 2);
    assert_eq!(
        lines[0], lines[1],
        "the refusal tells an existing path from a missing one"
    );
    assert!(lines[0].contains("not under an install folder"), "{}", lines[0]);
    client.cancel().await.unwrap();
}

/// Skills have a quota: a script saving skills past it is refused, saying the quota and its flags.
#[tokio::test]
async fn saving_skills_past_the_quota_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let client =
        crate::common::mcp_server(&["--sim", "--skills-max", "5", "--skills-mib", "1"], &[], home.path()).await;
    let code = "let saved = 0;\n\
                try { for (let i = 0; i < 50; i++) { await skills.save('s' + i, 'console.log(' + i + ')'); saved++; } }\n\
                catch (e) { console.log(saved, e.message); }";
    let out = ok(&call(&client, "script", json!({"operation": "run", "code": code})).await);
    let said = out["output"].as_str().unwrap();
    println!("saving 50 skills against --skills-max 5: {said}");
    assert!(said.starts_with("5 ") && said.contains("--skills-max"), "{said}");
    // Replacing a saved skill takes no more room.
    let again =
        "for (let i = 0; i < 20; i++) await skills.save('s' + (i % 5), 'console.log(2)'); console.log('replaced');";
    let out = ok(&call(&client, "script", json!({"operation": "run", "code": again})).await);
    assert_eq!(out["output"], "replaced\n");
    client.cancel().await.unwrap();
    // Bytes too: ten skills of 100,000 chars fit 1 MiB, the eleventh does not.
    let home = tempfile::tempdir().unwrap();
    let client = crate::common::mcp_server(&["--sim", "--skills-mib", "1"], &[], home.path()).await;
    let big = "let saved = 0; const code = '//' + 'x'.repeat(99990);\n\
               try { for (let i = 0; i < 20; i++) { await skills.save('b' + i, code); saved++; } }\n\
               catch (e) { console.log(saved, e.message); }";
    let out = ok(&call(&client, "script", json!({"operation": "run", "code": big})).await);
    let said = out["output"].as_str().unwrap();
    assert!(said.starts_with("10 ") && said.contains("1 MiB"), "{said}");
    client.cancel().await.unwrap();
}
