//! Device leases: who may act on a device for now. A lease is keyed by the device's identity
//! (the phone, whichever route reaches it: the caller reads it), names its holder and ends at `until_ms`
//! unless its holder uses the device again (which renews it for its own time to live) or
//! releases it.
//!
//! The contract every store keeps (the in-process one here, `crate::in_redis` for several
//! instances, both deciding through `decide`, so two instances sharing one cannot both win):
//! - each operation reads and writes one device's lease atomically (compare and set);
//! - a lease whose `until_ms` has passed is no lease: it is ignored, and replaced or dropped;
//! - `take` gives the lease to `holder` when there is none or the current one `lets` it,
//!   else answers with the current one, unchanged;
//! - `touch` (a use) renews a lease that `lets` its caller for the lease's own time to live,
//!   and answers a lease that does not with that lease, unchanged;
//! - `release` ends a lease that `lets` its caller, and answers one that does not, unchanged;
//! - `list` gives the live leases.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use crate::clock::Clock;

/// Who holds a lease: a principal (a token's name), and whether it is a person at the device
/// panel (a take-over) rather than that principal's assistant.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Holder {
    pub principal: String,
    pub person: bool,
}

/// A live lease on one device.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Lease {
    /// The device's identity (the phone's, whichever route reaches it), the key.
    pub device: String,
    pub holder: Holder,
    /// When it ends, in milliseconds since the Unix epoch, unless used or released first.
    pub until_ms: u64,
    /// What each use renews it for.
    pub ttl_ms: u64,
}

impl Lease {
    /// The one rule of who may act on a leased device (and take, renew or release its lease):
    /// the holder's own principal; but while a person holds it in the panel, that principal's
    /// assistant waits (the person may take over from their own assistant).
    pub fn lets(&self, who: &Holder) -> bool {
        self.holder.principal == who.principal && (who.person || !self.holder.person)
    }
}

/// What an operation on a lease came to: the caller's lease (taken, renewed or ended), or the
/// lease that keeps the caller out, unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Taken {
    Yours(Lease),
    Theirs(Lease),
}

/// A store that could not answer (a shared store out of reach); the in-process one never fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateError(pub String);

impl std::fmt::Display for StateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// An operation's answer, on its way (a shared store answers over the network).
pub type Pending<'a, T> = Pin<Box<dyn Future<Output = Result<T, StateError>> + Send + 'a>>;

/// Where leases live (the module's comment is the contract).
pub trait Leases: Send + Sync + std::fmt::Debug {
    /// Takes (or renews, for a new time to live) `device` for `holder`.
    fn take<'a>(&'a self, device: &'a str, holder: &'a Holder, ttl_ms: u64) -> Pending<'a, Taken>;
    /// A use of `device` by `holder`: `None` when nobody holds it.
    fn touch<'a>(&'a self, device: &'a str, holder: &'a Holder) -> Pending<'a, Option<Taken>>;
    /// Ends `holder`'s lease on `device`: `None` when nobody holds it.
    fn release<'a>(&'a self, device: &'a str, holder: &'a Holder) -> Pending<'a, Option<Taken>>;
    /// Every live lease.
    fn list(&self) -> Pending<'_, Vec<Lease>>;
}

/// The in-process store: one map behind one lock, each operation whole under it.
#[derive(Debug)]
pub struct InProcess {
    clock: Arc<dyn Clock>,
    leases: Mutex<HashMap<String, Lease>>,
}

impl InProcess {
    pub fn new(clock: Arc<dyn Clock>) -> InProcess {
        InProcess {
            clock,
            leases: Mutex::new(HashMap::new()),
        }
    }

    /// Runs `change` on the device's live lease (an expired one is dropped first), under the lock.
    fn with<T>(&self, device: &str, change: impl FnOnce(&mut Option<Lease>, u64) -> T) -> T {
        let now = self.clock.now_ms();
        let mut leases = self.leases.lock().unwrap_or_else(|p| p.into_inner());
        let mut current = leases.remove(device).filter(|l| l.until_ms > now);
        let answer = change(&mut current, now);
        if let Some(lease) = current {
            leases.insert(device.to_string(), lease);
        }
        answer
    }
}

fn ready<'a, T: Send + 'a>(value: T) -> Pending<'a, T> {
    Box::pin(std::future::ready(Ok(value)))
}

impl Leases for InProcess {
    fn take<'a>(&'a self, device: &'a str, holder: &'a Holder, ttl_ms: u64) -> Pending<'a, Taken> {
        ready(self.with(device, |current, now| {
            decide::take(current, now, device, holder, ttl_ms)
        }))
    }

    fn touch<'a>(&'a self, device: &'a str, holder: &'a Holder) -> Pending<'a, Option<Taken>> {
        ready(self.with(device, |current, now| decide::touch(current, now, holder)))
    }

    fn release<'a>(&'a self, device: &'a str, holder: &'a Holder) -> Pending<'a, Option<Taken>> {
        ready(self.with(device, |current, _| decide::release(current, holder)))
    }

    fn list(&self) -> Pending<'_, Vec<Lease>> {
        let now = self.clock.now_ms();
        let mut leases = self.leases.lock().unwrap_or_else(|p| p.into_inner());
        leases.retain(|_, l| l.until_ms > now);
        let mut live: Vec<Lease> = leases.values().cloned().collect();
        live.sort_by(|a, b| a.device.cmp(&b.device));
        ready(live)
    }
}

/// What each operation does to a device's live lease (`None`: no lease), the same for every
/// store: the store gives it the lease it read and writes back what it leaves.
pub(crate) mod decide {
    use super::{Holder, Lease, Taken};

    pub fn take(current: &mut Option<Lease>, now: u64, device: &str, holder: &Holder, ttl_ms: u64) -> Taken {
        match current {
            Some(lease) if !lease.lets(holder) => Taken::Theirs(lease.clone()),
            _ => {
                let lease = Lease {
                    device: device.to_string(),
                    holder: holder.clone(),
                    until_ms: now.saturating_add(ttl_ms),
                    ttl_ms,
                };
                *current = Some(lease.clone());
                Taken::Yours(lease)
            }
        }
    }

    pub fn touch(current: &mut Option<Lease>, now: u64, holder: &Holder) -> Option<Taken> {
        let lease = current.as_mut()?;
        if !lease.lets(holder) {
            return Some(Taken::Theirs(lease.clone()));
        }
        lease.until_ms = now.saturating_add(lease.ttl_ms);
        Some(Taken::Yours(lease.clone()))
    }

    pub fn release(current: &mut Option<Lease>, holder: &Holder) -> Option<Taken> {
        match current.take() {
            None => None,
            Some(lease) if lease.lets(holder) => Some(Taken::Yours(lease)),
            Some(lease) => {
                *current = Some(lease.clone());
                Some(Taken::Theirs(lease))
            }
        }
    }
}

#[cfg(test)]
mod tests;
