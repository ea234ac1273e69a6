//! Large-response files (`--workspace DIR`): a cache entry bigger than the budget is also written
//! to DIR as `<cacheId>.json` or `<cacheId>.txt`, for clients that read files. Names come only from
//! our own cache ids, never from user input. Files older than their kind's TTL go at start and
//! on every sweep; over the quota, the oldest go first. Other files in DIR are never touched.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::cache::{Data, Entry, parse_id};

#[derive(Debug)]
pub struct Workspace {
    dir: PathBuf,
    quota_bytes: u64,
}

impl Workspace {
    pub fn open(dir: &Path, quota_bytes: u64) -> std::io::Result<Workspace> {
        std::fs::create_dir_all(dir)?;
        let workspace = Workspace {
            dir: dir.canonicalize()?,
            quota_bytes,
        };
        workspace.sweep();
        Ok(workspace)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A principal's own workspace (HTTP): `DIR/principals/FOLDER`, made 0700, with its own
    /// quota, so one principal's big entries never push out another's files and no file of one
    /// sits beside another's. `folder` is a plain folder name the caller made from the principal
    /// (`script::confine::principal_folder`).
    pub fn for_principal(&self, folder: &str) -> std::io::Result<Workspace> {
        if folder.is_empty() || folder.contains(['/', '\\']) || folder == "." || folder == ".." {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{folder:?} is not a plain folder name"),
            ));
        }
        let dir = self.dir.join("principals").join(folder);
        std::fs::create_dir_all(&dir)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
        }
        Workspace::open(&dir, self.quota_bytes)
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
        let path = self.dir.join(format!("{}.{ext}", entry.id));
        let partial = self.dir.join(format!(".{}.{ext}.partial", entry.id));
        // 0600: an answer can hold what only its principal should read.
        let mut file = std::fs::OpenOptions::new();
        file.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut file, 0o600);
        std::io::Write::write_all(&mut file.open(&partial)?, entry.data.full_text().as_bytes())?;
        std::fs::rename(&partial, &path)?;
        self.sweep_keeping(Some(&path));
        Ok(path)
    }

    /// Our files: (path, cache id, modified, size). Anything else in the folder is left alone.
    fn files(&self) -> Vec<(PathBuf, String, SystemTime, u64)> {
        let Ok(read) = std::fs::read_dir(&self.dir) else {
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
    /// and `.partial` files a write left behind.
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
        // A write in progress is seconds old at most; older partial files are leftovers.
        for (path, modified) in self.partial_files() {
            if now.duration_since(modified).unwrap_or_default() > PARTIAL_AGE {
                remove(&path);
            }
        }
    }

    /// `.ID.EXT.partial` files (ours by their id), with when they were last written.
    fn partial_files(&self) -> Vec<(PathBuf, SystemTime)> {
        let Ok(read) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        read.filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let stem = name.strip_prefix('.')?.strip_suffix(".partial")?;
                let id = stem.strip_suffix(".txt").or_else(|| stem.strip_suffix(".json"))?;
                parse_id(id).ok()?;
                let meta = e.metadata().ok()?;
                meta.is_file()
                    .then(|| (e.path(), meta.modified().unwrap_or(SystemTime::now())))
            })
            .collect()
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

        // A partial file a crashed write left is swept once it is a minute old.
        let partial = ws.dir().join(format!(".{}.txt.partial", huge.id));
        std::fs::write(&partial, "half").unwrap();
        ws.sweep();
        assert!(partial.exists(), "a write may be in progress");
        age(&partial, Duration::from_secs(120));
        ws.sweep();
        assert!(!partial.exists(), "a leftover");
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
        for bad in ["", ".", "..", "a/b"] {
            assert!(root.for_principal(bad).is_err(), "{bad:?}");
        }
    }
}
