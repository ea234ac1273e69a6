//! Attack on issue 42, item 4 (`${…}` rendered in every field of every Maestro command, as
//! Maestro does, or refused by `replay --check` at its line; `--check` and the run sharing one
//! validation), from outside: cases written against Maestro's own source
//! (mobile-dev-inc/maestro: `maestro-orchestra-models/.../util/Env.kt`'s `evaluateScripts`,
//! `maestro-client/.../js/Js.kt` and `GraalJsEngine.kt`'s runtime, `Commands.kt`,
//! `TestCommand.kt`'s `withDefaultEnvVars`), each run on the simulator and read back from what
//! the device was asked to do (the replay's debug log) and what its screen shows.
//!
//! A trap that fails here found a defect; it stays failing until the product is fixed.

use std::path::Path;
use std::process::Output;

use crate::common::*;
use crate::flow_commands::{flow, replay, sent, stdout};
use crate::flow_templates::check;

const LOGIN: &str = "org.droidmcp.demo.login";

/// The login demo, its user-name field focused: what a flow types lands there.
const INTO_USERNAME: &str =
    "appId: org.droidmcp.demo.login\n---\n- launchApp\n- tapOn:\n    id: \"org.droidmcp.demo.login:id/username\"\n";

/// The text the login demo's user-name field holds on `sim` now (its dump, read as an assistant
/// reads it).
fn username_text(sim: &SimProcess) -> String {
    let xml = shell_by_call(sim, "uiautomator dump /dev/tty");
    let node = xml
        .split("<node ")
        .find(|n| n.contains(&format!("resource-id=\"{LOGIN}:id/username\"")))
        .unwrap_or_else(|| panic!("no user-name field on the screen: {xml}"));
    let text = node
        .split("text=\"")
        .nth(1)
        .and_then(|t| t.split('"').next())
        .unwrap_or_default();
    text.replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The commands the device was asked to run that start with `prefix`.
fn sent_starting(out: &Output, prefix: &str) -> Vec<String> {
    sent(out).into_iter().filter(|c| c.starts_with(prefix)).collect()
}

// ---------------------------------------------------------------------------------------------
// Traps that expose a defect (they fail on main).
// ---------------------------------------------------------------------------------------------

/// `assertVisible: ${…}` right after a step (the commonest shape in public suites: an
/// assertion on a value from `-e` or the env) joins that step as its outcome. Maestro renders the
/// selector's text (`ElementSelector.evaluateScripts`) and looks for it. The replay must pass
/// when the rendered text shows and fail, naming it, when it does not; `--check` takes the flow.
#[test]
fn an_assertion_with_a_template_after_a_step_is_looked_for() {
    let dir = tempfile::tempdir().unwrap();
    let after_launch = flow(
        dir.path(),
        "after_launch.yaml",
        "appId: org.droidmcp.demo.login\n---\n- launchApp\n- assertVisible: ${BUTTON}\n",
    );
    let after_tap = flow(
        dir.path(),
        "after_tap.yaml",
        &format!("{INTO_USERNAME}- assertVisible:\n    text: ${{BUTTON}}\n"),
    );
    for file in [&after_launch, &after_tap] {
        assert!(check(&[file]).status.success(), "--check refuses {}", file.display());
        let shown = replay(file, None, &["--env", "BUTTON=LOG IN", "--step-timeout-ms", "2000"]);
        let said = stdout(&shown);
        assert!(
            shown.status.success(),
            "{}: the rendered text shows on the screen, yet the replay failed: {said}",
            file.display()
        );
        let missing = replay(file, None, &["--env", "BUTTON=Nowhere", "--step-timeout-ms", "1500"]);
        let said = stdout(&missing);
        assert_eq!(missing.status.code(), Some(1), "{said}");
        assert!(
            !said.contains("is not defined") && said.contains("did not appear"),
            "{}: a text that does not show must fail as not appearing: {said}",
            file.display()
        );
    }
}

/// Maestro's JavaScript runtime defines `relativePoint(x, y)` (`Js.kt`'s `initScript` for Rhino,
/// `GraalJsEngine.createContext` for GraalJS): `${relativePoint(0.5, 0.2)}` is `"50%,20%"`, a
/// point a tap takes. `--check` takes the flow; the run must tap at 50 %, 20 % of the screen.
#[test]
fn relative_point_is_defined_as_in_maestros_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let file = flow(
        dir.path(),
        "relative.yaml",
        "appId: com.google.android.contacts\n---\n- launchApp\n- tapOn:\n    point: \"${relativePoint(0.5, 0.2)}\"\n",
    );
    assert!(check(&[&file]).status.success());
    let out = replay(&file, None, &[]);
    let said = stdout(&out);
    assert!(out.status.success(), "relativePoint is Maestro's own: {said}");
    assert_eq!(sent_starting(&out, "input tap"), ["input tap 540 480"], "{said}");
}

/// Maestro defines `MAESTRO_FILENAME`, the flow file's name without its extension, for every
/// flow it runs (`Env.withDefaultEnvVars`, called by `maestro test`); suites name their
/// screenshots with it. `takeScreenshot: ${MAESTRO_FILENAME}` must write `checkout.png`.
#[test]
fn maestro_filename_is_the_flows_own_name() {
    let dir = tempfile::tempdir().unwrap();
    let file = flow(
        dir.path(),
        "checkout.yaml",
        "appId: com.google.android.contacts\n---\n- launchApp\n- takeScreenshot: ${MAESTRO_FILENAME}\n",
    );
    let report = dir.path().join("out/report.xml");
    let out = replay(&file, None, &["--junit", report.to_str().unwrap()]);
    let said = stdout(&out);
    assert!(out.status.success(), "MAESTRO_FILENAME is defined by Maestro: {said}");
    assert!(dir.path().join("out/checkout.png").exists(), "{said}");
}

/// A `${…}` whose JavaScript cannot be parsed can never be rendered, whatever `--env` gives:
/// Maestro fails it as it runs (its engine's syntax error). The claim is that what cannot be
/// rendered is refused by `--check` at its line; generated over fields of several commands and
/// bodies that are no JavaScript expression.
#[test]
fn check_refuses_a_template_that_is_no_javascript() {
    let dir = tempfile::tempdir().unwrap();
    let bodies = ["A +", "(", "A B", "'unclosed", "if (A) 1", "A..b", "1 +* 2"];
    let fields: [(&str, usize); 8] = [
        ("- inputText: \"«»\"\n", 3),
        ("- tapOn:\n    text: \"«»\"\n", 4),
        ("- extendedWaitUntil:\n    visible: Sign in\n    timeout: \"«»\"\n", 5),
        ("- tapOn:\n    point: \"«»\"\n", 4),
        ("- killApp: \"«»\"\n", 3),
        ("- openLink: \"https://example.com/«»\"\n", 3),
        ("- setClipboard: \"«»\"\n", 3),
        ("- takeScreenshot: \"«»\"\n", 3),
    ];
    let mut cases = 0;
    let mut passed_by_check = Vec::new();
    for (b, body) in bodies.iter().enumerate() {
        for (f, (command, line)) in fields.iter().enumerate() {
            cases += 1;
            let text = format!("appId: a.b\n---\n{}", command.replace("«»", &format!("${{{body}}}")));
            let file = flow(dir.path(), &format!("bad_{b}_{f}.yaml"), &text);
            let out = check(&[&file]);
            let expected = format!("refused {} line {line}: ", file.canonicalize().unwrap().display());
            if out.status.code() != Some(1) || !stdout(&out).lines().any(|l| l.starts_with(&expected)) {
                passed_by_check.push(text.split("---\n").nth(1).unwrap_or_default().to_string());
            }
        }
    }
    println!(
        "{cases} templates that are no JavaScript ({} bodies × {} fields); --check took {}",
        bodies.len(),
        fields.len(),
        passed_by_check.len()
    );
    assert!(
        passed_by_check.is_empty(),
        "--check takes {} of {cases} templates no run can render: {:?}",
        passed_by_check.len(),
        passed_by_check
    );
}

/// Maestro unescapes only a whole `\${…}` (`Env.evaluateScripts`: its second replace matches
/// `\\\$\{([^\$]*)}`); a `\${` with no closing brace keeps its backslash. `inputText: "a\${b"`
/// types `a\${b`.
#[test]
fn an_escaped_dollar_brace_without_its_brace_keeps_its_backslash() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let file = flow(
        dir.path(),
        "unclosed.yaml",
        &format!("{INTO_USERNAME}- inputText: \"a\\\\${{b\"\n"),
    );
    let out = replay(&file, Some(&sim), &[]);
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(username_text(&sim), "a\\${b");
}

/// A value given with `--env` is kept out of the report by writing `${NAME}` where a message
/// would quote it; it must not rewrite every place the value's characters happen to appear (a
/// one-letter value, a digit, a dot), which makes a failure unreadable and its file and line
/// wrong. The variables here are given and unused in what the message quotes.
#[test]
fn an_env_value_does_not_garble_the_failure_it_is_not_in() {
    let dir = tempfile::tempdir().unwrap();
    let wait = flow(
        dir.path(),
        "wait.yaml",
        "appId: com.google.android.contacts\n---\n- launchApp\n- extendedWaitUntil:\n    visible: Nobody\n    timeout: 500\n",
    );
    let out = replay(&wait, None, &["--env", "E=e", "--env", "DOT=."]);
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    let failed = said.lines().find(|l| l.starts_with("FAILED  2 ")).unwrap_or_default();
    assert!(
        failed.contains("did not appear") && !failed.contains("${E}"),
        "the failure is garbled by an unrelated --env value: {failed}"
    );
    // A rendered screenshot name that is refused: its message names the flow's file and line.
    let shot = flow(
        dir.path(),
        "shot.yaml",
        "appId: com.google.android.contacts\n---\n- launchApp\n- takeScreenshot: ${NAME}\n",
    );
    let out = replay(&shot, None, &["--env", "NAME=."]);
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    let failed = said.lines().find(|l| l.starts_with("FAILED  2 ")).unwrap_or_default();
    assert!(
        failed.contains("shot.yaml line 4"),
        "the refusal must name the flow's file and line: {failed}"
    );
}

/// A selector's `index: ${I}` (Maestro renders `index`, `ElementSelector.evaluateScripts`) is
/// named in the report as written or as rendered, never as the sample the reader stood in for
/// it: the flow never said `index 0`.
#[test]
fn a_templated_index_is_not_reported_as_its_sample() {
    let dir = tempfile::tempdir().unwrap();
    let file = flow(
        dir.path(),
        "index.yaml",
        "appId: org.droidmcp.demo.login\nenv:\n  I: \"1\"\n---\n- launchApp\n- runFlow:\n    commands:\n      - assertVisible:\n          text: \"LOG IN\"\n          index: ${I}\n",
    );
    let out = replay(&file, None, &["--step-timeout-ms", "1000"]);
    let said = stdout(&out);
    // One LOG IN on the screen: index 1 finds nothing.
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        !said.contains("index 0"),
        "the report names an index the flow never gave: {said}"
    );
}

// ---------------------------------------------------------------------------------------------
// Traps that hold.
// ---------------------------------------------------------------------------------------------

/// Shell metacharacters and quotes in an `--env` value reach the device as data in every text
/// field that goes to a shell (`setClipboard`, `inputText`, `openLink`, `killApp`): each command
/// quoted, nothing run on the device (a `touch` would leave its file).
#[test]
fn shell_metacharacters_from_env_reach_the_device_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let file = flow(
        dir.path(),
        "inject.yaml",
        "appId: com.google.android.contacts\n---\n- launchApp\n- setClipboard: ${V}\n- openLink: ${V}\n- killApp: ${V}\n- inputText: ${V}\n",
    );
    let values = [
        "a'b; touch /data/local/tmp/p1",
        "$(touch /data/local/tmp/p2)",
        "`touch /data/local/tmp/p3`",
        "x && touch /data/local/tmp/p4 || y",
        "\"; touch /data/local/tmp/p5; \"",
    ];
    for value in values {
        let out = replay(&file, Some(&sim), &["--env", &format!("V={value}")]);
        assert!(out.status.success(), "{value:?}: {}", stdout(&out));
        let quoted = format!("'{}'", value.replace('\'', "'\\''"));
        assert_eq!(
            sent_starting(&out, "am kill"),
            [format!("am kill {quoted}")],
            "{value:?}"
        );
        assert_eq!(
            sent_starting(&out, "am start -a"),
            [format!("am start -a android.intent.action.VIEW -d {quoted}")],
            "{value:?}"
        );
    }
    let left = shell_by_call(&sim, "ls /data/local/tmp");
    println!("{} hostile values × 4 fields, nothing run on the device", values.len());
    for n in 1..=values.len() {
        assert!(!left.contains(&format!("p{n}")), "a value ran on the device: {left:?}");
    }
}

/// `takeScreenshot: ${NAME}`: whatever NAME renders to, the file lands inside the report's
/// folder, as a chroot takes a path (issue 44: a `..` that would climb out stays at the folder's
/// top, an absolute path starts there), or the step fails; nothing is written outside (Maestro
/// would write anywhere). Generated over names that climb out.
#[test]
fn a_rendered_screenshot_name_never_leaves_the_report_folder() {
    let dir = tempfile::tempdir().unwrap();
    let file = flow(
        dir.path(),
        "shot.yaml",
        "appId: com.google.android.contacts\n---\n- launchApp\n- takeScreenshot: ${NAME}\n- takeScreenshot: \"${'..'}/${NAME}-up\"\n",
    );
    let out_dir = dir.path().join("deep/out");
    let report = out_dir.join("report.xml");
    let hostile = [
        "../escape",
        "../../deep/escape",
        "a/../../escape",
        "/tmp/attack-templates-abs",
        "",
        "..",
        "x/..",
        "./../escape",
        "a\\..\\escape",
    ];
    // Every picture the runs made, wherever it is under the test's folder.
    fn pictures(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pictures(&path, found);
            } else if path.extension().is_some_and(|e| e == "png") {
                found.push(path);
            }
        }
    }
    for name in hostile {
        let out = replay(
            &file,
            None,
            &["--junit", report.to_str().unwrap(), "--env", &format!("NAME={name}")],
        );
        let said = stdout(&out);
        for step in ["2", "3"] {
            assert!(
                ["ok      ", "FAILED  ", "skipped "]
                    .iter()
                    .any(|how| said.contains(&format!("{how}{step} "))),
                "{name:?}: {said}"
            );
        }
        let mut found = Vec::new();
        pictures(dir.path(), &mut found);
        for picture in &found {
            assert!(picture.starts_with(&out_dir), "{name:?} wrote {}", picture.display());
        }
        assert!(!Path::new("/tmp/attack-templates-abs.png").exists(), "{name:?}");
    }
    println!(
        "{} hostile screenshot names, each inside the report's folder or refused as its step ran",
        hostile.len()
    );
    // A name that climbs out lands at the folder's top; a plain one where it says.
    for (name, landed) in [
        ("../escape", ["escape.png", "escape-up.png"]),
        ("shots/home", ["shots/home.png", "shots/home-up.png"]),
    ] {
        let out = replay(
            &file,
            None,
            &["--junit", report.to_str().unwrap(), "--env", &format!("NAME={name}")],
        );
        for file in landed {
            assert!(out_dir.join(file).exists(), "{name:?}: {file}: {}", stdout(&out));
        }
    }
    assert!(!dir.path().join("deep/escape.png").exists() && !dir.path().join("deep/shots").exists());
}

/// What Maestro types, field by field, typed here the same: a value from `--env` that holds
/// `${…}` or `\${…}` is not evaluated again (one pass, `Env.evaluateScripts`); a header env value
/// built from `--env`; a duplicated env key (the last, as Jackson reads a map); `$` without a
/// brace; a `}` inside the expression's string; two templates side by side; `output` set and read
/// in one text, left to right.
#[test]
fn what_maestro_types_is_typed() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let header = "appId: org.droidmcp.demo.login\nenv:\n  DUP: one\n  DUP: two\n  GREETING: \"hi ${WHO}\"\n---\n- launchApp\n- tapOn:\n    id: \"org.droidmcp.demo.login:id/username\"\n";
    let file = flow(
        dir.path(),
        "typed.yaml",
        &format!(
            "{header}- inputText: \"${{P}}|${{GREETING}}|${{DUP}}|$HOME|${{'a}}b'}}|${{A}}${{B}}|${{A.length * 2}}|${{output.k = 'set'}}-${{output.k}}\"\n"
        ),
    );
    assert!(check(&[&file]).status.success());
    let out = replay(
        &file,
        Some(&sim),
        &[
            "--env",
            "P=x${y}\\${z}",
            "--env",
            "WHO=ada",
            "--env",
            "A=ab",
            "--env",
            "B=cd",
        ],
    );
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(username_text(&sim), "x${y}\\${z}|hi ada|two|$HOME|a}b|abcd|4|set-set");
}

/// A point written as `"${X}%,${Y}%"` (no space after the comma, as `relativePoint` gives it) is
/// a point in percent of the screen.
#[test]
fn a_percent_point_from_two_templates_is_tapped() {
    let dir = tempfile::tempdir().unwrap();
    let file = flow(
        dir.path(),
        "percent.yaml",
        "appId: com.google.android.contacts\nenv:\n  X: \"50\"\n---\n- launchApp\n- tapOn:\n    point: \"${X}%,${Y}%\"\n- tapOn:\n    point: \"${X * 2}, ${Y * 10}\"\n",
    );
    assert!(check(&[&file]).status.success());
    let out = replay(&file, None, &["--env", "Y=20"]);
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(
        sent_starting(&out, "input tap"),
        ["input tap 540 480", "input tap 100 200"]
    );
}

/// Maestro's report names a flow by its header `name` as read, unrendered
/// (`TestSuiteInteractor`: `YamlCommandReader.getConfig(commands)?.name`); a replay does too, and
/// the `${…}` there neither fails the flow nor is refused.
#[test]
fn a_template_in_the_header_name_is_the_name_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let file = flow(
        dir.path(),
        "named.yaml",
        "appId: com.google.android.contacts\nname: Suite ${SUITE}\n---\n- launchApp\n",
    );
    assert!(check(&[&file]).status.success());
    let out = replay(&file, None, &[]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("Suite ${SUITE}: 1 step, 1 passed"), "{said}");
}

/// launchApp's `arguments` values given as `${…}` are texts once rendered, as Maestro keeps them
/// (`LaunchAppCommand.evaluateScripts` renders a String value to a String): each an `--es`
/// extra, quoted; the header's `appId: ${APP}` from its own env is the app launched.
#[test]
fn launch_arguments_from_templates_are_text_extras() {
    let dir = tempfile::tempdir().unwrap();
    let file = flow(
        dir.path(),
        "args.yaml",
        "appId: ${APP}\nenv:\n  APP: org.droidmcp.demo.login\n---\n- launchApp:\n    arguments:\n      n: ${N}\n      b: ${B}\n      q: ${Q}\n",
    );
    assert!(check(&[&file]).status.success());
    let out = replay(&file, None, &["--env", "N=5", "--env", "B=true", "--env", "Q=it's"]);
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(
        sent_starting(&out, "am start -n"),
        ["am start -n 'org.droidmcp.demo.login/.LoginActivity' --es 'n' '5' --es 'b' 'true' --es 'q' 'it'\\''s'"]
    );
}

/// `repeat.times` and a key's name as templates: the key pressed as many times as the template
/// says; a `times` that is no number fails, naming it, and presses nothing.
#[test]
fn repeat_times_and_a_key_from_templates() {
    let dir = tempfile::tempdir().unwrap();
    let file = flow(
        dir.path(),
        "repeat.yaml",
        "appId: org.droidmcp.demo.login\nenv:\n  N: 3\n---\n- launchApp\n- repeat:\n    times: ${N}\n    commands:\n      - pressKey: ${KEY}\n",
    );
    assert!(check(&[&file]).status.success());
    let out = replay(&file, None, &["--env", "KEY=Volume Up"]);
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(sent_starting(&out, "input keyevent").len(), 3, "{:?}", sent(&out));
    let out = replay(&file, None, &["--env", "KEY=Volume Up", "--env", "N=many"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(sent_starting(&out, "input keyevent").is_empty());
}

/// A variable nobody defined: Maestro types `undefined` (GraalJS) or `null` (Rhino, whose root
/// scope reads a missing name as null); droidmcp, by its documented choice, fails the step naming
/// the variable and `--env`, and types nothing. `${X || 'default'}` types the default in both.
#[test]
fn an_undefined_variable_fails_naming_it_and_a_default_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let file = flow(
        dir.path(),
        "undefined.yaml",
        &format!("{INTO_USERNAME}- inputText: ${{WHO || 'guest'}}\n- inputText: ${{NOBODY}}\n"),
    );
    let out = replay(&file, Some(&sim), &[]);
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("NOBODY is not defined") && said.contains("--env NOBODY=VALUE"),
        "{said}"
    );
    assert_eq!(username_text(&sim), "guest");
}
