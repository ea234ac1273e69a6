//! Per-run workspaces and skills. Each script run gets a folder `runs/<runId>/` in its
//! principal's folder under the server's script root (`--workspace DIR`, else a private temp
//! folder made on first use): the root itself on stdio, `principals/<name>/` over HTTP, so two
//! principals' runs never share a folder. Every tool call's full answer is saved there as
//! `results/NNN-<ns>-<op>.json`, and the script's `workspace.read/write/list` see only that
//! folder and the principal's `skills/` folder. A run's folder lives at most the TTL, is held to
//! a quota, and goes at start (expired ones), on every run's start and every sweep (expired,
//! then the oldest past `max_runs`), on `script clear`, and at shutdown (this server's runs).
//! Every file goes through the one door, `confine`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use android::text::echoed;
use serde::Serialize;
use ulid::Ulid;

use confine::{Folder, relative};

/// How long run folders live, how big each may grow, how many are kept.
#[derive(Debug, Clone)]
pub struct RunLimits {
    pub ttl: Duration,
    pub quota_bytes: u64,
    pub max_runs: usize,
    /// Runs at once on the server (`--script-slots`) and in one session (`--script-session-slots`).
    pub slots: usize,
    pub session_slots: usize,
    /// Saved skills: how many, and their bytes in all (`--skills-max`, `--skills-mib`).
    pub max_skills: usize,
    pub skills_bytes: u64,
    /// What every session's run folders hold together (`--script-runs-mib`).
    pub total_bytes: u64,
    /// Tool calls one run may make (`--script-max-calls`).
    pub max_calls: usize,
    /// Whether a run's `http` may reach the network (`droidmcp replay --allow-network` only).
    pub network: bool,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits {
            ttl: Duration::from_secs(3600),
            quota_bytes: 16 << 20,
            max_runs: 32,
            slots: 4,
            session_slots: 2,
            max_skills: 200,
            skills_bytes: 8 << 20,
            total_bytes: 512 << 20,
            max_calls: 200,
            network: false,
        }
    }
}

/// A run's place: one of its session's slots and one of the server's, let go together when the
/// run's thread ends.
pub struct RunSlot {
    _session: tokio::sync::OwnedSemaphorePermit,
    _server: tokio::sync::OwnedSemaphorePermit,
}

/// The server's run folders and skills.
#[derive(Debug)]
pub struct Runs {
    /// `--workspace`, or None for a private temp folder.
    configured: Option<PathBuf>,
    root: OnceLock<Result<Root, String>>,
    limits: RunLimits,
    /// Runs in progress (never swept) and runs this server made (removed at shutdown).
    active: Mutex<HashSet<String>>,
    mine: Mutex<HashSet<String>>,
    ids: Mutex<ulid::Generator>,
    /// The server's run slots (shared by every session's Runs) and this session's.
    server_slots: Arc<tokio::sync::Semaphore>,
    session_slots: Arc<tokio::sync::Semaphore>,
    /// Bytes the runs of every principal wrote and still keep (shared, like the slots).
    charged: Arc<Mutex<Charged>>,
    /// Whose runs and skills these are: `None` for the server's own (stdio), in the root.
    principal: Option<String>,
}

/// What the server's bound on run folders counts: each run's bytes, by its id, so whoever
/// removes a folder (its principal, another's sweep, the shutdown) gives back what was charged.
#[derive(Debug, Default)]
struct Charged {
    total: u64,
    runs: std::collections::HashMap<String, u64>,
}

#[derive(Debug)]
struct Root {
    dir: Folder,
    /// The private temp folder, when no `--workspace` was given.
    temp: Option<tempfile::TempDir>,
}

/// One live run folder, as `script list` shows it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunInfo {
    pub id: String,
    pub files: usize,
    pub bytes: u64,
    pub age_s: u64,
    pub expires_in_s: u64,
    pub running: bool,
    /// The instance that ran it, when another did (`--state`): its live process and folder are there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
}

impl Runs {
    pub fn new(configured: Option<PathBuf>, limits: RunLimits) -> Runs {
        Runs {
            configured,
            root: OnceLock::new(),
            active: Mutex::new(HashSet::new()),
            mine: Mutex::new(HashSet::new()),
            ids: Mutex::new(ulid::Generator::new()),
            charged: Arc::default(),
            principal: None,
            server_slots: Arc::new(tokio::sync::Semaphore::new(limits.slots.max(1))),
            session_slots: Arc::new(tokio::sync::Semaphore::new(limits.session_slots.max(1))),
            limits,
        }
    }

    /// A principal's runs (over HTTP): the same root, limits, server slots and bound; its own
    /// slots, and its own folder (`principals/<name>/`) for its runs and skills.
    pub fn for_principal(&self, principal: &str) -> Runs {
        let mut runs = Runs::new(self.configured.clone(), self.limits.clone());
        runs.server_slots = self.server_slots.clone();
        runs.charged = self.charged.clone();
        runs.principal = Some(principal.to_string());
        runs
    }

    /// A slot for one run, or why there is none (the session's limit, then the server's).
    pub fn slot(&self) -> Result<RunSlot, String> {
        let session = self.session_slots.clone().try_acquire_owned().map_err(|_| {
            format!(
                "this session already runs {} scripts, its limit (--script-session-slots); wait for one to end, or cancel one",
                self.limits.session_slots
            )
        })?;
        let server = self.server_slots.clone().try_acquire_owned().map_err(|_| {
            format!(
                "{} scripts are already running on this server, its limit (--script-slots); wait for one to end",
                self.limits.slots
            )
        })?;
        Ok(RunSlot {
            _session: session,
            _server: server,
        })
    }

    /// Sweeps on a timer (every minute, or every TTL when shorter) while the runs exist.
    /// Needs a tokio runtime.
    pub fn sweep_on_a_timer(self: &Arc<Self>) {
        let runs = Arc::downgrade(self);
        let every = self.limits.ttl.clamp(Duration::from_secs(1), Duration::from_secs(60));
        tokio::spawn(async move {
            let mut timer = tokio::time::interval(every);
            timer.tick().await;
            loop {
                timer.tick().await;
                let Some(runs) = runs.upgrade() else { break };
                runs.sweep();
            }
        });
    }

    pub fn limits(&self) -> &RunLimits {
        &self.limits
    }

    /// The script root, made on first use: `--workspace` (the person's folder), else a private
    /// temp folder.
    fn root(&self) -> Result<&Folder, String> {
        let root = self.root.get_or_init(|| match &self.configured {
            Some(dir) => Folder::chosen(dir).map(|dir| Root { dir, temp: None }),
            // Made with mode 0700: private to this user.
            None => tempfile::Builder::new()
                .prefix("droidmcp-scripts-")
                .tempdir()
                .map_err(|e| format!("cannot make the scripts' folder: {e}"))
                .and_then(|t| {
                    Ok(Root {
                        dir: Folder::chosen(t.path())?,
                        temp: Some(t),
                    })
                }),
        });
        root.as_ref().map(|r| &r.dir).map_err(Clone::clone)
    }

    /// `--workspace`, when one was given.
    pub fn workspace(&self) -> Option<&Path> {
        self.configured.as_deref()
    }

    /// The principal's folder, holding its `runs/` and `skills/`: the root on stdio,
    /// `principals/<name>/` in it over HTTP; private, made on first use.
    fn home(&self) -> Result<Folder, String> {
        let root = self.root()?;
        match &self.principal {
            None => Ok(root.clone()),
            Some(principal) => root.sub("principals")?.principal(principal),
        }
    }

    /// The principal's folder, holding its `runs/` and `skills/`.
    pub fn folder(&self) -> Result<PathBuf, String> {
        self.home().map(|home| home.path().to_path_buf())
    }

    fn runs_dir(&self) -> Result<Folder, String> {
        self.home()?.sub("runs")
    }

    /// This principal's skills folder, made on first use.
    pub(super) fn skills_dir(&self) -> Result<Folder, String> {
        self.home()?.sub("skills")
    }

    /// This principal's runs folder when it is there, through the door and making nothing: a
    /// server that runs no script leaves no trace, and a link on the way (a planted `runs`) is
    /// refused, so nothing is listed or removed through it.
    fn runs_folder(&self) -> Option<Folder> {
        let root = match (self.root.get(), &self.configured) {
            (Some(Ok(root)), _) => root.dir.clone(),
            // The person's folder, there already: taking it makes nothing.
            (None, Some(configured)) if configured.is_dir() => self.root().ok()?.clone(),
            _ => return None,
        };
        let home = match &self.principal {
            None => root,
            Some(principal) => root
                .find(&["principals".to_string()])
                .ok()??
                .find_principal(principal)
                .ok()??,
        };
        home.find(&["runs".to_string()]).ok()?
    }

    /// A new run's folder; sweeps first.
    pub fn start(self: &Arc<Self>) -> Result<Run, String> {
        self.sweep();
        // Monotonic, so ids sort in the order runs started even within one millisecond.
        let id = self
            .ids
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .generate()
            .map_err(|e| format!("cannot name the run: {e}"))?
            .to_string();
        self.open(id)
    }

    /// The folder of run `id`, made now.
    fn open(self: &Arc<Self>, id: String) -> Result<Run, String> {
        let dir = self.runs_dir()?.sub(&id)?;
        dir.sub("results")?;
        self.active.lock().unwrap_or_else(|p| p.into_inner()).insert(id.clone());
        self.mine.lock().unwrap_or_else(|p| p.into_inner()).insert(id.clone());
        Ok(Run::new(id, dir, self.clone()))
    }

    /// This principal's run folders: (id, created). Anything not named by a run id is left
    /// alone.
    fn folders(&self) -> Vec<(String, SystemTime)> {
        let Some(runs) = self.runs_folder() else {
            return Vec::new();
        };
        runs.folders()
            .into_iter()
            .filter_map(|id| {
                let ulid = Ulid::from_string(&id).ok()?;
                Some((id, ulid.datetime()))
            })
            .collect()
    }

    fn is_active(&self, id: &str) -> bool {
        self.active.lock().unwrap_or_else(|p| p.into_inner()).contains(id)
    }

    /// Whether this server (or, over HTTP, this session) made the run: only those are listed,
    /// cleared and read by id.
    fn is_mine(&self, id: &str) -> bool {
        self.mine.lock().unwrap_or_else(|p| p.into_inner()).contains(id)
    }

    /// Removes expired run folders, then the oldest of ours past `max_runs`; runs in progress
    /// stay. Another server's or session's folder goes only once no run of it can still be
    /// going (the TTL, and at least the longest run time). Returns how many went.
    pub fn sweep(&self) -> usize {
        let now = SystemTime::now();
        let mut folders = self.folders();
        folders.sort_by(|a, b| a.0.cmp(&b.0));
        let mut keep = folders.iter().filter(|(id, ..)| self.is_mine(id)).count();
        let mut removed = 0;
        let foreign_ttl = self.limits.ttl.max(FOREIGN_GRACE);
        for (id, created) in &folders {
            let age = now.duration_since(*created).unwrap_or_default();
            let mine = self.is_mine(id);
            let expired = age > if mine { self.limits.ttl } else { foreign_ttl };
            let surplus = mine && keep > self.limits.max_runs;
            if (expired || surplus) && !self.is_active(id) {
                if self.remove(id).is_ok() {
                    removed += 1;
                }
                if mine {
                    self.mine.lock().unwrap_or_else(|p| p.into_inner()).remove(id);
                    keep -= 1;
                }
            }
        }
        removed
    }

    /// Removes run `id`'s folder (ours or, once expired, another server's of this principal)
    /// and gives back what its run was charged on the server's bound.
    fn remove(&self, id: &str) -> std::io::Result<()> {
        let runs = self.runs_folder().ok_or(std::io::ErrorKind::NotFound)?;
        runs.remove(id)?;
        let mut charged = self.charged.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(bytes) = charged.runs.remove(id) {
            charged.total -= bytes;
        }
        Ok(())
    }

    /// Our live run folders, oldest first.
    pub fn list(&self) -> Vec<RunInfo> {
        let now = SystemTime::now();
        let runs = self.runs_folder();
        let mut folders = self.folders();
        folders.retain(|(id, ..)| self.is_mine(id));
        folders.sort_by(|a, b| a.0.cmp(&b.0));
        folders
            .into_iter()
            .map(|(id, created)| {
                let age = now.duration_since(created).unwrap_or_default();
                let run = runs
                    .as_ref()
                    .and_then(|runs| runs.find(std::slice::from_ref(&id)).ok().flatten());
                let files = run.and_then(|run| run.list(&[]).ok()).unwrap_or_default();
                let (files, bytes) = files.iter().fold((0, 0), |(n, b), (_, size)| (n + 1, b + size));
                RunInfo {
                    running: self.is_active(&id),
                    id,
                    files,
                    bytes,
                    age_s: age.as_secs(),
                    expires_in_s: self.limits.ttl.saturating_sub(age).as_secs(),
                    instance: None,
                }
            })
            .collect()
    }

    /// Removes one run's folder.
    pub fn clear(&self, id: &str) -> Result<(), String> {
        Ulid::from_string(id).map_err(|_| {
            format!(
                "{:?} is not a run id; `script list` shows them (26 letters and digits, as runId in a run's answer)",
                echoed(id)
            )
        })?;
        if self.is_active(id) {
            return Err(format!("run {id} is still running; clear it once it ends"));
        }
        if !self.is_mine(id) {
            return Err(no_run(id));
        }
        self.mine.lock().unwrap_or_else(|p| p.into_inner()).remove(id);
        match self.remove(id) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(no_run(id)),
            Err(e) => Err(format!("could not remove run {id}: {e}")),
        }
    }

    /// Removes every run folder this server made, and a private temp folder whole (called
    /// when the server ends; nothing was made if no script ran).
    pub fn shutdown(&self) {
        let Some(Ok(root)) = self.root.get() else {
            return;
        };
        let mine: Vec<String> = self.mine.lock().unwrap_or_else(|p| p.into_inner()).drain().collect();
        for id in mine {
            let _ = self.remove(&id);
        }
        if root.temp.is_some() {
            let _ = std::fs::remove_dir_all(root.dir.path());
        }
    }

    /// A saved result of a run, for `cache get {id: "<runId>/results/NNN-…json"}`.
    pub fn read_result(&self, reference: &str) -> Result<String, String> {
        let (id, path) = reference.split_once('/').ok_or_else(|| {
            format!(
                "{:?} is not a run result; they look like RUNID/results/001-ui-dump.json",
                echoed(reference)
            )
        })?;
        let run = self.run_folder(id)?;
        let segments = relative(path)?;
        if segments.first().map(String::as_str) != Some("results") {
            return Err(format!(
                "{path:?} is not under results/; only saved results are read by id"
            ));
        }
        run.read(&segments, self.limits.quota_bytes)
    }

    /// A file this principal's run `id` left in its folder (a replay reads its step records).
    pub fn read_run_file(&self, id: &str, path: &str) -> Result<String, String> {
        self.run_folder(id)?.read(&relative(path)?, self.limits.quota_bytes)
    }

    /// The folder of run `id`, when the run is this principal's and its folder is there.
    fn run_folder(&self, id: &str) -> Result<Folder, String> {
        Ulid::from_string(id).map_err(|_| {
            format!(
                "{:?} is not a run id; `script list` shows them",
                android::text::echoed(id)
            )
        })?;
        if !self.is_mine(id) {
            return Err(no_run(id));
        }
        self.runs_folder()
            .and_then(|runs| runs.find(&[id.to_string()]).ok().flatten())
            .ok_or_else(|| no_run(id))
    }
}

/// How old another server's or session's run folder must be before a sweep removes it: past
/// the longest run (`script` allows 600 s), so no run still going loses its folder.
const FOREIGN_GRACE: Duration = Duration::from_secs(660);

fn no_run(id: &str) -> String {
    format!(
        "no run {id} here: it expired, was cleared, or belongs to another session; `script list` shows this session's runs"
    )
}

impl Drop for Runs {
    /// A session (over HTTP) or the server ending takes its runs with it.
    fn drop(&mut self) {
        self.shutdown();
    }
}

mod run;
pub use run::Run;

#[cfg(test)]
mod tests;
