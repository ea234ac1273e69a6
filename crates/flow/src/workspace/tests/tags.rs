//! Tags as Maestro reads and applies them: its documentation's examples, every include and
//! exclude set generated, a flow header's tag shapes.

use std::path::PathBuf;

use super::{Case, FLOW, check, tagged};
use crate::workspace::{Config, FlowFile, Header, Tags, plan, read_header};

/// The examples of Maestro's documentation on tags (maestro.mobile.dev/cli/tags, "Filtering"
/// and "Global tags"; docs.maestro.dev "Test discovery and tags", "Tag logic"), each a
/// workspace read from disk: flowA has dev and pull-request, flowB dev.
#[test]
fn tags_choose_the_flows_maestros_documentation_says() {
    let docs = || {
        vec![
            ("flowA.yaml", tagged(&["dev", "pull-request"])),
            ("flowB.yaml", tagged(&["dev"])),
        ]
    };
    let with_config = |config: &str| {
        let mut files = docs();
        files.push(("config.yaml", config.to_string()));
        files
    };
    let case = |name, files, include, exclude, expect| Case {
        name,
        files,
        inputs: &["."],
        include,
        exclude,
        config: None,
        expect,
    };
    let both: &[&str] = &["flowA.yaml", "flowB.yaml"];
    let table = [
        case("--include-tags=dev", docs(), "dev", "", Ok((&[], both))),
        case(
            "--include-tags=dev,pull-request",
            docs(),
            "dev,pull-request",
            "",
            Ok((&[], both)),
        ),
        case(
            "--exclude-tags=pull-request",
            docs(),
            "",
            "pull-request",
            Ok((&[], &["flowB.yaml"])),
        ),
        case(
            "--exclude-tags=dev: no flow",
            docs(),
            "",
            "dev",
            Err("no flow has the tags asked for"),
        ),
        case(
            "--include-tags=dev --exclude-tags=pull-request",
            docs(),
            "dev",
            "pull-request",
            Ok((&[], &["flowB.yaml"])),
        ),
        case(
            "global includeTags: only its flows",
            with_config("includeTags:\n  - pull-request\n"),
            "",
            "",
            Ok((&[], &["flowA.yaml"])),
        ),
        case(
            "global excludeTags wins over an include tag the flow has",
            with_config("includeTags: [dev]\nexcludeTags: [pull-request]\n"),
            "",
            "",
            Ok((&[], &["flowB.yaml"])),
        ),
        case(
            "global and command line tags are one union",
            with_config("includeTags: [pull-request]\n"),
            "dev",
            "",
            Ok((&[], both)),
        ),
        case(
            "a command line exclude beats a global include",
            with_config("includeTags: [dev]\n"),
            "",
            "pull-request",
            Ok((&[], &["flowB.yaml"])),
        ),
        case(
            "a tag is matched whole and by case",
            docs(),
            "Dev,pull",
            "",
            Err("no flow has the tags asked for"),
        ),
        case(
            "an empty --exclude-tags excludes nothing (an empty CI variable)",
            docs(),
            "",
            ",",
            Ok((&[], both)),
        ),
        Case {
            inputs: &["flowB.yaml"],
            ..case(
                "a lone flow runs whatever the tags",
                docs(),
                "nightly",
                "dev",
                Ok((&[], &["flowB.yaml"])),
            )
        },
        Case {
            inputs: &["suite", "extra.yaml"],
            ..case(
                "tags apply to a file named beside a folder",
                vec![
                    ("suite/flowA.yaml", tagged(&["dev", "pull-request"])),
                    ("extra.yaml", tagged(&["nightly"])),
                ],
                "dev",
                "",
                Ok((&[], &["suite/flowA.yaml"])),
            )
        },
        case(
            "a flow without tags runs with no include tag",
            vec![("flowA.yaml", tagged(&["dev"])), ("flowC.yaml", FLOW.into())],
            "",
            "dev",
            Ok((&[], &["flowC.yaml"])),
        ),
    ];
    table.iter().for_each(check);
    println!("{} cases from Maestro's documentation on tags", table.len());
}

/// Every include and exclude set over three tags, each tag given on the command line, in the
/// config or both, against a flow for every set of tags: a flow runs when it has an include tag
/// (or none are given) and no exclude tag (WorkspaceExecutionPlanner.plan), and no flow left is
/// the error.
#[test]
fn tags_from_the_command_line_and_the_config_choose_as_maestros_planner_does() {
    let universe = ["a", "b", "c"];
    let subset = |bits: u32| -> Vec<String> {
        (0..3)
            .filter(|i| bits & (1 << i) != 0)
            .map(|i| universe[i].to_string())
            .collect()
    };
    let files: Vec<FlowFile> = (0..8)
        .map(|bits| FlowFile {
            path: PathBuf::from(format!("f{bits}.yaml")),
            below: Some(format!("f{bits}.yaml")),
            header: Header {
                name: None,
                tags: subset(bits),
            },
        })
        .collect();
    // Each tag of a set goes to the command line (0), the config (1) or both (2).
    let placements = |set: &[String]| -> Vec<(Vec<String>, Vec<String>)> {
        (0..3u32.pow(set.len() as u32))
            .map(|mut code| {
                let (mut cli, mut config) = (Vec::new(), Vec::new());
                for tag in set {
                    match code % 3 {
                        0 => cli.push(tag.clone()),
                        1 => config.push(tag.clone()),
                        _ => {
                            cli.push(tag.clone());
                            config.push(tag.clone());
                        }
                    }
                    code /= 3;
                }
                (cli, config)
            })
            .collect()
    };
    let mut cases = 0;
    for include in (0..8).map(subset) {
        for exclude in (0..8).map(subset) {
            let want: Vec<PathBuf> = files
                .iter()
                .filter(|f| {
                    let tags = &f.header.tags;
                    (include.is_empty() || tags.iter().any(|t| include.contains(t)))
                        && !tags.iter().any(|t| exclude.contains(t))
                })
                .map(|f| f.path.clone())
                .collect();
            for (cli_in, config_in) in placements(&include) {
                for (cli_ex, config_ex) in placements(&exclude) {
                    let config = Config {
                        include_tags: config_in.clone(),
                        exclude_tags: config_ex,
                        continue_on_failure: true,
                        ..Config::default()
                    };
                    let tags = Tags {
                        include: cli_in.clone(),
                        exclude: cli_ex,
                    };
                    match plan(&files, &config, &tags, false) {
                        Ok(plan) => assert_eq!(plan.flows, want, "include {include:?} exclude {exclude:?}"),
                        Err(e) => assert!(
                            want.is_empty() && e.contains("no flow has the tags asked for"),
                            "include {include:?} exclude {exclude:?}: {e}"
                        ),
                    }
                    cases += 1;
                }
            }
        }
    }
    println!(
        "{cases} generated tag cases (8 flows, include and exclude sets over 3 tags, each tag from the command line, the config or both)"
    );
}

/// A flow's header `tags` as Maestro's mapper reads `YamlConfig.tags` (a `List<String>`):
/// scalars in the list are their text, nothing is no tags, anything but a list is refused.
#[test]
fn a_flows_tags_are_read_as_maestros_mapper_reads_them() {
    let header = |tags: &str| read_header(&format!("appId: a\ntags: {tags}\n---\n- launchApp\n"));
    let table: &[(&str, Result<&[&str], &str>)] = &[
        ("[smoke, login]", Ok(&["smoke", "login"])),
        ("[1, true]", Ok(&["1", "true"])),
        ("~", Ok(&[])),
        ("[]", Ok(&[])),
        ("smoke", Err("tags: [smoke]")),
        ("5", Err("tags: [5]")),
        ("{a: b}", Err("the header's tags is a list")),
    ];
    for (given, want) in table {
        match (header(given), want) {
            (Ok(h), Ok(tags)) => assert_eq!(h.tags, *tags, "{given}"),
            (Err(e), Err(part)) => assert!(e.contains(part), "{given}: {e}"),
            (got, want) => panic!("{given}: expected {want:?}, got {got:?}"),
        }
    }
    println!("{} header tag shapes", table.len());
}
