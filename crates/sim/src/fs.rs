//! The simulated device's small in-memory file system, used by `sync:` and by shell commands.

use std::collections::BTreeMap;

pub const S_IFDIR: u32 = 0o040000;
pub const S_IFREG: u32 = 0o100000;

#[derive(Debug, Clone)]
pub enum Entry {
    File { data: Vec<u8>, mode: u32, mtime: u32 },
    Dir { mtime: u32 },
}

impl Entry {
    /// The full `st_mode`, type bits included.
    pub fn mode(&self) -> u32 {
        match self {
            Entry::File { mode, .. } => S_IFREG | (mode & 0o7777),
            Entry::Dir { .. } => S_IFDIR | 0o771,
        }
    }

    pub fn size(&self) -> u64 {
        match self {
            Entry::File { data, .. } => data.len() as u64,
            Entry::Dir { .. } => 4096,
        }
    }

    pub fn mtime(&self) -> u32 {
        match self {
            Entry::File { mtime, .. } | Entry::Dir { mtime } => *mtime,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FsError {
    #[error("No such file or directory")]
    NotFound,
    #[error("Is a directory")]
    IsDir,
    #[error("Not a directory")]
    NotDir,
    #[error("Directory not empty")]
    NotEmpty,
}

#[derive(Debug, Clone)]
pub struct Fs {
    entries: BTreeMap<String, Entry>,
}

pub fn now_secs() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as u32)
        .unwrap_or(0)
}

/// `/a//b/./c/` → `/a/b/c`; relative paths are taken from `/`.
pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

fn parent(path: &str) -> Option<&str> {
    if path == "/" {
        return None;
    }
    path.rfind('/').map(|i| if i == 0 { "/" } else { &path[..i] })
}

impl Default for Fs {
    fn default() -> Self {
        let mut fs = Fs {
            entries: BTreeMap::new(),
        };
        for dir in [
            "/",
            "/sdcard",
            "/sdcard/Download",
            "/sdcard/Pictures",
            "/data/local/tmp",
            "/system/bin",
            "/dev",
        ] {
            fs.mkdirs(dir);
        }
        fs
    }
}

impl Fs {
    pub fn get(&self, path: &str) -> Option<&Entry> {
        self.entries.get(&normalize(path))
    }

    pub fn read(&self, path: &str) -> Result<&[u8], FsError> {
        match self.get(path) {
            Some(Entry::File { data, .. }) => Ok(data),
            Some(Entry::Dir { .. }) => Err(FsError::IsDir),
            None => Err(FsError::NotFound),
        }
    }

    /// Creates or replaces a file, making missing parent folders as adbd does on push.
    pub fn write(&mut self, path: &str, data: Vec<u8>, mode: u32, mtime: u32) -> Result<(), FsError> {
        let path = normalize(path);
        if matches!(self.entries.get(&path), Some(Entry::Dir { .. })) {
            return Err(FsError::IsDir);
        }
        if let Some(p) = parent(&path) {
            if matches!(self.entries.get(p), Some(Entry::File { .. })) {
                return Err(FsError::NotDir);
            }
            self.mkdirs(p);
        }
        self.entries.insert(
            path,
            Entry::File {
                data,
                mode: mode & 0o7777,
                mtime,
            },
        );
        Ok(())
    }

    pub fn mkdirs(&mut self, path: &str) {
        let path = normalize(path);
        let mut cur = Some(path.as_str());
        let mut missing = Vec::new();
        while let Some(p) = cur {
            if self.entries.contains_key(p) {
                break;
            }
            missing.push(p.to_string());
            cur = parent(p);
        }
        for p in missing {
            self.entries.insert(p, Entry::Dir { mtime: now_secs() });
        }
    }

    pub fn remove(&mut self, path: &str, recursive: bool) -> Result<(), FsError> {
        let path = normalize(path);
        match self.entries.get(&path) {
            None => Err(FsError::NotFound),
            Some(Entry::File { .. }) => {
                self.entries.remove(&path);
                Ok(())
            }
            Some(Entry::Dir { .. }) => {
                let prefix = format!("{}/", path.trim_end_matches('/'));
                let has_children = self.entries.keys().any(|k| k.starts_with(&prefix));
                if has_children && !recursive {
                    return Err(FsError::NotEmpty);
                }
                if !recursive {
                    return Err(FsError::IsDir);
                }
                self.entries.retain(|k, _| k != &path && !k.starts_with(&prefix));
                Ok(())
            }
        }
    }

    /// The direct children of a folder, by name.
    pub fn list(&self, path: &str) -> Result<Vec<(String, &Entry)>, FsError> {
        let path = normalize(path);
        match self.entries.get(&path) {
            None => return Err(FsError::NotFound),
            Some(Entry::File { .. }) => return Err(FsError::NotDir),
            Some(Entry::Dir { .. }) => {}
        }
        let prefix = if path == "/" {
            "/".to_string()
        } else {
            format!("{path}/")
        };
        Ok(self
            .entries
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter(|(k, _)| !k[prefix.len()..].contains('/') && k.len() > prefix.len())
            .map(|(k, e)| (k[prefix.len()..].to_string(), e))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_makes_parents_and_list_shows_direct_children_only() {
        let mut fs = Fs::default();
        fs.write("/sdcard/a/b.txt", b"x".to_vec(), 0o644, 1).unwrap();
        let names: Vec<String> = fs.list("/sdcard").unwrap().into_iter().map(|(n, _)| n).collect();
        assert!(names.contains(&"a".to_string()) && !names.iter().any(|n| n.contains('/')));
        assert_eq!(fs.remove("/sdcard/a", false), Err(FsError::NotEmpty));
        fs.remove("/sdcard/a", true).unwrap();
        assert_eq!(fs.read("/sdcard/a/b.txt"), Err(FsError::NotFound));
    }
}
