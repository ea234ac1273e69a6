//! The one home of path confinement: files a script names, kept inside their folder (names are
//! checked before a path is made from them, and symbolic links are never followed; files are
//! written 0600; `private_dir` makes or checks a folder only this user can open), the principal's
//! folder name, and `within`, a whole path (an APK to install) kept under the allowed folders.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use ulid::Ulid;

/// Parts a workspace path may have.
pub const MAX_PATH_SEGMENTS: usize = 4;

/// A path the script named, as checked segments: relative, at most four parts, each made of
/// letters, digits, `_`, `-` and `.` and not starting with a dot (so no `..` and no hidden
/// files), at most 100 chars each.
pub fn checked_path(path: &str) -> Result<Vec<String>, String> {
    let segments: Vec<&str> = path.split('/').collect();
    let bad = |why: &str| {
        Err(format!(
            "{path:?} is not a workspace path: {why}. Use names like notes.txt or data/screen-1.json (letters, digits, _ - ., at most {MAX_PATH_SEGMENTS} parts)"
        ))
    };
    if path.is_empty() {
        return bad("it is empty");
    }
    if path.starts_with('/') {
        return bad("it is absolute; paths are relative to the run's folder");
    }
    for segment in &segments {
        if segment.is_empty() || segment.len() > 100 {
            return bad("a part is empty or over 100 chars");
        }
        if segment.starts_with('.') {
            return bad("a part starts with a dot (.. and hidden names are not allowed)");
        }
        if !segment.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) {
            return bad("a part has a character other than letters, digits, _ - .");
        }
    }
    if segments.len() > MAX_PATH_SEGMENTS {
        return bad("it is too deep");
    }
    Ok(segments.into_iter().map(str::to_string).collect())
}

/// A path given whole (an APK to install) as it really is, links followed, when that is under
/// one of `dirs` (each resolved the same way); `None` whether it is elsewhere or does not exist,
/// so a refusal tells nothing about the host's files.
pub fn within(path: &Path, dirs: &[std::path::PathBuf]) -> Option<std::path::PathBuf> {
    let real = std::fs::canonicalize(path).ok()?;
    dirs.iter().any(|dir| real.starts_with(dir)).then_some(real)
}

/// Refuses a path that is a symbolic link (which could lead out of the folder).
pub fn refuse_link(path: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(format!(
            "{} is a symbolic link; links are not followed",
            path.file_name().unwrap_or_default().to_string_lossy()
        )),
        _ => Ok(()),
    }
}

/// Reads `base/segments…`, refusing links at every step and files over `max_bytes`.
pub fn read_confined(base: &Path, segments: &[String], max_bytes: u64) -> Result<String, String> {
    let shown = segments.join("/");
    if segments.is_empty() {
        return Err("name a file, e.g. skills/count-apps.js".to_string());
    }
    let mut path = base.to_path_buf();
    for segment in segments {
        path.push(segment);
        refuse_link(&path)?;
    }
    let meta = std::fs::symlink_metadata(&path).map_err(|_| format!("no file {shown:?}"))?;
    if !meta.is_file() {
        return Err(format!("{shown:?} is a folder; workspace.list shows what is in it"));
    }
    if meta.len() > max_bytes {
        return Err(format!(
            "{shown:?} is {} bytes, over the {max_bytes}-byte read limit",
            meta.len()
        ));
    }
    std::fs::read_to_string(&path).map_err(|e| format!("cannot read {shown:?}: {e}"))
}

/// Makes `path` a folder only this user can open (mode 0700), or checks the one there: a folder,
/// not a link, owned by this user (in a shared folder such as /tmp another user may have made
/// it first); a wider mode is narrowed to 0700.
pub fn private_dir(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    match std::fs::DirBuilder::new().mode(0o700).create(path) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot make the folder {}: {e}", path.display())),
    }
    refuse_link(path)?;
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !meta.is_dir() {
        return Err(format!("{} is not a folder: remove it or move it away", path.display()));
    }
    // SAFETY: getuid has no preconditions and cannot fail.
    let me = unsafe { libc::getuid() };
    if meta.uid() != me {
        return Err(format!(
            "{} belongs to another user (uid {}, not {me}): remove it, or give droidmcp a folder of your own (--workspace)",
            path.display(),
            meta.uid()
        ));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("cannot make {} private: {e}", path.display()))?;
    }
    Ok(())
}

/// Writes `base/segments…` through a temp file of mode 0600 and a rename (which replaces a link
/// rather than following it); parent folders are made, and refused when any is a link.
pub fn write_confined(base: &Path, segments: &[String], text: &str) -> Result<(), String> {
    let shown = segments.join("/");
    let (file, parents) = segments.split_last().ok_or("name a file")?;
    let mut dir = base.to_path_buf();
    for segment in parents {
        dir.push(segment);
        refuse_link(&dir)?;
        match std::fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => {}
            Err(e) => return Err(format!("cannot make the folder for {shown:?}: {e}")),
        }
    }
    let target = dir.join(file);
    if target.is_dir() {
        return Err(format!("{shown:?} is a folder"));
    }
    let partial = dir.join(format!(".{file}.{}.partial", Ulid::generate()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&partial)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(format!("cannot write {shown:?}: {e}"));
    }
    std::fs::rename(&partial, &target).map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        format!("cannot write {shown:?}: {e}")
    })
}

/// Files under `dir` (relative paths, sizes), links and hidden files skipped, sorted.
pub fn walk(dir: &Path) -> Vec<(String, u64)> {
    fn visit(dir: &Path, prefix: &str, depth: usize, out: &mut Vec<(String, u64)>) {
        let Ok(read) = std::fs::read_dir(dir) else { return };
        for entry in read.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else { continue };
            if name.starts_with('.') || kind.is_symlink() {
                continue;
            }
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            if kind.is_dir() && depth < MAX_PATH_SEGMENTS {
                visit(&entry.path(), &path, depth + 1, out);
            } else if kind.is_file() {
                out.push((path, entry.metadata().map(|m| m.len()).unwrap_or(0)));
            }
        }
    }
    let mut out = Vec::new();
    visit(dir, "", 1, &mut out);
    out.sort();
    out
}

/// A principal's folder name (skills, run folders, exported flows): its name with every byte but
/// a-z, 0-9, `_` and `-` as `%XX`, so no name (`..`, `Alice` beside `alice` on a case-blind disk)
/// can lead elsewhere or collide with another.
pub fn principal_folder(principal: &str) -> String {
    principal
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_folder_is_made_0700_narrowed_when_wider_and_refused_when_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &Path| std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777;
        let made = dir.path().join("made");
        private_dir(&made).unwrap();
        assert_eq!(mode(&made), 0o700);
        std::fs::set_permissions(&made, std::fs::Permissions::from_mode(0o755)).unwrap();
        private_dir(&made).unwrap();
        assert_eq!(mode(&made), 0o700);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&made, &link).unwrap();
        assert!(private_dir(&link).unwrap_err().contains("symbolic link"));
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        assert!(private_dir(&file).unwrap_err().contains("not a folder"));
        write_confined(&made, &["a.txt".to_string()], "x").unwrap();
        assert_eq!(mode(&made.join("a.txt")), 0o600);
    }

    #[test]
    fn only_plain_relative_names_pass() {
        for bad in [
            "../x",
            "a/../../x",
            "/etc/passwd",
            "",
            ".hidden",
            "a//b",
            "a/b/c/d/e",
            "a\\b",
            "~/x",
            "x y",
        ] {
            assert!(checked_path(bad).is_err(), "{bad:?} was accepted");
        }
        for good in ["notes.txt", "data/screen-1.json", "skills/count.js", "a/b/c/d"] {
            assert!(checked_path(good).is_ok(), "{good:?} was refused");
        }
        assert!(
            checked_path("../../../etc/passwd")
                .unwrap_err()
                .contains("starts with a dot")
        );
        assert!(checked_path("/etc/passwd").unwrap_err().contains("absolute"));
    }

    #[test]
    fn a_principal_is_one_plain_folder_name_and_two_never_share_one() {
        use super::principal_folder;
        assert_eq!(principal_folder("alice"), "alice");
        assert_eq!(principal_folder("ci-bot_2"), "ci-bot_2");
        assert_eq!(principal_folder(".."), "%2E%2E");
        assert_eq!(principal_folder("a.b"), "a%2Eb");
        assert_ne!(principal_folder("a.b"), principal_folder("a%2Eb"));
        assert_ne!(principal_folder("Alice"), principal_folder("alice"));
    }
}
