//! The cache behind every `cacheId`: an LRU of full results that responses only summarise.
//! Ids are `KIND-ULID` (`props-01J…`); the ULID's timestamp tells an expired id from an unknown one
//! even after the entry is gone. Entries leave by count (LRU), by age (TTL per kind) and by size
//! (a byte bound, oldest use first).

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use lru::LruCache;
use serde::Serialize;
use ulid::Ulid;

pub use super::data::{Data, Kind};

#[derive(Debug, Clone)]
pub struct Entry {
    pub id: String,
    pub kind: Kind,
    /// One line on what this is, e.g. "getprop of emulator-5554".
    pub about: String,
    pub data: Data,
    pub created: SystemTime,
    /// Approximate heap size, for the byte bound.
    pub bytes: usize,
    /// Bytes `resources/read` serves (`Data::full_text`): the `size` resources declare.
    pub served_bytes: usize,
    /// Where `--workspace` wrote it, when it is bigger than the budget.
    pub file: Option<std::path::PathBuf>,
    /// Why `--workspace` did not write it, when it should have.
    pub file_note: Option<String>,
}

impl Entry {
    pub fn expires(&self) -> SystemTime {
        self.created + self.kind.ttl()
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CacheError {
    #[error("`{0}` is not a cache id; ids look like props-01JD3V6M8Q9ZK4X2B7T5R1N0PA, as returned in `cacheId`")]
    Malformed(String),
    #[error(
        "cache id `{id}` expired {ago_minutes} min ago (entries of this kind live {ttl_minutes} min); run {refresh} again for fresh data"
    )]
    Expired {
        id: String,
        ago_minutes: u64,
        ttl_minutes: u64,
        refresh: &'static str,
    },
    #[error(
        "cache id `{id}` was evicted to stay within the cache's bounds (--cache-mib, --sessions-cache-mib); run {refresh} again for fresh data"
    )]
    Evicted { id: String, refresh: &'static str },
    #[error(
        "cache id `{id}` is unknown to this client: an id is served only to the client (over HTTP, the token) it was made for; run {refresh} again for fresh data"
    )]
    Unknown { id: String, refresh: &'static str },
    #[error("cache id `{id}` went with this client's earlier state: {why}; run {refresh} again for fresh data")]
    Forgotten {
        id: String,
        why: String,
        refresh: &'static str,
    },
    #[error(
        "cache id `{id}` was made by an earlier run of the server (this one started {started_minutes} min ago); run {refresh} again for fresh data"
    )]
    EarlierRun {
        id: String,
        started_minutes: u64,
        refresh: &'static str,
    },
    #[error("`{given}` is not quite an id: the entry is `{id}` ({why}); ids are used exactly as returned")]
    NearMiss {
        given: String,
        id: String,
        why: &'static str,
    },
}

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_entries: usize,
    pub max_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_entries: 256,
            max_bytes: 64 * 1024 * 1024,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    pub entries: usize,
    pub bytes: usize,
    pub max_entries: usize,
    pub max_bytes: usize,
    pub hits: u64,
    pub misses: u64,
    pub evicted_for_count: u64,
    pub evicted_for_size: u64,
    pub expired: u64,
}

#[derive(Debug)]
struct Inner {
    entries: LruCache<String, Arc<Entry>>,
    bytes: usize,
    stats: Stats,
    /// The ids evicted last, so an answer for one says it was evicted.
    evicted: LruCache<String, ()>,
}

/// How many evicted ids a cache remembers.
const EVICTED_REMEMBERED: usize = 4096;

/// The bytes every session's cache holds together (HTTP sessions share one), and their bound.
#[derive(Debug)]
struct Pool {
    bytes: std::sync::atomic::AtomicUsize,
    max_bytes: usize,
}

impl Pool {
    fn new(max_bytes: usize) -> Arc<Pool> {
        Arc::new(Pool {
            bytes: Default::default(),
            max_bytes,
        })
    }

    fn over(&self) -> bool {
        self.bytes.load(std::sync::atomic::Ordering::Relaxed) > self.max_bytes
    }
}

#[derive(Debug)]
pub struct Cache {
    /// When this server run began: older ids are from an earlier run.
    started: SystemTime,
    /// When this client's earlier state was dropped, and why (an idle principal): its older ids
    /// are said to have gone with it.
    forgotten: Option<(SystemTime, String)>,
    limits: Limits,
    inner: Mutex<Inner>,
    /// Shared with the other sessions' caches: past its bound, a cache that stores an entry
    /// makes room from its own oldest entries, so all sessions together stay bounded.
    pool: Arc<Pool>,
    /// `--workspace`: entries over this many bytes are also written there.
    workspace: Option<(Arc<super::workspace::Workspace>, usize)>,
    /// Whether entries are also kept in a store other instances share (`--state`): then each new
    /// one waits here until the call that made it ends (`unpublished`), and an id this instance
    /// does not hold may still be another's (`adopt`), never "from an earlier run".
    shared: bool,
    unpublished: Mutex<Vec<Arc<Entry>>>,
}

/// An entry as a shared store keeps it (its id is the key; a workspace file is this instance's).
#[derive(Serialize, serde::Deserialize)]
struct Exported {
    about: String,
    data: Data,
    created_ms: u64,
}

impl Cache {
    pub fn new(limits: Limits) -> Cache {
        let cap = NonZeroUsize::new(limits.max_entries.max(1)).expect("at least one");
        Cache {
            limits,
            inner: Mutex::new(Inner {
                entries: LruCache::new(cap),
                bytes: 0,
                stats: Stats::default(),
                evicted: LruCache::new(NonZeroUsize::new(EVICTED_REMEMBERED).expect("not zero")),
            }),
            pool: Pool::new(usize::MAX),
            workspace: None,
            started: SystemTime::now(),
            forgotten: None,
            shared: false,
            unpublished: Mutex::new(Vec::new()),
        }
    }

    /// Keeps this cache's (and every `empty_like`'s) new entries for a shared store too.
    pub fn shared(mut self) -> Cache {
        self.shared = true;
        self
    }

    /// The entries made since the last call, for the shared store (none unless `shared`).
    pub fn unpublished(&self) -> Vec<Arc<Entry>> {
        std::mem::take(&mut *self.unpublished.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// An entry as the shared store keeps it, and how long it has left to live (in ms).
    pub fn export(entry: &Entry) -> (String, u64) {
        let created_ms = entry
            .created
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let exported = Exported {
            about: entry.about.clone(),
            data: entry.data.clone(),
            created_ms,
        };
        let left = entry.expires().duration_since(SystemTime::now()).unwrap_or_default();
        let json = serde_json::to_string(&exported).unwrap_or_default();
        (json, u64::try_from(left.as_millis()).unwrap_or(u64::MAX))
    }

    /// Takes in an entry another instance made (`export`'s JSON under `id`), within this
    /// cache's bounds as its own entries are, and answers it.
    pub fn adopt(&self, id: &str, json: &str) -> Option<Arc<Entry>> {
        let (kind, _) = parse_id(id).ok()?;
        let exported: Exported = serde_json::from_str(json).ok()?;
        let data = exported.data;
        let entry = Arc::new(Entry {
            id: id.to_string(),
            kind,
            about: exported.about,
            bytes: data.bytes(),
            served_bytes: data.full_text_bytes(),
            data,
            created: std::time::UNIX_EPOCH + std::time::Duration::from_millis(exported.created_ms),
            file: None,
            file_note: None,
        });
        let mut inner = self.lock();
        self.sweep_expired(&mut inner);
        if let Some(old) = inner.entries.put(id.to_string(), entry.clone()) {
            self.lost(&mut inner, old.bytes);
        }
        self.gained(&mut inner, entry.bytes);
        while (inner.bytes > self.limits.max_bytes || self.pool.over()) && inner.entries.len() > 1 {
            let Some((old_id, old)) = inner.entries.pop_lru() else {
                break;
            };
            self.lost(&mut inner, old.bytes);
            inner.stats.evicted_for_size += 1;
            inner.evicted.put(old_id, ());
        }
        Some(entry)
    }

    /// Bounds this cache and every `empty_like` of it (the HTTP sessions') to `bytes` together.
    pub fn with_sessions_bound(mut self, bytes: usize) -> Cache {
        let pool = Pool::new(bytes);
        pool.bytes
            .store(self.lock().bytes, std::sync::atomic::Ordering::Relaxed);
        self.pool = pool;
        self
    }

    /// Also writes every entry over `threshold` bytes (the budget) to the workspace.
    pub fn with_workspace(mut self, workspace: Arc<super::workspace::Workspace>, threshold: usize) -> Cache {
        self.workspace = Some((workspace, threshold));
        self
    }

    /// The same cache writing its big entries to `principal`'s own folder of its workspace
    /// instead (`Workspace::for_principal`); without one, unchanged. A folder that cannot be made
    /// leaves the cache without a workspace (said in the log): entries are still served by cache
    /// get and resources/read.
    pub fn in_principal_folder(mut self, principal: &str) -> Cache {
        if let Some((workspace, threshold)) = self.workspace.take() {
            match workspace.for_principal(principal) {
                Ok(own) => self.workspace = Some((Arc::new(own), threshold)),
                Err(e) => {
                    tracing::warn!(target: "droidmcp::context::cache", principal, "no workspace folder for this principal: {e}")
                }
            }
        }
        self
    }

    /// An empty cache with the same bounds, workspace and start (a new client's).
    pub fn empty_like(&self) -> Cache {
        let mut cache = Cache::new(self.limits);
        cache.workspace = self.workspace.clone();
        cache.pool = self.pool.clone();
        cache.started = self.started;
        cache.shared = self.shared;
        cache
    }

    /// Says of ids made before `at` that they went with this client's earlier state, and `why`.
    pub fn with_forgotten(mut self, at: SystemTime, why: String) -> Cache {
        self.forgotten = Some((at, why));
        self
    }

    /// An entry by id without touching the LRU order or the stats (to name its file).
    pub fn peek(&self, id: &str) -> Option<Arc<Entry>> {
        self.lock().entries.peek(id).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Counts bytes in (`gained`) and out (`lost`), here and in the shared pool.
    fn gained(&self, inner: &mut Inner, bytes: usize) {
        inner.bytes += bytes;
        self.pool.bytes.fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
    }

    fn lost(&self, inner: &mut Inner, bytes: usize) {
        inner.bytes -= bytes;
        self.pool.bytes.fetch_sub(bytes, std::sync::atomic::Ordering::Relaxed);
    }

    /// Stores `data` and returns its new entry. An entry larger than the whole byte bound is
    /// still kept (alone): a result the user just asked for must stay readable.
    pub fn put(&self, kind: Kind, about: impl Into<String>, data: Data) -> Arc<Entry> {
        let id = format!("{}-{}", kind.prefix(), Ulid::generate());
        let bytes = data.bytes();
        let served_bytes = data.full_text_bytes();
        let mut entry = Entry {
            id: id.clone(),
            kind,
            about: about.into(),
            data,
            created: SystemTime::now(),
            bytes,
            served_bytes,
            file: None,
            file_note: None,
        };
        if let Some((workspace, threshold)) = &self.workspace
            && bytes > *threshold
        {
            match workspace.write(&entry) {
                Ok(path) => entry.file = Some(path),
                Err(e) => {
                    tracing::warn!(target: "droidmcp::context::cache", id = %entry.id, "could not write the workspace file: {e}");
                    entry.file_note = Some(e.to_string());
                }
            }
        }
        let entry = Arc::new(entry);
        let mut inner = self.lock();
        self.sweep_expired(&mut inner);
        if let Some((old_id, old)) = inner.entries.push(id, entry.clone()) {
            self.lost(&mut inner, old.bytes);
            inner.stats.evicted_for_count += 1;
            inner.evicted.put(old_id, ());
        }
        self.gained(&mut inner, bytes);
        while (inner.bytes > self.limits.max_bytes || self.pool.over()) && inner.entries.len() > 1 {
            let Some((old_id, old)) = inner.entries.pop_lru() else {
                break;
            };
            self.lost(&mut inner, old.bytes);
            inner.stats.evicted_for_size += 1;
            inner.evicted.put(old_id, ());
        }
        // The bound all sessions share holds strictly: when the others' entries leave this one
        // less room than it needs, it keeps its head and tail (the whole is in its workspace
        // file, when there is one).
        if self.pool.over() {
            let others = self.pool.bytes.load(std::sync::atomic::Ordering::Relaxed) - entry.bytes;
            let room = self.pool.max_bytes.saturating_sub(others);
            let why = format!(
                "the server's cache for all sessions is full (--sessions-cache-mib {}); the whole output was {} bytes{}",
                self.pool.max_bytes >> 20,
                entry.bytes,
                entry
                    .file
                    .as_ref()
                    .map(|f| format!(", written whole to {}", f.display()))
                    .unwrap_or_default()
            );
            let mut cut = (*entry).clone();
            cut.data = entry.data.trimmed_to(room, &why);
            cut.bytes = cut.data.bytes();
            cut.served_bytes = cut.data.full_text_bytes();
            tracing::warn!(target: "droidmcp::context::cache", id = %cut.id, kept = cut.bytes, of = entry.bytes, "an entry was cut to the shared cache bound");
            let cut = Arc::new(cut);
            self.lost(&mut inner, entry.bytes);
            self.gained(&mut inner, cut.bytes);
            inner.entries.push(cut.id.clone(), cut.clone());
            drop(inner);
            self.publish(&cut);
            return cut;
        }
        drop(inner);
        self.publish(&entry);
        entry
    }

    fn publish(&self, entry: &Arc<Entry>) {
        if self.shared {
            self.unpublished
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(entry.clone());
        }
    }

    fn sweep_expired(&self, inner: &mut Inner) {
        let now = SystemTime::now();
        let expired: Vec<String> = inner
            .entries
            .iter()
            .filter(|(_, e)| e.expires() <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            if let Some(e) = inner.entries.pop(&id) {
                self.lost(inner, e.bytes);
                inner.stats.expired += 1;
            }
        }
    }

    pub fn get(&self, id: &str) -> Result<Arc<Entry>, CacheError> {
        let (kind, ulid) = match parse_id(id) {
            Ok(parsed) => parsed,
            Err(e) => return Err(self.near_miss(id).unwrap_or(e)),
        };
        if let Some(near) = self.near_miss(id) {
            return Err(near);
        }
        let mut inner = self.lock();
        let now = SystemTime::now();
        if let Some(entry) = inner.entries.get(id).cloned() {
            if entry.expires() > now {
                inner.stats.hits += 1;
                return Ok(entry);
            }
            inner.entries.pop(id);
            self.lost(&mut inner, entry.bytes);
            inner.stats.expired += 1;
        }
        inner.stats.misses += 1;
        let made = ulid.datetime();
        let expires = made + kind.ttl();
        if expires <= now {
            let ago = now.duration_since(expires).unwrap_or_default();
            return Err(CacheError::Expired {
                id: id.to_string(),
                ago_minutes: ago.as_secs() / 60,
                ttl_minutes: kind.ttl().as_secs() / 60,
                refresh: kind.refreshed_by(),
            });
        }
        // ULIDs keep milliseconds: compare at that grain, or this run's first ids look older.
        let millis = |t: SystemTime| t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_millis();
        if !self.shared && millis(made) < millis(self.started) {
            return Err(CacheError::EarlierRun {
                id: id.to_string(),
                started_minutes: now.duration_since(self.started).unwrap_or_default().as_secs() / 60,
                refresh: kind.refreshed_by(),
            });
        }
        if inner.evicted.contains(id) {
            return Err(CacheError::Evicted {
                id: id.to_string(),
                refresh: kind.refreshed_by(),
            });
        }
        if let Some((at, why)) = &self.forgotten
            && millis(made) < millis(*at)
        {
            return Err(CacheError::Forgotten {
                id: id.to_string(),
                why: why.clone(),
                refresh: kind.refreshed_by(),
            });
        }
        Err(CacheError::Unknown {
            id: id.to_string(),
            refresh: kind.refreshed_by(),
        })
    }

    /// A live entry that `id` almost names: the same ULID under another kind's prefix, or the
    /// id in another case.
    fn near_miss(&self, id: &str) -> Option<CacheError> {
        let inner = self.lock();
        if inner.entries.contains(id) {
            return None;
        }
        let ulid = id.split_once('-').map_or(id, |(_, u)| u);
        let found = inner.entries.iter().find_map(|(key, _)| {
            let (_, key_ulid) = key.split_once('-')?;
            if key.eq_ignore_ascii_case(id) {
                Some((key.clone(), "the case differs"))
            } else if key_ulid.eq_ignore_ascii_case(ulid) {
                Some((key.clone(), "its prefix names the kind of data, and this one differs"))
            } else {
                None
            }
        })?;
        Some(CacheError::NearMiss {
            given: id.chars().take(80).collect(),
            id: found.0,
            why: found.1,
        })
    }

    /// The live entries, most recently used first.
    pub fn entries(&self) -> Vec<Arc<Entry>> {
        let mut inner = self.lock();
        self.sweep_expired(&mut inner);
        inner.entries.iter().map(|(_, e)| e.clone()).collect()
    }

    pub fn clear(&self) -> usize {
        let mut inner = self.lock();
        let n = inner.entries.len();
        inner.entries.clear();
        let bytes = inner.bytes;
        self.lost(&mut inner, bytes);
        n
    }

    pub fn stats(&self) -> Stats {
        let mut inner = self.lock();
        self.sweep_expired(&mut inner);
        Stats {
            entries: inner.entries.len(),
            bytes: inner.bytes,
            max_entries: self.limits.max_entries,
            max_bytes: self.limits.max_bytes,
            ..inner.stats.clone()
        }
    }

    #[cfg(test)]
    fn put_made_at(&self, kind: Kind, data: Data, created: SystemTime) -> String {
        let ulid = Ulid::from_datetime(created);
        let id = format!("{}-{ulid}", kind.prefix());
        let bytes = data.bytes();
        let entry = Arc::new(Entry {
            id: id.clone(),
            kind,
            about: String::new(),
            served_bytes: data.full_text_bytes(),
            data,
            created,
            bytes,
            file: None,
            file_note: None,
        });
        let mut inner = self.lock();
        inner.entries.push(id.clone(), entry);
        self.gained(&mut inner, bytes);
        id
    }
}

/// A session's cache that ends gives its bytes back to the pool.
impl Drop for Cache {
    fn drop(&mut self) {
        let bytes = self.lock().bytes;
        self.pool.bytes.fetch_sub(bytes, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Checks an id's form: a known prefix, a dash, and a 26-character ULID.
pub fn parse_id(id: &str) -> Result<(Kind, Ulid), CacheError> {
    let malformed = || CacheError::Malformed(id.chars().take(80).collect());
    let (prefix, ulid) = id.split_once('-').ok_or_else(malformed)?;
    let kind = Kind::from_prefix(prefix).ok_or_else(malformed)?;
    if ulid.len() != 26 {
        return Err(malformed());
    }
    let ulid = Ulid::from_string(ulid).map_err(|_| malformed())?;
    Ok((kind, ulid))
}

#[cfg(test)]
mod tests;
