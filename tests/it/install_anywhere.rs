//! What a newcomer sees: the binary copied out of the build folder (as `cargo install` leaves
//! it) and run from an unrelated folder, with the built-in profile; `call` printing one compact
//! JSON line; `sim` serving `adb connect`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The binary copied into `dir`, as an installed one would sit far from the clone.
fn installed_binary(dir: &Path) -> PathBuf {
    let to = dir.join(if cfg!(windows) { "droidmcp.exe" } else { "droidmcp" });
    std::fs::copy(env!("CARGO_BIN_EXE_droidmcp"), &to).expect("copy the binary");
    to
}

fn run(bin: &Path, cwd: &Path, args: &[&str]) -> Output {
    retry_busy(|| {
        Command::new(bin)
            .args(args)
            .current_dir(cwd)
            .env_remove("RUST_LOG")
            .env("ANDROID_USER_HOME", cwd)
            .output()
    })
}

/// Runs `start` again while the binary is "text file busy": another test thread forked while
/// this one's copy was still open for writing, and the child holds it until its own exec.
fn retry_busy<T>(start: impl Fn() -> std::io::Result<T>) -> T {
    for _ in 0..50 {
        match start() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            other => return other.expect("run droidmcp"),
        }
    }
    panic!("the copied binary stayed busy for a second");
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("UTF-8 stdout")
}

#[test]
fn call_with_the_builtin_sim_prints_one_compact_line_from_any_folder() {
    let dir = tempfile::tempdir().unwrap();
    let bin = installed_binary(dir.path());
    let out = run(
        &bin,
        dir.path(),
        &["call", "adb-device", r#"{"operation":"properties"}"#, "--sim"],
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    assert!(text.len() <= 450, "{} chars: {text}", text.len());
    assert!(
        out.stderr.is_empty(),
        "no logs below WARN: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["summary"]["model"], "Pixel 7 (droidmcp sim)");
    assert_eq!(v["propertyCount"], 685);
    println!(
        "call adb-device properties --sim: {} chars on one line",
        text.trim_end().len()
    );

    // --raw: the whole MCP result, content blocks and all.
    let raw = run(
        &bin,
        dir.path(),
        &["call", "adb-device", r#"{"operation":"properties"}"#, "--sim", "--raw"],
    );
    let raw: serde_json::Value = serde_json::from_slice(&raw.stdout).unwrap();
    assert_eq!(raw["content"][0]["type"], "text");
    assert_eq!(raw["structuredContent"]["propertyCount"], 685);
}

#[test]
fn call_writes_images_to_files_and_exits_1_on_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let bin = installed_binary(dir.path());
    let shot = run(
        &bin,
        dir.path(),
        &["call", "ui", r#"{"operation":"screenshot"}"#, "--sim"],
    );
    assert!(shot.status.success(), "{shot:?}");
    let v: serde_json::Value = serde_json::from_str(&stdout(&shot)).unwrap();
    let file = v["imageFiles"][0].as_str().expect("the image's file");
    let jpeg = std::fs::read(file).unwrap();
    assert_eq!(&jpeg[..3], &[0xFF, 0xD8, 0xFF], "a JPEG");
    assert!(stdout(&shot).len() < 1000, "no base64 on stdout");
    std::fs::remove_file(file).unwrap();

    let bad = run(&bin, dir.path(), &["call", "ui", r#"{"operation":"bogus"}"#, "--sim"]);
    assert_eq!(bad.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&bad)).unwrap();
    assert_eq!(v["isError"], true);
    assert!(v["message"].as_str().unwrap().contains("bogus"), "{v}");

    let not_json = run(&bin, dir.path(), &["call", "ui", "{operation", "--sim"]);
    assert!(!not_json.status.success());
    assert!(String::from_utf8_lossy(&not_json.stderr).contains("not JSON"));
}

#[test]
fn sim_serves_the_builtin_profile_from_any_folder() {
    let dir = tempfile::tempdir().unwrap();
    let bin = installed_binary(dir.path());
    let mut sim = retry_busy(|| {
        Command::new(&bin)
            .args(["sim", "--listen", "127.0.0.1:0"])
            .current_dir(dir.path())
            .env_remove("RUST_LOG")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
    });
    let mut line = String::new();
    BufReader::new(sim.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .expect("listening on ADDR")
        .to_string();
    let out = run(
        &bin,
        dir.path(),
        &[
            "call",
            "adb-app",
            r#"{"operation":"list"}"#,
            "--adb",
            &format!("tcp:{addr}"),
        ],
    );
    sim.kill().unwrap();
    let _ = sim.wait();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["totalCount"], 197, "{v}");
}
