//! Unit tests of `script::runs`.

use super::*;

fn runs(dir: &Path, limits: RunLimits) -> Arc<Runs> {
    Arc::new(Runs::new(Some(dir.to_path_buf()), limits))
}

#[test]
fn paths_outside_the_run_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = runs(tmp.path(), RunLimits::default());
    let run = runs.start().unwrap();
    assert!(
        run.write("../escape.txt", "x")
            .unwrap_err()
            .contains("not a path inside the folder")
    );
    assert!(run.read("../../../etc/passwd").is_err());
    assert!(run.write("results/fake.json", "{}").is_err(), "results/ is the host's");
    assert!(!tmp.path().join("escape.txt").exists());
}

#[cfg(unix)]
#[test]
fn links_are_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret").unwrap();
    let runs = runs(&tmp.path().join("ws"), RunLimits::default());
    let run = runs.start().unwrap();
    std::os::unix::fs::symlink(&outside, run.dir().join("out")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), run.dir().join("s.txt")).unwrap();
    assert!(run.read("out/secret.txt").unwrap_err().contains("symbolic link"));
    assert!(run.read("s.txt").unwrap_err().contains("symbolic link"));
    assert!(run.write("out/new.txt", "x").unwrap_err().contains("symbolic link"));
    // A link where the file would go is refused and left as it is, never written through.
    assert!(run.write("s.txt", "mine").unwrap_err().contains("symbolic link"));
    assert_eq!(std::fs::read_to_string(outside.join("secret.txt")).unwrap(), "secret");
    assert!(
        std::fs::symlink_metadata(run.dir().join("s.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(!run.list(None).unwrap().iter().any(|(p, _)| p.starts_with("out")));
}

#[test]
fn a_run_keeps_to_its_quota() {
    let tmp = tempfile::tempdir().unwrap();
    let limits = RunLimits {
        quota_bytes: 1000,
        ..RunLimits::default()
    };
    let run = runs(tmp.path(), limits).start().unwrap();
    run.write("a.txt", &"a".repeat(600)).unwrap();
    let err = run.write("b.txt", &"b".repeat(600)).unwrap_err();
    assert!(err.contains("quota"), "{err}");
    run.write("a.txt", &"a".repeat(900)).unwrap();
    assert_eq!(
        run.save_result(0, "ui", "dump", &serde_json::json!({"x": "y".repeat(500)})),
        None
    );
    assert!(run.over_quota());
    assert!(
        run.unsaved(0).is_some_and(|why| why.contains("quota")),
        "the call says why"
    );
    assert_eq!(run.unsaved(1), None);
}

#[test]
fn all_sessions_runs_together_stay_within_the_servers_bound() {
    let tmp = tempfile::tempdir().unwrap();
    let limits = RunLimits {
        total_bytes: 1500,
        ..RunLimits::default()
    };
    let first = runs(tmp.path(), limits);
    let second = Arc::new(first.for_principal("second"));
    let a = first.start().unwrap();
    a.write("a.txt", &"a".repeat(1000)).unwrap();
    let b = second.start().unwrap();
    let refused = b.write("b.txt", &"b".repeat(1000)).unwrap_err();
    assert!(refused.contains("--script-runs-mib"), "{refused}");
    assert_eq!(
        b.save_result(0, "ui", "dump", &serde_json::json!({"x": "y".repeat(800)})),
        None
    );
    assert!(b.unsaved(0).is_some_and(|why| why.contains("server's run folders")));
    // A cleared run gives its bytes back.
    let id = a.id.clone();
    drop(a);
    first.clear(&id).unwrap();
    b.write("b.txt", &"b".repeat(1000)).unwrap();
}

#[test]
fn expired_and_surplus_runs_are_swept_but_running_ones_stay() {
    let tmp = tempfile::tempdir().unwrap();
    let limits = RunLimits {
        ttl: Duration::from_millis(300),
        max_runs: 2,
        ..RunLimits::default()
    };
    let runs = runs(tmp.path(), limits);
    let running = runs.start().unwrap();
    let done: Vec<String> = (0..3).map(|_| runs.start().unwrap().id.clone()).collect();
    // Starting the third swept the oldest finished one past max_runs (2).
    let live: Vec<String> = runs.list().into_iter().map(|r| r.id).collect();
    assert!(live.contains(&running.id) && !live.contains(&done[0]), "{live:?}");
    std::thread::sleep(Duration::from_millis(400));
    assert!(runs.sweep() >= 2);
    let live: Vec<String> = runs.list().into_iter().map(|r| r.id).collect();
    assert_eq!(
        live,
        vec![running.id.clone()],
        "expired ones went; the running one stayed"
    );
    assert!(runs.clear(&running.id).unwrap_err().contains("still running"));
    let id = running.id.clone();
    drop(running);
    runs.clear(&id).unwrap();
    assert!(runs.clear(&id).unwrap_err().contains("no run"));
    assert!(runs.clear("../x").unwrap_err().contains("not a run id"));
}

#[test]
fn shutdown_removes_this_servers_runs_and_a_temp_root_goes_with_it() {
    let runs = Arc::new(Runs::new(None, RunLimits::default()));
    let run = runs.start().unwrap();
    let dir = run.dir().to_path_buf();
    run.write("x.txt", "x").unwrap();
    let root = dir.parent().unwrap().parent().unwrap().to_path_buf();
    drop(run);
    runs.shutdown();
    assert!(!dir.exists());
    assert!(!root.exists(), "the private temp folder goes with the server");

    let tmp = tempfile::tempdir().unwrap();
    let kept = self::runs(tmp.path(), RunLimits::default());
    kept.save_skill("keep", "1", "").unwrap();
    let run = kept.start().unwrap();
    let dir = run.dir().to_path_buf();
    drop(run);
    kept.shutdown();
    assert!(!dir.exists(), "this server's runs go");
    assert!(tmp.path().join("skills/keep.js").exists(), "skills in --workspace stay");
}

#[test]
fn a_run_folder_a_sweep_removes_gives_its_bytes_back_to_the_bound_all_principals_share() {
    let tmp = tempfile::tempdir().unwrap();
    let limits = RunLimits {
        total_bytes: 1500,
        ..RunLimits::default()
    };
    let server = runs(tmp.path(), limits);
    let alice = Arc::new(server.for_principal("alice"));
    let bob = Arc::new(server.for_principal("bob"));
    // A finished run of Alice's from two hours ago: past its TTL.
    let old = ulid::Ulid::from_datetime(std::time::SystemTime::now() - Duration::from_secs(7200));
    let run = alice.open(old.to_string()).unwrap();
    run.write("a.txt", &"a".repeat(1000)).unwrap();
    let dir = run.dir().to_path_buf();
    drop(run);
    assert!(dir.starts_with(tmp.path().join("principals/alice/runs")), "{dir:?}");
    assert_eq!(bob.sweep(), 0, "Bob's sweep sees only his own folder");
    assert!(dir.exists());
    assert_eq!(alice.sweep(), 1, "Alice's sweep removed her old folder");
    // Its 1000 bytes went back to the bound all principals share: 1000 more fit under 1500.
    let again = bob.start().unwrap();
    again.write("b.txt", &"b".repeat(1000)).unwrap();
    alice.shutdown();
    let third = alice.start().unwrap();
    third.write("c.txt", &"c".repeat(400)).unwrap();
}
