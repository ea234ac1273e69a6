//! The door's own rules: plain names, private folders, links never followed.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use proptest::prelude::*;

use super::{Folder, plain_from, plain_name, principal_folder, relative};

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_private_folder_is_made_0700_narrowed_when_wider_and_refused_when_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let made = dir.path().join("made");
    let folder = Folder::private(&made).unwrap();
    assert_eq!(mode(&made), 0o700);
    std::fs::set_permissions(&made, std::fs::Permissions::from_mode(0o755)).unwrap();
    Folder::private(&made).unwrap();
    assert_eq!(mode(&made), 0o700);
    let link = dir.path().join("link");
    symlink(&made, &link).unwrap();
    assert!(Folder::private(&link).unwrap_err().contains("symbolic link"));
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    assert!(Folder::private(&file).unwrap_err().contains("not a folder"));
    let written = folder.write(&["a".into(), "b.txt".into()], b"x").unwrap();
    assert_eq!(written, made.join("a/b.txt"));
    assert_eq!((mode(&written), mode(&made.join("a"))), (0o600, 0o700));
    assert_eq!(folder.read(&["a".into(), "b.txt".into()], 10).unwrap(), "x");
    assert_eq!(folder.list(&[]).unwrap(), [("a/b.txt".to_string(), 1)]);
    assert!(folder.sub("..").unwrap_err().contains("not a plain name"));
}

#[test]
fn only_plain_names_pass() {
    for bad in [
        "",
        ".",
        "..",
        ".hidden",
        "-rf",
        "a/b",
        "a\\b",
        "a\0b",
        "~x",
        " lead",
        "trail ",
        "tab\there",
        "new\nline",
        "right\u{202e}left",
        "full\u{ff0f}width",
        "e\u{301}",
        &"x".repeat(101),
        &"é".repeat(101),
    ] {
        assert!(plain_name(bad).is_err(), "{bad:?} was accepted");
    }
    for good in [
        "notes.txt",
        "screen-1.png",
        "settings again",
        "écran",
        "画面",
        "a..b",
        "x-",
    ] {
        assert!(plain_name(good).is_ok(), "{good:?} was refused");
    }
    for bad in ["../x", "a/../../x", "/etc/passwd", "a//b", "a/b/c/d/e", "a/"] {
        assert!(relative(bad).is_err(), "{bad:?} was accepted");
    }
    assert_eq!(relative("shots/home.png").unwrap(), ["shots", "home.png"]);
    assert!(
        relative("../../../etc/passwd")
            .unwrap_err()
            .contains("starts with a dot")
    );
    assert!(relative("/etc/passwd").unwrap_err().contains("absolute"));
}

#[test]
fn a_principal_is_one_plain_folder_name_and_two_never_share_one() {
    assert_eq!(principal_folder("alice"), "alice");
    assert_eq!(principal_folder("ci-bot_2"), "ci-bot_2");
    assert_eq!(principal_folder(".."), "%2E%2E");
    assert_eq!(principal_folder("a.b"), "a%2Eb");
    assert_ne!(principal_folder("a.b"), principal_folder("a%2Eb"));
    assert_ne!(principal_folder("Alice"), principal_folder("alice"));
    // A long name fits a file name, and two that differ only at the end stay two.
    let long = "A".repeat(256);
    let other = format!("{}B", "A".repeat(255));
    for name in [&long, &other, &"%".repeat(300), &"\u{e9}".repeat(200)] {
        let folder = principal_folder(name);
        assert!(folder.len() <= super::FOLDER_MAX && folder.contains('~'), "{folder}");
        assert!(!folder.contains('/') && !folder.starts_with('.'), "{folder}");
    }
    assert_ne!(principal_folder(&long), principal_folder(&other));
    assert!(!principal_folder("a~b").contains('~'));
}

/// A read stops at a link (anywhere on the way), a folder, a FIFO, and the size limit.
#[test]
fn a_read_follows_no_link_and_takes_only_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret").unwrap();
    let folder = Folder::private(&dir.path().join("in")).unwrap();
    symlink(&outside, folder.path().join("out")).unwrap();
    symlink(outside.join("secret.txt"), folder.path().join("s.txt")).unwrap();
    let read = |path: &str| folder.read(&relative(path).unwrap(), 100);
    assert!(read("out/secret.txt").unwrap_err().contains("symbolic link"));
    assert!(read("s.txt").unwrap_err().contains("symbolic link"));
    assert!(folder.list(&["out".into()]).unwrap_err().contains("symbolic link"));
    std::fs::create_dir(folder.path().join("d")).unwrap();
    assert!(read("d").unwrap_err().contains("folder"));
    let fifo = std::ffi::CString::new(folder.path().join("fifo").to_str().unwrap()).unwrap();
    // SAFETY: a valid path; makes a FIFO a write could otherwise hang on.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    assert!(read("fifo").unwrap_err().contains("not a regular file"));
    folder.write(&["big".into()], &[b'x'; 200]).unwrap();
    assert!(read("big").unwrap_err().contains("read limit"));
    assert!(read("none").unwrap_err().starts_with("no file"));
}

/// Names a third party writes: hand-picked hostile ones and generated ones.
fn hostile() -> impl Strategy<Value = String> {
    let parts = prop_oneof![
        Just("..".to_string()),
        Just(".".to_string()),
        Just("/".to_string()),
        Just("\\".to_string()),
        Just("\0".to_string()),
        Just("-".to_string()),
        Just(" ".to_string()),
        Just("link".to_string()),
        Just("dirlink".to_string()),
        Just("\u{202e}".to_string()),
        Just("é".to_string()),
        Just("x".repeat(120)),
        "[a-z]{1,3}",
    ];
    proptest::collection::vec(parts, 1..8).prop_map(|parts| parts.concat())
}

/// Whatever name a write is given, it lands inside its folder or is refused: a link planted in
/// the folder (to a file, to a folder) is never followed, and nothing outside changes.
#[test]
fn no_name_writes_outside_its_folder_or_through_a_link() {
    let (cases, written) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(300));
    runner
        .run(&hostile(), |name| {
            cases.set(cases.get() + 1);
            let dir = tempfile::tempdir().unwrap();
            let outside = dir.path().join("outside");
            std::fs::create_dir(&outside).unwrap();
            std::fs::write(outside.join("target"), "kept").unwrap();
            let folder = Folder::private(&dir.path().join("in")).unwrap();
            symlink(outside.join("target"), folder.path().join("link")).unwrap();
            symlink(&outside, folder.path().join("dirlink")).unwrap();
            let parts = name.split('/').map(str::to_string).collect::<Vec<_>>();
            let tries = [Some(parts), relative(&name).ok(), Some(vec![plain_from(&name)])];
            for parts in tries.into_iter().flatten() {
                if let Ok(path) = folder.write(&parts, b"written") {
                    written.set(written.get() + 1);
                    prop_assert!(path.starts_with(folder.path()), "{:?}", path);
                    prop_assert_eq!(std::fs::read(&path).unwrap(), b"written");
                }
            }
            prop_assert_eq!(std::fs::read_to_string(outside.join("target")).unwrap(), "kept");
            prop_assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);
            let link = std::fs::symlink_metadata(folder.path().join("link")).unwrap();
            prop_assert!(link.file_type().is_symlink());
            Ok(())
        })
        .unwrap();
    println!(
        "{} hostile names, {} writes landed inside their folder",
        cases.get(),
        written.get()
    );
}

proptest! {
    /// A plain name is made from any text, with room for a suffix.
    #[test]
    fn any_text_makes_a_plain_name(text in "\\PC{0,300}") {
        let name = plain_from(&text);
        prop_assert!(plain_name(&name).is_ok(), "{:?} from {:?}", name, text);
        let shot = format!("{name}-failure.jpg");
        prop_assert!(plain_name(&shot).is_ok(), "{:?}", shot);
    }
}

#[test]
fn a_folder_is_held_open_so_a_parent_swapped_for_a_link_redirects_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let run = Folder::private(&runs).unwrap().sub("run").unwrap();
    // `runs/` moved away and a link to a folder holding a `run/` planted in its place.
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(outside.join("run")).unwrap();
    std::fs::rename(&runs, dir.path().join("moved")).unwrap();
    symlink(&outside, &runs).unwrap();
    run.write(&["x.txt".into()], b"kept").unwrap();
    assert!(!outside.join("run/x.txt").exists(), "the write followed the link");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("moved/run/x.txt")).unwrap(),
        "kept"
    );
    assert_eq!(run.list(&[]).unwrap(), [("x.txt".to_string(), 4)]);
    assert_eq!(run.size_of(&["x.txt".into()]), 4);
}

#[test]
fn a_removal_goes_through_the_handle_and_follows_no_link() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(outside.join("old")).unwrap();
    std::fs::write(outside.join("old/precious.txt"), "keep me").unwrap();
    let ws = Folder::private(&dir.path().join("ws")).unwrap();
    symlink(&outside, dir.path().join("ws/runs")).unwrap();
    assert!(ws.find(&["runs".into()]).unwrap_err().contains("symbolic link"));
    assert!(ws.remove("runs").is_err(), "a link is not removed as a folder");
    let run = ws.sub("run").unwrap();
    run.write(&["a".into(), "b.txt".into()], b"x").unwrap();
    symlink(&outside, dir.path().join("ws/run/a/link")).unwrap();
    assert_eq!(ws.folders(), ["run"]);
    ws.remove("run").unwrap();
    assert!(!dir.path().join("ws/run").exists());
    assert!(
        outside.join("old/precious.txt").exists(),
        "a removal followed a link inside"
    );
    assert_eq!(ws.find(&["run".into()]).unwrap(), None);
}

#[test]
fn a_path_inside_keeps_any_name_but_never_leaves() {
    for bad in [
        "../x.png",
        "a/../../x.png",
        "/etc/passwd",
        "a//b.png",
        "./a.png",
        "a/",
        "a/b/c/d/e.png",
        "a\0.png",
        "",
    ] {
        assert!(super::inside(bad).is_err(), "{bad:?} was accepted");
    }
    assert_eq!(super::inside("it's; touch #.png").unwrap(), ["it's; touch #.png"]);
    assert_eq!(
        super::inside("media/My photo (1).png").unwrap(),
        ["media", "My photo (1).png"]
    );
}
