//! Issue 42: a `${…}` in any field of any Maestro command is rendered as its step runs, as
//! Maestro does, or `replay --check` refuses it at its line; never passed on literally. And
//! `--check` refuses what the run would, because both read through the same reader.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::*;

mod generated;
use crate::flow_commands::{flow, replay, sent, stdout};

/// `droidmcp replay --check FILES`.
pub(crate) fn check(files: &[&Path]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .args(["replay", "--check"])
        .args(files)
        .env_remove("ANDROID_SERIAL")
        .output()
        .expect("droidmcp replay --check runs");
    println!("check: {}\n{}", out.status, String::from_utf8_lossy(&out.stdout));
    out
}

/// The header's `appId: ${APP_ID}`, given with `--env`, is the app `killApp` kills (`am kill`,
/// which spares the app in front, so it goes to the background first, as Maestro's docs do it):
/// the simulator no longer runs it (read back through `droidmcp call adb-shell`).
#[test]
fn kill_app_kills_the_app_the_env_names() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let app = "com.google.android.contacts";
    let killing = flow(
        dir.path(),
        "kill.yaml",
        "appId: ${APP_ID}\n---\n- launchApp\n- assertVisible: \"Ada Lovelace\"\n- pressKey: Home\n- killApp\n",
    );
    let out = replay(&killing, Some(&sim), &["--env", &format!("APP_ID={app}")]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}");
    let pid = shell_by_call(&sim, &format!("pidof {app}"));
    assert!(pid.trim().is_empty(), "{app} still runs as {pid:?}: {said}");
    let killed: Vec<String> = sent(&out).into_iter().filter(|c| c.starts_with("am kill")).collect();
    assert_eq!(killed, [format!("am kill '{app}'")]);
}

/// An extendedWaitUntil timeout longer than one `ui wait` may wait (a public suite's
/// `timeout: 300_000`, Maestro's YAML 1.1 integer): Maestro waits as long as it is told, so the
/// flow reads whole and its wait runs in turns; `--check` and the run agree. Before, both refused
/// it ("timeoutMs must be between 1 and 120000; got 300000").
#[test]
fn a_wait_longer_than_one_call_reads_whole_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let long = flow(
        dir.path(),
        "long.yaml",
        "appId: com.android.settings\n---\n- launchApp\n- extendedWaitUntil:\n    visible: \"Network & internet\"\n    timeout: 300_000\n",
    );
    let out = check(&[&long]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("2 steps would run, 0 refused"), "{said}");
    let run = replay(&long, None, &[]);
    assert!(run.status.success(), "{}", stdout(&run));
    assert!(stdout(&run).contains("ok      2 "), "{}", stdout(&run));
}

/// A number field given as a `${…}` (a timeout, a tap's repeat) is rendered as the step runs and
/// read as a number: a value that is one replays; one that is not fails the step, saying which
/// field, on which line, and what its template gave.
#[test]
fn a_number_field_given_as_a_template_is_rendered_then_read_as_a_number() {
    let dir = tempfile::tempdir().unwrap();
    let numbers = |wait: &str| {
        format!(
            "appId: com.google.android.contacts\nenv:\n  WAIT: {wait}\n---\n- launchApp\n- extendedWaitUntil:\n    visible: \"Ada Lovelace\"\n    timeout: ${{WAIT}}\n- tapOn:\n    text: \"Alan Turing\"\n    repeat: ${{TIMES}}\n    delay: 50\n"
        )
    };
    let good = flow(dir.path(), "good.yaml", &numbers("\"3000\""));
    assert!(check(&[&good]).status.success());
    let out = replay(&good, None, &["--env", "TIMES=4"]);
    assert!(out.status.success(), "{}", stdout(&out));
    let taps = sent(&out).into_iter().filter(|c| c.starts_with("input tap")).count();
    assert_eq!(taps, 4, "{:?}", sent(&out));

    let bad = flow(dir.path(), "bad.yaml", &numbers("soon"));
    let out = replay(&bad, None, &["--env", "TIMES=4"]);
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    let failed = said
        .lines()
        .find(|l| l.starts_with("FAILED  2 "))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(
        failed.contains("bad.yaml line 8: timeout is a number of ms (the value of ${WAIT})"),
        "{failed}"
    );
    assert!(!sent(&out).iter().any(|c| c.contains("${")), "{:?}", sent(&out));
}

/// What a flow's reading needs before any step runs (a file read with the flow, media pushed
/// before the run, whether a failure is optional, a block's platform, a variable's name) cannot
/// be a `${…}`: `--check` refuses each at its line, naming the field and why.
#[test]
fn check_refuses_what_cannot_be_rendered_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("- addMedia:\n    - ${PHOTO}\n", 4, "addMedia"),
        ("- runFlow: ${SUBFLOW}\n", 3, "runFlow"),
        ("- runFlow:\n    file: ${SUBFLOW}\n", 4, "file"),
        ("- tapOn:\n    text: OK\n    optional: ${MAYBE}\n", 5, "optional"),
        (
            "- runFlow:\n    when:\n      platform: ${OS}\n    commands:\n      - back\n",
            5,
            "platform",
        ),
        ("- runScript: ${SCRIPT}\n", 3, "runScript"),
        (
            "- runFlow:\n    env:\n      ${NAME}: x\n    commands:\n      - back\n",
            5,
            "env",
        ),
    ];
    for (i, (command, line, field)) in cases.iter().enumerate() {
        let file = flow(
            dir.path(),
            &format!("f{i}.yaml"),
            &format!("appId: a.b\n---\n{command}"),
        );
        let out = check(&[&file]);
        let said = stdout(&out);
        assert_eq!(out.status.code(), Some(1), "{said}");
        let expected = format!("refused {} line {line}: ", file.canonicalize().unwrap().display());
        let refusal = said
            .lines()
            .find(|l| l.starts_with(&expected))
            .unwrap_or_else(|| panic!("{command}: {said}"));
        assert!(
            refusal.contains(&format!("`{field}`")) && refusal.contains("${…}"),
            "{command}: {refusal}"
        );
    }
}
