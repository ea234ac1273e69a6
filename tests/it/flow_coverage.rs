//! Issue 35's bar, kept: every command the compatibility table (`flow::maestro::compat`) says a
//! replay runs is replayed on the simulator by some test, and the `inputRandom…` family types text
//! of Maestro's shapes into a real field.

use droidmcp::flow::maestro::compat::{COMMANDS, Status};

use crate::common::*;
use crate::flow_commands::{flow, replay, replay_checked, sent, stdout};

/// Each `inputRandom…` command, tapped into the login demo's username field, types text of its
/// shape (read back from the simulator's dump): Maestro's lengths, digits not starting with 0.
#[test]
fn input_random_commands_type_text_of_maestros_shapes() {
    let cases = [
        ("- inputRandomNumber\n", r"^[1-9]\d{7}$"),
        ("- inputRandomNumber:\n    length: 5\n", r"^[1-9]\d{4}$"),
        ("- inputRandomText\n", r"^[A-Za-z0-9]{8}$"),
        ("- inputRandomText:\n    length: 12\n", r"^[A-Za-z0-9]{12}$"),
        ("- inputRandomEmail\n", r"^[a-z]+_[a-z]+_\d{4}@[a-z]+\.com$"),
        ("- inputRandomPersonName\n", r"^[A-Z][a-z]+ [A-Z][a-z]+$"),
    ];
    // The check itself bites: a number read against a shape of letters fails the replay.
    let control = ("- inputRandomNumber\n", r"^[A-Za-z]+$");
    for (command, shape) in cases.iter().chain([&control]) {
        let dir = tempfile::tempdir().unwrap();
        let yaml = format!(
            "appId: org.droidmcp.demo.login\n---\n- launchApp\n- tapOn:\n    id: \"org.droidmcp.demo.login:id/username\"\n{command}"
        );
        let checks = format!(
            "const dump = await shell.run({{ command: 'uiautomator dump /dev/tty' }});\n\
             const typed = /text=\"([^\"]*)\" resource-id=\"org\\.droidmcp\\.demo\\.login:id\\/username\"/.exec(dump.stdout);\n\
             if (!typed) throw new Error('no username field: ' + dump.stdout);\n\
             if (!/{shape}/.test(typed[1])) throw new Error('typed ' + JSON.stringify(typed[1]) + ', not of the shape {}');\n",
            shape.replace('\\', "\\\\")
        );
        let out = replay_checked(dir.path(), &yaml, &checks);
        let said = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
        if (*command, *shape) == control {
            assert!(!out.status.success(), "the control passed: {said}");
            assert!(said.contains("not of the shape"), "{said}");
        } else {
            assert!(out.status.success(), "{command}: {said}");
        }
    }
    println!("{} inputRandom cases typed and read back", cases.len());
}

/// Every command the table marks replayed is a command (`- name`) of a flow that a simulator
/// test replays: ours in tests/flows/maestro/ (each replayed by a suite, its subflows through it;
/// ai-review.yaml is only checked), or one a test of tests/it/ writes. A row whose
/// command no such flow uses fails, naming it.
#[test]
fn every_command_the_table_replays_is_replayed_on_the_simulator_by_a_test() {
    let mut texts = Vec::new();
    let mut read = |dir: std::path::PathBuf, ext: &str| {
        let mut stack = vec![dir];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == ext)
                    // Only read by `--check` (its AI commands are refused), never replayed.
                    && !path.ends_with("ai-review.yaml")
                {
                    texts.push(std::fs::read_to_string(&path).unwrap());
                }
            }
        }
    };
    read(repo_dir().join("tests/flows/maestro"), "yaml");
    read(repo_dir().join("tests/it"), "rs");
    let all = texts.join("\n");
    let uses = |name: &str| {
        // A command item, in a YAML file or in a flow a test writes (`\n- name`).
        regex::Regex::new(&format!(r#"(?m)(^|\\n|"|\}})\s*- {name}(:|\s|\\n|"|$)"#))
            .unwrap()
            .is_match(&all)
    };
    let replayed: Vec<&str> = COMMANDS
        .iter()
        .filter(|(_, status, _)| *status == Status::Replayed)
        .map(|(name, _, _)| *name)
        .collect();
    let missing: Vec<&&str> = replayed.iter().filter(|name| !uses(name)).collect();
    println!(
        "{} commands replayed by the table, each in a flow a test replays: {}",
        replayed.len(),
        if missing.is_empty() { "all" } else { "not all" }
    );
    assert!(missing.is_empty(), "replayed by the table but by no test: {missing:?}");
}

/// A tap's `point` from a script's output (`point: ${output.tab}`, as suites that compute tab
/// positions write it) is evaluated as the step runs: "x%, y%" lands on that share of the
/// screen, "x, y" on those pixels; a value that is no point fails the step saying so.
#[test]
fn a_point_from_a_scripts_output_is_evaluated_as_the_step_runs() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = "appId: org.droidmcp.demo.login\n---\n- launchApp\n- evalScript: ${output.tab = '50%, 25%'}\n- tapOn:\n    point: ${output.tab}\n- evalScript: ${output.px = '123, 456'}\n- tapOn:\n    point: ${output.px}\n";
    let out = replay(&flow(dir.path(), "points.yaml", yaml), None, &[]);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    let taps: Vec<String> = sent(&out).into_iter().filter(|c| c.starts_with("input tap")).collect();
    // The built-in profile's screen is 1080 × 2400.
    assert_eq!(taps, ["input tap 540 600", "input tap 123 456"], "{said}");
    let bad = "appId: org.droidmcp.demo.login\n---\n- launchApp\n- evalScript: ${output.tab = 'the middle'}\n- tapOn:\n    point: ${output.tab}\n";
    let out = replay(&flow(dir.path(), "bad.yaml", bad), None, &[]);
    let said = stdout(&out);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("FAILED  3 tapOn point: ${output.tab}")
            && said.contains(
                "line 6: a point is \"x, y\" in device pixels, or \"x%, y%\" of the screen (the value of ${output.tab})"
            ),
        "{said}"
    );
}
