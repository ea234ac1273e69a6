//! A Maestro workspace replayed as `maestro test DIR` runs it (issue 44): the flows the config
//! and tags choose, in Maestro's order, with its reports and test output folder; shards over
//! four simulated devices behind two adb servers, one of them dropping mid-run; the HTML report
//! read in headless Chromium; every bad option refused with what to do.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common::chromium::Browser;
use crate::common::*;

pub(crate) const PASSES: &str = "- launchApp\n- assertVisible: \"Network & internet\"\n";

pub(crate) fn flow(dir: &Path, file: &str, header: &str, body: &str) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("appId: com.android.settings\n{header}---\n{body}")).unwrap();
}

pub(crate) fn droidmcp(args: &[&str], home: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_droidmcp"));
    command
        .arg("replay")
        .args(args)
        .env("HOME", home)
        .env_remove("ANDROID_SERIAL");
    command
}

pub(crate) fn said(out: &Output) -> String {
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{}: {text}", out.status);
    text
}

/// The summary line's flow names, in the order they ran.
pub(crate) fn ran(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| l.contains(" steps, ") || l.contains(" step, "))
        .filter_map(|l| l.split(':').next())
        .map(|n| n.split(" on ").next().unwrap_or(n).to_string())
        .collect()
}

#[test]
fn a_workspace_folder_replays_the_flows_maestro_picks_in_its_order_with_its_outputs() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path();
    std::fs::write(
        dir.join("config.yaml"),
        "flows:\n  - \"**\"\n  - \"!subflows/**\"\nincludeTags: [smoke]\nexecutionOrder:\n  continueOnFailure: false\n  flowsOrder:\n    - signup\n    - login\n",
    )
    .unwrap();
    flow(dir, "b_login.yaml", "name: login\ntags: [smoke]\n", PASSES);
    flow(dir, "a_signup.yaml", "name: signup\ntags:\n  - smoke\n", PASSES);
    flow(dir, "feature/z_settings.yaml", "tags: [smoke, slow]\n", PASSES);
    flow(
        dir,
        "feature/y_broken.yaml",
        "tags: [smoke]\n",
        "- launchApp\n- tapOn: \"No such row\"\n",
    );
    flow(dir, "feature/untagged.yaml", "", PASSES);
    flow(dir, "subflows/helper.yaml", "tags: [smoke]\n", PASSES);
    let out_dir = tempfile::tempdir().unwrap();
    let report = out_dir.path().join("report.xml");
    let tests = out_dir.path().join("tests");
    let args = [
        dir.to_str().unwrap(),
        "--exclude-tags",
        "slow",
        "--format",
        "junit",
        "--output",
        report.to_str().unwrap(),
        "--test-output-dir",
        tests.to_str().unwrap(),
        "--step-timeout-ms",
        "600",
        "--sim",
    ];
    let out = droidmcp(&args, home.path()).output().unwrap();
    let text = said(&out);
    assert_eq!(out.status.code(), Some(1), "a flow fails: {text}");
    // The sequence first, then the rest in path order: no subflow, no untagged or slow flow.
    assert_eq!(
        ran(&String::from_utf8_lossy(&out.stdout)),
        ["signup", "login", "y_broken"],
        "{text}"
    );

    // Maestro's JUnit shape, the device named.
    let xml = std::fs::read_to_string(&report).expect("the report is written");
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suite = doc.descendants().find(|n| n.has_tag_name("testsuite")).unwrap();
    assert!(suite.attribute("device").is_some_and(|d| !d.is_empty()), "{xml}");
    let cases: Vec<(&str, &str)> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|n| (n.attribute("name").unwrap(), n.attribute("status").unwrap()))
        .collect();
    assert_eq!(
        cases,
        [("signup", "SUCCESS"), ("login", "SUCCESS"), ("y_broken", "ERROR")],
        "{xml}"
    );

    // The test output folder as Maestro lays it out: one dated folder, the log, each flow's
    // commands, the failure's screenshot.
    let runs: Vec<_> = std::fs::read_dir(&tests).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let stamp = runs[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        regex::Regex::new(r"^\d{4}-\d{2}-\d{2}_\d{6}$")
            .unwrap()
            .is_match(&stamp),
        "{stamp}"
    );
    let mut names: Vec<String> = std::fs::read_dir(&runs[0])
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.contains(&"maestro.log".to_string()), "{names:?}");
    for name in ["signup", "login", "y_broken"] {
        assert!(names.contains(&format!("commands-{name}.json")), "{names:?}");
    }
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("screenshot-failed-") && n.ends_with("-y_broken.jpg")),
        "{names:?}"
    );
    let commands: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(runs[0].join("commands-y_broken.json")).unwrap()).unwrap();
    let statuses: Vec<&str> = commands
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["metadata"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["COMPLETED", "FAILED"], "{commands}");
    let log = std::fs::read_to_string(runs[0].join("maestro.log")).unwrap();
    assert!(log.contains("FAILED  2 tap text \"No such row\""), "{log}");

    // --check picks the same flows, the sequence named first; an empty --exclude-tags (a CI
    // variable left empty) excludes nothing more, as in Maestro.
    let out = droidmcp(
        &[
            dir.to_str().unwrap(),
            "--exclude-tags",
            "slow",
            "--exclude-tags",
            "",
            "--check",
        ],
        home.path(),
    )
    .output()
    .unwrap();
    let text = said(&out);
    assert!(text.contains("order   1 ") && text.contains("a_signup.yaml"), "{text}");
    assert!(text.contains("3 flows: 3 read, 0 with refusals"), "{text}");
    assert!(!text.contains("helper.yaml") && !text.contains("untagged"), "{text}");

    // Without a config, the top level only.
    std::fs::remove_file(dir.join("config.yaml")).unwrap();
    let out = droidmcp(&[dir.to_str().unwrap(), "--check"], home.path())
        .output()
        .unwrap();
    let text = said(&out);
    assert!(text.contains("2 flows: 2 read"), "{text}");
    assert!(!text.contains("feature/"), "{text}");
}

#[test]
fn every_bad_suite_option_is_refused_with_what_to_do() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path();
    flow(dir, "a.yaml", "tags: [smoke]\n", PASSES);
    flow(dir, "deep/b.yaml", "", PASSES);
    let d = dir.to_str().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let config = elsewhere.path().join("other.yaml");
    std::fs::write(&config, "flows: [\"./deep/*\"]\n").unwrap();
    let c = config.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&[d, "--include-tags", "smoke, fast", "--check"], "a tag with a space"),
        (
            &[d, "--include-tags", "", "--check"],
            "names no tag, so no flow would run",
        ),
        (
            &[d, "--include-tags", ",", "--check"],
            "names no tag, so no flow would run",
        ),
        (&[d, "--exclude-tags", "!smoke", "--check"], "name it in --exclude-tags"),
        (
            &[d, "--include-tags", "nightly", "--check"],
            "no flow has the tags asked for",
        ),
        (&[d, "--config", c, "--check"], "login/* rather than ./login/*"),
        (
            &[d, "--config", "/nonexistent/config.yaml", "--check"],
            "--config /nonexistent/config.yaml: no such file",
        ),
        (
            &[d, "--shard-split", "3", "--sim"],
            "3 shards need 3 devices and 1 is online",
        ),
        (
            &[d, "--junit-format", "steps", "--sim"],
            "add --junit PATH or --format junit",
        ),
        (
            &[d, "--format", "html", "--output", "/tmp/x/.hidden", "--sim"],
            "not a plain name",
        ),
        (
            &[d, "--shard-split", "2", "--shard-all", "2", "--sim"],
            "cannot be used with",
        ),
        (
            &[d, "--format", "noop", "--output", "/tmp/x/report.xml", "--sim"],
            "--format noop writes no report",
        ),
        (
            &[d, "--format", "html", "--test-suite-name", "Nightly", "--sim"],
            "--test-suite-name names the suite of Maestro's JUnit report",
        ),
        (
            &[d, "--flatten-debug-output", "--sim"],
            "name it with --debug-output DIR or --test-output-dir DIR",
        ),
        (
            &[d, "--debug-output", "/tmp/a", "--test-output-dir", "/tmp/b", "--sim"],
            "cannot be used with",
        ),
    ];
    for (args, part) in cases {
        let out = droidmcp(args, home.path()).output().unwrap();
        let text = said(&out);
        assert!(!out.status.success(), "{args:?}: {text}");
        assert!(text.contains(part), "{args:?}: wanted {part:?} in {text}");
        assert!(!text.contains("panicked"), "{text}");
    }
    println!("{} refused option cases", cases.len());
}

/// Four simulated devices behind two adb servers, eight flows split over them; one device is
/// killed while its first flow waits: that flow fails saying so, its other flow runs on another
/// device, and the HTML report, opened in Chromium, lists every flow with its device.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shards_run_on_four_devices_behind_two_adb_servers_and_survive_one_dropping() {
    let Some(lab_a) = AdbServer::start() else { return };
    let Some(lab_b) = AdbServer::start() else { return };
    let mut sims: Vec<SimProcess> = (0..4).map(|_| SimProcess::start_logged(&[])).collect();
    let serials: Vec<String> = sims
        .iter()
        .enumerate()
        .map(|(i, sim)| if i < 2 { lab_a.connect(sim) } else { lab_b.connect(sim) })
        .collect();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path();
    // Sorted first, so dealt to the first device with the fifth flow: it starts the app with a
    // marker the device logs (the test then kills that device), then waits for what never comes.
    flow(
        dir,
        "a_drop.yaml",
        "",
        "- launchApp:\n    appId: com.android.settings\n    arguments:\n      marker: dropmarker\n- extendedWaitUntil:\n    visible: \"Never shown\"\n    timeout: 60000\n",
    );
    for i in 1..8 {
        flow(dir, &format!("f{i}.yaml"), "", PASSES);
    }
    let out_dir = tempfile::tempdir().unwrap();
    let report = out_dir.path().join("report.html");
    let (a, b) = (
        format!("labA=server:127.0.0.1:{}", lab_a.port),
        format!("labB=server:127.0.0.1:{}", lab_b.port),
    );
    let child = droidmcp(
        &[
            dir.to_str().unwrap(),
            "--adb",
            &a,
            "--adb",
            &b,
            "--shard-split",
            "4",
            "--format",
            "html",
            "--output",
            report.to_str().unwrap(),
        ],
        home.path(),
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // The device that got the marker flow goes away once the marker reached it.
    let mut child = child;
    let waited = std::time::Instant::now();
    let marked = loop {
        if let Some(at) = sims.iter().position(|s| s.log().contains("dropmarker")) {
            break at;
        }
        if waited.elapsed() > std::time::Duration::from_secs(120) || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("no device was sent the marker: {}", said(&out));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    sims[marked].kill();
    let out = child.wait_with_output().unwrap();
    let text = said(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");

    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    let page = browser.open(&format!("file://{}", report.display())).await;
    browser
        .until(
            &page,
            false,
            "document.readyState === 'complete' && !!document.querySelector('tbody')",
            std::time::Duration::from_secs(30),
        )
        .await;
    let rows = browser
        .eval(
            &page,
            false,
            "[...document.querySelectorAll('tr.flow')].map(r => [r.querySelector('.name').textContent, r.querySelector('.device').textContent, r.querySelector('.status').textContent, r.querySelector('.failure').textContent])",
        )
        .await
        .unwrap();
    let rows: Vec<Vec<String>> = serde_json::from_value(rows).unwrap();
    println!("{rows:?}");
    assert_eq!(rows.len(), 8, "{rows:?}");
    let dropped = &serials[marked];
    for row in &rows {
        assert!(serials.contains(&row[1]), "{row:?} ran on a device of the test");
        if row[0] == "a_drop" {
            assert_eq!(row[2], "ERROR", "{row:?}");
            assert_eq!(&row[1], dropped, "{row:?}");
            assert!(row[3].contains("dropped mid-run"), "{row:?}");
        } else {
            assert_eq!(row[2], "SUCCESS", "{row:?}");
            assert_ne!(
                &row[1], dropped,
                "{row:?}: nothing runs on the dropped device after its drop"
            );
        }
    }
    let used: std::collections::HashSet<&String> = rows.iter().map(|r| &r[1]).collect();
    assert_eq!(used.len(), 4, "every device ran a flow: {rows:?}");
    // Self-contained: nothing fetched.
    let fetched = browser
        .eval(&page, false, "performance.getEntriesByType('resource').length")
        .await
        .unwrap();
    assert_eq!(fetched, 0);
}

/// Two flows that `takeScreenshot: same`, on one device and then each on two devices
/// (`--shard-all 2`, behind Debian's adb): every screenshot is kept, the first under Maestro's
/// name and the others beside it named by their flow and shard, each said; none replaces another.
#[test]
fn screenshots_of_the_same_name_from_several_flows_and_shards_are_all_kept() {
    let Some(lab) = AdbServer::start() else { return };
    let sims: Vec<SimProcess> = (0..2).map(|_| SimProcess::start(&[])).collect();
    let serials: Vec<String> = sims.iter().map(|sim| lab.connect(sim)).collect();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    for name in ["a.yaml", "b.yaml"] {
        flow(
            ws.path(),
            name,
            "",
            "- launchApp\n- takeScreenshot: same\n- takeScreenshot: same\n",
        );
    }
    let server = format!("lab=server:127.0.0.1:{}", lab.port);
    let pngs = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".png"))
            .collect();
        names.sort();
        for name in &names {
            let bytes = std::fs::read(dir.join(name)).unwrap();
            assert!(bytes.starts_with(b"\x89PNG"), "{name} is a PNG");
        }
        names
    };
    let run = |extra: &[&str], cwd: &Path| -> String {
        let mut args = vec![ws.path().to_str().unwrap(), "--adb", &server];
        args.extend(extra);
        let out = droidmcp(&args, home.path()).current_dir(cwd).output().unwrap();
        let text = said(&out);
        assert!(out.status.success(), "{text}");
        text
    };

    // One device: a's screenshot keeps Maestro's name (a flow replaces its own), b's is kept
    // beside it.
    let here = tempfile::tempdir().unwrap();
    let text = run(&["--device", &serials[0]], here.path());
    assert_eq!(pngs(here.path()), ["same-b.png", "same.png"], "{text}");
    assert!(
        text.contains("note    same.png was written by the flow \"a\" this run: this one is kept as same-b.png"),
        "{text}"
    );

    // Each flow on each of two devices at once: four screenshots, four names.
    let here = tempfile::tempdir().unwrap();
    let text = run(&["--shard-all", "2"], here.path());
    let names = pngs(here.path());
    assert_eq!(names.len(), 4, "{names:?}\n{text}");
    assert!(names.contains(&"same.png".to_string()), "{names:?}");
    assert_eq!(
        text.matches("note    same.png was written by the flow").count(),
        3,
        "{text}"
    );
}

/// `maestro test`'s own spellings of the options a CI script passes: `-e NAME=VALUE`, `--udid`,
/// `--format JUNIT` with `--test-suite-name`, `--debug-output DIR` (Maestro 1.x's
/// DIR/.maestro/tests/<stamp>) and `--flatten-debug-output` (DIR itself), `--format noop`.
#[test]
fn maestro_test_option_spellings_run_as_maestro_reads_them() {
    let sim = SimProcess::start(&[]);
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    flow(ws.path(), "env.yaml", "", "- launchApp\n- assertVisible: ${LABEL}\n");
    let here = tempfile::tempdir().unwrap();
    let adb = format!("tcp:{}", sim.addr);
    let serial = sim.serial();
    let run = |extra: &[&str]| -> String {
        let mut args = vec![ws.path().to_str().unwrap(), "--adb", &adb, "--udid", &serial];
        args.extend(extra);
        let out = droidmcp(&args, home.path()).current_dir(here.path()).output().unwrap();
        let text = said(&out);
        assert!(out.status.success(), "{args:?}: {text}");
        text
    };
    let flat = here.path().join("flat");
    run(&[
        "-e",
        "LABEL=Network & internet",
        "--format",
        "JUNIT",
        "--test-suite-name",
        "Nightly <1>",
        "--output",
        "report.xml",
        "--debug-output",
        flat.to_str().unwrap(),
        "--flatten-debug-output",
    ]);
    let xml = std::fs::read_to_string(here.path().join("report.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suite = doc.descendants().find(|n| n.has_tag_name("testsuite")).unwrap();
    assert_eq!(suite.attribute("name"), Some("Nightly <1>"), "{xml}");
    assert!(
        flat.join("maestro.log").is_file(),
        "flattened: the log in the folder itself"
    );
    assert!(flat.join("commands-env.json").is_file());

    let nested = here.path().join("nested");
    run(&[
        "-e",
        "LABEL=Network & internet",
        "--debug-output",
        nested.to_str().unwrap(),
    ]);
    let runs: Vec<_> = std::fs::read_dir(nested.join(".maestro/tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(runs[0].join("maestro.log").is_file(), "{runs:?}");

    std::fs::remove_file(here.path().join("report.xml")).unwrap();
    run(&["-e", "LABEL=Network & internet", "--format", "noop"]);
    assert!(!here.path().join("report.xml").exists(), "noop writes no report");
}
