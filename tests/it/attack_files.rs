//! An outside tester's attacks on "files go through one door", per-principal state and pinEnv:
//! cases the other suites do not try. A failing attack is a bug, marked `#[ignore = "bug: …"]`.

use std::os::unix::fs::symlink;
use std::time::Duration;

use serde_json::json;

use crate::common::*;
use crate::flow_commands::{flow, replay, stdout};

/// A folder on the way to a run's folder replaced by a link while the run sleeps: the run's
/// `workspace.write` must not land where the link points (the door holds the run's folder open
/// and writes relative to that handle).
#[tokio::test]
async fn a_runs_folder_replaced_by_a_link_mid_run_does_not_redirect_its_writes() {
    let home = tempfile::tempdir().unwrap();
    let workspace = home.path().join("ws");
    let outside = home.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let ws = workspace.to_str().unwrap();
    let client = mcp_server(&["--sim", "--workspace", ws], &[], home.path()).await;
    let runs = workspace.join("runs");
    let swap = async {
        // Wait for the run's folder, then move `runs/` away and plant a link in its place to a
        // folder holding a folder of the same run id.
        for _ in 0..200 {
            if let Some(id) = std::fs::read_dir(&runs)
                .ok()
                .and_then(|mut r| r.next())
                .and_then(|e| e.ok())
                .map(|e| e.file_name())
            {
                std::fs::rename(&runs, workspace.join("runs-moved")).unwrap();
                std::fs::create_dir(outside.join(&id)).unwrap();
                symlink(&outside, &runs).unwrap();
                return id;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("no run folder appeared");
    };
    let run = call(
        &client,
        "script",
        json!({"operation": "run", "code": "await sleep(1500); await workspace.write('x.txt', 'pwned'); console.log(await workspace.read('x.txt'));"}),
    );
    let (result, id) = tokio::join!(run, swap);
    println!("{:?}", result.content);
    let escaped = outside.join(&id).join("x.txt");
    assert!(
        !escaped.exists(),
        "workspace.write landed outside the workspace through a link: {}",
        escaped.display()
    );
}

/// addMedia takes "images and videos beside the flow". A link named `*.png` beside the flow,
/// pointing at a host secret that is no image, must not be read and pushed to the device.
#[test]
fn add_media_does_not_follow_a_link_to_a_host_secret() {
    let dir = tempfile::tempdir().unwrap();
    let secret_dir = tempfile::tempdir().unwrap();
    let secret = secret_dir.path().join("credentials");
    std::fs::write(&secret, "aws_secret_access_key=TOPSECRET42\n").unwrap();
    symlink(&secret, dir.path().join("evidence.png")).unwrap();
    let sim = SimProcess::start(&[]);
    let media = flow(
        dir.path(),
        "media.yaml",
        "appId: com.android.settings\n---\n- addMedia:\n    - evidence.png\n",
    );
    let out = replay(&media, Some(&sim), &[]);
    let said = stdout(&out);
    let on_device = shell_by_call(&sim, "cat /sdcard/Pictures/credentials; ls /sdcard/Pictures");
    assert!(
        !on_device.contains("TOPSECRET42"),
        "the host secret behind the link reached the device: {said}\n{on_device}"
    );
}

/// addMedia takes files beside the flow: one written as `../…` or absolute, outside the flow's
/// folder, is refused as the flow is read.
#[test]
fn add_media_does_not_climb_out_of_the_flows_folder() {
    let root = tempfile::tempdir().unwrap();
    let flows = root.path().join("repo/flows");
    std::fs::create_dir_all(&flows).unwrap();
    let private = root.path().join("private.png");
    std::fs::write(&private, b"\x89PNGprivate-photo").unwrap();
    for given in ["../../private.png", private.to_str().unwrap()] {
        let f = flow(
            &flows,
            "climb.yaml",
            &format!("appId: com.android.settings\n---\n- addMedia:\n    - \"{given}\"\n"),
        );
        let checked = std::process::Command::new(env!("CARGO_BIN_EXE_droidmcp"))
            .args(["replay", "--check"])
            .arg(&f)
            .output()
            .unwrap();
        let said = format!("{}{}", stdout(&checked), String::from_utf8_lossy(&checked.stderr));
        assert_eq!(checked.status.code(), Some(1), "{given:?} is accepted: {said}");
    }
}

/// A link planted where the script root's `runs/` would be: the door refuses to make runs there,
/// but the sweep must not follow it and delete folders elsewhere that look like old runs.
#[tokio::test]
async fn the_run_sweep_does_not_follow_a_planted_runs_link() {
    let home = tempfile::tempdir().unwrap();
    let workspace = home.path().join("ws");
    let outside = home.path().join("outside");
    std::fs::create_dir_all(&workspace).unwrap();
    let two_hours_ago = std::time::SystemTime::now() - Duration::from_secs(7200);
    let old = ulid::Ulid::from_datetime(two_hours_ago).to_string();
    std::fs::create_dir_all(outside.join(&old)).unwrap();
    std::fs::write(outside.join(&old).join("precious.txt"), "keep me").unwrap();
    symlink(&outside, workspace.join("runs")).unwrap();
    let ws = workspace.to_str().unwrap();
    let client = mcp_server(&["--sim", "--workspace", ws], &[], home.path()).await;
    let result = call(&client, "script", json!({"operation": "run", "code": "console.log(1)"})).await;
    println!("{:?}", result.content);
    assert!(
        outside.join(&old).join("precious.txt").exists(),
        "a folder outside the workspace, reached through the planted `runs` link, was deleted"
    );
}

/// `unlock {pinEnv}` reads only the names allowed at start, exactly: case variants, `=`, empty,
/// very long, spaced names and variables the server was not told of are refused unread.
#[test]
fn pin_env_reads_only_the_exact_allowed_names() {
    let home = tempfile::tempdir().unwrap();
    let unlock = |name: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_droidmcp"))
            .args(["call", "adb-device"])
            .arg(json!({"operation": "unlock", "pinEnv": name}).to_string())
            .args(["--sim", "--pin-env", "PHONE_PIN"])
            .env("HOME", home.path())
            .env("PHONE_PIN", "1234")
            .env("phone_pin", "5678")
            .env("Phone_Pin", "5678")
            .env("SECRET", "9999")
            .env_remove("ANDROID_SERIAL")
            .env_remove("DROIDMCP_PIN_ENV")
            .output()
            .unwrap();
        format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr))
    };
    let long = "P".repeat(100_000);
    for name in [
        "phone_pin",
        "Phone_Pin",
        "PHONE_PIN=",
        "PHONE_PIN ",
        " PHONE_PIN",
        "",
        "SECRET",
        "PHONE_PIN,SECRET",
        "PHONE_PIN\0",
        long.as_str(),
        "PHONE\u{0130}PIN",
    ] {
        let said = unlock(name);
        assert!(
            said.contains("is not a variable droidmcp may read"),
            "{name:.40?}: {said:.400}"
        );
        assert!(!said.contains("5678") && !said.contains("9999"), "{said:.400}");
    }
    let said = unlock("PHONE_PIN");
    assert!(!said.contains("is not a variable droidmcp may read"), "{said}");
    // Lists with spaces, empties, `=` and a leading digit are refused at start.
    for given in ["PHONE_PIN, SECRET", "PHONE_PIN,", "A=B", "1PIN", " "] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_droidmcp"))
            .args([
                "call",
                "adb-device",
                r#"{"operation":"unlock","pinEnv":"SECRET"}"#,
                "--sim",
            ])
            .env("HOME", home.path())
            .env("DROIDMCP_PIN_ENV", given)
            .env("SECRET", "9999")
            .env_remove("ANDROID_SERIAL")
            .output()
            .unwrap();
        let said = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
        assert!(
            !out.status.success() || said.contains("is not a variable"),
            "{given:?}: {said}"
        );
        assert!(!said.contains("9999"), "{said}");
    }
}

/// Principals named `..`, `Alice` and `alice` (names a token file allows) each get a folder of
/// their own: the same run file written by each stays theirs, and none lands beside the root.
#[tokio::test]
async fn hostile_principal_names_never_share_or_leave_their_folders() {
    use rmcp::ClientServiceExt;
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().to_str().unwrap();
    let names = ["..", "Alice", "alice", "a.-_"];
    let secrets: Vec<String> = (0..names.len())
        .map(|i| format!("secret-number-{i}-0123456789abcdef"))
        .collect();
    let tokens: String = names.iter().zip(&secrets).map(|(n, s)| format!("{n}={s}\n")).collect();
    let file = home.path().join("tokens");
    std::fs::write(&file, tokens).unwrap();
    let server = HttpServer::start(
        &["--sim", "--workspace", ws, "--tokens-file", file.to_str().unwrap()],
        &[],
        home.path(),
    )
    .await;
    for (name, secret) in names.iter().zip(&secrets) {
        let client = ().serve_with_lifecycle(server.transport(Some(secret)), modern()).await.unwrap();
        let code = format!(
            "await workspace.write('who.txt', {name:?}); console.log((await workspace.list()).map((f) => f.path).join(' '))"
        );
        let run = ok(&call(&client, "script", json!({"operation": "run", "code": code})).await);
        assert_eq!(run["output"], "who.txt\n", "{name} sees only its own file");
        client.cancel().await.unwrap();
    }
    let mut found = Vec::new();
    for entry in walkdir(workspace.path()) {
        if entry.ends_with("who.txt") {
            found.push((std::fs::read_to_string(&entry).unwrap(), entry));
        }
    }
    assert_eq!(found.len(), names.len(), "{found:?}");
    for (who, path) in &found {
        assert!(
            path.starts_with(workspace.path().join("principals")),
            "{}",
            path.display()
        );
        let folder = path
            .strip_prefix(workspace.path().join("principals"))
            .unwrap()
            .iter()
            .next()
            .unwrap();
        assert_eq!(folder.to_str().unwrap(), droidmcp::confine::principal_folder(who));
    }
    server.terminate().await;
}

fn walkdir(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            out.extend(walkdir(&path));
        } else {
            out.push(path);
        }
    }
    out
}
