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
