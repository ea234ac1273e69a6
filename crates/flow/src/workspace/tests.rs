//! The planner's cases: Maestro's own, Java's glob rules, the tag options (the tags' own cases
//! are `tests/tags.rs`).

use std::path::PathBuf;

use super::{Tags, glob, parse_tags, plan, read};

mod tags;

const FLOW: &str = "appId: com.example.app\n---\n- launchApp\n";

fn tagged(tags: &[&str]) -> String {
    let list: String = tags.iter().map(|t| format!("  - {t}\n")).collect();
    format!("appId: com.example.app\ntags:\n{list}---\n- launchApp\n")
}

fn named(name: &str) -> String {
    format!("appId: com.example.app\nname: {name}\n---\n- launchApp\n")
}

/// One workspace: its files, what the command line gives (paths below the workspace, tags,
/// --config), and the sequence and flows expected (paths below the workspace), or a part of
/// the error.
struct Case {
    name: &'static str,
    files: Vec<(&'static str, String)>,
    inputs: &'static [&'static str],
    include: &'static str,
    exclude: &'static str,
    config: Option<&'static str>,
    expect: Result<(&'static [&'static str], &'static [&'static str]), &'static str>,
}

fn flows(names: &[&'static str]) -> Vec<(&'static str, String)> {
    names.iter().map(|n| (*n, FLOW.to_string())).collect()
}

/// Maestro's own planner cases (maestro-orchestra's WorkspaceExecutionPlannerTest and its
/// `workspaces/0NN_*` folders, and the errors of WorkspaceExecutionPlannerErrorsTest), then
/// the negated globs of its newer planner, each run through `read` and `plan`.
fn cases() -> Vec<Case> {
    let with = |name, files, inputs, expect| Case {
        name,
        files,
        inputs,
        include: "",
        exclude: "",
        config: None,
        expect,
    };
    let mut cases = vec![
        with(
            "000 individual file",
            flows(&["flow.yaml"]),
            &["flow.yaml"],
            Ok((&[], &["flow.yaml"])),
        ),
        with(
            "001 simple workspace",
            [
                flows(&["flowA.yaml", "flowB.yaml"]),
                vec![("notAFlow.txt", "not a flow".into())],
            ]
            .concat(),
            &["."],
            Ok((&[], &["flowA.yaml", "flowB.yaml"])),
        ),
        with(
            "001 multiple files",
            flows(&["flowA.yaml", "flowB.yaml"]),
            &["flowA.yaml", "flowB.yaml"],
            Ok((&[], &["flowA.yaml", "flowB.yaml"])),
        ),
        with(
            "002 subflows are not top-level",
            flows(&["flowA.yaml", "flowB.yaml", "subflows/subflow.yaml"]),
            &["."],
            Ok((&[], &["flowA.yaml", "flowB.yaml"])),
        ),
        with(
            "005 custom include pattern",
            [
                flows(&[
                    "featureA/flowA.yaml",
                    "featureB/flowB.yaml",
                    "featureC/flowC.yaml",
                    "flowD.yaml",
                ]),
                vec![("config.yaml", "flows:\n  - featureA/*\n  - featureB/*\n".into())],
            ]
            .concat(),
            &["."],
            Ok((&[], &["featureA/flowA.yaml", "featureB/flowB.yaml"])),
        ),
        with(
            "006 include subfolders",
            [
                flows(&[
                    "featureA/flowA.yaml",
                    "featureB/flowB.yaml",
                    "featureC/subfolder/flowC.yaml",
                    "flowD.yaml",
                ]),
                vec![("config.yaml", "flows:\n  - \"**\"\n".into())],
            ]
            .concat(),
            &["."],
            Ok((
                &[],
                &[
                    "featureA/flowA.yaml",
                    "featureB/flowB.yaml",
                    "featureC/subfolder/flowC.yaml",
                    "flowD.yaml",
                ],
            )),
        ),
        with(
            "007 empty config.yml",
            [
                flows(&["flowA.yaml", "flowB.yaml"]),
                vec![("config.yml", String::new())],
            ]
            .concat(),
            &["."],
            Ok((&[], &["flowA.yaml", "flowB.yaml"])),
        ),
        with(
            "008 one pattern as a string",
            [
                flows(&["featureA/flowA.yaml", "featureB/flowB.yaml"]),
                vec![("config.yaml", "flows: featureA/*\n".into())],
            ]
            .concat(),
            &["."],
            Ok((&[], &["featureA/flowA.yaml"])),
        ),
        with(
            "009 custom fields in config",
            [
                flows(&["flowA.yaml", "flowB.yaml"]),
                vec![("config.yml", "customField: Custom Value\n".into())],
            ]
            .concat(),
            &["."],
            Ok((&[], &["flowA.yaml", "flowB.yaml"])),
        ),
        with(
            "012 deterministic order by file name",
            [
                flows(&["b/flowC.yaml", "flowB.yaml", "c/flowA.yaml"]),
                vec![(
                    "config.yaml",
                    "flows: [\"**\"]\nlocal:\n  deterministicOrder: true\n".into(),
                )],
            ]
            .concat(),
            &["."],
            Ok((&[], &["c/flowA.yaml", "flowB.yaml", "b/flowC.yaml"])),
        ),
        with(
            "013 execution order",
            vec![
                ("flowA.yaml", FLOW.into()),
                ("flowB.yaml", FLOW.into()),
                ("flowCWithCustomName.yaml", named("flowC")),
                ("flowD.yaml", FLOW.into()),
                (
                    "config.yaml",
                    "executionOrder:\n  flowsOrder:\n    - flowB\n    - flowC\n    - flowD\n".into(),
                ),
            ],
            &["."],
            Ok((
                &["flowB.yaml", "flowCWithCustomName.yaml", "flowD.yaml"],
                &["flowA.yaml"],
            )),
        ),
        with(
            "013b a missing name ends the sequence",
            [
                flows(&["flowA.yaml", "flowB.yaml", "flowD.yaml"]),
                vec![(
                    "config.yaml",
                    "executionOrder:\n  flowsOrder: [flowB, flowC, flowD]\n".into(),
                )],
            ]
            .concat(),
            &["."],
            Ok((&["flowB.yaml"], &["flowA.yaml", "flowD.yaml"])),
        ),
        with(
            "013c the first name missing",
            [
                flows(&["flowA.yaml", "flowB.yaml"]),
                vec![("config.yaml", "executionOrder:\n  flowsOrder: [flowX, flowB]\n".into())],
            ]
            .concat(),
            &["."],
            Err("flowsOrder starts with \"flowX\""),
        ),
        with(
            "negated globs",
            [
                flows(&["login/a.yaml", "login/b.yaml", "subflows/s.yaml", "top.yaml"]),
                vec![(
                    "config.yaml",
                    "flows:\n  - \"**\"\n  - \"!subflows/**\"\n  - \"!login/b.yaml\"\n".into(),
                )],
            ]
            .concat(),
            &["."],
            Ok((&[], &["login/a.yaml", "top.yaml"])),
        ),
        with(
            "only negated globs",
            [
                flows(&["a.yaml"]),
                vec![("config.yaml", "flows: [\"!a.yaml\"]\n".into())],
            ]
            .concat(),
            &["."],
            Err("has only ! patterns"),
        ),
        with(
            "E001 no flow files",
            vec![("dummy", "x".into())],
            &["."],
            Err("holds no flow file"),
        ),
        with(
            "E002 no top-level flows",
            flows(&["subdir/Flow.yaml"]),
            &["."],
            Err("no flow at its top level"),
        ),
        with(
            "E003 a pattern matching nothing",
            [
                flows(&["FlowC.yaml"]),
                vec![("config.yaml", "flows:\n  - \"./featureA/*\"\n".into())],
            ]
            .concat(),
            &["."],
            Err("match no flow file of the folder (a pattern is matched"),
        ),
        with(
            "a glob that is not one",
            [
                flows(&["a.yaml"]),
                vec![("config.yaml", "flows: [\"{a,{b}}\"]\n".into())],
            ]
            .concat(),
            &["."],
            Err("is not a glob"),
        ),
    ];
    let tags = |name, files, include, exclude, config, expect| Case {
        name,
        files,
        inputs: &["."],
        include,
        exclude,
        config,
        expect,
    };
    cases.extend([
        tags(
            "003 include tags",
            vec![
                ("flowA.yaml", tagged(&["included", "someOtherTag"])),
                ("flowB.yaml", tagged(&["notIncluded"])),
                ("flowC.yaml", FLOW.into()),
            ],
            "included",
            "",
            None,
            Ok((&[], &["flowA.yaml"])),
        ),
        tags(
            "004 exclude tags",
            vec![
                ("flowA.yaml", tagged(&["included", "someOtherTag"])),
                ("flowB.yaml", tagged(&["excluded", "someOtherTag"])),
                ("flowC.yaml", FLOW.into()),
            ],
            "",
            "excluded",
            None,
            Ok((&[], &["flowA.yaml", "flowC.yaml"])),
        ),
        tags(
            "010 config and command line include tags add up",
            vec![
                ("config.yaml", "includeTags:\n  - featureA\n".into()),
                ("flowA.yaml", tagged(&["included", "featureA"])),
                ("flowA_subflow.yaml", tagged(&["featureA"])),
                ("flowB.yaml", tagged(&["included", "featureB"])),
                ("flowC.yaml", tagged(&["included"])),
                ("flowD.yaml", tagged(&["notIncluded"])),
                ("flowE.yaml", FLOW.into()),
            ],
            "featureB",
            "",
            None,
            Ok((&[], &["flowA.yaml", "flowA_subflow.yaml", "flowB.yaml"])),
        ),
        tags(
            "011 config and command line exclude tags add up",
            vec![
                ("config.yaml", "excludeTags: notIncluded\n".into()),
                ("flowA.yaml", tagged(&["included", "featureA"])),
                ("flowA_subflow.yaml", tagged(&["featureA"])),
                ("flowB.yaml", tagged(&["included", "featureB"])),
                ("flowC.yaml", tagged(&["included"])),
                ("flowD.yaml", tagged(&["notIncluded"])),
                ("flowE.yaml", FLOW.into()),
            ],
            "",
            "featureA",
            None,
            Ok((&[], &["flowB.yaml", "flowC.yaml", "flowE.yaml"])),
        ),
        tags(
            "014 --config over config.yaml",
            vec![
                ("config.yaml", "includeTags:\n  - included\n  - excluded\n".into()),
                ("config/another_config.yaml", "includeTags:\n  - included\n".into()),
                ("flowA.yaml", tagged(&["included"])),
                ("flowB.yaml", tagged(&["excluded"])),
            ],
            "",
            "",
            Some("config/another_config.yaml"),
            Ok((&[], &["flowA.yaml"])),
        ),
        tags(
            "E004 tags matching no flow",
            vec![
                ("config.yaml", "excludeTags: [a]\n".into()),
                ("ConfigExclude.yaml", tagged(&["a"])),
                ("ParameterExclude.yaml", tagged(&["b"])),
            ],
            "",
            "b",
            None,
            Err("no flow has the tags asked for"),
        ),
    ]);
    cases
}

/// Builds the case's workspace, plans it, and checks the plan or the error.
fn check(case: &Case) {
    let dir = tempfile::tempdir().unwrap();
    for (file, text) in &case.files {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let inputs: Vec<PathBuf> = case.inputs.iter().map(|i| dir.path().join(i)).collect();
    let config = case.config.map(|c| dir.path().join(c));
    let tags = Tags {
        include: parse_tags("--include-tags", case.include).unwrap(),
        exclude: parse_tags("--exclude-tags", case.exclude).unwrap(),
    };
    let got = read(&inputs, config.as_deref()).and_then(|(files, config, single)| plan(&files, &config, &tags, single));
    let below = |paths: &[PathBuf]| -> Vec<String> {
        paths
            .iter()
            .map(|p| p.strip_prefix(dir.path()).unwrap().to_string_lossy().into_owned())
            .map(|p| p.strip_prefix("./").map(str::to_string).unwrap_or(p))
            .collect()
    };
    match (&case.expect, got) {
        (Ok((sequence, flows)), Ok(plan)) => {
            assert_eq!(below(&plan.sequence), *sequence, "{}: the sequence", case.name);
            assert_eq!(below(&plan.flows), *flows, "{}: the flows", case.name);
        }
        (Err(part), Err(e)) => assert!(e.contains(part), "{}: {e}", case.name),
        (expected, got) => panic!("{}: expected {expected:?}, got {got:?}", case.name),
    }
}

#[test]
fn a_workspace_runs_the_flows_maestro_picks_in_its_order() {
    let cases = cases();
    cases.iter().for_each(check);
    println!("{} workspace cases from Maestro's planner tests", cases.len());
}

/// Java's glob rules, case by case (sun.nio.fs.Globs).
#[test]
fn a_flows_pattern_matches_as_java_globs_do() {
    let table: &[(&str, &str, bool)] = &[
        ("*", "a.yaml", true),
        ("*", "dir/a.yaml", false),
        ("**", "dir/sub/a.yaml", true),
        ("**", "a.yaml", true),
        ("**/*.yaml", "a.yaml", false),
        ("**/*.yaml", "d/a.yaml", true),
        ("login/*", "login/a.yaml", true),
        ("login/*", "login/x/a.yaml", false),
        ("login/**", "login/x/a.yaml", true),
        ("*.y?ml", "a.yaml", true),
        ("{login,signup}/*", "signup/a.yml", true),
        ("{login,signup}/*", "other/a.yml", false),
        ("[ab]*.yaml", "b1.yaml", true),
        ("[!ab]*.yaml", "b1.yaml", false),
        ("[!ab]*.yaml", "c1.yaml", true),
        ("[a-c].yaml", "b.yaml", true),
        ("a\\*.yaml", "a*.yaml", true),
        ("a\\*.yaml", "ab.yaml", false),
        ("a.yaml", "a_yaml", false),
        ("?", "/", false),
    ];
    for (pattern, path, matches) in table {
        assert_eq!(glob(pattern).unwrap().is_match(path), *matches, "{pattern} on {path}");
    }
    for bad in ["[ab", "{a,b", "{a,{b}}", "a\\", "[a/b]"] {
        assert!(glob(bad).unwrap_err().contains("is not a glob"), "{bad}");
    }
    println!("{} glob cases, 5 refused patterns", table.len());
}

#[test]
fn a_tag_option_is_refused_with_what_to_write() {
    assert_eq!(parse_tags("--include-tags", "smoke,login").unwrap(), ["smoke", "login"]);
    assert_eq!(parse_tags("--exclude-tags", "a,,b").unwrap(), ["a", "b"]);
    assert!(parse_tags("--exclude-tags", "").unwrap().is_empty());
    for bad in ["smoke, login", "!slow", "a b"] {
        let e = parse_tags("--include-tags", bad).unwrap_err();
        assert!(e.contains("e.g. --include-tags smoke,login"), "{bad}: {e}");
    }
}
