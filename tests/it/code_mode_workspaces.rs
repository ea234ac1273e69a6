//! Code mode's per-run workspaces and skills, through the real MCP protocol against the
//! simulator: saved tool answers, confinement, `script list`/`clear`, expiry and cleanup, and
//! skills saved in one run, listed as resources and run in another.

use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::common::{McpClient, call, err, ok};
use serde_json::{Value, json};

async fn run(client: &McpClient, code: &str) -> Value {
    ok(&call(client, "script", json!({"operation": "run", "code": code})).await)
}

/// Where the runs live: the workspace's `runs/` on stdio; over HTTP (`--no-auth`, the `local`
/// principal) that principal's own folder, as every HTTP principal's runs are.
fn runs_dir(workspace: &Path) -> std::path::PathBuf {
    if crate::common::over_http() {
        workspace.join("principals/local/runs")
    } else {
        workspace.join("runs")
    }
}

fn run_folders(workspace: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(runs_dir(workspace))
        .map(|read| {
            read.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[tokio::test]
async fn each_run_saves_its_tool_answers_and_stays_inside_its_folder() {
    let home = tempfile::tempdir().unwrap();
    let workspace = home.path().join("ws");
    let ws = workspace.to_str().unwrap();
    let client = crate::common::mcp_server(&["--sim", "--workspace", ws], &[], home.path()).await;

    let out = run(
        &client,
        "const [list, props] = await Promise.all([device.list(), device.properties()]);\n\
         await workspace.write('notes/model.txt', props.summary.model);\n\
         await workspace.write('notes/list.json', list);\n\
         console.log(await workspace.read('notes/model.txt'));\n\
         console.log((await workspace.list()).map((f) => f.path).join(' '));",
    )
    .await;
    let run_id = out["runId"].as_str().unwrap().to_string();
    let printed = out["output"].as_str().unwrap();
    let mut lines = printed.lines();
    assert!(!lines.next().unwrap().is_empty(), "the model was written and read back");
    assert_eq!(
        lines.next().unwrap(),
        "notes/list.json notes/model.txt results/001-device-list.json results/002-device-properties.json"
    );
    let calls: Vec<&str> = out["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(calls[0].starts_with("001 adb-device list ") && calls[1].starts_with("002 adb-device properties "));
    let saved = runs_dir(&workspace)
        .join(&run_id)
        .join("results/002-device-properties.json");
    let full: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert!(full["summary"]["model"].is_string(), "the full answer is on disk");

    // A later call reaches a saved answer by cache get.
    let reference = format!("{run_id}/results/002-device-properties.json");
    let page = ok(&call(
        &client,
        "cache",
        json!({"operation": "get", "id": reference, "filter": "model"}),
    )
    .await);
    assert!(page["matching"].as_u64().unwrap() >= 1, "{page}");
    // And a later run, the same way.
    let later = run(
        &client,
        &format!("const p = await cache.get({{id: '{reference}', filter: 'model'}}); console.log(p.matching > 0);"),
    )
    .await;
    assert_eq!(later["output"], "true\n");

    // Every way out is refused, and says why.
    let probes = [
        "workspace.read('../../../etc/passwd')",
        "workspace.read('/etc/passwd')",
        &format!("workspace.read('../{run_id}/notes/model.txt')"),
        "workspace.write('../escape.txt', 'x')",
        "workspace.write('results/001-device-list.json', 'forged')",
        "workspace.write('skills/evil.js', 'x')",
        "workspace.list('..')",
        "workspace.read('notes/.././../x')",
        "workspace.write('a/b/c/d/e.txt', 'too deep')",
        "cache.get({id: '../../etc/passwd'})",
        &format!("cache.get({{id: '{run_id}/notes/model.txt'}})"),
    ];
    let code: String = probes
        .iter()
        .enumerate()
        .map(|(i, p)| format!("try {{ await {p}; console.log('ALLOWED', {i}); }} catch (e) {{ console.log('refused:', e.message.slice(0, 60)); }}\n"))
        .collect();
    let out = run(&client, &code).await;
    let printed = out["output"].as_str().unwrap();
    assert!(!printed.contains("ALLOWED"), "{printed}");
    assert_eq!(printed.lines().count(), probes.len(), "{printed}");
    println!("{} traversal probes refused:\n{printed}", probes.len());
    assert!(!home.path().join("escape.txt").exists() && !workspace.join("escape.txt").exists());

    // script list shows the runs; clear removes one, and its results with it.
    let listing = ok(&call(&client, "script", json!({"operation": "list"})).await);
    let ids: Vec<&str> = listing["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&run_id.as_str()), "{listing}");
    let entry = listing["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == run_id.as_str())
        .unwrap();
    assert!(
        entry["files"].as_u64().unwrap() == 4 && entry["bytes"].as_u64().unwrap() > 100,
        "{entry}"
    );
    assert!(entry["expiresInS"].as_u64().unwrap() > 3000);
    ok(&call(&client, "script", json!({"operation": "clear", "id": run_id})).await);
    assert!(!runs_dir(&workspace).join(&run_id).exists());
    let gone = call(
        &client,
        "cache",
        json!({"operation": "get", "id": format!("{run_id}/results/001-device-list.json")}),
    )
    .await;
    assert!(
        err(&gone).contains("cleared") || err(&gone).contains("expired"),
        "{}",
        err(&gone)
    );
    let bad = call(&client, "script", json!({"operation": "clear", "id": "../../x"})).await;
    assert!(err(&bad).contains("not a run id"));

    // When the server ends, its runs go; the workspace and its skills stay. (Over HTTP the
    // runs are the principal's, not the connection's: they stay until it is idle for
    // --session-idle-secs, or the server ends.)
    client.cancel().await.unwrap();
    if crate::common::over_http() {
        return;
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !run_folders(&workspace).is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        run_folders(&workspace),
        Vec::<String>::new(),
        "runs removed at shutdown"
    );
}

#[tokio::test]
async fn run_folders_expire_and_old_ones_go_at_start() {
    let home = tempfile::tempdir().unwrap();
    let workspace = home.path().join("ws");
    // A run folder left by an earlier server that ended without cleaning up, two hours old.
    let old = ulid::Ulid::from_datetime(SystemTime::now() - Duration::from_secs(7200)).to_string();
    let runs = runs_dir(&workspace);
    std::fs::create_dir_all(runs.join(&old).join("results")).unwrap();
    std::fs::write(runs.join(&old).join("results/001-x-y.json"), "{}").unwrap();
    std::fs::create_dir_all(runs.join("not-a-run")).unwrap();
    let ws = workspace.to_str().unwrap();
    let client = crate::common::mcp_server(
        &["--sim", "--workspace", ws, "--script-ttl-secs", "2"],
        &[],
        home.path(),
    )
    .await;
    ok(&call(&client, "adb-device", json!({"operation": "list"})).await);
    // On stdio the server's runs are swept at start; an HTTP principal's folder is swept when
    // its runs are first used (the run below), before its run folder is made.
    if !crate::common::over_http() {
        assert_eq!(
            run_folders(&workspace),
            ["not-a-run"],
            "the expired run went at start; other folders stay"
        );
    }

    let out = run(&client, "await device.list(); console.log('ok')").await;
    let id = out["runId"].as_str().unwrap().to_string();
    assert_eq!(
        run_folders(&workspace),
        [id.clone(), "not-a-run".into()],
        "the expired run is gone, other folders stay"
    );
    // The sweeper runs every second when the TTL is this short.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while run_folders(&workspace).contains(&id) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!run_folders(&workspace).contains(&id), "the run expired after 2 s");
    let listing = ok(&call(&client, "script", json!({"operation": "list"})).await);
    assert_eq!(listing["runs"], json!([]));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_skill_saved_in_one_run_is_a_resource_and_runs_in_another() {
    let home = tempfile::tempdir().unwrap();
    let workspace = home.path().join("ws");
    let ws = workspace.to_str().unwrap();
    let client = crate::common::mcp_server(&["--sim", "--workspace", ws], &[], home.path()).await;
    let save = run(
        &client,
        "await skills.save('count-apps', `\n\
           let count = 0, offset = 0, page;\n\
           do {\n\
             page = await app.list({kind: args.kind || 'user', limit: 100, offset});\n\
             count += page.count; offset = page.nextOffset;\n\
           } while (page.hasMore);\n\
           return count;`, 'Counts installed apps of args.kind');\n\
         console.log(await skills.run('count-apps', {kind: 'user'}));",
    )
    .await;
    let by_skill_in_run: u64 = save["output"].as_str().unwrap().trim().parse().unwrap();

    let resources = client.list_all_resources().await.unwrap();
    let skill = resources
        .iter()
        .find(|r| r.uri == "droidmcp://skills/count-apps")
        .expect("the skill is listed as a resource");
    assert_eq!(
        skill.description.as_deref(),
        Some("skill: Counts installed apps of args.kind")
    );
    let read = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "droidmcp://skills/count-apps".to_string(),
        ))
        .await
        .unwrap();
    let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!("not text")
    };
    assert!(text.starts_with("// Counts installed apps") && text.contains("args.kind"));

    let by_skill = ok(&call(
        &client,
        "script",
        json!({"operation": "run", "skill": "count-apps", "args": {"kind": "user"}}),
    )
    .await);
    assert_eq!(by_skill["output"].as_str().unwrap().trim(), by_skill_in_run.to_string());
    let listed = ok(&call(
        &client,
        "adb-app",
        json!({"operation": "list", "kind": "user", "limit": 1}),
    )
    .await);
    assert_eq!(Some(by_skill_in_run), listed["totalCount"].as_u64(), "{listed}");

    for (args, expected) in [
        (json!({"operation": "run", "skill": "nope"}), "count-apps"),
        (
            json!({"operation": "run", "skill": "../../etc/passwd"}),
            "not a skill name",
        ),
        (
            json!({"operation": "run", "skill": "count-apps", "code": "1"}),
            "one of them",
        ),
        (
            json!({"operation": "run", "skill": "count-apps", "args": [1]}),
            "`args` is an object",
        ),
    ] {
        let text = err(&call(&client, "script", args.clone()).await);
        assert!(text.contains(expected), "{args}: {text}");
    }
    let bad_name = run(
        &client,
        "try { await skills.save('a/b', '1') } catch (e) { console.log(e.message) }",
    )
    .await;
    assert!(bad_name["output"].as_str().unwrap().contains("not a skill name"));
    client.cancel().await.unwrap();
    // Over HTTP, the principal's own folder (`--no-auth`'s one principal is `local`).
    let skills = if crate::common::over_http() {
        workspace.join("principals/local/skills")
    } else {
        workspace.join("skills")
    };
    assert!(skills.join("count-apps.js").exists(), "skills outlive the server");
}
