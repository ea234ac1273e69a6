//! Outside attack on `--state` sharing of flow recordings and skill removal between two
//! `droidmcp serve --http` instances (docs/http.md).

use serde_json::{Value, json};

use crate::common::{HttpServer, SimProcess, login_with_eye};
use crate::team::{ALICE, BOB, call, everything_in};

const LOGIN: &str = "org.droidmcp.demo.login";

/// Two instances on one sim and one redis; extra flags appended.
async fn two(
    sim: &SimProcess,
    state: &str,
    home: &std::path::Path,
    extra: &[&str],
) -> (HttpServer, HttpServer, Vec<tempfile::TempDir>) {
    let target = format!("tcp:{}", sim.addr);
    let (alice, bob) = (format!("alice={ALICE}"), format!("bob={BOB}"));
    let mut servers = Vec::new();
    let mut dirs = Vec::new();
    for _ in 0..2 {
        let ws = tempfile::tempdir().unwrap();
        let wsp = ws.path().to_str().unwrap().to_string();
        let mut args: Vec<&str> = vec![
            "--adb",
            &target,
            "--token",
            &alice,
            "--token",
            &bob,
            "--state",
            state,
            "--workspace",
            &wsp,
        ];
        args.extend_from_slice(extra);
        servers.push(HttpServer::start(&args, &[], home).await);
        dirs.push(ws);
    }
    let b = servers.pop().unwrap();
    let a = servers.pop().unwrap();
    (a, b, dirs)
}

fn exported_text(v: &Value) -> String {
    v["path"]
        .as_str()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default()
}

/// (1) The password is typed through A, the focus-tap through B; then the eye icon reveals it,
/// tapped and read through B (which never saw the value typed). Neither B's answers, nor either
/// export, nor Redis may hold it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_revealed_through_the_other_instance_stays_secret() {
    let Some(redis) = testkit::redis_server() else { return };
    let home = tempfile::tempdir().unwrap();
    let profile = login_with_eye();
    let sim = SimProcess::start_profile(profile.path(), &[]);
    let state = redis.url(0);
    let (a, b, _dirs) = two(&sim, &state, home.path(), &[]).await;
    let secret = "Zebra-Quokka-91xq";
    let mut answers = Vec::new();
    let steps: Vec<(&str, &str, Value)> = vec![
        (&a.url, "adb-app", json!({"operation": "launch", "package": LOGIN})),
        (
            &b.url,
            "ui",
            json!({"operation": "tap", "resourceId": format!("{LOGIN}:id/password")}),
        ),
        (&a.url, "ui", json!({"operation": "type", "text": secret})),
        (
            &b.url,
            "ui",
            json!({"operation": "tap", "contentDesc": "Show password", "observe": true}),
        ),
        (&b.url, "ui", json!({"operation": "dump"})),
        (
            &b.url,
            "ui",
            json!({"operation": "find", "text": "Zebra", "match": "contains"}),
        ),
        (&a.url, "ui", json!({"operation": "dump"})),
    ];
    for (url, tool, args) in steps {
        let (done, failed) = call(url, ALICE, tool, args.clone()).await;
        assert!(
            !failed || tool == "ui" && args["operation"] == "find",
            "{tool} {args}: {done}"
        );
        answers.push(format!(
            "{} {tool} {}: {done}",
            if url == a.url { "A" } else { "B" },
            args["operation"]
        ));
    }
    for url in [&b.url, &a.url] {
        for format in ["js", "maestro"] {
            let (exported, _) = call(url, ALICE, "flow", json!({"operation": "export", "format": format})).await;
            answers.push(format!(
                "export {format}: {exported} file: {}",
                exported_text(&exported)
            ));
        }
    }
    let leaked: Vec<&String> = answers
        .iter()
        .filter(|a| a.contains(secret) || a.contains("Quokka"))
        .collect();
    let kept = everything_in(redis.port);
    assert!(
        leaked.is_empty() && !kept.contains("Quokka"),
        "the password leaked: answers {leaked:#?}\nredis holds it: {}",
        kept.lines()
            .filter(|l| l.contains("Quokka"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// (2) Bob, through B, neither exports nor resets Alice's recording made through A.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bob_through_the_other_instance_cannot_export_or_reset_alices_recording() {
    let Some(redis) = testkit::redis_server() else { return };
    let home = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let state = redis.url(0);
    let (a, b, _dirs) = two(&sim, &state, home.path(), &[]).await;
    for (tool, args) in [
        ("adb-app", json!({"operation": "launch", "package": LOGIN})),
        (
            "ui",
            json!({"operation": "tap", "resourceId": format!("{LOGIN}:id/username")}),
        ),
        ("ui", json!({"operation": "type", "text": "alice-private-name"})),
    ] {
        let (done, failed) = call(&a.url, ALICE, tool, args).await;
        assert!(!failed, "{done}");
    }
    let (bobs, _) = call(&b.url, BOB, "flow", json!({"operation": "export"})).await;
    let text = format!("{bobs} {}", exported_text(&bobs));
    assert!(!text.contains("alice-private-name"), "Bob exports Alice's: {text}");
    let (reset, _) = call(&b.url, BOB, "flow", json!({"operation": "reset"})).await;
    let (alices, failed) = call(&b.url, ALICE, "flow", json!({"operation": "export"})).await;
    assert!(
        !failed && alices["steps"] == 3 && exported_text(&alices).contains("alice-private-name"),
        "Bob's reset ({reset}) touched Alice's recording: {alices}"
    );
}

/// (3)+(4) Steps recorded through A and B alternately, then at once: none lost or doubled, the
/// alternate ones in order; then a reset through A is seen by an export through B.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steps_through_both_instances_at_once_are_each_recorded_once_and_a_reset_is_shared() {
    let Some(redis) = testkit::redis_server() else { return };
    let home = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let state = redis.url(0);
    let (a, b, _dirs) = two(&sim, &state, home.path(), &[]).await;
    let (done, failed) = call(
        &a.url,
        ALICE,
        "adb-app",
        json!({"operation": "launch", "package": LOGIN}),
    )
    .await;
    assert!(!failed, "{done}");
    let (done, failed) = call(
        &b.url,
        ALICE,
        "ui",
        json!({"operation": "tap", "resourceId": format!("{LOGIN}:id/username")}),
    )
    .await;
    assert!(!failed, "{done}");
    let mut expected = 2;
    // Alternately.
    for i in 0..6 {
        let url = if i % 2 == 0 { &a.url } else { &b.url };
        let (done, failed) = call(
            url,
            ALICE,
            "ui",
            json!({"operation": "type", "text": format!("seq{i}x")}),
        )
        .await;
        assert!(!failed, "{done}");
        expected += 1;
    }
    // At once.
    let mut tasks = Vec::new();
    for i in 0..8 {
        let url = if i % 2 == 0 { a.url.clone() } else { b.url.clone() };
        tasks.push(tokio::spawn(async move {
            call(
                &url,
                ALICE,
                "ui",
                json!({"operation": "type", "text": format!("par{i}y")}),
            )
            .await
        }));
    }
    let mut ok = 0;
    for t in tasks {
        let (done, failed) = t.await.unwrap();
        if failed {
            println!("a concurrent type failed: {done}");
        } else {
            ok += 1;
        }
    }
    expected += ok;
    let (exported, failed) = call(&b.url, ALICE, "flow", json!({"operation": "export"})).await;
    let text = exported_text(&exported);
    assert!(!failed, "{exported}");
    let positions: Vec<Option<usize>> = (0..6).map(|i| text.find(&format!("seq{i}x"))).collect();
    let in_order = positions.iter().all(|p| p.is_some()) && positions.windows(2).all(|w| w[0] < w[1]);
    let counts: Vec<(String, usize)> = (0..8)
        .map(|i| (format!("par{i}y"), text.matches(&format!("par{i}y")).count()))
        .collect();
    assert!(
        exported["steps"] == expected && in_order && counts.iter().all(|(_, c)| *c == text.matches("seq0x").count()),
        "expected {expected} steps ({ok} concurrent ok), order {positions:?}, counts {counts:?}: {exported}\n{text}"
    );
    // (4) reset through A, export through B.
    let (reset, failed) = call(&a.url, ALICE, "flow", json!({"operation": "reset"})).await;
    assert!(!failed && reset["steps"] == 0, "{reset}");
    let (after, failed) = call(&b.url, ALICE, "flow", json!({"operation": "export"})).await;
    assert!(
        failed && after.to_string().contains("nothing is recorded"),
        "B exports after A's reset: {after} {}",
        exported_text(&after)
    );
    let (done, failed) = call(&b.url, ALICE, "ui", json!({"operation": "type", "text": "afterreset"})).await;
    assert!(!failed, "{done}");
    let (after, failed) = call(&a.url, ALICE, "flow", json!({"operation": "export"})).await;
    let text = exported_text(&after);
    assert!(
        !failed && after["steps"] == 1 && !text.contains("seq") && !text.contains("par"),
        "A after a reset and one step through B: {after}\n{text}"
    );
}

/// (5) skills.remove: odd names refused without touching a saved skill; Bob cannot remove
/// Alice's through the other instance; a name that percent-encodes another is not it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_remove_of_odd_names_and_of_another_principals_skill_is_refused() {
    let Some(redis) = testkit::redis_server() else { return };
    let home = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let state = redis.url(0);
    let (a, b, _dirs) = two(&sim, &state, home.path(), &[]).await;
    let run = |code: String| json!({"operation": "run", "code": code});
    let (saved, failed) = call(
        &a.url,
        ALICE,
        "script",
        run("await skills.save('one', 'console.log(\"one-ran\")'); console.log('ok')".into()),
    )
    .await;
    assert!(!failed, "{saved}");
    let mut wrong = Vec::new();
    for odd in [
        "../one",
        "one/..",
        "%6Fne",
        "one.js",
        "ONE",
        "one ",
        "",
        "o\\u0000ne",
        "skills/one",
        "*",
        "on?",
    ] {
        let (r, failed) = call(
            &b.url,
            ALICE,
            "script",
            run(format!(
                "console.log(JSON.stringify(await skills.remove({})))",
                json!(odd)
            )),
        )
        .await;
        if !failed {
            wrong.push(format!("{odd:?} removed: {r}"));
        }
    }
    let (r, failed) = call(
        &b.url,
        BOB,
        "script",
        run("console.log(JSON.stringify(await skills.remove('one')))".into()),
    )
    .await;
    if !failed {
        wrong.push(format!("Bob removed Alice's one: {r}"));
    } else if r.to_string().contains("saved skills: one") {
        wrong.push(format!("Bob is told Alice's names: {r}"));
    }
    let (ran, failed) = call(&a.url, ALICE, "script", json!({"operation": "run", "skill": "one"})).await;
    if failed || !ran.to_string().contains("one-ran") {
        wrong.push(format!("Alice's one no longer runs through A: {ran}"));
    }
    let (ran, failed) = call(&b.url, ALICE, "script", json!({"operation": "run", "skill": "one"})).await;
    if failed || !ran.to_string().contains("one-ran") {
        wrong.push(format!("Alice's one no longer runs through B: {ran}"));
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// (5) A removal through B racing runs of the skill through A: after the removal is answered,
/// no new run of it through A may start, and A's list must not show it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_removed_through_b_while_a_runs_it_does_not_come_back() {
    let Some(redis) = testkit::redis_server() else { return };
    let home = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let state = redis.url(0);
    let (a, b, _dirs) = two(&sim, &state, home.path(), &[]).await;
    let (saved, failed) = call(
        &a.url,
        ALICE,
        "script",
        json!({"operation": "run", "code": "await skills.save('slow', 'await new Promise(r => setTimeout(r, 300)); console.log(\"slow-ran\")'); console.log('ok')"}),
    )
    .await;
    assert!(!failed, "{saved}");
    let url = a.url.clone();
    let running =
        tokio::spawn(async move { call(&url, ALICE, "script", json!({"operation": "run", "skill": "slow"})).await });
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let (removed, failed) = call(
        &b.url,
        ALICE,
        "script",
        json!({"operation": "run", "code": "console.log(JSON.stringify(await skills.remove('slow')))"}),
    )
    .await;
    assert!(!failed, "{removed}");
    let (first, _) = running.await.unwrap();
    println!("the run in flight: {first}");
    let (again, failed) = call(&a.url, ALICE, "script", json!({"operation": "run", "skill": "slow"})).await;
    let (listed, _) = call(&a.url, ALICE, "script", json!({"operation": "list"})).await;
    let (read, read_failed) = call(
        &a.url,
        ALICE,
        "script",
        json!({"operation": "run", "code": "console.log(await workspace.read('skills/slow.js'))"}),
    )
    .await;
    let (save2, failed2) = call(
        &b.url,
        ALICE,
        "script",
        json!({"operation": "run", "code": "console.log(JSON.stringify(await skills.list()))"}),
    )
    .await;
    assert!(
        failed
            && !listed.to_string().contains("\"slow\"")
            && read_failed
            && !failed2
            && !save2.to_string().contains("slow"),
        "after removal through B: run through A {again}; A lists {listed}; A reads {read}; B lists {save2}"
    );
}
