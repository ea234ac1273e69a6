//! Files a script names, kept inside their folder: names are checked before a path is made
//! from them, and symbolic links are never followed.

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

/// Writes `base/segments…` through a temp file and a rename (which replaces a link rather than
/// following it); parent folders are made, and refused when any is a link.
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
    std::fs::write(&partial, text).map_err(|e| format!("cannot write {shown:?}: {e}"))?;
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
