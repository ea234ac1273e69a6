//! A Maestro workspace as an outsider writes it: shapes of public suites' `config.yaml`, hostile
//! flow names, links and globs that point out of the workspace, shards over more or fewer devices
//! than asked, a device dropping under `--shard-all`. Each test says what `maestro test` does (its
//! source: mobile-dev-inc/maestro @ dcd2f206fb) or the clear error a user needs instead.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::common::chromium::Browser;
use crate::common::*;
use crate::suite::{PASSES, droidmcp, flow, ran, said};

const FAILS: &str = "- launchApp\n- tapOn: \"No such row\"\n";

/// Every file under `dir`, relative to it.
fn files_under(dir: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.insert(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    found
}

/// The one dated folder a run made under a test output folder.
fn run_folder(tests: &Path) -> PathBuf {
    let runs: Vec<PathBuf> = std::fs::read_dir(tests).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].clone()
}

/// A tag is a name as written: Maestro reads header tags and `--include-tags` as strings (its
/// `WorkspaceExecutionPlanner.plan` compares `tags.any(allIncludeTags::contains)`, Jackson giving
/// a number's text as written). A version or ticket number (`1.10`, `007`) must match itself, and
/// YAML 1.1's words (`yes`, `on`) and a scalar `includeTags: smoke` choose as Maestro's
/// `StringList` reads them. Generated: each way of writing a tag, asked for from the command line
/// and from the config.
#[test]
fn tags_choose_flows_as_written_whatever_yaml_makes_of_them() {
    let home = tempfile::tempdir().unwrap();
    let written = [
        "1.10", "007", "0x1F", "1e3", "2.0", "12", "yes", "on", "off", "true", "smoke",
    ];
    let mut cases = 0;
    for (i, tag) in written.iter().enumerate() {
        let ws = tempfile::tempdir().unwrap();
        let dir = ws.path();
        flow(dir, "tagged.yaml", &format!("tags: [{tag}]\n"), PASSES);
        flow(dir, "other.yaml", "tags: [unrelated]\n", PASSES);
        flow(dir, "empty.yaml", "tags: []\n", PASSES);
        // From the command line.
        let out = droidmcp(&[dir.to_str().unwrap(), "--include-tags", tag, "--check"], home.path())
            .output()
            .unwrap();
        let text = said(&out);
        assert!(out.status.success(), "--include-tags {tag}: {text}");
        assert!(
            text.contains("tagged.yaml") && !text.contains("other.yaml") && !text.contains("empty.yaml"),
            "--include-tags {tag} runs the flow tagged {tag} alone: {text}"
        );
        // From the config, as a list and (Maestro's StringList) as one scalar.
        for config in [format!("includeTags: [{tag}]\n"), format!("includeTags: {tag}\n")] {
            std::fs::write(dir.join("config.yaml"), &config).unwrap();
            let out = droidmcp(&[dir.to_str().unwrap(), "--check"], home.path())
                .output()
                .unwrap();
            let text = said(&out);
            assert!(out.status.success(), "{config}: {text}");
            assert!(
                text.contains("tagged.yaml") && !text.contains("other.yaml"),
                "{config} runs the flow tagged {tag}: {text}"
            );
            cases += 1;
        }
        // Excluded as written too.
        std::fs::remove_file(dir.join("config.yaml")).unwrap();
        let out = droidmcp(&[dir.to_str().unwrap(), "--exclude-tags", tag, "--check"], home.path())
            .output()
            .unwrap();
        let text = said(&out);
        assert!(
            !text.contains("tagged.yaml") && text.contains("other.yaml"),
            "--exclude-tags {tag} ({i}): {text}"
        );
        cases += 2;
    }
    println!("{cases} tag cases over {} ways of writing a tag", written.len());
}

/// Two flows named alike (`login` in two folders: Maestro names a flow by its header `name`, else
/// its file name, so suites split by feature often repeat one) or made alike by the plain-name
/// rule (`a/b x` and `a_b x`, `""` and `..`), or only by case (`Login`, which a macOS or Windows
/// checkout of the artifacts folds into `login`): each keeps its own commands file and its own
/// failure screenshot, and each failure names a screenshot that is its own. Maestro writes
/// `commands-(NAME).json` and overwrites (TestDebugReporter.saveFlow); a lost report is what a
/// user would not expect.
#[test]
fn flows_named_alike_keep_their_own_test_output_and_screenshots() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path();
    std::fs::write(dir.join("config.yaml"), "flows:\n  - \"**\"\n").unwrap();
    flow(dir, "checkout/login.yaml", "", FAILS);
    flow(dir, "signup/login.yaml", "", FAILS);
    flow(dir, "Login.yaml", "", FAILS);
    flow(dir, "slash.yaml", "name: \"a/b x\"\n", FAILS);
    flow(dir, "under.yaml", "name: \"a_b x\"\n", FAILS);
    flow(dir, "empty.yaml", "name: \"\"\n", FAILS);
    flow(dir, "dots.yaml", "name: \"..\"\n", FAILS);
    let flows = 7;
    let out_dir = tempfile::tempdir().unwrap();
    let report = out_dir.path().join("report.xml");
    let tests = out_dir.path().join("tests");
    let args = [
        dir.to_str().unwrap(),
        "--format",
        "junit",
        "--output",
        report.to_str().unwrap(),
        "--test-output-dir",
        tests.to_str().unwrap(),
        "--step-timeout-ms",
        "300",
        "--sim",
    ];
    let out = droidmcp(&args, home.path()).output().unwrap();
    let text = said(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let run = run_folder(&tests);
    let names = files_under(&run);
    let commands: Vec<&String> = names.iter().filter(|n| n.starts_with("commands-")).collect();
    assert_eq!(commands.len(), flows, "one commands file per flow: {names:?}");
    let folded: HashSet<String> = commands.iter().map(|n| n.to_lowercase()).collect();
    assert_eq!(folded.len(), flows, "distinct whatever the case: {names:?}");
    let shots: Vec<&String> = names.iter().filter(|n| n.starts_with("screenshot-failed-")).collect();
    assert_eq!(shots.len(), flows, "{names:?}");

    // Without a test output folder the failure's screenshot lands beside the report: one each.
    let out_dir = tempfile::tempdir().unwrap();
    let report = out_dir.path().join("report.xml");
    let args = [
        dir.to_str().unwrap(),
        "--format",
        "junit",
        "--output",
        report.to_str().unwrap(),
        "--step-timeout-ms",
        "300",
        "--sim",
    ];
    let out = droidmcp(&args, home.path()).output().unwrap();
    let text = said(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let xml = std::fs::read_to_string(&report).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let named: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .map(|n| {
            let text = n.text().unwrap_or("");
            let path = text.rsplit("Screenshot: ").next().unwrap().trim().to_string();
            assert!(
                Path::new(&path).is_file(),
                "the failure's screenshot {path} exists: {text}"
            );
            path.to_lowercase()
        })
        .collect();
    assert_eq!(named.len(), flows, "{xml}");
    let distinct: HashSet<&String> = named.iter().collect();
    assert_eq!(distinct.len(), flows, "each failure has its own screenshot: {named:?}");
}

/// A 300-character `name:` (a generated suite's long title) still gets its failure screenshot:
/// its file name is cut to fit, as its commands file's already is, not dropped with a warning.
#[test]
fn a_very_long_flow_name_still_gets_its_failure_screenshot() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let long = "é".repeat(150) + &"x".repeat(150);
    flow(ws.path(), "long.yaml", &format!("name: \"{long}\"\n"), FAILS);
    let out_dir = tempfile::tempdir().unwrap();
    let tests = out_dir.path().join("tests");
    let out = droidmcp(
        &[
            ws.path().to_str().unwrap(),
            "--test-output-dir",
            tests.to_str().unwrap(),
            "--step-timeout-ms",
            "300",
            "--sim",
        ],
        home.path(),
    )
    .output()
    .unwrap();
    let text = said(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(!text.contains("was not saved"), "{text}");
    let names = files_under(&run_folder(&tests));
    assert!(names.iter().any(|n| n.starts_with("commands-")), "{names:?}");
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("screenshot-failed-") && n.ends_with(".jpg")),
        "{names:?}"
    );
}

/// A config's `testOutputDir` is the workspace author's, as a flow's `takeScreenshot` path is:
/// absolute or climbing out, it is kept inside the workspace folder (docs/flows.md: "a flow a
/// third party wrote must not choose where on your disk its files land"), never written where it
/// points. `--test-output-dir`, which the person running types, goes where it says.
#[test]
fn a_configs_test_output_dir_cannot_write_outside_the_workspace() {
    let home = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("planted");
    for config in [
        format!("testOutputDir: {}\n", target.display()),
        format!("testOutputDir: ../../../../../../..{}\n", target.display()),
    ] {
        let ws = tempfile::tempdir().unwrap();
        let dir = ws.path();
        flow(dir, "a.yaml", "", PASSES);
        std::fs::write(dir.join("config.yaml"), &config).unwrap();
        let out = droidmcp(&[dir.to_str().unwrap(), "--sim"], home.path())
            .current_dir(dir)
            .output()
            .unwrap();
        let text = said(&out);
        assert!(!text.contains("panicked"), "{text}");
        assert!(!target.exists(), "{config}: wrote outside the workspace: {text}");
        if out.status.success() {
            // Kept inside: the run's folder is below the workspace.
            let written = files_under(dir);
            assert!(
                written.iter().any(|f| f.ends_with("maestro.log")),
                "{config}: {written:?}"
            );
        } else {
            assert!(text.contains("testOutputDir"), "{config}: says what was wrong: {text}");
        }
    }
}

/// Links and globs that point out of the workspace read nothing there: a linked folder is not
/// walked (Maestro's `Files.walk` does not follow links), `../**` or `/etc/**` match nothing and
/// say so (Maestro matches globs under the folder: `glob:DIR/PATTERN`), and a flow or config
/// linked to a private file is refused without printing what the file holds.
#[test]
fn links_and_globs_out_of_the_workspace_read_nothing_there() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let outside = root.path().join("outside");
    flow(&outside, "secret_flow.yaml", "", PASSES);
    std::fs::write(outside.join("token.env"), "API_TOKEN: s3cr3t-value-42\nnot: [yaml\n").unwrap();
    let dir = root.path().join("ws");
    flow(&dir, "a.yaml", "", PASSES);
    std::os::unix::fs::symlink(&outside, dir.join("linked")).unwrap();
    std::fs::write(dir.join("config.yaml"), "flows: [\"**\"]\n").unwrap();
    let d = dir.to_str().unwrap();
    let out = droidmcp(&[d, "--check"], home.path()).output().unwrap();
    let text = said(&out);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("secret_flow"), "a linked folder is not walked: {text}");
    let mut cases = 1;
    for glob in [
        "../**",
        "/etc/**",
        "../outside/*.yaml",
        "**/../../outside/*",
        "linked/**",
    ] {
        std::fs::write(dir.join("config.yaml"), format!("flows: [\"{glob}\"]\n")).unwrap();
        let out = droidmcp(&[d, "--check"], home.path()).output().unwrap();
        let text = said(&out);
        assert!(!out.status.success(), "{glob}: {text}");
        assert!(!text.contains("secret_flow"), "{glob}: {text}");
        assert!(text.contains("match no flow"), "{glob}: says what to fix: {text}");
        assert!(!text.contains("panicked"), "{text}");
        cases += 1;
    }
    std::fs::remove_file(dir.join("config.yaml")).unwrap();
    std::os::unix::fs::symlink(outside.join("token.env"), dir.join("config.yaml")).unwrap();
    std::os::unix::fs::symlink(outside.join("token.env"), dir.join("leak.yaml")).unwrap();
    let out = droidmcp(&[d, "--check"], home.path()).output().unwrap();
    let text = said(&out);
    assert!(!out.status.success(), "{text}");
    assert!(
        !text.contains("s3cr3t"),
        "nothing of the linked file is printed: {text}"
    );
    cases += 1;
    println!("{cases} link and glob cases");
}

/// Names with XML and HTML in them (a flow's `name`, its tags, the text its failure quotes) leave
/// the JUnit report well-formed with every name as written, and the HTML report, opened in
/// Chromium, shows them as text: no element they spell is made, no script they hold runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_names_leave_both_reports_well_formed_and_inert() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path();
    let names = [
        "<img src=x onerror=\"document.title='pwned'\">",
        "</td></tr></table><script>document.title='pwned'</script>",
        "]]> & &amp; \u{202e}gnp.exe \u{0627}\u{0644}\u{0639}\u{0631}\u{0628}\u{064a}\u{0629} e\u{0301}",
        "\"quoted\" 'single' <b>bold</b>",
    ];
    for (i, name) in names.iter().enumerate() {
        let escaped = name.replace('\\', "\\\\").replace('"', "\\\"");
        let body = format!("- launchApp\n- tapOn: \"{escaped} <svg onload=alert(1)>\"\n");
        flow(
            dir,
            &format!("f{i}.yaml"),
            &format!("name: \"{escaped}\"\ntags: [\"<t>&{i}\"]\n"),
            &body,
        );
    }
    let out_dir = tempfile::tempdir().unwrap();
    let xml_path = out_dir.path().join("report.xml");
    let html_path = out_dir.path().join("report.html");
    for (format, path) in [("junit", &xml_path), ("html", &html_path)] {
        let out = droidmcp(
            &[
                dir.to_str().unwrap(),
                "--format",
                format,
                "--output",
                path.to_str().unwrap(),
                "--step-timeout-ms",
                "300",
                "--sim",
            ],
            home.path(),
        )
        .output()
        .unwrap();
        let text = said(&out);
        assert_eq!(out.status.code(), Some(1), "{text}");
    }
    let xml = std::fs::read_to_string(&xml_path).unwrap();
    let doc = roxmltree::Document::parse(&xml).expect("well-formed JUnit");
    let cases: BTreeSet<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|n| n.attribute("name").unwrap())
        .collect();
    assert_eq!(cases, names.iter().copied().collect::<BTreeSet<_>>(), "{xml}");

    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    let page = browser.open(&format!("file://{}", html_path.display())).await;
    browser
        .until(
            &page,
            false,
            "document.readyState === 'complete' && !!document.querySelector('tbody')",
            std::time::Duration::from_secs(30),
        )
        .await;
    let seen = browser
        .eval(
            &page,
            false,
            "({title: document.title, made: document.querySelectorAll('img, script, svg, td b').length, names: [...document.querySelectorAll('tr.flow .name')].map(n => n.textContent)})",
        )
        .await
        .unwrap();
    println!("{seen}");
    assert_ne!(seen["title"], "pwned", "{seen}");
    assert_eq!(seen["made"], 0, "no element a name spells: {seen}");
    let shown: BTreeSet<String> = serde_json::from_value(seen["names"].clone()).unwrap();
    assert_eq!(
        shown,
        names.iter().map(|n| n.to_string()).collect::<BTreeSet<_>>(),
        "{seen}"
    );
}

/// Two simulated devices behind one adb server.
fn two_devices() -> Option<(AdbServer, Vec<SimProcess>, Vec<String>)> {
    let lab = AdbServer::start()?;
    let sims: Vec<SimProcess> = (0..2).map(|_| SimProcess::start_logged(&[])).collect();
    let serials = sims.iter().map(|s| lab.connect(s)).collect();
    Some((lab, sims, serials))
}

/// `--shard-split 2` over a suite of one flow: Maestro uses `min(shards, flows)` shards with a
/// warning (TestCommand.handleSessions: `requestedShards.coerceAtMost(plan.flowsToRun.size)`), so
/// the flow runs on one of the devices. Without shards and several devices, the error names the
/// command line's option (`--device`), not a tool's field.
#[test]
fn more_shards_than_flows_runs_each_flow_on_a_device_and_errors_name_the_option() {
    let Some((lab, _sims, serials)) = two_devices() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    flow(ws.path(), "only.yaml", "", PASSES);
    let source = format!("server:127.0.0.1:{}", lab.port);
    let d = ws.path().to_str().unwrap();
    for shards in ["--shard-split", "--shard-all"] {
        let out = droidmcp(&[d, "--adb", &source, shards, "2"], home.path())
            .output()
            .unwrap();
        let text = said(&out);
        assert!(out.status.success(), "{shards} 2 over one flow: {text}");
        let ran = ran(&String::from_utf8_lossy(&out.stdout));
        let expected = if shards == "--shard-all" { 2 } else { 1 };
        assert_eq!(ran.len(), expected, "{text}");
        assert!(serials.iter().any(|s| text.contains(s.as_str())), "{text}");
    }
    // No shards, two devices, no --device: what to type.
    let out = droidmcp(&[d, "--adb", &source], home.path()).output().unwrap();
    let text = said(&out);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("--device"), "names the option to add: {text}");
    assert!(!text.contains("adb-device select"), "not a tool's advice: {text}");
}

/// `--shard-all 2`, one device dropping while its first flow runs: every flow still runs once on
/// each live device, and the dropped device's remaining flows are reported as not run there, not
/// moved onto the device that already ran them (Maestro's shard-all gives each device the whole
/// plan: `makeChunkPlans` copies it per shard).
#[test]
fn shard_all_with_a_device_dropping_runs_no_flow_twice_on_one_device() {
    let Some(lab) = AdbServer::start() else { return };
    let mut sims: Vec<SimProcess> = (0..2).map(|_| SimProcess::start_logged(&[])).collect();
    let serials: Vec<String> = sims.iter().map(|s| lab.connect(s)).collect();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path();
    flow(
        dir,
        "a_wait.yaml",
        "",
        "- launchApp:\n    appId: com.android.settings\n    arguments:\n      marker: dropmarker\n- extendedWaitUntil:\n    notVisible: \"Network & internet\"\n    timeout: 20000\n",
    );
    flow(dir, "b.yaml", "", PASSES);
    flow(dir, "c.yaml", "", PASSES);
    let out_dir = tempfile::tempdir().unwrap();
    let report = out_dir.path().join("report.xml");
    let source = format!("server:127.0.0.1:{}", lab.port);
    let mut child = droidmcp(
        &[
            dir.to_str().unwrap(),
            "--adb",
            &source,
            "--shard-all",
            "2",
            "--format",
            "junit",
            "--output",
            report.to_str().unwrap(),
        ],
        home.path(),
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Both devices get the marker flow first; the second to log it goes away.
    let waited = std::time::Instant::now();
    loop {
        if sims.iter().all(|s| s.log().contains("dropmarker")) {
            break;
        }
        if waited.elapsed() > std::time::Duration::from_secs(120) || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("the devices were not sent the marker: {}", said(&out));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    sims[1].kill();
    let out = child.wait_with_output().unwrap();
    let text = said(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let xml = std::fs::read_to_string(&report).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    for suite in doc.descendants().filter(|n| n.has_tag_name("testsuite")) {
        let device = suite.attribute("device").unwrap();
        let names: Vec<&str> = suite
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .map(|n| n.attribute("name").unwrap())
            .collect();
        let once: BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(once.len(), names.len(), "{device} ran a flow twice: {xml}");
        assert_eq!(
            once,
            ["a_wait", "b", "c"].into_iter().collect(),
            "{device}: every flow is in its testsuite, run or reported not run: {xml}"
        );
        if device == serials[1] {
            let failed = suite
                .children()
                .filter(|n| n.attribute("status") == Some("ERROR"))
                .count();
            assert_eq!(failed, 3, "nothing passes on the dropped device: {xml}");
        }
    }
}
