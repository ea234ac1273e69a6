//! Handles that outlive an instance: what a principal stored under an id (a cache entry, as its
//! JSON) is found again by that principal's id through any instance sharing the store. Each
//! value is kept under its principal and its id together, so a principal reads only its own
//! (another's id answers as a made-up one does), and until its time to live ends on the shared
//! clock. The caller bounds what it stores (the cache's byte bounds); Redis's own `maxmemory`
//! bounds the whole (docs/http.md).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::clock::Clock;
use crate::leases::Pending;

/// Where handles live (the module's comment is the contract).
pub trait Handles: Send + Sync + std::fmt::Debug {
    /// Keeps `value` as `principal`'s `id` for `ttl_ms`.
    fn put<'a>(&'a self, principal: &'a str, id: &'a str, value: &'a str, ttl_ms: u64) -> Pending<'a, ()>;
    /// `principal`'s `id`, while it lives.
    fn get<'a>(&'a self, principal: &'a str, id: &'a str) -> Pending<'a, Option<String>>;
}

/// A stored value and when it ends, as a shared store keeps it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Kept {
    pub until_ms: u64,
    pub value: String,
}

/// The key of `principal`'s `id`: the principal's length first, so no pair of names meets another.
pub(crate) fn key(principal: &str, id: &str) -> String {
    format!("handle:{}:{principal}:{id}", principal.len())
}

/// Handles in this process (one instance; tests).
#[derive(Debug)]
pub struct InProcessHandles {
    clock: Arc<dyn Clock>,
    kept: Mutex<HashMap<String, Kept>>,
}

impl InProcessHandles {
    pub fn new(clock: Arc<dyn Clock>) -> InProcessHandles {
        InProcessHandles {
            clock,
            kept: Mutex::new(HashMap::new()),
        }
    }
}

impl Handles for InProcessHandles {
    fn put<'a>(&'a self, principal: &'a str, id: &'a str, value: &'a str, ttl_ms: u64) -> Pending<'a, ()> {
        let now = self.clock.now_ms();
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.retain(|_, k| k.until_ms > now);
        kept.insert(
            key(principal, id),
            Kept {
                until_ms: now.saturating_add(ttl_ms),
                value: value.to_string(),
            },
        );
        Box::pin(std::future::ready(Ok(())))
    }

    fn get<'a>(&'a self, principal: &'a str, id: &'a str) -> Pending<'a, Option<String>> {
        let now = self.clock.now_ms();
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let found = kept
            .get(&key(principal, id))
            .filter(|k| k.until_ms > now)
            .map(|k| k.value.clone());
        Box::pin(std::future::ready(Ok(found)))
    }
}
