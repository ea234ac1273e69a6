//! Per-principal state, below the server and above the tools. Who a request is: over HTTP, the
//! name of the bearer token it carries (`--token NAME=SECRET`), or `local` when the server takes
//! no token; over stdio, always `local`. State that outlives a request (the cache, each
//! device's refs, script runs, the default device) belongs to a principal, not to a transport
//! session: MCP 2026-07-28 clients send each request on its own, with no session at all, and
//! find their state again by the handles (cacheId, ref, runId) and their token. Legacy sessions
//! (2025-11-25 and older) of one token share it too.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::tools::State;

/// A request's principal, put in its extensions by the token check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal(pub Arc<str>);

/// The principal of a server that takes no token (and of stdio).
pub use crate::tools::LOCAL_PRINCIPAL as LOCAL;

/// Each principal's state, made on its first request from the server's base state, dropped when
/// idle for the idle time (its cache and run folders go with it).
#[derive(Debug)]
pub struct Principals {
    base: Arc<State>,
    idle: Duration,
    held: Mutex<HashMap<Arc<str>, Held>>,
    /// When each principal's state was last dropped for idleness, so its new state can say
    /// what became of older ids.
    dropped: Mutex<HashMap<Arc<str>, std::time::SystemTime>>,
}

#[derive(Debug)]
struct Held {
    state: Arc<State>,
    last_used: Instant,
}

impl Principals {
    pub fn new(base: Arc<State>, idle: Duration) -> Principals {
        Principals {
            base,
            idle,
            held: Mutex::new(HashMap::new()),
            dropped: Mutex::new(HashMap::new()),
        }
    }

    /// The principal's state, made now if it has none.
    pub fn state(&self, principal: &Principal) -> Arc<State> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let entry = held.entry(principal.0.clone()).or_insert_with(|| {
            tracing::info!(principal = %principal.0, "new principal");
            let mut state = self.base.session(&principal.0);
            let dropped = self
                .dropped
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&principal.0)
                .copied();
            if let Some(at) = dropped {
                let why = format!(
                    "it was dropped after {} s without a request (--session-idle-secs)",
                    self.idle.as_secs()
                );
                state.cache = state.cache.with_forgotten(at, why);
            }
            Held {
                state: Arc::new(state),
                last_used: Instant::now(),
            }
        });
        entry.last_used = Instant::now();
        entry.state.clone()
    }

    /// Drops the state of principals idle for longer than the idle time, unless a call holds it.
    pub fn sweep(&self) {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let mut dropped = self.dropped.lock().unwrap_or_else(|p| p.into_inner());
        held.retain(|name, h| {
            let keep = h.last_used.elapsed() < self.idle || Arc::strong_count(&h.state) > 1;
            if !keep {
                tracing::info!(principal = %name, "idle principal's state dropped");
                dropped.insert(name.clone(), std::time::SystemTime::now());
            }
            keep
        });
    }

    /// How many principals hold state now.
    pub fn count(&self) -> usize {
        self.held.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}
