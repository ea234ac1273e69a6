//! The documentation a newcomer reads: README stays short, its two commands work as written,
//! and every link in README and docs/ leads to a file that exists.

use crate::common::*;

/// The relative links (`[text](path)`, anchors dropped) of a markdown text.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = &rest[..end];
        if !target.contains("://") && !target.starts_with('#') && !target.starts_with("mailto:") {
            found.push(target.split('#').next().unwrap_or(target).to_string());
        }
    }
    found
}

#[test]
fn every_link_in_readme_and_docs_resolves() {
    let mut pages = vec![repo_dir().join("README.md")];
    for entry in std::fs::read_dir(repo_dir().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for link in links(&text) {
            let target = page.parent().unwrap().join(&link);
            assert!(target.exists(), "{}: the link {link} leads nowhere", page.display());
            checked += 1;
        }
    }
    let readme = std::fs::read_to_string(repo_dir().join("README.md")).unwrap();
    for page in pages.iter().skip(1).filter(|p| !p.ends_with("ARCHITECTURE.md")) {
        let name = format!("docs/{}", page.file_name().unwrap().to_string_lossy());
        assert!(
            readme.contains(&format!("]({name})")),
            "README's contents do not link {name}"
        );
    }
    println!("{} pages, {checked} links, all resolve", pages.len());
}

#[test]
fn readme_is_short_and_its_two_commands_work_as_written() {
    let readme = std::fs::read_to_string(repo_dir().join("README.md")).unwrap();
    let lines = readme.lines().count();
    println!("README: {lines} lines");
    assert!(lines <= 350, "README has {lines} lines; the reference belongs in docs/");
    let blocks: Vec<&str> = readme
        .split("```sh\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap().trim())
        .collect();
    let run = r#"cargo run --release -- call adb-device '{"operation":"properties"}' --sim"#;
    assert_eq!(blocks.first(), Some(&run), "the first command");
    assert_eq!(blocks.get(1), Some(&"cargo test"), "the second command");
    // The first command's own arguments, on this build: the answer README shows.
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .args(["call", "adb-device", r#"{"operation":"properties"}"#, "--sim"])
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    assert_eq!(answer["summary"]["model"], "Pixel 7 (droidmcp sim)");
    assert_eq!(answer["propertyCount"], 685);
    assert!(
        readme.contains(r#""propertyCount":685"#),
        "README shows the answer it gives"
    );
}

/// The crates of the workspace and the workspace crates each may depend on (docs/ARCHITECTURE.md,
/// "Layers"): a lower crate never depends on a higher one, and nothing in the library but the
/// command line uses the simulator. The compiler keeps the rest: a crate cannot name what it does
/// not depend on.
const CRATES: &[(&str, &[&str])] = &[
    (
        "droidmcp",
        &[
            "adb", "android", "confine", "context", "flow", "image", "script", "sim", "state",
        ],
    ),
    ("sim", &["adb", "android", "image"]),
    ("script", &["android", "confine"]),
    ("flow", &["android", "confine"]),
    ("context", &["android", "confine"]),
    ("image", &[]),
    ("adb", &["android", "confine"]),
    ("confine", &["android"]),
    ("android", &[]),
    ("state", &[]),
    ("testkit", &[]),
];

/// The room of a workspace crate a dependency line names: by its package (`droidmcp-ROOM`, as
/// `package = "droidmcp-ROOM"` or as the key), or by an alias `[workspace.dependencies]` gives
/// it (`android.workspace = true`). Other crates (the `image` codec crate among them) are none.
fn workspace_room(key: &str, line: &str, aliases: &std::collections::BTreeMap<String, String>) -> Option<String> {
    let package = match line.split("package = \"").nth(1) {
        Some(rest) => rest.split('"').next().unwrap_or_default(),
        None => key,
    };
    match package.strip_prefix("droidmcp-") {
        Some(room) => Some(room.to_string()),
        None => aliases.get(key).cloned(),
    }
}

/// A Cargo.toml's dependencies of each kind (normal, dev, build, per target) that are workspace
/// crates, by room, and the aliases its `[workspace.dependencies]` defines (the root's: versions
/// for the members, not its own dependencies).
fn crate_dependencies(
    manifest: &std::path::Path,
    aliases: &std::collections::BTreeMap<String, String>,
) -> (
    std::collections::BTreeSet<String>,
    std::collections::BTreeMap<String, String>,
) {
    let text = std::fs::read_to_string(manifest).unwrap();
    let (mut found, mut defined) = (std::collections::BTreeSet::new(), std::collections::BTreeMap::new());
    let mut section = String::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.starts_with('[') {
            section = line.trim_matches(|c| c == '[' || c == ']').to_string();
            continue;
        }
        let key: String = line
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '-')
            .collect();
        if key.is_empty() {
            continue;
        }
        // What a crate's own code uses; its tests' dev-dependencies (testkit) are not a layer.
        let is_dependencies = ["dependencies", "build-dependencies"]
            .iter()
            .any(|kind| section == *kind || section.ends_with(&format!(".{kind}")));
        if section == "workspace.dependencies" {
            if let Some(room) = workspace_room(&key, line, &Default::default()) {
                defined.insert(key, room);
            }
        } else if is_dependencies && let Some(room) = workspace_room(&key, line, aliases) {
            found.insert(room);
        }
    }
    (found, defined)
}

/// Each crate of the workspace (the root package and `crates/*`) by its room's name, with the
/// workspace crates its Cargo.toml depends on.
fn crate_uses() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let root = repo_dir();
    let (_, aliases) = crate_dependencies(&root.join("Cargo.toml"), &Default::default());
    let mut uses = std::collections::BTreeMap::new();
    uses.insert(
        "droidmcp".to_string(),
        crate_dependencies(&root.join("Cargo.toml"), &aliases).0,
    );
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let manifest = dir.join("Cargo.toml");
        if manifest.exists() {
            let room = dir.file_name().unwrap().to_string_lossy().into_owned();
            uses.insert(room, crate_dependencies(&manifest, &aliases).0);
        }
    }
    uses
}

#[test]
fn no_crate_depends_on_a_higher_layer() {
    let uses = crate_uses();
    let mut wrong = Vec::new();
    for (krate, used) in &uses {
        let Some((_, allowed)) = CRATES.iter().find(|(name, _)| name == krate) else {
            wrong.push(format!(
                "crates/{krate} is in no layer: add it to CRATES and to docs/ARCHITECTURE.md"
            ));
            continue;
        };
        for dependency in used {
            if !allowed.contains(&dependency.as_str()) {
                wrong.push(format!(
                    "`{krate}` depends on `{dependency}`, a layer above it (or the simulator)"
                ));
            }
        }
    }
    for (name, _) in CRATES {
        if !uses.contains_key(*name) {
            wrong.push(format!("CRATES names `{name}`, which is not a crate of the workspace"));
        }
    }
    let graph: Vec<String> = uses
        .iter()
        .map(|(krate, used)| format!("{krate} → {}", used.iter().cloned().collect::<Vec<_>>().join(", ")))
        .collect();
    println!("{} crates: {}", uses.len(), graph.join("; "));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The top-level modules of the crate a source text names through `crate::`.
fn crate_modules_named(text: &str) -> std::collections::BTreeSet<String> {
    let mut named = std::collections::BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a::b, c, d::{e, f}}`: the names at the group's top level.
            let (mut depth, mut word, mut at_start) = (0, String::new(), true);
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => at_start = true,
                    c if depth == 0 && at_start && (c.is_alphanumeric() || c == '_') => word.push(c),
                    _ if depth == 0 && at_start && !word.is_empty() => {
                        named.insert(std::mem::take(&mut word));
                        at_start = false;
                    }
                    _ => {}
                }
            }
            if !word.is_empty() {
                named.insert(word);
            }
        } else {
            let word: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            named.insert(word);
        }
    }
    named
}

/// Every source file (`.rs`, and the JavaScript the flows' scripts run, `.js`) under a folder.
fn source_files(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            source_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs" || e == "js") {
            found.push(path);
        }
    }
}

/// Which rooms each room uses: a module of the root's `src/`, what it names through `crate::`
/// (code only: a comment may name any module; the binary's and the crate's roots sit on top); a
/// crate of `crates/`, the workspace crates its Cargo.toml depends on.
fn module_uses() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let src = repo_dir().join("src");
    let mut files = Vec::new();
    source_files(&src, &mut files);
    let mut uses_of: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> = Default::default();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        let module = rel.split('/').next().unwrap().trim_end_matches(".rs").to_string();
        if module == "main" || module == "lib" {
            continue;
        }
        let text: String = std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .map(|line| line.split("//").next().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n");
        let entry = uses_of.entry(module.clone()).or_default();
        for used in crate_modules_named(&text) {
            if used != module {
                entry.insert(used);
            }
        }
    }
    uses_of.extend(crate_uses().into_iter().filter(|(krate, _)| krate != "droidmcp"));
    uses_of
}

/// Each room of docs/ARCHITECTURE.md ("### `name`" under "## Rooms") says what it uses in a line
/// "Uses: `a`, `b`." (or "Uses: nothing else."), and that line is what its code uses: a use the
/// map does not state, or one it states that the code no longer makes, fails.
#[test]
fn each_room_of_the_map_states_exactly_the_modules_it_uses() {
    let map = std::fs::read_to_string(repo_dir().join("docs/ARCHITECTURE.md")).unwrap();
    let rooms = map.split("\n## Rooms\n").nth(1).expect("a \"## Rooms\" section");
    let rooms = rooms.split("\n## ").next().unwrap();
    let mut stated: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> = Default::default();
    for section in rooms.split("\n### ").skip(1) {
        let heading = section.lines().next().unwrap();
        let uses_line = section
            .lines()
            .find(|l| l.starts_with("Uses: "))
            .unwrap_or_else(|| panic!("the room {heading} has no \"Uses: \" line"));
        let used: std::collections::BTreeSet<String> = uses_line
            .split('`')
            .skip(1)
            .step_by(2)
            .map(|name| name.trim_end_matches('/').trim_end_matches(".rs").to_string())
            .collect();
        for name in heading.split('`').skip(1).step_by(2) {
            stated.insert(
                name.trim_end_matches('/').trim_end_matches(".rs").to_string(),
                used.clone(),
            );
        }
    }
    let uses_of = module_uses();
    let mut wrong = Vec::new();
    for (module, used) in &uses_of {
        match stated.get(module) {
            None => wrong.push(format!("`{module}` has no room in docs/ARCHITECTURE.md's \"## Rooms\"")),
            Some(says) if says != used => wrong.push(format!(
                "the room `{module}` says it uses {says:?}; its code uses {used:?}"
            )),
            Some(_) => {}
        }
    }
    for module in stated.keys() {
        if !uses_of.contains_key(module) {
            wrong.push(format!(
                "docs/ARCHITECTURE.md has a room `{module}`, which neither src/ nor crates/ has"
            ));
        }
    }
    println!("{} rooms, each stating what it uses", stated.len());
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The map is read in ten minutes (at most 2,500 words), opens with where to start (following a
/// call, adding a tool, a Maestro command, a simulator command), and every path it names exists.
/// The per-file detail is each file's own `//!` comment (below).
#[test]
fn the_map_is_short_starts_newcomers_somewhere_and_names_no_path_that_is_gone() {
    let root = repo_dir();
    let map = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let words = map.split_whitespace().count();
    let mut wrong = Vec::new();
    if words > 2_500 {
        wrong.push(format!(
            "docs/ARCHITECTURE.md has {words} words (at most 2,500): let the files' //! comments carry the detail"
        ));
    }
    let start = map
        .split("\n## Start here\n")
        .nth(1)
        .map(|s| s.split("\n## ").next().unwrap_or_default());
    match start {
        None => wrong.push("docs/ARCHITECTURE.md has no \"## Start here\" section".into()),
        Some(start) => {
            for entry in [
                "**Follow one call.**",
                "**Add a tool.**",
                "**Add a Maestro command.**",
                "**Add a simulator command.**",
            ] {
                if !start.contains(entry) {
                    wrong.push(format!("\"## Start here\" has no {entry}"));
                }
            }
        }
    }
    let mut named = 0;
    for quoted in map.split('`').skip(1).step_by(2) {
        let path = quoted.split([' ', '(']).next().unwrap_or_default();
        let path = path
            .split("::")
            .next()
            .unwrap_or_default()
            .trim_end_matches(['.', ',', ':']);
        let is_path = ["src/", "crates/", "tests/", "docs/", "fixtures/"]
            .iter()
            .any(|top| path.starts_with(top));
        if !is_path || path.contains(['*', '{']) || path.contains("NAME") || path.contains("ROOM") {
            continue;
        }
        named += 1;
        if !root.join(path).exists() {
            wrong.push(format!("docs/ARCHITECTURE.md names {path}, which does not exist"));
        }
    }
    println!("docs/ARCHITECTURE.md: {words} words, {named} paths named, all there");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every source file of `src/` and `crates/*/src/` opens by saying what it is for (`//!` in Rust,
/// a `//` comment in JavaScript): the map stops at the rooms, the files carry the rest.
#[test]
fn every_source_file_says_what_it_is_for() {
    let root = repo_dir();
    let mut files = Vec::new();
    source_files(&root.join("src"), &mut files);
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        source_files(&entry.unwrap().path().join("src"), &mut files);
    }
    let mut silent = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let opening = if file.extension().is_some_and(|e| e == "js") {
            "//"
        } else {
            "//!"
        };
        if !text.trim_start().starts_with(opening) {
            silent.push(file.strip_prefix(&root).unwrap().display().to_string());
        }
    }
    println!("{} source files, each opening with what it is for", files.len());
    assert!(
        silent.is_empty(),
        "these files do not open with a `//!` comment saying what they are for: {silent:?}"
    );
}
