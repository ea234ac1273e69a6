//! Large-response files (`--workspace DIR`): a cache entry bigger than the budget is also written
//! to DIR as `<cacheId>.json` or `<cacheId>.txt`, for clients that read files. Names come only from
//! our own cache ids, never from user input. Files older than their kind's TTL go at start and
//! on every sweep; over the quota, the oldest go first. Other files in DIR are never touched.
//! Files are written through the one door, `confine`.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::cache::{Data, Entry, parse_id};
use confine::Folder;

#[derive(Debug)]
pub struct Workspace {
    dir: Folder,
    quota_bytes: u64,
}

impl Workspace {
    /// The folder `--workspace` names, made 0700 when it does not exist yet.
    pub fn open(dir: &Path, quota_bytes: u64) -> std::io::Result<Workspace> {
        Ok(Workspace::in_folder(
            Folder::chosen(dir).map_err(std::io::Error::other)?,
            quota_bytes,
        ))
    }

    fn in_folder(dir: Folder, quota_bytes: u64) -> Workspace {
        let workspace = Workspace { dir, quota_bytes };
        workspace.sweep();
        workspace
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A principal's own workspace (HTTP): `DIR/principals/FOLDER` (`confine::principal_folder`),
    /// private, with its own quota, so one principal's big entries never push out another's
    /// files and no file of one sits beside another's.
    pub fn for_principal(&self, principal: &str) -> std::io::Result<Workspace> {
        let dir = self
            .dir
            .sub("principals")
            .and_then(|all| all.principal(principal))
            .map_err(std::io::Error::other)?;
        Ok(Workspace::in_folder(dir, self.quota_bytes))
    }

    /// Writes the entry whole; returns where. The name is the entry's id, checked again here.
    /// An entry bigger than the whole quota is not written (the sweep would delete it, and every
    /// other file with it, while the answer still named it): the error says so.
    pub fn write(&self, entry: &Entry) -> std::io::Result<PathBuf> {
        parse_id(&entry.id).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
        if entry.served_bytes as u64 > self.quota_bytes {
            return Err(std::io::Error::other(format!(
                "not written: the entry is {} bytes, over the workspace quota of {} (--workspace-mib); cache get and resources/read serve it",
                entry.served_bytes, self.quota_bytes
            )));
        }
        let ext = match entry.data {
            Data::Text(_) => "txt",
            _ => "json",
        };
        // 0600: an answer can hold what only its principal should read.
        let path = self
            .dir
            .write(&[format!("{}.{ext}", entry.id)], entry.data.full_text().as_bytes())
            .map_err(std::io::Error::other)?;
        self.sweep_keeping(Some(&path));
        Ok(path)
    }

    /// Our files: (path, cache id, modified, size). Anything else in the folder is left alone.
    fn files(&self) -> Vec<(PathBuf, String, SystemTime, u64)> {
        let Ok(read) = std::fs::read_dir(self.dir.path()) else {
            return Vec::new();
        };
        read.filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let id = name
                    .strip_suffix(".txt")
                    .or_else(|| name.strip_suffix(".json"))?
                    .to_string();
                parse_id(&id).ok()?;
                let meta = e.metadata().ok()?;
                meta.is_file()
                    .then(|| (e.path(), id, meta.modified().unwrap_or(SystemTime::now()), meta.len()))
            })
            .collect()
    }

    /// Deletes our files older than their kind's TTL, then the oldest until within the quota,
    /// and the temp files a write left behind (`confine::Folder::remove_leftovers`).
    pub fn sweep(&self) {
        self.sweep_keeping(None);
    }

    /// The sweep, never deleting `keep` (the file the answer being made names).
    fn sweep_keeping(&self, keep: Option<&Path>) {
        let now = SystemTime::now();
        let mut kept = Vec::new();
        for (path, id, modified, size) in self.files() {
            let ttl = parse_id(&id).map(|(kind, _)| kind.ttl()).unwrap_or_default();
            if now.duration_since(modified).unwrap_or_default() > ttl && Some(path.as_path()) != keep {
                remove(&path);
            } else {
                kept.push((path, modified, size));
            }
        }
        kept.sort_by_key(|(_, modified, _)| *modified);
        let mut total: u64 = kept.iter().map(|(_, _, size)| size).sum();
        for (path, _, size) in kept {
            if total <= self.quota_bytes {
                break;
            }
            if Some(path.as_path()) == keep {
                continue;
            }
            remove(&path);
            total -= size;
        }
        // A write in progress is seconds old at most; older temp files are leftovers.
        self.dir.remove_leftovers(PARTIAL_AGE);
    }
}

const PARTIAL_AGE: std::time::Duration = std::time::Duration::from_secs(60);

fn remove(path: &Path) {
    if let Err(e) = std::fs::remove_file(path) {
        tracing::warn!(target: "droidmcp::context::workspace", path = %path.display(), "could not remove a workspace file: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::{Cache, Kind, Limits};
    use std::time::Duration;

    fn age(path: &Path, by: Duration) {
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - by).unwrap();
    }

    #[test]
    fn files_are_named_by_id_cleaned_by_age_and_quota_and_strangers_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let stranger = dir.path().join("notes.txt");
        std::fs::write(&stranger, "mine").unwrap();
        let ws = Workspace::open(dir.path(), 10_000).unwrap();
        let cache = Cache::new(Limits::default());

        let log = cache.put(Kind::Logcat, "log", Data::Text("x".repeat(4000)));
        let log_path = ws.write(&log).unwrap();
        assert_eq!(log_path, ws.dir().join(format!("{}.txt", log.id)));
        assert_eq!(std::fs::read_to_string(&log_path).unwrap().len(), 4000);
        let props = cache.put(Kind::Props, "props", Data::Map([("a".into(), "b".into())].into()));
        let props_path = ws.write(&props).unwrap();
        assert!(props_path.ends_with(format!("{}.json", props.id)));

        // Past its kind's TTL (30 min for logs), a file goes at the next sweep.
        age(&log_path, Duration::from_secs(31 * 60));
        ws.sweep();
        assert!(!log_path.exists() && props_path.exists());

        // Over the quota, the oldest goes first.
        let a = ws
            .write(&cache.put(Kind::Shell, "a", Data::Text("a".repeat(6000))))
            .unwrap();
        age(&a, Duration::from_secs(60));
        let b = ws
            .write(&cache.put(Kind::Shell, "b", Data::Text("b".repeat(6000))))
            .unwrap();
        assert!(!a.exists() && b.exists(), "a was older");
        assert!(stranger.exists(), "files that are not ours stay");

        // Bigger than the whole quota: not written, and nothing else is deleted for it.
        let huge = cache.put(Kind::Shell, "huge", Data::Text("h".repeat(20_000)));
        let refused = ws.write(&huge).unwrap_err().to_string();
        assert!(refused.contains("over the workspace quota"), "{refused}");
        assert!(b.exists() && props_path.exists(), "the other files stay");

        // A temp file a crashed write left is swept once it is a minute old.
        let partial = ws
            .dir()
            .join(format!(".{}.txt.01JBV6ZQ000000000000000000.partial", huge.id));
        std::fs::write(&partial, "half").unwrap();
        let theirs = ws.dir().join(".notes.partial");
        std::fs::write(&theirs, "theirs").unwrap();
        age(&theirs, Duration::from_secs(120));
        ws.sweep();
        assert!(partial.exists(), "a write may be in progress");
        age(&partial, Duration::from_secs(120));
        ws.sweep();
        assert!(!partial.exists(), "a leftover");
        assert!(theirs.exists(), "a stranger's file");
        assert!(
            std::fs::read_dir(ws.dir())
                .unwrap()
                .all(|e| e.unwrap().path().starts_with(ws.dir()))
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_principals_files_are_its_own_folder_and_readable_by_this_user_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let root = Workspace::open(dir.path(), 100_000).unwrap();
        let alice = root.for_principal("alice").unwrap();
        let bob = root.for_principal("bob").unwrap();
        let cache = Cache::new(Limits::default());
        let a = alice
            .write(&cache.put(Kind::Shell, "a", Data::Text("a".repeat(6000))))
            .unwrap();
        let b = bob
            .write(&cache.put(Kind::Shell, "b", Data::Text("b".repeat(6000))))
            .unwrap();
        assert_ne!(a.parent(), b.parent());
        assert_eq!(a.parent().unwrap(), root.dir().join("principals").join("alice"));
        assert_eq!(std::fs::metadata(&a).unwrap().permissions().mode() & 0o777, 0o600);
        let folder = a.parent().unwrap();
        assert_eq!(std::fs::metadata(folder).unwrap().permissions().mode() & 0o777, 0o700);
        assert!(root.for_principal("").is_err());
        for odd in [".", "..", "a/b"] {
            let theirs = root.for_principal(odd).unwrap();
            assert!(theirs.dir().starts_with(root.dir().join("principals")), "{odd:?}");
            assert_ne!(theirs.dir(), root.dir().join("principals"), "{odd:?}");
        }
    }
}
