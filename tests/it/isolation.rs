//! Every handle is its principal's. A table of handle kinds (cacheId, ref, runId, a run's saved
//! result, task id, skill name, the resource URIs of entries and skills, the recording) × the
//! operations that name, list, save over or clear them, run for two tokens over HTTP with
//! `--workspace`: Bob's answer for Alice's handle is his answer for a made-up one of the same kind
//! (the id's text replaced), none of his lists shows hers, and what he saves or clears leaves
//! hers as it was.

use rmcp::ClientServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResponse, GetTaskParams, ReadResourceRequestParams};
use serde_json::{Value, json};

use crate::common::*;
use crate::principals::TaskClient;

const ALICE: &str = "alice-0123456789abcdef";
const BOB: &str = "bob-0123456789abcdef0";
const SKILL: &str = "alices-secret-skill";

type Client = rmcp::service::RunningService<rmcp::RoleClient, TaskClient>;

/// An operation that names one handle.
#[derive(Debug, Clone, Copy)]
enum Op {
    CacheGet,
    CacheGetPage,
    CacheResource,
    Tap,
    LongPress,
    ScriptClear,
    RunResult,
    TaskGet,
    TaskCancel,
    SkillRun,
    SkillResource,
    SkillRunInScript,
    SkillReadInScript,
    /// Last of the skill rows: it saves (over Alice's skill, were skills shared).
    SkillSave,
}

/// What a client sees of a tool call: its error message, or its data without the parts that
/// differ from run to run (a run's id, its calls' times).
fn seen(result: &rmcp::model::CallToolResult) -> String {
    let text = || result.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone());
    match &result.structured_content {
        Some(value) if value.get("runId").is_some() => {
            json!({"ok": value["ok"], "output": value["output"], "error": value["error"]}).to_string()
        }
        Some(value) => format!("{:?}: {value}", result.is_error),
        None => format!("{:?}: {}", result.is_error, text().unwrap_or_default()),
    }
}

async fn tool(client: &McpClient, name: &str, args: Value) -> String {
    seen(&call(client, name, args).await)
}

/// Bob's answer for `handle` under `op`.
async fn ask(bob: &McpClient, bob_tasks: &Client, op: Op, handle: &str) -> String {
    let script = |code: &str| json!({"operation": "run", "code": code, "args": {"n": handle}});
    match op {
        Op::CacheGet => tool(bob, "cache", json!({"operation": "get", "id": handle})).await,
        Op::CacheGetPage => {
            tool(
                bob,
                "cache",
                json!({"operation": "get", "id": handle, "offset": 1, "limit": 1}),
            )
            .await
        }
        Op::CacheResource => read(bob, &format!("droidmcp://cache/{handle}")).await,
        Op::Tap => tool(bob, "ui", json!({"operation": "tap", "ref": handle})).await,
        Op::LongPress => tool(bob, "ui", json!({"operation": "long-press", "ref": handle})).await,
        Op::ScriptClear => tool(bob, "script", json!({"operation": "clear", "id": handle})).await,
        Op::RunResult => {
            let id = format!("{handle}/results/001-device-list.json");
            tool(bob, "cache", json!({"operation": "get", "id": id})).await
        }
        Op::TaskGet => match bob_tasks.peer().get_task(GetTaskParams::new(handle)).await {
            Ok(got) => format!("ok: {:?}", got.task.status()),
            Err(e) => format!("error: {e}"),
        },
        Op::TaskCancel => {
            let cancelled = bob_tasks
                .peer()
                .cancel_task(rmcp::model::CancelTaskParams::new(handle))
                .await;
            format!("{:?}", cancelled.map_err(|e| e.to_string()))
        }
        Op::SkillRun => tool(bob, "script", json!({"operation": "run", "skill": handle})).await,
        Op::SkillResource => read(bob, &format!("droidmcp://skills/{handle}")).await,
        Op::SkillRunInScript => tool(bob, "script", script("console.log(await skills.run(args.n))")).await,
        Op::SkillReadInScript => {
            tool(
                bob,
                "script",
                script("console.log(await workspace.read(`skills/${args.n}.js`))"),
            )
            .await
        }
        Op::SkillSave => {
            let code = "console.log(JSON.stringify(await skills.save(args.n, \"console.log('bob')\", \"bob's\")))";
            tool(bob, "script", script(code)).await
        }
    }
}

async fn read(client: &McpClient, uri: &str) -> String {
    match client.read_resource(ReadResourceRequestParams::new(uri)).await {
        Ok(read) => format!("ok: {read:?}"),
        Err(e) => format!("error: {e}"),
    }
}

#[tokio::test]
async fn no_principal_can_read_list_overwrite_or_learn_of_anothers_handles() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().to_str().unwrap();
    let (a, b) = (format!("alice={ALICE}"), format!("bob={BOB}"));
    let server = HttpServer::start(
        &["--sim", "--workspace", ws, "--token", &a, "--token", &b],
        &[],
        home.path(),
    )
    .await;
    let alice = ().serve_with_lifecycle(server.transport(Some(ALICE)), modern()).await.unwrap();
    let alice_tasks = TaskClient
        .serve_with_lifecycle(server.transport(Some(ALICE)), modern())
        .await
        .unwrap();
    let bob = ().serve_with_lifecycle(server.transport(Some(BOB)), modern()).await.unwrap();
    let bob_tasks = TaskClient
        .serve_with_lifecycle(server.transport(Some(BOB)), modern())
        .await
        .unwrap();

    // Alice makes one handle of each kind.
    let dump = ok(&call(&alice, "ui", json!({"operation": "dump"})).await);
    let reference = dump["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["label"] == "Settings")
        .unwrap()["ref"]
        .as_str()
        .unwrap()
        .to_string();
    ok(&call(&alice, "ui", json!({"operation": "tap", "ref": reference})).await);
    let props = ok(&call(&alice, "adb-device", json!({"operation": "properties"})).await);
    let cache_id = props["cacheId"].as_str().unwrap().to_string();
    let run = ok(&call(
        &alice,
        "script",
        json!({"operation": "run", "code": "console.log((await device.list()).devices.length)"}),
    )
    .await);
    let run_id = run["runId"].as_str().unwrap().to_string();
    let saved = ok(&call(
        &alice,
        "script",
        json!({"operation": "run", "code": format!("await skills.save({SKILL:?}, \"console.log('alice ran her own skill')\", \"alice's\")")}),
    )
    .await);
    assert_eq!(saved["ok"], true, "{saved}");
    let long = CallToolRequestParams::new("script").with_arguments(
        json!({"operation": "run", "code": "await sleep(100); console.log(1)"})
            .as_object()
            .cloned()
            .unwrap(),
    );
    let CallToolResponse::Task(created) = alice_tasks.call_tool_once(long).await.unwrap() else {
        panic!("a script run from a client that takes tasks is a task");
    };
    let task_id = created.task.task_id.clone();

    // None of Bob's lists shows Alice's handles (asked before he makes any of his own), and his
    // recording holds nothing of hers.
    let mut cases = 0;
    let resources = bob.list_all_resources().await.unwrap();
    let lists = [
        ("script list", tool(&bob, "script", json!({"operation": "list"})).await),
        ("cache list", tool(&bob, "cache", json!({"operation": "list"})).await),
        ("resources/list", format!("{resources:?}")),
        (
            "skills.list and workspace.list in a script",
            tool(
                &bob,
                "script",
                json!({"operation": "run", "code": "console.log(JSON.stringify([await skills.list(), await workspace.list('skills')]))"}),
            )
            .await,
        ),
        ("flow export", tool(&bob, "flow", json!({"operation": "export"})).await),
    ];
    for (what, list) in &lists {
        for handle in [&cache_id, &run_id, &task_id, &SKILL.to_string()] {
            assert!(
                !list.contains(handle.as_str()),
                "Bob's {what} shows Alice's {handle}: {list}"
            );
            cases += 1;
        }
    }
    let (_, export) = &lists[4];
    assert!(export.contains("nothing is recorded"), "Bob recorded nothing: {export}");

    // Made-up handles of each kind, and the table.
    let nobody = |kind: &str, i: usize| match kind {
        "cacheId" => format!("props-{}", ulid::Ulid::generate()),
        "ref" => "e999".to_string(),
        "runId" => ulid::Ulid::generate().to_string(),
        "taskId" => format!("no-such-task-{i}"),
        _ => format!("made-up-skill-{i}"),
    };
    let table: Vec<(&str, &str, Op)> = vec![
        ("cacheId", cache_id.as_str(), Op::CacheGet),
        ("cacheId", &cache_id, Op::CacheGetPage),
        ("cacheId", &cache_id, Op::CacheResource),
        ("ref", &reference, Op::Tap),
        ("ref", &reference, Op::LongPress),
        ("runId", &run_id, Op::ScriptClear),
        ("runId", &run_id, Op::RunResult),
        ("taskId", &task_id, Op::TaskGet),
        ("taskId", &task_id, Op::TaskCancel),
        ("skill", SKILL, Op::SkillRun),
        ("skill", SKILL, Op::SkillResource),
        ("skill", SKILL, Op::SkillRunInScript),
        ("skill", SKILL, Op::SkillReadInScript),
        ("skill", SKILL, Op::SkillSave),
    ];
    for (i, (kind, handle, op)) in table.iter().enumerate() {
        let made_up = nobody(kind, i);
        let theirs = ask(&bob, &bob_tasks, *op, handle).await.replace(handle, "HANDLE");
        let nobodys = ask(&bob, &bob_tasks, *op, &made_up).await.replace(&made_up, "HANDLE");
        println!("bob, {kind} {op:?}: {theirs}");
        assert_eq!(
            theirs, nobodys,
            "{kind} {op:?}: Bob's answer for Alice's handle must be the one for a made-up handle"
        );
        cases += 1;
    }

    // What Bob clears is his: Alice's entries, runs, recording and task are still there, and her
    // skill still runs her own code.
    tool(&bob, "cache", json!({"operation": "clear"})).await;
    tool(&bob, "flow", json!({"operation": "reset"})).await;
    let hers = [
        (
            "her cache entry",
            ok(&call(&alice, "cache", json!({"operation": "get", "id": cache_id, "limit": 1})).await).to_string(),
            "\"total\":685",
        ),
        (
            "her skill",
            ok(&call(&alice, "script", json!({"operation": "run", "skill": SKILL})).await)["output"].to_string(),
            "alice ran her own skill",
        ),
        (
            "her run",
            ok(&call(&alice, "script", json!({"operation": "list"})).await)["runs"].to_string(),
            run_id.as_str(),
        ),
        (
            "her recording",
            ok(&call(&alice, "flow", json!({"operation": "export"})).await).to_string(),
            "Settings",
        ),
        (
            "her task",
            format!(
                "{:?}",
                alice_tasks
                    .peer()
                    .get_task(GetTaskParams::new(task_id.clone()))
                    .await
                    .map(|t| t.task.task.task_id)
            ),
            task_id.as_str(),
        ),
    ];
    for (what, got, expected) in &hers {
        assert!(got.contains(expected), "{what} after Bob's calls: {got}");
        cases += 1;
    }
    // Each principal's skills are in a folder of its own under the workspace.
    let folder = |who: &str| workspace.path().join("principals").join(who).join("skills");
    let file = |who: &str| std::fs::read_to_string(folder(who).join(format!("{SKILL}.js"))).unwrap_or_default();
    assert!(
        file("alice").contains("alice ran her own skill"),
        "{:?}",
        folder("alice")
    );
    assert!(file("bob").contains("console.log('bob')"), "{:?}", folder("bob"));
    eprintln!("{cases} cases");
    for client in [alice, bob] {
        client.cancel().await.unwrap();
    }
    for client in [alice_tasks, bob_tasks] {
        client.cancel().await.unwrap();
    }
    server.terminate().await;
}

/// Each principal's script runs are in a folder of its own on disk (`principals/NAME/runs`,
/// 0700), never in one folder shared by all: the same file name written by two principals' runs
/// is two files, and neither's workspace shows the other's.
#[tokio::test]
async fn each_principals_script_runs_are_in_a_folder_of_its_own() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().to_str().unwrap();
    let (a, b) = (format!("alice={ALICE}"), format!("bob={BOB}"));
    let server = HttpServer::start(
        &["--sim", "--workspace", ws, "--token", &a, "--token", &b],
        &[],
        home.path(),
    )
    .await;
    let alice = ().serve_with_lifecycle(server.transport(Some(ALICE)), modern()).await.unwrap();
    let bob = ().serve_with_lifecycle(server.transport(Some(BOB)), modern()).await.unwrap();
    let mut runs = Vec::new();
    for (who, client) in [("alice", &alice), ("bob", &bob)] {
        let code = format!(
            "await workspace.write('mine.txt', {who:?}); console.log((await workspace.list()).map((f) => f.path).join(' '))"
        );
        let run = ok(&call(client, "script", json!({"operation": "run", "code": code})).await);
        println!("{who}: {run}");
        assert_eq!(run["output"], "mine.txt\n", "{who} sees only its own run's file");
        runs.push((who, run["runId"].as_str().unwrap().to_string()));
    }
    for (who, run) in &runs {
        let folder = workspace.path().join("principals").join(who).join("runs");
        let file = std::fs::read_to_string(folder.join(run).join("mine.txt")).unwrap_or_default();
        assert_eq!(file, *who, "{who}'s run is in {}", folder.display());
        let mode = std::fs::metadata(&folder).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", folder.display());
        assert!(
            !workspace.path().join("runs").join(run).exists(),
            "no run in a shared folder"
        );
    }
    for client in [alice, bob] {
        client.cancel().await.unwrap();
    }
    server.terminate().await;
}
