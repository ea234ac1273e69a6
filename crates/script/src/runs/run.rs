//! One run's folder while the run lasts: its saved answers (`results/`), the script's
//! `workspace.read/write/list`, and its quota, counted against the server's bound too.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Runs;
use confine::{Folder, relative};

/// One run's folder while the run lasts.
pub struct Run {
    pub id: String,
    dir: Folder,
    runs: Arc<Runs>,
    used: AtomicU64,
    over_quota: std::sync::atomic::AtomicBool,
    /// The calls whose answers could not be saved, and why.
    unsaved: std::sync::Mutex<std::collections::BTreeMap<usize, String>>,
}

impl Drop for Run {
    fn drop(&mut self) {
        self.runs
            .active
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.id);
    }
}

impl Run {
    pub(super) fn new(id: String, dir: Folder, runs: Arc<Runs>) -> Run {
        Run {
            id,
            dir,
            runs,
            used: AtomicU64::new(0),
            over_quota: std::sync::atomic::AtomicBool::new(false),
            unsaved: Default::default(),
        }
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Whether a result was left unsaved because the run reached its quota.
    pub fn over_quota(&self) -> bool {
        self.over_quota.load(Ordering::SeqCst)
    }

    /// Why call `index`'s answer was not saved, if it was not.
    pub fn unsaved(&self, index: usize) -> Option<String> {
        self.unsaved
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&index)
            .cloned()
    }

    fn not_saved(&self, index: usize, why: String) {
        self.unsaved
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(index, why);
    }

    /// Saves call `index`'s full answer as `results/NNN-<ns>-<op>.json`; returns its path
    /// relative to the run, or None when it would pass the quota.
    pub fn save_result(&self, index: usize, tool: &str, operation: &str, answer: &serde_json::Value) -> Option<String> {
        let ns = tool.strip_prefix("adb-").unwrap_or(tool);
        let name = format!("{:03}-{ns}-{operation}.json", index + 1);
        let name: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || ".-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let text = answer.to_string();
        if let Err(why) = self.reserve(text.len() as u64) {
            self.over_quota.store(true, Ordering::SeqCst);
            self.not_saved(index, why);
            return None;
        }
        if let Err(e) = self.dir.write(&["results".to_string(), name.clone()], text.as_bytes()) {
            self.not_saved(index, format!("writing it failed: {e}"));
            return None;
        }
        Some(format!("results/{name}"))
    }

    /// Counts `bytes` against the run's quota and the server's bound for all run folders; when
    /// they do not fit, nothing is counted and the reason is given.
    fn reserve(&self, bytes: u64) -> Result<(), String> {
        let limits = &self.runs.limits;
        let run_fits = self
            .used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                (used + bytes <= limits.quota_bytes).then_some(used + bytes)
            })
            .is_ok();
        if !run_fits {
            return Err(format!("the run's quota of {} MiB is used", limits.quota_bytes >> 20));
        }
        let mut charged = self.runs.charged.lock().unwrap_or_else(|p| p.into_inner());
        if charged.total + bytes > limits.total_bytes {
            self.used.fetch_sub(bytes, Ordering::SeqCst);
            return Err(format!(
                "the server's run folders hold {} MiB, their bound (--script-runs-mib); script clear old runs",
                limits.total_bytes >> 20
            ));
        }
        charged.total += bytes;
        *charged.runs.entry(self.id.clone()).or_default() += bytes;
        Ok(())
    }

    /// `workspace.read(path)`: a file of this run, or `skills/<name>.js`.
    pub fn read(&self, path: &str) -> Result<String, String> {
        let segments = relative(path)?;
        let limit = self.runs.limits.quota_bytes;
        match segments.split_first() {
            Some((skills, [])) if skills == "skills" => Err("name a file, e.g. skills/count-apps.js".into()),
            Some((skills, rest)) if skills == "skills" => self.runs.skills_dir()?.read(rest, limit),
            _ => self.dir.read(&segments, limit),
        }
    }

    /// `workspace.write(path, text)`: a file of this run, outside `results/` and `skills/`.
    pub fn write(&self, path: &str, text: &str) -> Result<usize, String> {
        let segments = relative(path)?;
        if matches!(segments[0].as_str(), "results" | "skills") {
            return Err(format!(
                "{path:?}: results/ holds the tool answers and skills/ is written by skills.save; write elsewhere in the run's folder"
            ));
        }
        let old = self.dir.size_of(&segments);
        let grow = (text.len() as u64).saturating_sub(old);
        if let Err(why) = self.reserve(grow) {
            return Err(format!(
                "writing {path:?} ({} bytes) would pass a bound: {why}",
                text.len()
            ));
        }
        self.dir.write(&segments, text.as_bytes())?;
        Ok(text.len())
    }

    /// `workspace.list(dir?)`: this run's files (or `skills`), with sizes.
    pub fn list(&self, dir: Option<&str>) -> Result<Vec<(String, u64)>, String> {
        match dir.filter(|d| !d.is_empty() && *d != ".") {
            None => self.dir.list(&[]),
            Some(dir) => {
                let segments = relative(dir)?;
                let listed = if segments[0] == "skills" {
                    self.runs.skills_dir()?.list(&segments[1..])?
                } else {
                    self.dir.list(&segments)?
                };
                let prefix = segments.join("/");
                Ok(listed.into_iter().map(|(p, n)| (format!("{prefix}/{p}"), n)).collect())
            }
        }
    }
}
