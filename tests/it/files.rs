//! Files go through one door (DESIGN.md, contract item 14; `crates/confine/`): whatever a flow, a
//! replay, a script or an export writes has a plain name, stays inside its folder, follows no
//! link, and lands in a private folder of its principal. Hostile names, hand-picked and
//! generated, go to every writer through the real binary and MCP: a Maestro flow's `name:` (its
//! failure's screenshot), takeScreenshot paths (written, and made by `${…}` as the step runs),
//! the JUnit report's path, `flow export`'s name, and a script's workspace files and skills.
//! Each writer works in a folder nested four deep in a world of its own, beside links planted to
//! a folder outside; afterwards nothing in the world changed but new files inside the writer's
//! folder, and every planted link and what it points at is as it was.

use std::collections::BTreeMap;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use proptest::strategy::{Strategy, ValueTree};
use serde_json::json;

use crate::common::*;
use crate::flow_commands::{flow, replay, stdout};

/// What is at each path of `root`, links not followed: a file's bytes, a folder, a link's target.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, String> {
    fn visit(dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let what = if meta.file_type().is_symlink() {
                format!("link to {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                visit(&path, out);
                "folder".to_string()
            } else {
                format!(
                    "file of {} bytes: {:?}",
                    meta.len(),
                    std::fs::read(&path).unwrap_or_default().get(..16)
                )
            };
            out.insert(path, what);
        }
    }
    let mut out = BTreeMap::new();
    visit(root, &mut out);
    out
}

/// What changed in the world since `before`: every path that is not as it was must be a new file
/// or folder inside `allowed`. Returns how many new files landed there.
fn only_inside(before: &BTreeMap<PathBuf, String>, root: &Path, allowed: &Path, what: &str) -> usize {
    let after = snapshot(root);
    for (path, was) in before {
        assert_eq!(after.get(path), Some(was), "{what}: {} changed", path.display());
    }
    let new: Vec<(&PathBuf, &String)> = after.iter().filter(|(p, _)| !before.contains_key(*p)).collect();
    for (path, is) in &new {
        assert!(
            path.starts_with(allowed) && !is.starts_with("link"),
            "{what}: {} ({is}) is outside {}",
            path.display(),
            allowed.display()
        );
    }
    new.iter().filter(|(_, is)| is.starts_with("file")).count()
}

/// A writer's world: `WORLD/a/b/c/d/FOLDER` (so a name climbing four folders still lands in the
/// world, where it is seen), `WORLD/outside` with a file, and links from the folder to both.
struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    folder: PathBuf,
    outside: PathBuf,
}

impl World {
    fn new(folder: &str, links: &[&str]) -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let folder = root.join("a/b/c/d").join(folder);
        let outside = root.join("outside");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("victim"), "kept").unwrap();
        for link in links {
            let at = folder.join(link);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            symlink(outside.join("victim"), at).unwrap();
        }
        symlink(&outside, folder.join("dirlink")).unwrap();
        World {
            _dir: dir,
            root,
            folder,
            outside,
        }
    }

    /// A name of the table's `/ABS/` kind, pointing into the world.
    fn absolute(&self, name: &str) -> String {
        name.replace("/ABS", self.outside.to_str().unwrap())
    }
}

/// Names a third party writes: hand-picked, then generated from hostile parts (the same every run).
fn hostile_names() -> Vec<String> {
    let mut names: Vec<String> = [
        "../../x",
        "../x",
        "..",
        ".",
        "/ABS/abs",
        "a/b",
        "a/../../x",
        "dirlink/x",
        "trap",
        "x\0y",
        "\0",
        "-rf",
        ".hidden",
        "~/x",
        "a\\..\\..\\x",
        "%2e%2e%2fx",
        " spaced ",
        "tab\there",
        "line\nbreak",
        "\u{202e}gnp.exe",
        "écran",
        "画面 1",
        "e\u{301}",
        "full\u{ff0f}width",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    names.push("y".repeat(300));
    names.push(format!("{}/z", "d".repeat(99)));
    let parts = proptest::prop_oneof![
        proptest::strategy::Just(".."),
        proptest::strategy::Just("/"),
        proptest::strategy::Just("."),
        proptest::strategy::Just("dirlink"),
        proptest::strategy::Just("trap"),
        proptest::strategy::Just("\\"),
        proptest::strategy::Just("é"),
        proptest::strategy::Just("-"),
        proptest::strategy::Just("q"),
    ];
    let generated = proptest::collection::vec(parts, 1..7).prop_map(|p| p.concat());
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for _ in 0..10 {
        names.push(generated.new_tree(&mut runner).unwrap().current());
    }
    names
}

/// A YAML double-quoted scalar of `text` (JSON's escapes are YAML's).
fn yaml(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// A Maestro flow whose `name:` is hostile fails, and its failure's screenshot and the report
/// land in the report's folder (the screenshot under the name made plain), never where the
/// name points; a screenshot whose name is a link planted there is not written through it.
#[test]
fn a_flows_name_never_takes_its_failure_screenshot_out_of_the_report_folder() {
    let names = hostile_names();
    let world = World::new("report", &["trap-failure.jpg"]);
    let flows = world.root.join("flows");
    std::fs::create_dir(&flows).unwrap();
    let files: Vec<PathBuf> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let text = format!(
                "appId: com.android.settings\nname: {}\n---\n- assertVisible: \"Nothing shows this\"\n",
                yaml(&world.absolute(name))
            );
            flow(&flows, &format!("flow-{i}.yaml"), &text)
        })
        .collect();
    let before = snapshot(&world.root);
    let report = world.folder.join("report.xml");
    let mut args: Vec<&str> = files[1..].iter().map(|f| f.to_str().unwrap()).collect();
    args.extend(["--junit", report.to_str().unwrap(), "--step-timeout-ms", "100"]);
    let out = replay(&files[0], None, &args);
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains(&format!("{} flows: 0 passed, {} failed", names.len(), names.len())),
        "{said}"
    );
    let written = only_inside(&before, &world.root, &world.folder, "a flow's name");
    assert!(report.exists(), "the report is in its folder");
    // Every failure's screenshot is in the folder, but one whose name is the planted link.
    let shots: Vec<&str> = said
        .lines()
        .filter_map(|l| l.strip_prefix("screenshot of the failure: "))
        .collect();
    for shot in &shots {
        assert!(Path::new(shot).starts_with(&world.folder), "{shot}");
    }
    let trapped = names
        .iter()
        .filter(|n| droidmcp::confine::plain_from(n) == "trap")
        .count();
    assert!(trapped >= 1);
    assert_eq!(shots.len(), names.len() - trapped, "{said}");
    println!(
        "{} hostile flow names ({trapped} made the planted link's name, refused): {written} files, all inside the report's folder",
        names.len()
    );
}

/// takeScreenshot paths: a `..` that would climb out of the report's folder stays at its top and
/// an absolute path starts there, as a chroot reads them (`../../x` is x.png inside); one that is
/// no plain name is refused as the flow is read (at its line); one a `${…}` makes is held to the same
/// rule as its step runs, and fails that step without writing it anywhere (a link planted where
/// one lands is refused as the file is pulled); the rest land inside.
#[test]
fn a_screenshot_path_never_leaves_the_report_folder() {
    let names: Vec<String> = hostile_names();
    let world = World::new("report", &["trap.png"]);
    let flows = world.root.join("flows");
    std::fs::create_dir(&flows).unwrap();
    // Written in a flow each; and all made by `${…}` in one flow, through `--env` (which
    // cannot pass a NUL).
    let written: Vec<PathBuf> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let text = format!(
                "appId: com.android.settings\n---\n- takeScreenshot: {}\n",
                yaml(&world.absolute(name))
            );
            flow(&flows, &format!("shot-{i}.yaml"), &text)
        })
        .collect();
    let usable: Vec<&String> = names.iter().filter(|n| !n.contains('\0')).collect();
    let mut text = String::from("appId: com.android.settings\n---\n");
    let mut envs = Vec::new();
    for (i, name) in usable.iter().enumerate() {
        // Optional, so each is tried whatever the one before did.
        text.push_str(&format!(
            "- takeScreenshot:\n    path: \"${{P{i}}}\"\n    optional: true\n"
        ));
        envs.push(format!("P{i}={}", world.absolute(name)));
    }
    let made = flow(&flows, "made.yaml", &text);
    let before = snapshot(&world.root);

    // `--check` reads every written one without a device and names each refusal's line.
    let checked = std::process::Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .arg("replay")
        .arg("--check")
        .args(&written)
        .output()
        .unwrap();
    let said = stdout(&checked);
    println!("{said}");
    let refused = said.lines().filter(|l| l.starts_with("refused ")).count();
    // The oracle: `..` and `.` taken as a chroot takes them, then the door's own rule.
    let inside = |name: &String| {
        let mut parts: Vec<&str> = Vec::new();
        for part in name.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                part => parts.push(part),
            }
        }
        droidmcp::confine::relative(&format!("{}.png", parts.join("/"))).is_ok()
    };
    assert_eq!(
        refused,
        names.iter().filter(|n| !inside(&world.absolute(n))).count(),
        "{said}"
    );
    for climber in ["..", "x\0y", ".hidden", "-rf"] {
        let i = names.iter().position(|n| n == climber).unwrap();
        let file = written[i].display().to_string();
        assert!(
            said.lines()
                .any(|l| l.starts_with("refused ") && l.contains(&format!("{file} "))),
            "{climber:?} ({file}) is refused at its line: {said}"
        );
    }
    // Replayed: the refused ones together stop at the first refusal, before anything runs or is
    // written; the ones read whole run, and their files land inside.
    let (accepted, refused_files): (Vec<&PathBuf>, Vec<&PathBuf>) = written
        .iter()
        .partition(|f| said.contains(&format!("{}: 1 steps would run, 0 refused", f.display())));
    let report = world.folder.join("report.xml");
    for (files, extra) in [
        (&refused_files, vec![]),
        (&accepted, vec!["--junit", report.to_str().unwrap()]),
    ] {
        let mut args: Vec<&str> = files[1..].iter().map(|f| f.to_str().unwrap()).collect();
        args.extend(extra);
        replay(files[0], None, &args);
    }
    let files = only_inside(&before, &world.root, &world.folder, "written screenshot paths");
    println!(
        "{} written paths read whole, replayed: {files} files, all inside",
        accepted.len()
    );

    let mut args = vec!["--junit", report.to_str().unwrap()];
    for env in &envs {
        args.extend(["--env", env.as_str()]);
    }
    let out = replay(&made, None, &args);
    let said = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("files the flow made were not pulled"), "{said}");
    // Each made name that would leave the folder failed its own step (`--env` values are hidden
    // from the report, so the lines are counted, not read).
    let failed_steps = said
        .lines()
        .filter(|l| l.starts_with("ok ") && l.contains("; warning: "))
        .count();
    assert_eq!(
        failed_steps,
        usable.iter().filter(|n| !inside(&world.absolute(n))).count(),
        "{said}"
    );
    let files = only_inside(&before, &world.root, &world.folder, "a screenshot's path");
    assert!(report.exists());
    assert!(world.folder.join("écran.png").exists() && world.folder.join("画面 1.png").exists());
    let pulled = said.lines().filter(|l| l.starts_with("file    ")).count();
    println!(
        "{} written takeScreenshot paths ({refused} refused at their line), {} made by ${{…}} ({pulled} pulled): {files} files, all inside",
        names.len(),
        usable.len()
    );
}

/// The JUnit report's own file: a link planted where it goes is refused and left as it is, a
/// name that is not plain is refused before anything runs.
#[test]
fn the_report_is_never_written_through_a_link() {
    let world = World::new("report", &["linked.xml"]);
    let passing = world.root.join("passing.yaml");
    std::fs::write(&passing, "appId: com.android.settings\n---\n- back\n").unwrap();
    let before = snapshot(&world.root);
    let mut cases = 0;
    for (file, why) in [
        ("linked.xml", "symbolic link"),
        (".hidden.xml", "starts with a dot"),
        ("-x.xml", "starts with -"),
        ("dirlink/r.xml", ""),
    ] {
        let report = world.folder.join(file);
        let out = replay(&passing, None, &["--junit", report.to_str().unwrap()]);
        let said = String::from_utf8_lossy(&out.stderr);
        cases += 1;
        if why.is_empty() {
            // A folder the person typed is theirs, links and all: the report lands where the
            // path they gave leads.
            assert!(out.status.success(), "{said}");
            std::fs::remove_file(world.outside.join("r.xml")).unwrap();
            continue;
        }
        assert!(!out.status.success(), "{file}");
        assert!(said.contains(why), "{file}: {said}");
    }
    only_inside(&before, &world.root, &world.folder, "the report");
    assert_eq!(std::fs::read_to_string(world.outside.join("victim")).unwrap(), "kept");
    println!("{cases} report paths");
}

/// Over MCP: `flow export`'s name, a script's `workspace.write` and `skills.save` names, each
/// hostile name to each: what is written lands in the workspace, and a link planted where a
/// file would go (an export's, a skill's) is refused and left as it is.
#[tokio::test]
async fn no_name_an_assistant_or_a_script_gives_writes_outside_the_workspace() {
    let names = hostile_names();
    let world = World::new("ws", &["flows/local/trap.js", "skills/trap.js"]);
    for folder in ["flows", "flows/local", "skills"] {
        std::fs::set_permissions(world.folder.join(folder), std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let before = snapshot(&world.root);
    let home = tempfile::tempdir().unwrap();
    let ws = world.folder.to_str().unwrap();
    let client = mcp_server(&["--sim", "--workspace", ws], &[], home.path()).await;
    ok(&call(
        &client,
        "adb-app",
        json!({"operation": "launch", "package": "com.android.settings"}),
    )
    .await);
    let names: Vec<String> = names.iter().map(|n| world.absolute(n)).collect();
    let mut exported = 0;
    for name in &names {
        let answer = call(&client, "flow", json!({"operation": "export", "name": name})).await;
        if answer.is_error != Some(true) {
            exported += 1;
        }
    }
    let refused = err(&call(&client, "flow", json!({"operation": "export", "name": "trap"})).await);
    assert!(refused.contains("symbolic link"), "{refused}");
    let code = "const out = [];\n\
        for (const name of args.names) {\n\
          for (const write of [() => workspace.write(name, 'x'), () => skills.save(name, 'console.log(1)', '')]) {\n\
            try { await write(); out.push('w'); } catch (e) { out.push('r'); }\n\
          }\n\
        }\n\
        console.log(out.join(''));";
    let run = ok(&call(
        &client,
        "script",
        json!({"operation": "run", "code": code, "args": {"names": names}}),
    )
    .await);
    let marks = run["output"].as_str().unwrap().trim().to_string();
    assert_eq!(marks.len(), names.len() * 2, "{run}");
    let files = only_inside(&before, &world.root, &world.folder, "an export or a script");
    client.cancel().await.unwrap();
    assert_eq!(std::fs::read_to_string(world.outside.join("victim")).unwrap(), "kept");
    let written = marks.matches('w').count();
    println!(
        "{} names × 3 writers (flow export, workspace.write, skills.save): {exported} exports and {written} script writes allowed, {files} files, all inside the workspace",
        names.len()
    );
}
