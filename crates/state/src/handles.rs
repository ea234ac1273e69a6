//! Handles that outlive an instance: what a principal stored under an id, of one `Kind` (a cache
//! entry, a device's refs, a skill, a run's record or one of its results, a device's
//! recording), is found again by that principal's id through any instance sharing the store. Each value is kept under its
//! principal, its kind and its id together, so a principal reads only its own (another's id
//! answers as a made-up one does), and until its time to live ends on the shared clock (a value
//! put without one lives until removed).
//!
//! Bounds: the caller bounds each value (the cache's byte bounds, a ref book's, a skill's
//! size, a run's quota); `put_within` bounds a kind's whole, counted in the store at the moment
//! of the write, so two instances cannot both fill the last place (the skills quota); Redis's
//! own `maxmemory` bounds the rest (docs/http.md).
//!
//! Compare and set: every write gives the value a new version (a token never given before);
//! `put_if` writes only over the version its caller fetched, so of two instances that read one
//! value and change it at once, one writes and the other fetches again (the ref books, the
//! recordings).

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::clock::Clock;
use crate::leases::Pending;

/// What a handle is: each kind is a namespace of its own under a principal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A cache entry, by its cacheId.
    Cache,
    /// A device's ref book, by the device's identity.
    Refs,
    /// A saved skill, by its name.
    Skill,
    /// A script run's record, by its runId.
    Run,
    /// A saved tool answer of a run, by `RUNID/results/FILE`.
    RunResult,
    /// A device's flow recording, by the device's identity.
    Recording,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Cache => "cache",
            Kind::Refs => "refs",
            Kind::Skill => "skill",
            Kind::Run => "run",
            Kind::RunResult => "run-result",
            Kind::Recording => "recording",
        }
    }
}

/// How much of a kind a principal may keep: values and their bytes in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    pub items: usize,
    pub bytes: u64,
}

/// A `put_within` refused: what the principal's other values of that kind hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full {
    pub items: usize,
    pub bytes: u64,
}

/// A value and its version, as `fetch` found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned {
    pub value: String,
    pub version: String,
}

/// A version no write gave before, in any process: this process's random part and a count.
pub(crate) fn new_version() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};
    static PROCESS: OnceLock<u64> = OnceLock::new();
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let process = PROCESS.get_or_init(|| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.finish()
    });
    format!("{process:016x}.{}", COUNT.fetch_add(1, Ordering::Relaxed))
}

/// Where handles live (the module's comment is the contract).
pub trait Handles: Send + Sync + std::fmt::Debug {
    /// Keeps `value` as `principal`'s `id` of `kind`, for `ttl_ms` (`None`: until removed).
    fn put<'a>(
        &'a self,
        principal: &'a str,
        kind: Kind,
        id: &'a str,
        value: &'a str,
        ttl_ms: Option<u64>,
    ) -> Pending<'a, ()>;
    /// `put` with no time to live, only if the principal's other live values of `kind` and this
    /// one fit `bound` (the value `id` replaces does not count); else what the others hold.
    fn put_within<'a>(
        &'a self,
        principal: &'a str,
        kind: Kind,
        id: &'a str,
        value: &'a str,
        bound: Bound,
    ) -> Pending<'a, Result<(), Full>>;
    /// `put`, only if `principal`'s `id` of `kind` is still at `version` (`None`: only if it has
    /// no live value): whether it wrote. A `false` is a lost race: fetch again and redo.
    fn put_if<'a>(
        &'a self,
        principal: &'a str,
        kind: Kind,
        id: &'a str,
        version: Option<&'a str>,
        value: &'a str,
        ttl_ms: Option<u64>,
    ) -> Pending<'a, bool>;
    /// `get` with the value's version, for `put_if`.
    fn fetch<'a>(&'a self, principal: &'a str, kind: Kind, id: &'a str) -> Pending<'a, Option<Versioned>>;
    /// `principal`'s `id` of `kind`, while it lives.
    fn get<'a>(&'a self, principal: &'a str, kind: Kind, id: &'a str) -> Pending<'a, Option<String>>;
    /// Every live value of `principal`'s `kind`, by id.
    fn list<'a>(&'a self, principal: &'a str, kind: Kind) -> Pending<'a, Vec<(String, String)>>;
    /// Ends `principal`'s `id` of `kind`: whether it lived.
    fn remove<'a>(&'a self, principal: &'a str, kind: Kind, id: &'a str) -> Pending<'a, bool>;
}

/// A stored value and when it ends (`u64::MAX`: never), as a shared store keeps it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Kept {
    pub until_ms: u64,
    pub value: String,
    /// Empty in values kept before versions were.
    #[serde(default)]
    pub version: String,
}

impl Kept {
    pub fn new(until_ms: u64, value: &str) -> Kept {
        Kept {
            until_ms,
            value: value.to_string(),
            version: new_version(),
        }
    }
}

/// The place of `principal`'s values of `kind`: the principal's length first, so no pair of
/// names meets another.
pub(crate) fn shelf(principal: &str, kind: Kind) -> String {
    format!("handle:{}:{principal}:{}", principal.len(), kind.name())
}

/// When a value put now for `ttl_ms` ends.
pub(crate) fn until(now: u64, ttl_ms: Option<u64>) -> u64 {
    ttl_ms.map_or(u64::MAX, |ttl| now.saturating_add(ttl))
}

/// Handles in this process (one instance; tests).
#[derive(Debug)]
pub struct InProcessHandles {
    clock: Arc<dyn Clock>,
    kept: Mutex<HashMap<String, BTreeMap<String, Kept>>>,
}

impl InProcessHandles {
    pub fn new(clock: Arc<dyn Clock>) -> InProcessHandles {
        InProcessHandles {
            clock,
            kept: Mutex::new(HashMap::new()),
        }
    }

    /// Runs `with` on the live values of one shelf (the ended ones dropped first), under the lock.
    fn with<T>(&self, principal: &str, kind: Kind, with: impl FnOnce(&mut BTreeMap<String, Kept>, u64) -> T) -> T {
        let now = self.clock.now_ms();
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let key = shelf(principal, kind);
        let values = kept.entry(key.clone()).or_default();
        values.retain(|_, k| k.until_ms > now);
        let answer = with(values, now);
        if values.is_empty() {
            kept.remove(&key);
        }
        answer
    }
}

fn ready<'a, T: Send + 'a>(value: T) -> Pending<'a, T> {
    Box::pin(std::future::ready(Ok(value)))
}

impl Handles for InProcessHandles {
    fn put<'a>(
        &'a self,
        principal: &'a str,
        kind: Kind,
        id: &'a str,
        value: &'a str,
        ttl_ms: Option<u64>,
    ) -> Pending<'a, ()> {
        self.with(principal, kind, |values, now| {
            values.insert(id.to_string(), Kept::new(until(now, ttl_ms), value));
        });
        ready(())
    }

    fn put_if<'a>(
        &'a self,
        principal: &'a str,
        kind: Kind,
        id: &'a str,
        version: Option<&'a str>,
        value: &'a str,
        ttl_ms: Option<u64>,
    ) -> Pending<'a, bool> {
        ready(self.with(principal, kind, |values, now| {
            if values.get(id).map(|k| k.version.as_str()) != version {
                return false;
            }
            values.insert(id.to_string(), Kept::new(until(now, ttl_ms), value));
            true
        }))
    }

    fn fetch<'a>(&'a self, principal: &'a str, kind: Kind, id: &'a str) -> Pending<'a, Option<Versioned>> {
        ready(self.with(principal, kind, |values, _| {
            values.get(id).map(|k| Versioned {
                value: k.value.clone(),
                version: k.version.clone(),
            })
        }))
    }

    fn put_within<'a>(
        &'a self,
        principal: &'a str,
        kind: Kind,
        id: &'a str,
        value: &'a str,
        bound: Bound,
    ) -> Pending<'a, Result<(), Full>> {
        ready(self.with(principal, kind, |values, _| {
            let others = values.iter().filter(|(other, _)| *other != id);
            let full = others.fold(Full { items: 0, bytes: 0 }, |full, (_, k)| Full {
                items: full.items + 1,
                bytes: full.bytes + k.value.len() as u64,
            });
            if full.items + 1 > bound.items || full.bytes + value.len() as u64 > bound.bytes {
                return Err(full);
            }
            values.insert(id.to_string(), Kept::new(u64::MAX, value));
            Ok(())
        }))
    }

    fn get<'a>(&'a self, principal: &'a str, kind: Kind, id: &'a str) -> Pending<'a, Option<String>> {
        ready(self.with(principal, kind, |values, _| values.get(id).map(|k| k.value.clone())))
    }

    fn list<'a>(&'a self, principal: &'a str, kind: Kind) -> Pending<'a, Vec<(String, String)>> {
        ready(self.with(principal, kind, |values, _| {
            values.iter().map(|(id, k)| (id.clone(), k.value.clone())).collect()
        }))
    }

    fn remove<'a>(&'a self, principal: &'a str, kind: Kind, id: &'a str) -> Pending<'a, bool> {
        ready(self.with(principal, kind, |values, _| values.remove(id).is_some()))
    }
}
