//! Every path an answer takes leaves within the budget: tool answers and their errors on a
//! device whose every output is hostile, every tool and operation generated from the tools'
//! own schemas; `cache get` of a key longer than the budget; progress notifications; the
//! caption beside a screenshot; `resources/list`, paged.

use crate::common::*;
use serde_json::{Value, json};

const BUDGET: usize = 4000;

/// A device whose every output is huge or hostile, generated from `seed`: thousands of long
/// properties (some multi-line), thousands of long package names and labels, a home screen of
/// hundreds of long rows nested deep (XML specials, emoji, long ids and descriptions), dozens of
/// distinct crashes with long stacks, and multi-KB log lines.
fn hostile_profile(seed: u64) -> Profile {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let profile = Profile::new();
    let text = |rng: &mut rand::rngs::StdRng, n: usize| -> String {
        const PIECES: &[&str] = &[
            "word",
            "ÿ",
            "😀",
            "\"q\"",
            "back\\slash",
            "tab\t",
            "a&b",
            "<x>",
            "'",
            "Ω",
            "longer-piece",
            "漢字",
        ];
        let mut s = String::new();
        while s.chars().count() < n {
            s.push_str(PIECES[rng.random_range(0..PIECES.len())]);
            s.push(' ');
        }
        s
    };
    let xml = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\t', " ")
    };

    let mut props = std::fs::read_to_string(profile.path().join("getprop.txt")).unwrap();
    for i in 0..3000 {
        let len = rng.random_range(50..600);
        let value = text(&mut rng, len).replace([']', '['], "");
        let value = if i % 97 == 0 {
            format!("{value}\nsecond line {i}\nthird")
        } else {
            value
        };
        props.push_str(&format!(
            "[vendor.hostile.{}.p{i}]: [{}]\n",
            "x".repeat(i % 80),
            value.replace('\t', " ")
        ));
    }
    profile.write("getprop.txt", props);

    let mut packages = std::fs::read_to_string(profile.path().join("packages.tsv")).unwrap();
    let mut hostile_packages = Vec::new();
    for i in 0..3000 {
        let name = format!("com.hostile.{}.app{i}", "segment".repeat(1 + i % 25));
        let label = text(&mut rng, 120).replace('\t', " ");
        let perms = (0..40)
            .map(|p| format!("android.permission.HOSTILE_{p}_{}", "X".repeat(30)))
            .collect::<Vec<_>>()
            .join(",");
        let launcher = if i % 2 == 0 {
            format!("{name}.MainActivity")
        } else {
            "-".into()
        };
        packages.push_str(&format!(
            "{name}\t/data/app/{name}-1/base.apk\t{}\tuser\t1.{i}.{}\t{i}\t{launcher}\t{label}\t2024-01-01 00:00:00\t2024-06-01 00:00:00\t24\t34\t{perms}\n",
            10_000 + i,
            "9".repeat(100)
        ));
        hostile_packages.push(name);
    }
    profile.write("packages.tsv", packages);

    let mut rows = String::new();
    for i in 0..300 {
        let depth = 1 + i % 30;
        let y = 100 + (i as i32) * 7;
        let bounds = format!("[0,{y}][1080,{}]", y + 7);
        for _ in 0..depth {
            rows.push_str(&format!(r#"<node index="0" text="" resource-id="" class="android.widget.LinearLayout" package="com.hostile" content-desc="" clickable="false" bounds="{bounds}">"#));
        }
        rows.push_str(&format!(
            r#"<node index="0" text="{}" resource-id="com.hostile:id/row_{}_{i}" class="android.widget.TextView" package="com.hostile" content-desc="{}" checkable="{}" checked="false" clickable="true" bounds="{bounds}"/>"#,
            xml(&format!("row {i} {}", text(&mut rng, 150))),
            "r".repeat(60),
            xml(&text(&mut rng, 100)),
            i % 3 == 0
        ));
        rows.push_str(&"</node>".repeat(depth));
    }
    profile.write(
        "screens/launcher.xml",
        format!(
            r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" class="android.widget.FrameLayout" package="com.hostile" bounds="[0,0][1080,2400]"><node index="0" text="" class="androidx.recyclerview.widget.RecyclerView" package="com.hostile" scrollable="true" bounds="[0,88][1080,2400]">{rows}</node></node></hierarchy>"#
        ),
    );

    let mut log = String::from("--------- beginning of main\n");
    let mut second = 0;
    let stamp = |second: &mut u32| {
        *second += 1;
        format!(
            "11-20 10:{:02}:{:02}.{:03}",
            (*second / 60) % 60,
            *second % 60,
            *second % 1000
        )
    };
    for i in 0..400 {
        let len = rng.random_range(1000..6000);
        log.push_str(&format!(
            "{}  3000  3000 W HostileTag{i}: {}\n",
            stamp(&mut second),
            text(&mut rng, len).replace('\n', " ")
        ));
    }
    for c in 0..40u32 {
        let pid = 5000 + c;
        let package = &hostile_packages[c as usize];
        let at = stamp(&mut second);
        log.push_str(&format!("{at}  {pid}  {pid} E AndroidRuntime: FATAL EXCEPTION: main\n"));
        log.push_str(&format!(
            "{at}  {pid}  {pid} E AndroidRuntime: Process: {package}, PID: {pid}\n"
        ));
        log.push_str(&format!(
            "{at}  {pid}  {pid} E AndroidRuntime: java.lang.IllegalStateException{c}: {}\n",
            text(&mut rng, 2000)
        ));
        for f in 0..60 {
            log.push_str(&format!(
                "{at}  {pid}  {pid} E AndroidRuntime: \tat {package}.deep.Frame{f}.method{}(Frame{f}.kt:{f})\n",
                "x".repeat(80)
            ));
        }
        log.push_str(&format!(
            "{at}  {pid}  {pid} E AndroidRuntime: Caused by: java.io.IOException{c}: {}\n",
            text(&mut rng, 1500)
        ));
        log.push_str(&format!(
            "{at}  {pid}  {pid} E AndroidRuntime: \tat {package}.Cause.run(Cause.kt:1)\n"
        ));
    }
    profile.write("logcat.txt", log);
    profile
}

/// The invariant every answer keeps: its text is within the budget, and a structured answer's
/// text twin is valid JSON equal to its structuredContent (errors included).
pub(crate) fn check_answer(what: &str, result: &rmcp::model::CallToolResult, budget: usize) -> usize {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.as_str())
        .collect();
    let size: usize = texts.iter().map(|t| t.chars().count()).sum();
    assert!(
        size <= budget,
        "{what}: {size} chars over the {budget}-char budget: {}",
        texts.join("").chars().take(600).collect::<String>()
    );
    if let Some(structured) = &result.structured_content {
        let twin: Value = serde_json::from_str(texts.first().expect("a text twin")).unwrap_or_else(|e| {
            panic!(
                "{what}: the text twin is not JSON ({e}): {}",
                texts[0].chars().take(300).collect::<String>()
            )
        });
        assert_eq!(
            &twin, structured,
            "{what}: the text twin differs from structuredContent"
        );
    }
    size
}

/// The default profile with one more property, named with `name_chars` chars.
fn profile_with_long_property(name_chars: usize) -> (Profile, String) {
    let profile = Profile::new();
    let name = format!("vendor.{}", "n".repeat(name_chars));
    profile.append("getprop.txt", &format!("[{name}]: [a value]\n"));
    (profile, name)
}

#[tokio::test]
async fn a_property_named_with_5000_chars_pages_within_the_budget() {
    let (profile, name) = profile_with_long_property(5000);
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim", profile.path().to_str().unwrap()], &[], home.path()).await;
    let props = ok(&call(&client, "adb-device", json!({"operation": "properties"})).await);
    let id = props["cacheId"].as_str().expect("a cacheId");
    let mut sizes = Vec::new();
    for args in [
        json!({"operation": "get", "id": id, "prefix": "vendor.nnn"}),
        json!({"operation": "get", "id": id, "filter": "nnnnn"}),
        json!({"operation": "get", "id": id, "limit": 1000}),
    ] {
        let result = call(&client, "cache", args.clone()).await;
        let size = check_answer(&format!("cache {}", args), &result, BUDGET);
        let page = ok(&result);
        sizes.push(size);
        if args.get("prefix").is_some() {
            // The key is there, by its head, and the cut is said.
            let keys: Vec<&String> = page["items"].as_object().expect("a map page").keys().collect();
            assert_eq!(keys.len(), 1, "{page}");
            assert!(
                keys[0].starts_with("vendor.nnn") && keys[0].chars().count() < 100,
                "{keys:?}"
            );
            let said = page["budget"]["cut"].to_string();
            assert!(
                said.contains(&format!("of {} chars of a key", name.chars().count())),
                "{page}"
            );
        }
    }
    println!(
        "a {}-char property name: cache get answers of {sizes:?} chars",
        name.chars().count()
    );
}

#[tokio::test]
async fn ui_wait_progress_on_a_5000_char_query_stays_within_the_budget() {
    let home = tempfile::tempdir().unwrap();
    let recorder = ProgressRecorder::default();
    let client = mcp_server_with(recorder.clone(), &["--sim"], &[], home.path()).await;
    let query = format!("never {}", "q".repeat(5000));
    let result = call_with_progress(
        &client,
        "ui",
        json!({"operation": "wait", "text": query, "timeoutMs": 1500}),
    )
    .await;
    check_answer("ui wait", &result, BUDGET);
    let notes = recorder.0.lock().unwrap().clone();
    assert!(!notes.is_empty(), "a wait of 1.5 s sends progress");
    let largest = notes
        .iter()
        .map(|n| serde_json::to_string(n).unwrap().chars().count())
        .max()
        .unwrap();
    println!("{} progress notifications, the largest {largest} chars", notes.len());
    assert!(largest <= BUDGET, "a progress notification of {largest} chars");
}

#[tokio::test]
async fn a_failed_finds_screenshot_keeps_its_caption_within_the_budget() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    let query = format!("nowhere {}", "z".repeat(5000));
    let result = call(&client, "ui", json!({"operation": "find", "text": query})).await;
    let size = check_answer("ui find", &result, BUDGET);
    let answer = ok(&result);
    assert!(
        result.content.iter().any(|c| c.as_image().is_some()),
        "the grid screenshot"
    );
    for field in ["image", "screen", "scale"] {
        assert!(answer.get(field).is_some(), "the caption lost {field}: {answer}");
    }
    println!("failed find of a 5,000-char text: {size} chars with the image's caption");
}

#[tokio::test]
async fn resources_list_pages_within_the_budget_and_the_pages_hold_every_resource() {
    let home = tempfile::tempdir().unwrap();
    let client = mcp_server(&["--sim"], &[], home.path()).await;
    // 60 entries, each described by a long command.
    for n in 0..60 {
        let command = format!("seq 1 2000 # {n} {}", "c".repeat(300));
        ok(&call(&client, "adb-shell", json!({"operation": "run", "command": command})).await);
    }
    let entries = ok(&call(&client, "cache", json!({"operation": "stats"})).await)["stats"]["entries"]
        .as_u64()
        .unwrap() as usize;
    let (mut cursor, mut pages, mut listed) = (None, 0, Vec::new());
    loop {
        let page = client
            .list_resources(Some(
                rmcp::model::PaginatedRequestParams::default().with_cursor(cursor.clone()),
            ))
            .await
            .expect("resources/list");
        let size = serde_json::to_string(&page).unwrap().chars().count();
        assert!(size <= BUDGET, "a resources/list page of {size} chars");
        pages += 1;
        listed.extend(page.resources.iter().map(|r| r.uri.clone()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
        assert!(pages < 1000, "the cursor never ends");
    }
    let cached = listed.iter().filter(|u| u.starts_with("droidmcp://cache/")).count();
    let mut unique = listed.clone();
    unique.sort();
    unique.dedup();
    println!(
        "resources/list: {} resources in {pages} pages, {cached} cache entries of {entries}",
        listed.len()
    );
    assert_eq!(unique.len(), listed.len(), "a resource listed twice");
    assert_eq!(cached, entries, "every cache entry is listed");
    assert!(pages > 1, "60 long entries do not fit one page");
    // The whole list, as rmcp's client gathers it, is the same.
    assert_eq!(client.list_all_resources().await.unwrap().len(), listed.len());
    let bad = client
        .list_resources(Some(
            rmcp::model::PaginatedRequestParams::default().with_cursor(Some("k".repeat(5000))),
        ))
        .await
        .expect_err("a cursor the list did not give");
    let said = bad.to_string();
    assert!(
        said.contains("without a cursor") && said.chars().count() < 400,
        "{said}"
    );
}

/// A string a model might pass where a short one is meant: 5,000 chars of quotes, escapes,
/// emoji and a newline.
fn hostile_string() -> String {
    let piece = "\"q\" \\ é😀 <a&b>\n";
    piece
        .repeat(5000 / piece.chars().count() + 1)
        .chars()
        .take(5000)
        .collect()
}

const HOSTILE_APP: &str = "com.hostile.segment.app0";

/// Every tool × every operation, generated from `tools/list`: each operation called with its
/// operation alone; while it answers with an error naming a field of its schema, again with a
/// value for that field (`placeholder`); then once more with every string it was given
/// replaced by a hostile one, and once with a 5,000-char unknown field. Every id an answer
/// holds is read with `cache get` (whole, paged, filtered). Every answer, error and progress
/// notification is checked against the budget, and the text twin against structuredContent.
/// An operation added later is covered without an edit here.
#[tokio::test]
async fn every_tool_and_operation_answers_within_the_budget_on_a_hostile_device() {
    let seed = std::env::var("DROIDMCP_HOSTILE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    println!("hostile profile seed {seed} (DROIDMCP_HOSTILE_SEED={seed} replays it)");
    let profile = hostile_profile(seed);
    let home = tempfile::tempdir().unwrap();
    let recorder = ProgressRecorder::default();
    let client = mcp_server_with(
        recorder.clone(),
        &["--sim", profile.path().to_str().unwrap()],
        &[],
        home.path(),
    )
    .await;
    let mut seen = Seen {
        ids: Vec::new(),
        refs: Vec::new(),
        package: HOSTILE_APP.into(),
        text: "row 7".into(),
        code: "console.log('x'.repeat(100000))".into(),
    };
    let (mut calls, mut operations, mut gets) = (0usize, 0usize, 0usize);
    // Operations that answered without an error at least once: the placeholders reach them.
    let (mut answered, mut all) = (Vec::new(), Vec::new());
    let mut largest = (0, String::new());
    let mut paged = std::collections::HashSet::new();
    // A ref for the tap-like operations: the hostile screen's, from a dump.
    let dump = call(&client, "ui", json!({"operation": "dump"})).await;
    refs_in(&ok(&dump), &mut seen.refs);
    let every = crate::common::operations(&client).await;
    let tools: std::collections::BTreeSet<&str> = every.iter().map(|o| o.tool.as_str()).collect();
    for operation in &every {
        let (name, op, properties) = (&operation.tool, &operation.op, &operation.properties);
        operations += 1;
        all.push(format!("{name} {op}"));
        // The operation alone, then with each field its errors name.
        let (args, mut variants) = complete(&client, operation, &seen).await;
        if variants.last().is_some_and(|(_, r)| r.is_error != Some(true)) {
            answered.push(format!("{name} {op}"));
        }
        // The same with every string a model gave made hostile, and with an unknown field.
        let mut hostile = args.clone();
        for (key, value) in hostile.as_object_mut().unwrap() {
            if key != "operation" && value.is_string() && properties[key.as_str()]["enum"].is_null() {
                *value = json!(hostile_string());
            }
        }
        let mut unknown = args.clone();
        unknown["k".repeat(5000)] = json!(1);
        for args in [hostile, unknown] {
            let result = call_with_progress(&client, name, args.clone()).await;
            variants.push((args, result));
        }
        for (args, result) in variants {
            calls += 1;
            let what = format!("{name} {}", args.to_string().chars().take(100).collect::<String>());
            let size = check_answer(&what, &result, BUDGET);
            if size > largest.0 {
                largest = (size, what);
            }
            if let Some(value) = &result.structured_content {
                let mut ids = Vec::new();
                ids_in(value, &mut ids);
                refs_in(value, &mut seen.refs);
                for id in ids {
                    seen.ids.push(id.clone());
                    if !paged.insert(id.clone()) {
                        continue;
                    }
                    for args in [
                        json!({"operation": "get", "id": id}),
                        json!({"operation": "get", "id": id, "offset": 1, "limit": 1000}),
                        json!({"operation": "get", "id": id, "filter": "e"}),
                    ] {
                        gets += 1;
                        let what = format!("cache {args}");
                        let size = check_answer(&what, &call(&client, "cache", args).await, BUDGET);
                        if size > largest.0 {
                            largest = (size, what);
                        }
                    }
                }
            }
        }
    }
    // A tool that does not exist, named with 5,000 chars: refused at the protocol level, briefly.
    let unknown = client
        .call_tool(rmcp::model::CallToolRequestParams::new("t".repeat(5000)))
        .await;
    let said = match &unknown {
        Ok(result) => result
            .content
            .iter()
            .filter_map(|c| c.as_text())
            .map(|t| t.text.clone())
            .collect(),
        Err(e) => e.to_string(),
    };
    assert!(
        said.chars().count() <= BUDGET,
        "an unknown tool's error: {} chars",
        said.chars().count()
    );
    calls += 1;
    let notes = recorder.0.lock().unwrap().clone();
    for note in &notes {
        let size = serde_json::to_string(note).unwrap().chars().count();
        assert!(
            size <= BUDGET,
            "a progress notification of {size} chars: {}",
            note.message
                .as_deref()
                .unwrap_or_default()
                .chars()
                .take(300)
                .collect::<String>()
        );
    }
    println!(
        "hostile device: {} tools, {operations} operations ({} answered without an error), {calls} calls and {gets} cache gets on {} ids, {} progress notifications; the largest answer {} chars ({})",
        tools.len(),
        answered.len(),
        paged.len(),
        notes.len(),
        largest.0,
        largest.1
    );
    let errors_only: Vec<&String> = all.iter().filter(|op| !answered.contains(op)).collect();
    println!("answered only with an error (their errors checked all the same): {errors_only:?}");
    assert!(operations >= 35, "tools/list declares {operations} operations");
    assert!(
        answered.len() * 4 >= operations * 3,
        "the generated arguments reach too few operations: {errors_only:?} answered only with errors"
    );
    assert!(paged.len() >= 8, "the big answers gave ids: {paged:?}");
}
