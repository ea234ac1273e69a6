//! `droidmcp replay --check`: Maestro flows read without a device, every refusal listed with its
//! file, line and why; the flows of `tests/flows/maestro/` read, but for what the compatibility
//! table says cannot run in a replay; that table is docs/flows.md's; and the login flow there
//! replays on the simulator (an id with its text, a `label` as a caption, a subflow, a dialog
//! under `when`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use droidmcp::flow::maestro::compat;

use crate::common::*;

fn corpus() -> PathBuf {
    repo_dir().join("tests/flows/maestro")
}

/// The corpus's top-level flows (subflows are read through them).
fn flows() -> Vec<PathBuf> {
    let mut flows: Vec<PathBuf> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    flows.sort();
    flows
}

fn droidmcp(args: &[&str], files: &[PathBuf]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .args(args)
        .args(files)
        .env_remove("ANDROID_SERIAL")
        .output()
        .expect("droidmcp runs");
    println!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Issue 35 item 2: every flow of our corpus is read whole without a device, the AI one too (its
/// steps fail as Maestro's do without its AI key, a warning).
#[test]
fn every_flow_of_the_corpus_reads_but_for_documented_refusals() {
    let files = flows();
    assert!(files.len() >= 3, "{files:?}");
    let out = droidmcp(&["replay", "--check"], &files);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(!said.lines().any(|l| l.starts_with("refused ")), "{said}");
    for file in &files {
        let summary = format!("{}: ", file.display());
        let line = said.lines().find(|l| l.starts_with(&summary)).unwrap();
        assert!(line.ends_with(", 0 refused"), "{line}");
    }
    assert!(said.contains("would   1 launch org.droidmcp.demo.login"), "{said}");
    assert!(
        said.contains(&format!("{} flows: {} read", files.len(), files.len())),
        "{said}"
    );
    assert_eq!(out.status.code(), Some(0));
}

/// `--check` goes on past a refused command: each is listed with its file (a subflow's own) and
/// line; a clean flow exits 0; and what `--check` would not use (a device, a report) is refused.
#[test]
fn check_lists_every_refusal_with_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sub.yaml"),
        "appId: a.b\n---\n- back\n- openBrowser: https://example.org\n",
    )
    .unwrap();
    let flow = dir.path().join("flow.yaml");
    std::fs::write(
        &flow,
        "appId: a.b\nonFlowEnd: []\n---\n- launchApp\n- frobnicate\n- runFlow: sub.yaml\n- tapOn:\n    id: row\n    point: \"156%,33%\"\n- back\n- tapOn: OK\n  optional: true\n",
    )
    .unwrap();
    let out = droidmcp(&["replay", "--check"], std::slice::from_ref(&flow));
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    let real = |p: &Path| p.canonicalize().unwrap().display().to_string();
    let (flow_path, sub_path) = (real(&flow), real(&dir.path().join("sub.yaml")));
    for expected in [
        // Maestro ignores a header key it does not know; so does the replay, saying so.
        format!(
            "note    {flow_path} line 2: `onFlowEnd` is no Maestro header key: Maestro ignores it, and so does the replay (onFlowComplete runs after the flow)"
        ),
        format!("refused {flow_path} line 5: `frobnicate` is not a Maestro command"),
        format!(
            "refused {sub_path} line 4: `openBrowser` is refused: Maestro reads the field and maps it to no command"
        ),
        format!("refused {flow_path} line 9: point \"156%,33%\": percentages of the element are 0 to 100"),
        // Maestro refuses a field beside the command; the line is the item's, never 0.
        format!(
            "refused {flow_path} line 11: a command is one name with its arguments, and this item has 2: `tapOn`, `optional`"
        ),
    ] {
        assert!(said.contains(&expected), "{expected}\n{said}");
    }
    assert!(
        said.contains("would   2 key BACK") && said.contains("would   3 key BACK"),
        "{said}"
    );
    assert!(said.contains(": 3 steps would run, 4 refused"), "{said}");
    assert!(!said.contains(" line 0:"), "{said}");
    let clean = dir.path().join("clean.yaml");
    std::fs::write(&clean, "appId: a.b\n---\n- launchApp\n").unwrap();
    assert!(
        droidmcp(&["replay", "--check"], std::slice::from_ref(&clean))
            .status
            .success()
    );
    let both = droidmcp(&["replay", "--check", "--junit", "r.xml"], &[clean]);
    assert_eq!(both.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&both.stderr).contains("cannot be used with"));
}

/// A `point` beside a selector is a place inside its element (Maestro 2's element-relative
/// point): `--check` reads it in both forms, a template's too (rendered as the step runs), and
/// names it; a point no element can hold (a share beyond 0 to 100, not two numbers, a negative
/// pixel) is refused at its line, saying what a point is.
#[test]
fn check_reads_a_point_within_an_element_and_refuses_a_bad_one_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let flow = dir.path().join("points.yaml");
    std::fs::write(
        &flow,
        "appId: a.b\n---\n- evalScript: ${output.at = '90%,50%'}\n- tapOn:\n    id: toggle.wifi\n    point: \"90%,50%\"\n- longPressOn:\n    text: Seek\n    point: 25, 75\n- doubleTapOn:\n    id: seek_bar\n    index: 1\n    point: ${output.at}\n- tapOn:\n    id: a\n    point: \"150%,10%\"\n- tapOn:\n    text: b\n    point: abc\n- tapOn:\n    id: c\n    point: \"-5,10\"\n- tapOn:\n    id: d\n    point: \"10%\"\n",
    )
    .unwrap();
    let out = droidmcp(&["replay", "--check"], std::slice::from_ref(&flow));
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    let path = flow.canonicalize().unwrap().display().to_string();
    for expected in [
        "would   2 tap id \"toggle.wifi\" at 90%,50% within it".to_string(),
        "would   3 long-press text \"Seek\" at 25,75 within it".to_string(),
        format!("refused {path} line 16: point \"150%,10%\": percentages of the element are 0 to 100"),
        format!(
            "refused {path} line 19: point \"abc\": a point within the element is \"x%,y%\" of its size (each 0 to 100) or \"x,y\" pixels from its top-left"
        ),
        format!("refused {path} line 22: point \"-5,10\": pixels from the element's top-left are 0 or more"),
        format!("refused {path} line 25: point \"10%\": a point within the element is"),
    ] {
        assert!(said.contains(&expected), "{expected}\n{said}");
    }
    // The template's step is named as written, read again as it runs.
    assert!(said.contains("${output.at}"), "{said}");
    assert!(said.contains(": 4 steps would run, 4 refused"), "{said}");
}

/// The compatibility table in docs/flows.md is the one the reader refuses by.
#[test]
fn the_docs_compatibility_table_is_the_code_s() {
    let doc = std::fs::read_to_string(repo_dir().join("docs/flows.md")).unwrap();
    let (begin, end) = ("<!-- maestro-compat: begin -->\n", "<!-- maestro-compat: end -->");
    let start = doc.find(begin).expect("the begin marker") + begin.len();
    let stop = doc.find(end).expect("the end marker");
    assert_eq!(
        &doc[start..stop],
        compat::table(),
        "regenerate the table from compat::table()"
    );
}

/// The corpus's login flow replays on the simulator: a subflow, a `label` that is only a caption,
/// `eraseText: N`, an `extendedWaitUntil`, a dialog block skipped when it does not show, and a
/// tap by an id with its text.
#[test]
fn the_corpus_login_flow_replays_on_the_simulator() {
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .arg("replay")
        .arg(corpus().join("login.yaml"))
        .args(["--step-timeout-ms", "2000", "--sim"])
        .env("HOME", home.path())
        .env_remove("ANDROID_SERIAL")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    println!("{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{said}");
    assert!(said.contains("Sign in and out: "), "{said}");
}

/// Issue 35: the commands and options public suites use most have their effect on the device:
/// `launchApp {clearState, stopApp}` clears the app's data and stops it before launching (in
/// Maestro's order), `waitForAnimationToEnd` waits for the screen (a reading), `inputRandomEmail`
/// types an address of Maestro's shape, `hideKeyboard` is the BACK Maestro sends on Android, and
/// a `label` on a command is only its caption.
#[test]
fn launch_options_wait_for_animation_and_hide_keyboard_reach_the_device() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let flow = dir.path().join("fresh.yaml");
    std::fs::write(
        &flow,
        "appId: org.droidmcp.demo.login\njsEngine: graaljs\n---\n- launchApp:\n    clearState: true\n    stopApp: true\n    clearKeychain: true\n    label: A fresh start\n- waitForAnimationToEnd:\n    timeout: 3000\n- tapOn:\n    id: \"org.droidmcp.demo.login:id/username\"\n- inputText: \"ada\"\n- eraseText\n- inputRandomEmail\n- assertVisible: \"[a-z]+_[a-z]+_\\\\d{4}@[a-z]+\\\\.com\"\n- hideKeyboard\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .arg("replay")
        .arg(&flow)
        .args(["--step-timeout-ms", "2000", "--sim"])
        .env("HOME", home.path())
        .env("RUST_LOG", "droidmcp=debug")
        .env_remove("ANDROID_SERIAL")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    println!("{said}");
    assert!(out.status.success(), "{said}");
    let log = String::from_utf8_lossy(&out.stderr);
    let commands: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("droidmcp::adb::source"))
        .filter_map(|l| {
            [
                "pm clear",
                "am force-stop",
                "am start",
                "uiautomator dump",
                "input keyevent",
            ]
            .into_iter()
            .find(|c| l.contains(c))
        })
        .collect();
    println!("{commands:?}");
    let at = |c: &str| {
        commands
            .iter()
            .position(|x| *x == c)
            .unwrap_or_else(|| panic!("{c}: {commands:?}"))
    };
    assert!(
        at("pm clear") < at("am force-stop") && at("am force-stop") < at("am start"),
        "{commands:?}"
    );
    // The settle is a reading after the launch; the BACK is the last key sent.
    assert_eq!(commands[at("am start") + 1], "uiautomator dump", "{commands:?}");
    assert!(said.contains("ok      9 key BACK"), "{said}");
    assert!(commands.contains(&"input keyevent"), "{commands:?}");
    assert!(
        said.contains("wait for the screen to settle, at most 3000 ms"),
        "{said}"
    );
    assert!(said.contains("9 steps, 9 passed"), "{said}");
}

/// Issue 35 item 5: `--junit-format maestro` writes the report as Maestro does (one testsuite
/// "Test Suite", a testcase per flow with its status), and a failed flow's failure still names
/// its failing step, what the screen showed and the screenshot saved beside the report.
#[test]
fn the_maestro_junit_report_is_a_testcase_per_flow_with_the_failure_s_screen() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let pass = dir.path().join("pass.yaml");
    std::fs::write(
        &pass,
        "appId: com.android.settings\nname: Opens\n---\n- launchApp\n- assertVisible: \"Network & internet\"\n",
    )
    .unwrap();
    let fail = dir.path().join("fail.yaml");
    std::fs::write(
        &fail,
        "appId: com.android.settings\n---\n- launchApp\n- tapOn: \"Nowhere to be seen\"\n- back\n",
    )
    .unwrap();
    let report = dir.path().join("report.xml");
    let out = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .arg("replay")
        .args([&pass, &fail])
        .arg("--junit")
        .arg(&report)
        .args(["--junit-format", "maestro", "--step-timeout-ms", "600", "--sim"])
        .env("HOME", home.path())
        .env_remove("ANDROID_SERIAL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let xml = std::fs::read_to_string(&report).unwrap();
    println!("{xml}");
    // Maestro's suite names its device (JUnitTestSuiteReporter's `device`), here the simulator.
    assert!(
        xml.starts_with(
            "<?xml version='1.0' encoding='UTF-8'?>\n<testsuites>\n  <testsuite name=\"Test Suite\" device=\"127.0.0.1:"
        ),
        "{xml}"
    );
    assert!(xml.contains("\" tests=\"2\" failures=\"1\" time=\""), "{xml}");
    assert!(
        xml.contains("<testcase id=\"Opens\" name=\"Opens\" classname=\"Opens\" time=\"0\" status=\"SUCCESS\"/>"),
        "{xml}"
    );
    assert!(
        xml.contains("<testcase id=\"fail\" name=\"fail\" classname=\"fail\" time=\""),
        "{xml}"
    );
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let failure = doc
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .unwrap()
        .text()
        .unwrap();
    assert!(
        failure.starts_with("step 2 tap text \"Nowhere to be seen\": "),
        "{failure}"
    );
    assert!(failure.contains("The screen shows com.android.settings"), "{failure}");
    let shot = failure.rsplit("Screenshot: ").next().unwrap();
    assert!(Path::new(shot).exists(), "{shot}");
    assert_eq!(doc.descendants().filter(|n| n.has_tag_name("testcase")).count(), 2);
}
