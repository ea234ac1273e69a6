//! Issue 35's JavaScript half, replayed by the binary on the simulator: `${…}` in fields and
//! selectors, env precedence (header < runFlow < `--env`), runScript, evalScript, `output`,
//! assertTrue, runFlow when `true`, repeat while, retry, onFlowStart / onFlowComplete; a script's
//! endless loop and huge allocation end at the run's limits naming the file; `--check` compiles
//! each script; a value given with `--env` never reaches the report, the log or the JUnit file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;

/// `droidmcp replay FILE ARGS --sim` in a fresh process (a fresh simulated device), logging at
/// debug level so a test can read every log line.
pub(crate) fn replay(file: &Path, home: &Path, args: &[&str]) -> Output {
    replay_env(file, home, args, &[])
}

/// `replay` with these environment variables set.
pub(crate) fn replay_env(file: &Path, home: &Path, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .envs(vars.iter().copied())
        .arg("replay")
        .arg(file)
        .args(args)
        .args(["--step-timeout-ms", "2000", "--sim"])
        .env("HOME", home)
        .env("RUST_LOG", "droidmcp=debug")
        .env_remove("ANDROID_SERIAL")
        .output()
        .expect("droidmcp replay runs");
    println!(
        "replay {} {args:?}: {}\n{}",
        file.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A flow (and the files beside it) in a folder of its own.
pub(crate) fn flow(dir: &Path, files: &[(&str, &str)]) -> PathBuf {
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    dir.join(files[0].0)
}

/// Our corpus's scripted sign-in passes: ids from a script in onFlowStart, a subflow given its
/// user by runFlow env over its own default, `${…}` in ids, texts, the appId and a helper call,
/// a runScript's own env gone after it, conditions in JavaScript (one block runs, one does not;
/// two inside one, by what shows),
/// a retried block whose first failure is a warning, a repeat while a script's count holds and
/// one while a text shows, and the cleanup script in onFlowComplete.
#[test]
fn the_corpus_scripted_sign_in_replays_on_the_simulator() {
    let home = tempfile::tempdir().unwrap();
    let file = repo_dir().join("tests/flows/maestro/scripted-login.yaml");
    let out = replay(&file, home.path(), &[]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}");
    for line in [
        "ok      1 run script scripts/elements.js",
        "ok      6 type \"${output.address(USER_NAME, DOMAIN)}\"",
        "; warning: not run: its runFlow condition does not hold",
        "warning: failed, then retried: \"${output.attempts >= 2}\" is \"false\", not true",
        "ok      25 run script scripts/cleanup.js, if \"${output.typed}\" is true",
        // The block inside the block: its own condition read; one of the two ran.
        "skipped 15 evaluate \"${output.nested = 'wrong'}\"",
        "Scripted sign-in: 29 steps, 28 passed, 0 failed, 1 skipped",
    ] {
        assert!(said.contains(line), "{line}\n{said}");
    }
    // Three rounds while the count holds, one tap while "Welcome back" shows.
    assert_eq!(said.matches("ok      22 evaluate").count(), 3, "{said}");
    assert_eq!(said.matches("ok      23 tap resourceId").count(), 1, "{said}");
    assert!(
        said.contains("ok      14 evaluate \"${output.nested = true}\""),
        "{said}"
    );
}

/// Env precedence, as the replay states it: a header's env < a runFlow's env (for that subflow
/// only, over the subflow's own header) < `--env`. What was typed shows on the screen.
#[test]
fn env_precedence_is_header_then_run_flow_then_the_command_line() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sub = "appId: org.droidmcp.demo.login\nenv:\n  WHO: sub-default\n---\n- tapOn:\n    id: \"org.droidmcp.demo.login:id/username\"\n- inputText: ${WHO}-${PLACE}\n";
    let main = |expected: &str| {
        format!(
            "appId: org.droidmcp.demo.login\nenv:\n  WHO: header\n  PLACE: home\n---\n- launchApp\n- runFlow:\n    file: sub.yaml\n    env:\n      WHO: ${{WHO}}-passed\n- assertVisible: \"{expected}\"\n- assertTrue: ${{WHO == 'header' || WHO == 'cli'}}\n"
        )
    };
    let file = flow(
        dir.path(),
        &[("main.yaml", &main("header-passed-home")), ("sub.yaml", sub)],
    );
    let out = replay(&file, home.path(), &[]);
    assert!(out.status.success(), "{}", stdout(&out));
    // --env wins over both: the header's WHO and the runFlow's.
    let file = flow(dir.path(), &[("main.yaml", &main("cli-home")), ("sub.yaml", sub)]);
    let out = replay(&file, home.path(), &["--env", "WHO=cli"]);
    assert!(out.status.success(), "{}", stdout(&out));
}

/// A `${…}` whose variable nobody defined fails its step naming the variable and `--env`; a
/// condition reads it as undefined (so `${X || 'default'}` and `${!X}` work, as in Maestro); a
/// literal `$` without `{` and an escaped `\${` are typed as written.
#[test]
fn an_undefined_variable_fails_its_step_naming_it_and_the_env_option() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = flow(
        dir.path(),
        &[(
            "f.yaml",
            "appId: org.droidmcp.demo.login\n---\n- launchApp\n- assertTrue: ${!NOT_SET}\n- tapOn:\n    id: \"org.droidmcp.demo.login:id/username\"\n- inputText: US$ ${NOT_SET || 'five'} \\${x}\n- assertVisible: \"US\\\\$ five \\\\$\\\\{x\\\\}\"\n- inputText: Hi ${NOT_SET}\n- back\n",
        )],
    );
    let out = replay(&file, home.path(), &[]);
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("ok      4 type \"US$ ${NOT_SET || 'five'} \\\\${x}\""),
        "{said}"
    );
    assert!(
        said.lines().any(|l| l.starts_with("FAILED  5 type \"Hi ${NOT_SET}\" (")
            && l.contains(
                ": ${NOT_SET}: NOT_SET is not defined; replay with --env NOT_SET=VALUE, or define it in the flow's env"
            )),
        "{said}"
    );
    assert!(said.contains("skipped 6 key BACK"), "{said}");
}

/// A secret given with `--env` is typed and matched, but never written: not in a report line
/// (not even in what the screen showed when a later step failed), not in the log at debug
/// level, not in the JUnit file.
#[test]
fn a_value_given_with_env_never_reaches_the_report_the_log_or_the_junit_file() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let secret = "tok-8d1c4f2a9e7b";
    let file = flow(
        dir.path(),
        &[(
            "f.yaml",
            "appId: org.droidmcp.demo.login\n---\n- launchApp\n- tapOn:\n    id: \"org.droidmcp.demo.login:id/username\"\n- inputText: ${API_TOKEN}\n- assertVisible: ${API_TOKEN}\n- tapOn: \"${API_TOKEN} is not a button\"\n",
        )],
    );
    let report = dir.path().join("report.xml");
    let out = replay(
        &file,
        home.path(),
        &[
            "--env",
            &format!("API_TOKEN={secret}"),
            "--junit",
            report.to_str().unwrap(),
        ],
    );
    let (said, log) = (stdout(&out), String::from_utf8_lossy(&out.stderr).into_owned());
    assert_eq!(out.status.code(), Some(1), "{said}");
    // It was typed (the check of step 3 found it) and the failure names the placeholder.
    assert!(said.contains("ok      3 type \"${API_TOKEN}\""), "{said}");
    // A text with a template is read as its step runs: a pattern or not, by what it gives.
    assert!(
        said.contains("FAILED  4 tap text \"${API_TOKEN} is not a button\""),
        "{said}"
    );
    assert!(
        said.contains("The screen shows") && said.contains("\"${API_TOKEN}\""),
        "{said}"
    );
    let xml = std::fs::read_to_string(&report).unwrap();
    assert!(log.lines().count() > 10, "the debug log was written: {log}");
    for (what, text) in [("stdout", &said), ("the log", &log), ("the JUnit file", &xml)] {
        assert!(!text.contains(secret), "the secret is in {what}:\n{text}");
    }
}

/// A failure that would quote a value given with `--env` quotes the template it came from, at
/// its line; another value given (one letter, a dot) garbles nothing it is not in; and the
/// secret reaches neither the report, the log nor the JUnit file.
#[test]
fn a_failure_quotes_a_secret_as_its_template_and_a_short_value_garbles_nothing() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let secret = "tok-5e2b9c7d";
    let file = flow(
        dir.path(),
        &[(
            "shots.yaml",
            "appId: org.droidmcp.demo.login\n---\n- launchApp\n- tapOn:\n    id: \"org.droidmcp.demo.login:id/username\"\n- inputText: ${API_TOKEN}\n- takeScreenshot: \"${API_TOKEN}/../.escape\"\n",
        )],
    );
    let report = dir.path().join("out/report.xml");
    let out = replay(
        &file,
        home.path(),
        &[
            "--env",
            &format!("API_TOKEN={secret}"),
            "--env",
            "E=e",
            "--env",
            "DOT=.",
            "--junit",
            report.to_str().unwrap(),
        ],
    );
    let (said, log) = (stdout(&out), String::from_utf8_lossy(&out.stderr).into_owned());
    assert_eq!(out.status.code(), Some(1), "{said}");
    let failed = said.lines().find(|l| l.starts_with("FAILED  4 ")).unwrap_or_default();
    assert!(
        failed.contains("shots.yaml line 7: ") && failed.contains("(the value of ${API_TOKEN}/../.escape)"),
        "{failed}"
    );
    assert!(!said.contains("${E}") && !said.contains("${DOT}"), "{said}");
    let xml = std::fs::read_to_string(&report).unwrap();
    for (what, text) in [("stdout", &said), ("the log", &log), ("the JUnit file", &xml)] {
        assert!(!text.contains(secret), "the secret is in {what}:\n{text}");
    }
}

/// Scripts run under the run's limits: an endless loop ends at `--run-timeout-ms` naming its
/// step and file; a huge allocation hits the memory limit and fails its step naming the file
/// and line; an exception names the file and line too.
#[test]
fn a_script_s_endless_loop_and_huge_allocation_end_at_the_run_s_limits_naming_the_file() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = flow(
        dir.path(),
        &[
            (
                "loop.yaml",
                "appId: org.droidmcp.demo.login\n---\n- evalScript: ${output.a = 1}\n- runScript: spin.js\n- back\n",
            ),
            ("spin.js", "output.started = true;\nfor (;;) {}\n"),
        ],
    );
    let out = replay(&file, home.path(), &["--run-timeout-ms", "2000"]);
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("FAILED  the run: the script ran past its time limit of 2000 ms and was stopped, in step 2 run script spin.js"),
        "{said}"
    );
    let file = flow(
        dir.path(),
        &[
            (
                "big.yaml",
                "appId: org.droidmcp.demo.login\n---\n- runScript: grow.js\n- runScript: throws.js\n",
            ),
            (
                "grow.js",
                "const all = [];\nwhile (true) {\n  all.push(new Array(100000).fill(7));\n}\n",
            ),
            ("throws.js", "output.a = 1;\nnull.b;\n"),
        ],
    );
    let out = replay(&file, home.path(), &[]);
    let said = stdout(&out);
    assert!(
        said.contains("FAILED  1 run script grow.js")
            && said.contains("grow.js line 3: out of memory (the run's memory limit)"),
        "{said}"
    );
}

/// `--check` reads each script a flow runs without running it: one that does not compile is
/// refused with the script's file and line, one that is missing with its name; a script that
/// would loop forever is only read. A `${…}` where a number goes is rendered as the step runs.
#[test]
fn check_compiles_each_script_and_refuses_a_syntax_error_with_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = flow(
        dir.path(),
        &[
            (
                "f.yaml",
                "appId: a.b\n---\n- runScript: spin.js\n- runScript:\n    file: broken.js\n    env:\n      A: b\n- runScript: gone.js\n- evalScript: ${output.x = 1}\n- extendedWaitUntil:\n    visible: x\n    timeout: ${T || 2000}\n",
            ),
            ("spin.js", "for (;;) {}\n"),
            ("broken.js", "output.a = 1;\n\nconst x = {;\n"),
        ],
    );
    let out = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .args(["replay", "--check"])
        .arg(&file)
        .output()
        .unwrap();
    let said = stdout(&out);
    println!("{said}");
    assert_eq!(out.status.code(), Some(1));
    assert!(said.contains("would   1 run script spin.js"), "{said}");
    assert!(said.contains("line 5: runScript broken.js: line 3: "), "{said}");
    assert!(said.contains("line 8: runScript cannot read gone.js"), "{said}");
    assert!(said.contains("would   2 evaluate \"${output.x = 1}\""), "{said}");
    // A number is rendered as its step runs, as a text is (issue 42): nothing refused there.
    assert!(
        said.contains("would   3 extendedWaitUntil visible: x, timeout: ${T || 2000}"),
        "{said}"
    );
    assert!(!said.contains("line 12"), "{said}");
}

/// onFlowComplete runs after the flow's commands even when one failed, as Maestro does; its own
/// failure is reported as well, and the flow fails.
#[test]
fn on_flow_complete_runs_after_a_failure_and_its_own_failure_is_reported() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = flow(
        dir.path(),
        &[(
            "f.yaml",
            "appId: org.droidmcp.demo.login\nonFlowComplete:\n  - evalScript: ${output.cleaned = true}\n  - assertTrue: ${output.cleaned && output.body}\n---\n- launchApp\n- assertTrue: ${1 == 2}\n- evalScript: ${output.body = true}\n",
        )],
    );
    let out = replay(&file, home.path(), &[]);
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    // Each line as it starts, and what it says after its time.
    for (start, then) in [
        (
            "FAILED  2 assert \"${1 == 2}\" is true",
            "\"${1 == 2}\" is \"false\", not true",
        ),
        ("skipped 3 evaluate \"${output.body = true}\"", ""),
        ("ok      4 evaluate \"${output.cleaned = true}\"", ""),
        (
            "FAILED  5 assert \"${output.cleaned && output.body}\" is true",
            "\"${output.cleaned && output.body}\" is \"undefined\", not true",
        ),
        ("f: 5 steps, 2 passed, 2 failed, 1 skipped", ""),
    ] {
        assert!(
            said.lines().any(|l| l.starts_with(start) && l.contains(then)),
            "{start} … {then}\n{said}"
        );
    }
}

/// An optional `runFlow` or `retry` is Maestro's: a failure of its steps is a warning and the flow
/// goes on (the block's steps after it not run); a retry's last failure, after its retries, too.
/// The header's `androidWebViewHierarchy` (DevTools for WebViews, what `ui` always does) reads.
#[test]
fn an_optional_run_flow_or_retry_fails_as_a_warning_and_the_flow_goes_on() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = flow(
        dir.path(),
        &[(
            "opt.yaml",
            "appId: org.droidmcp.demo.login\nandroidWebViewHierarchy: devtools\n---\n- launchApp\n- runFlow:\n    optional: true\n    commands:\n      - assertTrue: ${1 == 2}\n      - back\n- retry:\n    maxRetries: 1\n    optional: true\n    commands:\n      - assertTrue: ${false}\n- assertTrue: ${true}\n",
        )],
    );
    let out = replay(&file, home.path(), &[]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}");
    for (start, then) in [
        (
            "ok      2 assert \"${1 == 2}\" is true",
            "; warning: optional, failed: ",
        ),
        ("skipped 3 key BACK", ""),
        (
            "ok      4 assert \"${false}\" is true",
            "; warning: failed, then retried: ",
        ),
        ("ok      4 assert \"${false}\" is true", "; warning: optional, failed: "),
        ("ok      5 assert \"${true}\" is true", ""),
        ("opt: 6 steps, 5 passed, 0 failed, 1 skipped", ""),
    ] {
        assert!(
            said.lines().any(|l| l.starts_with(start) && l.contains(then)),
            "{start} … {then}\n{said}"
        );
    }
}

/// As Maestro does, each `MAESTRO_*` variable of the environment is a flow variable (what suites
/// name their app or account by), under `--env`; like an `--env` value, it is kept out of the
/// report.
#[test]
fn maestro_variables_of_the_environment_are_flow_variables_under_env() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = flow(
        dir.path(),
        &[(
            "f.yaml",
            "appId: ${MAESTRO_APP}\n---\n- launchApp\n- tapOn:\n    id: \"org.droidmcp.demo.login:id/username\"\n- inputText: ${MAESTRO_USER}\n- assertTrue: ${MAESTRO_USER.startsWith('from-')}\n- tapOn: \"${MAESTRO_USER} is no button\"\n",
        )],
    );
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
            .arg("replay")
            .arg(&file)
            .args(args)
            .args(["--step-timeout-ms", "600", "--sim"])
            .env("HOME", home.path())
            .env("MAESTRO_APP", "org.droidmcp.demo.login")
            .env("MAESTRO_USER", "from-the-shell-7f3a")
            .env_remove("ANDROID_SERIAL")
            .output()
            .unwrap();
        let said = stdout(&out);
        println!("{said}");
        assert_eq!(out.status.code(), Some(1), "{said}");
        said
    };
    let said = run(&[]);
    assert!(said.lines().any(|l| l.starts_with("ok      4 assert")), "{said}");
    assert!(
        said.contains("FAILED  5 tap text \"${MAESTRO_USER} is no button\""),
        "{said}"
    );
    assert!(!said.contains("from-the-shell-7f3a"), "{said}");
    assert!(
        said.contains("\"${MAESTRO_USER}\""),
        "what the screen showed, the value hidden: {said}"
    );
    let said = run(&["--env", "MAESTRO_USER=from-env"]);
    assert!(
        said.contains("The screen shows") && said.contains("\"${MAESTRO_USER}\""),
        "{said}"
    );
    assert!(!said.contains("from-env"), "{said}");
}

/// A script run many times (a `repeat` spelled out) is in the replay's script once: a 40 KB
/// script run five times (200 KB, past the 100,000 chars a script run takes) replays.
#[test]
fn a_script_run_many_times_is_carried_once() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let padding = "// a data table suites keep beside their flows\n".repeat(900);
    let script = format!("{padding}output.runs = (output.runs || 0) + 1;\n");
    assert!(script.len() > 40_000);
    let file = flow(
        dir.path(),
        &[
            (
                "f.yaml",
                "appId: org.droidmcp.demo.login\n---\n- repeat:\n    times: 5\n    commands:\n      - runScript: count.js\n- assertTrue: ${output.runs == 5}\n",
            ),
            ("count.js", &script),
        ],
    );
    let out = replay(&file, home.path(), &[]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("f: 6 steps, 6 passed"), "{said}");
}
