//! The one skip rule every test follows, unit and integration alike: a missing tool or capture
//! prints `SKIPPED: why` and the test passes locally; under `CI=true` it fails instead, so CI
//! can never pass by running nothing. `DROIDMCP_NO_CAPTURES=1` (a CI job without access to the
//! captures, e.g. a fork's) turns only the captures' absence back into a skip.

use std::path::PathBuf;

/// Whether this is a CI run (`CI` set to anything but empty, `false` or `0`).
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Skips (prints why) or, under CI, fails.
pub fn skip_or_fail(reason: &str) {
    if under_ci() {
        panic!("CI=true and {reason}: CI must run this test");
    }
    eprintln!("SKIPPED: {reason}");
}

/// The repository's root (this crate sits in `crates/testkit`).
pub fn repo_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `../shared/device-captures` beside the repository, if present. Absent, it is a skip locally
/// and a failure under CI, unless `DROIDMCP_NO_CAPTURES=1` says this run has none.
pub fn captures_dir() -> Option<PathBuf> {
    let dir = repo_dir().join("../shared/device-captures");
    if dir.is_dir() {
        Some(dir)
    } else if std::env::var("DROIDMCP_NO_CAPTURES").is_ok_and(|v| v == "1") {
        eprintln!("SKIPPED (DROIDMCP_NO_CAPTURES=1): {} is absent", dir.display());
        None
    } else {
        skip_or_fail(&format!("{} is absent", dir.display()));
        None
    }
}
