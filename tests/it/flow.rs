//! Record and replay: a journey an assistant makes over MCP is recorded, exported as a droidmcp
//! script and as a Maestro flow, and `droidmcp replay` passes both on a fresh simulator, with a
//! JUnit report; a failing step, a healed selector and an unsupported command say what they are.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::json;

use crate::common::*;

/// `droidmcp replay FILE --sim ARGS` in a fresh process (a fresh simulated device); ARGS may
/// name more flow files.
fn replay(file: &Path, home: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .arg("replay")
        .arg(file)
        .args(args)
        // Last: `--sim` takes a profile folder when a value follows it.
        .arg("--sim")
        .env("HOME", home)
        .env_remove("ANDROID_SERIAL")
        .output()
        .expect("droidmcp replay runs");
    println!(
        "replay {} {args:?}: {}\n{}{}",
        file.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// (testcases, failures, skipped) of a JUnit report, and its text.
fn junit_counts(path: &Path) -> (usize, usize, usize, String) {
    let xml = std::fs::read_to_string(path).expect("the JUnit report is written");
    let doc = roxmltree::Document::parse(&xml).expect("the JUnit report is XML");
    let cases: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("testcase")).collect();
    let failed = cases
        .iter()
        .filter(|c| c.children().any(|n| n.has_tag_name("failure")))
        .count();
    let skipped = cases
        .iter()
        .filter(|c| c.children().any(|n| n.has_tag_name("skipped")))
        .count();
    (cases.len(), failed, skipped, xml)
}

#[tokio::test]
async fn a_recorded_journey_replays_as_a_script_and_as_a_maestro_flow() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().to_str().unwrap();
    let client = mcp_server(&["--sim", "--workspace", ws], &[], home.path()).await;

    // The journey: Settings, "Network & internet" by text, BACK, then the login demo's field.
    ok(&call(
        &client,
        "adb-app",
        json!({"operation": "launch", "package": "com.android.settings"}),
    )
    .await);
    ok(&call(&client, "ui", json!({"operation": "tap", "text": "Network & internet"})).await);
    ok(&call(&client, "ui", json!({"operation": "key", "name": "BACK"})).await);
    ok(&call(
        &client,
        "adb-app",
        json!({"operation": "launch", "package": "org.droidmcp.demo.login"}),
    )
    .await);
    let found = ok(&call(&client, "ui", json!({"operation": "find", "resourceId": "username"})).await);
    let field = found["matches"][0]["ref"].as_str().unwrap().to_string();
    ok(&call(
        &client,
        "ui",
        json!({"operation": "type", "ref": field, "text": "ada@example.com"}),
    )
    .await);
    let found = ok(&call(&client, "ui", json!({"operation": "find", "resourceId": "password"})).await);
    let password = found["matches"][0]["ref"].as_str().unwrap().to_string();
    ok(&call(
        &client,
        "ui",
        json!({"operation": "type", "ref": password, "text": "s3cret pass"}),
    )
    .await);
    ok(&call(&client, "ui", json!({"operation": "key", "name": "ENTER"})).await);
    // A failed call is not recorded.
    err(&call(&client, "ui", json!({"operation": "tap", "text": "No such button"})).await);

    let result = call(&client, "flow", json!({"operation": "export", "name": "journey"})).await;
    println!("flow export (js): {} chars", response_chars(&result));
    let js = ok(&result);
    assert_eq!(js["steps"], 7, "{js}");
    assert_eq!(js["fragile"], 0, "{js}");
    let js_path = js["path"].as_str().unwrap().to_string();
    assert_eq!(Path::new(&js_path), workspace.path().join("flows/local/journey.js"));
    let script = std::fs::read_to_string(&js_path).unwrap();
    // Selectors, never refs: the row by its label, the field by its resource-id.
    assert!(
        script.contains(r#"await acted(ui.tap, { text: "Network & internet" }"#),
        "{script}"
    );
    assert!(
        script.contains(r#"{ resourceId: "org.droidmcp.demo.login:id/username" }"#),
        "{script}"
    );
    assert!(!script.contains(&format!("\"{field}\"")), "a ref is not a selector");
    // A password is never written down: the replay takes it from --env.
    assert!(!script.contains("s3cret"), "{script}");
    assert!(
        script.contains(r#"await ui.type({ text: env("PASSWORD") });"#),
        "{script}"
    );
    // A step checks what the next reading saw after it (for the last, the export's own look).
    assert!(
        script.contains(r#"await expect("org.droidmcp.demo.login.HomeActivity", [{ text: "Welcome back" }"#),
        "{script}"
    );
    // The whole file is behind the cacheId too (for a client on another host).
    let cached = ok(&call(
        &client,
        "cache",
        json!({"operation": "get", "id": js["cacheId"], "limit": 1000}),
    )
    .await);
    assert!(cached.to_string().contains("droidmcp flow"), "{cached}");

    let result = call(
        &client,
        "flow",
        json!({"operation": "export", "format": "maestro", "name": "journey"}),
    )
    .await;
    println!("flow export (maestro): {} chars", response_chars(&result));
    let maestro = ok(&result);
    let yaml_path = maestro["path"].as_str().unwrap().to_string();
    let yaml = std::fs::read_to_string(&yaml_path).unwrap();
    println!("{yaml}");
    assert!(yaml.starts_with("# droidmcp flow"), "{yaml}");
    assert!(
        yaml.contains("appId: \"com.android.settings\"\n---\n# 1 launch com.android.settings\n- launchApp\n"),
        "{yaml}"
    );
    assert!(yaml.contains("- tapOn:\n    text: \"Network & internet\"\n"), "{yaml}");
    assert!(yaml.contains("- back\n"), "{yaml}");
    assert!(yaml.contains("- inputText: \"ada@example.com\"\n"), "{yaml}");
    assert!(
        yaml.contains("- inputText: \"${PASSWORD}\"\n") && !yaml.contains("s3cret"),
        "{yaml}"
    );
    assert!(yaml.contains("- pressKey: \"Enter\"\n"), "{yaml}");
    assert!(yaml.contains("- assertVisible:\n"), "{yaml}");

    // Both replay on a fresh simulator: every step passes, one testcase each.
    let reports = tempfile::tempdir().unwrap();
    let js_xml = reports.path().join("js.xml");
    let secret = ["--env", "PASSWORD=s3cret pass"];
    let out = replay(
        Path::new(&js_path),
        home.path(),
        &[&["--junit", js_xml.to_str().unwrap()], &secret[..]].concat(),
    );
    assert!(out.status.success());
    let (cases, failed, skipped, xml) = junit_counts(&js_xml);
    assert_eq!((cases, failed, skipped), (7, 0, 0), "{xml}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("journey: 7 steps, 7 passed, 0 failed"));
    // Without the secret, its step says what to pass.
    let out = replay(Path::new(&js_path), home.path(), &[]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("which the recording left out: replay with --env PASSWORD=VALUE"),
        "{said}"
    );

    let yaml_xml = reports.path().join("maestro.xml");
    let out = replay(
        Path::new(&yaml_path),
        home.path(),
        &[&["--junit", yaml_xml.to_str().unwrap()], &secret[..]].concat(),
    );
    assert!(out.status.success());
    let (cases, failed, skipped, xml) = junit_counts(&yaml_xml);
    // Typing into a field is two Maestro commands (tapOn, inputText): one testcase each.
    assert_eq!((cases, failed, skipped), (9, 0, 0), "{xml}");

    // reset starts a new recording.
    let reset = ok(&call(&client, "flow", json!({"operation": "reset"})).await);
    assert_eq!(reset["steps"], 0);
    let empty = err(&call(&client, "flow", json!({"operation": "export"})).await);
    assert!(empty.contains("nothing is recorded"), "{empty}");
}

#[test]
fn a_failing_step_names_its_selector_and_what_the_screen_showed_and_skips_the_rest() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let flow = dir.path().join("broken.yaml");
    std::fs::write(
        &flow,
        "appId: com.android.settings\n---\n- launchApp\n- tapOn: \"Bluetooth settings that moved\"\n- back\n",
    )
    .unwrap();
    let xml_path = dir.path().join("report.xml");
    // After a flow that passes, on the same device: a testsuite each.
    let example = repo_dir().join("tests/flows/settings.yaml");
    let out = replay(
        &example,
        home.path(),
        &[
            flow.to_str().unwrap(),
            "--junit",
            xml_path.to_str().unwrap(),
            "--step-timeout-ms",
            "600",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("2 flows: 1 passed, 1 failed"));
    let (cases, failed, skipped, xml) = junit_counts(&xml_path);
    assert_eq!((cases, failed, skipped), (6, 1, 1), "{xml}");
    assert_eq!(xml.matches("<testsuite ").count(), 2, "{xml}");
    assert!(
        xml.contains(r#"<testsuite name="settings" tests="3" failures="0""#),
        "{xml}"
    );
    assert!(
        xml.contains(r#"name="2 tap text &quot;Bluetooth settings that moved&quot;""#),
        "{xml}"
    );
    assert!(xml.contains("did not appear"), "{xml}");
    assert!(
        xml.contains("The screen shows com.android.settings.Settings with"),
        "{xml}"
    );
    let shot = dir.path().join("broken-failure.jpg");
    assert!(shot.exists(), "the failure's screenshot is saved beside the report");
    assert!(std::fs::read(&shot).unwrap().starts_with(&[0xFF, 0xD8]), "a JPEG");
}

#[test]
fn a_selector_that_no_longer_matches_heals_by_its_label_unless_strict() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let flow = dir.path().join("renamed.yaml");
    std::fs::write(
        &flow,
        "appId: com.android.settings\n---\n- launchApp\n- tapOn:\n    id: \"com.android.settings:id/renamed_row\"\n    text: \"Network & internet\"\n- assertVisible: \"Airplane mode\"\n",
    )
    .unwrap();
    let out = replay(&flow, home.path(), &["--step-timeout-ms", "600"]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(r#"warning: healed: {"resourceId":"com.android.settings:id/renamed_row"} no longer matches; now {"text":"Network & internet"}"#),
        "{stdout}"
    );
    let out = replay(&flow, home.path(), &["--step-timeout-ms", "600", "--strict"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("(--strict)"));
}

/// A 20-step journey: its files' sizes, the export's answer, and the replay's time beside the
/// same steps made as MCP calls (printed: a replay waits for each outcome the calls only saw).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_twenty_step_journey_is_measured_as_calls_files_and_replay() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().to_str().unwrap();
    let client = mcp_server(&["--sim", "--workspace", ws], &[], home.path()).await;
    let settings = json!({"operation": "launch", "package": "com.android.settings"});
    let mut steps: Vec<(&str, serde_json::Value)> = vec![("adb-app", settings)];
    for _ in 0..6 {
        steps.push(("ui", json!({"operation": "tap", "text": "Network & internet"})));
        steps.push(("ui", json!({"operation": "key", "name": "BACK"})));
    }
    steps.push((
        "adb-app",
        json!({"operation": "launch", "package": "org.droidmcp.demo.login"}),
    ));
    for (field, text) in [("username", "ada@example.com"), ("password", "s3cret")] {
        steps.push(("ui", json!({"operation": "tap", "resourceId": field})));
        steps.push(("ui", json!({"operation": "type", "text": text})));
    }
    steps.push(("ui", json!({"operation": "key", "name": "ENTER"})));
    steps.push(("ui", json!({"operation": "key", "name": "BACK"})));
    assert_eq!(steps.len(), 20);
    let started = std::time::Instant::now();
    for (tool, args) in &steps {
        ok(&call(&client, tool, args.clone()).await);
    }
    let as_calls = started.elapsed();

    let mut sizes = Vec::new();
    for format in ["js", "maestro"] {
        let result = call(
            &client,
            "flow",
            json!({"operation": "export", "format": format, "name": "twenty"}),
        )
        .await;
        let chars = response_chars(&result);
        let answer = ok(&result);
        assert_eq!(answer["steps"], 20, "{answer}");
        assert!(chars <= 600, "the export answered {chars} chars: {answer}");
        let path = answer["path"].as_str().unwrap().to_string();
        sizes.push((format, chars, std::fs::metadata(&path).unwrap().len(), path));
    }
    let js = &sizes[0].3;
    let out = replay(Path::new(js), home.path(), &["--env", "PASSWORD=s3cret"]);
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stdout);
    let summary = said
        .lines()
        .find(|l| l.starts_with("twenty: 20 steps, 20 passed"))
        .unwrap_or_else(|| panic!("{said}"));
    let replay_s: f64 = summary
        .rsplit(", ")
        .next()
        .unwrap()
        .trim_end_matches(" s")
        .parse()
        .unwrap();
    for (format, chars, bytes, _) in &sizes {
        println!("20-step journey, {format}: export answer {chars} chars, file {bytes} bytes");
    }
    println!(
        "20 steps as MCP calls: {} ms; replayed (each step waits for its recorded outcome): {:.0} ms ({:.2}x)",
        as_calls.as_millis(),
        replay_s * 1000.0,
        replay_s * 1000.0 / as_calls.as_millis().max(1) as f64
    );
    client.cancel().await.unwrap();
}

/// What a test sets through the emulator console (a battery level, a location) is part of the
/// flow: the script replays every such line, Maestro the location (its `setLocation`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emulator_console_steps_are_recorded_and_replayed() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().to_str().unwrap();
    let client = mcp_server(&["--sim", "--workspace", ws], &[], home.path()).await;
    let console = |command: &str| json!({"operation": "emulator", "command": command});
    ok(&call(&client, "adb-device", console("help")).await);
    ok(&call(&client, "adb-device", console("power capacity 17")).await);
    ok(&call(&client, "adb-device", console("geo fix 4.88 52.36")).await);
    let shown = ok(&call(&client, "adb-device", console("power display")).await);
    assert!(shown["reply"].as_str().unwrap().contains("capacity: 17"), "{shown}");
    let js = ok(&call(&client, "flow", json!({"operation": "export", "name": "sensed"})).await);
    // Queries (help, power display) are left out: replaying them changes nothing.
    assert_eq!(js["steps"], 2, "{js}");
    assert_eq!(
        js["preview"],
        json!(["1 emulator \"power capacity 17\"", "2 emulator \"geo fix 4.88 52.36\""])
    );
    let js_path = js["path"].as_str().unwrap().to_string();
    let mut script = std::fs::read_to_string(&js_path).unwrap();
    assert!(
        script.contains(r#"await device.emulator({ command: "power capacity 17" });"#),
        "{script}"
    );
    // A check written after the recording: the replay really set both on its fresh device.
    script.push_str(
        "const h = await device.health();\nif (h.health.battery.level !== 17) throw new Error('battery ' + JSON.stringify(h.health.battery));\nconst l = await shell.run({ command: 'dumpsys location' });\nif (!l.stdout.includes('52.360000,4.880000')) throw new Error('location ' + l.stdout);\n",
    );
    std::fs::write(&js_path, script).unwrap();
    let out = replay(Path::new(&js_path), home.path(), &[]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("sensed: 2 steps, 2 passed, 0 failed"));

    let maestro = ok(&call(
        &client,
        "flow",
        json!({"operation": "export", "format": "maestro", "name": "sensed"}),
    )
    .await);
    let yaml = std::fs::read_to_string(maestro["path"].as_str().unwrap()).unwrap();
    assert!(
        yaml.contains("- setLocation:\n    latitude: 52.36\n    longitude: 4.88\n"),
        "{yaml}"
    );
    assert!(
        yaml.contains("# 1 emulator console steps have no Maestro command and are comments here")
            && yaml.contains("# droidmcp sent the emulator console `power capacity 17` here"),
        "{yaml}"
    );
    let out = replay(Path::new(maestro["path"].as_str().unwrap()), home.path(), &[]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("sensed: 1 step, 1 passed, 0 failed"));
    client.cancel().await.unwrap();
}

/// A hand-written Maestro suite replays as Maestro runs it: a subflow from a file beside it, a
/// repeat, an optional tap on what is not there, and points in percent of the screen.
#[test]
fn a_hand_written_maestro_flow_with_run_flow_repeat_optional_and_percentages_passes() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("common")).unwrap();
    std::fs::write(
        dir.path().join("common/network.yaml"),
        "appId: com.android.settings\n---\n- launchApp\n- tapOn: \"Network & internet\"\n- assertVisible: \"Internet\"\n",
    )
    .unwrap();
    let main = dir.path().join("suite.yaml");
    // The "Network & internet" row's center is (540, 638) on the simulator's 1080 x 2400 screen.
    std::fs::write(
        &main,
        "appId: com.android.settings\n---\n- runFlow: common/network.yaml\n- tapOn:\n    text: \"No such button\"\n    optional: true\n- repeat:\n    times: 2\n    commands:\n      - back\n      - tapOn:\n          point: \"50%, 27%\"\n      - assertVisible: \"Internet\"\n- back\n- swipe:\n    start: \"50%, 70%\"\n    end: \"50%, 40%\"\n",
    )
    .unwrap();
    let xml_path = dir.path().join("suite.xml");
    let out = replay(
        &main,
        home.path(),
        &["--junit", xml_path.to_str().unwrap(), "--step-timeout-ms", "1500"],
    );
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("suite: 9 steps, 9 passed, 0 failed"), "{said}");
    assert!(said.contains("3 tap text \"No such button\""), "{said}");
    assert!(said.contains("optional, failed:"), "{said}");
    assert!(said.contains("5 tap point (50%, 27%), fragile"), "{said}");
    let (cases, failed, skipped, xml) = junit_counts(&xml_path);
    assert_eq!((cases, failed, skipped), (9, 0, 0), "{xml}");
    // Without the optional, the missing button fails the flow.
    let strict = std::fs::read_to_string(&main)
        .unwrap()
        .replace("    optional: true\n", "");
    std::fs::write(&main, strict).unwrap();
    let out = replay(&main, home.path(), &["--step-timeout-ms", "1500"]);
    assert_eq!(out.status.code(), Some(1));
}

/// Maestro's `text` is a regular expression over an element's whole text: a hand-written flow's
/// patterns find their rows (by a row's title), wait, scroll and assert gone as Maestro does, and
/// one that matches no whole text fails saying so.
#[test]
fn maestro_text_patterns_match_whole_texts_as_maestro_does() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let flow = dir.path().join("patterns.yaml");
    std::fs::write(
        &flow,
        "appId: com.android.settings\n---\n- launchApp\n- assertVisible: \"Network & inter.*\"\n- scrollUntilVisible:\n    element: \"(Display|Screen)\"\n    direction: DOWN\n- tapOn: \"Net\\\\w+ & internet\"\n- assertVisible: \"Inter(net|web)\"\n- assertNotVisible: \"Conn.* devices\"\n- back\n- extendedWaitUntil:\n    visible: \"Conn.* devices\"\n    timeout: 2000\n",
    )
    .unwrap();
    let out = replay(&flow, home.path(), &["--step-timeout-ms", "1500"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    // An assertVisible checks the step before it: six steps.
    assert!(said.contains("patterns: 6 steps, 6 passed, 0 failed"), "{said}");
    assert!(said.contains("tap text matching \"Net\\\\w+ & internet\""), "{said}");

    // "Internet" alone is no whole text on the first screen: "Internet · AndroidWifi" is one level down.
    std::fs::write(
        &flow,
        "appId: com.android.settings\n---\n- launchApp\n- tapOn: \"Inter.et\"\n",
    )
    .unwrap();
    let out = replay(&flow, home.path(), &["--step-timeout-ms", "800"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("FAILED  2 tap text matching \"Inter.et\""), "{said}");
    assert!(said.contains("did not appear after"), "{said}");
}

/// `runFlow {when}` as suites use it (a dialog that may or may not show): a block whose condition
/// holds runs, one whose condition does not is reported not run, one for another platform is not
/// there, and the flow passes either way.
#[test]
fn run_flow_when_runs_a_block_only_when_its_condition_holds() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let flow = dir.path().join("when.yaml");
    std::fs::write(
        &flow,
        "appId: com.android.settings\n---\n- launchApp\n- runFlow:\n    when:\n      visible: \"Network & internet\"\n    commands:\n      - tapOn: \"Network & internet\"\n      - assertVisible: \"Internet\"\n      - back\n- runFlow:\n    when:\n      visible: \"Allow\"\n    commands:\n      - tapOn: \"Allow\"\n      - tapOn: \"While using the app\"\n- runFlow:\n    when:\n      notVisible: \"Allow\"\n      platform: Android\n    commands:\n      - assertVisible: \"Network & internet\"\n- runFlow:\n    when:\n      platform: iOS\n    commands:\n      - tapOn: \"Only on iOS\"\n",
    )
    .unwrap();
    let out = replay(&flow, home.path(), &["--step-timeout-ms", "1500"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("when: 6 steps, 6 passed, 0 failed"), "{said}");
    assert!(
        said.contains("ok      2 tap text \"Network & internet\", if text \"Network & internet\" shows"),
        "{said}"
    );
    let not_run = said
        .lines()
        .filter(|l| l.contains("not run: its runFlow condition does not hold"))
        .count();
    assert_eq!(not_run, 2, "the two steps of the Allow block: {said}");
    assert!(!said.contains("Only on iOS"), "{said}");

    // The block's condition is read as it starts: had it been skipped, the check in it fails.
    let failing = std::fs::read_to_string(&flow)
        .unwrap()
        .replace("assertVisible: \"Internet\"", "assertVisible: \"No such row\"");
    std::fs::write(&flow, failing).unwrap();
    let out = replay(&flow, home.path(), &["--step-timeout-ms", "800"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_maestro_command_droidmcp_does_not_replay_is_refused_with_its_line() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let flow = dir.path().join("other.yaml");
    std::fs::write(
        &flow,
        "appId: com.example\n---\n- launchApp\n- openBrowser: https://example.org\n",
    )
    .unwrap();
    // Every file is read before any runs: the good one first does not run either.
    let example = repo_dir().join("tests/flows/settings.yaml");
    let out = replay(&example, home.path(), &[flow.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(!String::from_utf8_lossy(&out.stdout).contains("ok      1 launch"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("line 4: `openBrowser` is refused: Maestro reads the field and maps it to no command"),
        "{stderr}"
    );
}

/// The example flow README and the emulator workflow use replays on the simulator as written.
#[test]
fn the_committed_example_flow_passes_on_the_simulator() {
    let home = tempfile::tempdir().unwrap();
    let flow = repo_dir().join("tests/flows/settings.yaml");
    let dir = tempfile::tempdir().unwrap();
    let xml_path = dir.path().join("reports/settings.xml");
    let out = replay(&flow, home.path(), &["--junit", xml_path.to_str().unwrap()]);
    assert!(out.status.success());
    let (cases, failed, skipped, xml) = junit_counts(&xml_path);
    assert_eq!((cases, failed, skipped), (3, 0, 0), "{xml}");
}
