//! The store several instances share: Redis (`--state redis://HOST:PORT[/DB]`), for leases and
//! handles (`crate::handles`: a handle is one key with its JSON, ended by the shared clock). Each lease is
//! one key (`PREFIX:lease:DEVICE`) holding the lease as JSON. An operation reads it, decides
//! with the same code the in-process store runs (`leases::decide`, so `Lease::lets` stays the
//! one rule), and writes through a compare-and-set script: the write happens only if the key
//! still holds what was read, else the operation reads again. Two instances racing cannot both
//! win. A lease's end is the shared wall clock's (`Clock`); the key's own expiry (its end plus a
//! minute) only collects what nobody released.

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use crate::clock::Clock;
use crate::handles::{self, Handles, Kept};
use crate::leases::{Holder, Lease, Leases, Pending, StateError, Taken, decide};

/// Writes ARGV[2] (or deletes the key when it is empty) with expiry ARGV[3] ms, only if the key
/// holds ARGV[1] (empty: no key). Answers 1 when it wrote, 0 when the key had changed.
const COMPARE_AND_SET: &str = r"
local current = redis.call('GET', KEYS[1])
if current == false then current = '' end
if current ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
end
return 1
";

/// How long after its end a lease's key stays before Redis drops it (clocks differ a little).
const COLLECT_AFTER_MS: u64 = 60_000;

/// How often an operation reads again after losing a race before it gives up.
const ATTEMPTS: usize = 64;

/// A connection to Redis, shared by every principal of this instance (it reconnects by itself).
#[derive(Clone)]
pub struct Redis {
    connection: ConnectionManager,
    prefix: String,
    clock: Arc<dyn Clock>,
    script: Arc<redis::Script>,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redis({})", self.prefix)
    }
}

fn failed(what: &str, e: redis::RedisError) -> StateError {
    StateError(format!(
        "the shared state (Redis, --state) could not {what}: {e}; check that redis-server is up and reachable"
    ))
}

impl Redis {
    /// Connects to `url` (`redis://HOST:PORT[/DB]`), keeping every key under `prefix`.
    pub async fn connect(url: &str, prefix: &str, clock: Arc<dyn Clock>) -> Result<Redis, StateError> {
        let client = redis::Client::open(url).map_err(|e| {
            StateError(format!(
                "--state {url:?} is not a Redis address ({e}); give redis://HOST:PORT or redis://HOST:PORT/DB"
            ))
        })?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Duration::from_secs(5))
            .set_response_timeout(Duration::from_secs(5))
            .set_number_of_retries(2);
        let connection = ConnectionManager::new_with_config(client, config)
            .await
            .map_err(|e| failed(&format!("connect to {url}"), e))?;
        Ok(Redis {
            connection,
            prefix: prefix.to_string(),
            clock,
            script: Arc::new(redis::Script::new(COMPARE_AND_SET)),
        })
    }

    /// The key of `name` under this store's prefix.
    pub fn key(&self, name: &str) -> String {
        format!("{}:{name}", self.prefix)
    }

    /// The connection (a cheap clone of the shared one).
    pub fn connection(&self) -> ConnectionManager {
        self.connection.clone()
    }

    fn lease_key(&self, device: &str) -> String {
        self.key(&format!("lease:{device}"))
    }

    /// The raw value of a key, empty when there is none.
    async fn read(&self, key: &str) -> Result<String, StateError> {
        let value: Option<String> = redis::cmd("GET")
            .arg(key)
            .query_async(&mut self.connection())
            .await
            .map_err(|e| failed("read a lease", e))?;
        Ok(value.unwrap_or_default())
    }

    /// Runs `change` (a decision over the live lease, as `InProcess::with` does) until its write
    /// lands on the value it read.
    async fn with<T>(&self, device: &str, change: impl Fn(&mut Option<Lease>, u64) -> T) -> Result<T, StateError> {
        let key = self.lease_key(device);
        for _ in 0..ATTEMPTS {
            let raw = self.read(&key).await?;
            let now = self.clock.now_ms();
            let read: Option<Lease> = serde_json::from_str(&raw).ok();
            let live = read.filter(|l| l.until_ms > now);
            let mut current = live.clone();
            let answer = change(&mut current, now);
            if current == live {
                return Ok(answer);
            }
            let (value, px) = match &current {
                Some(lease) => (
                    serde_json::to_string(lease).map_err(|e| StateError(e.to_string()))?,
                    lease.until_ms.saturating_sub(now).saturating_add(COLLECT_AFTER_MS),
                ),
                None => (String::new(), 0),
            };
            let wrote: i64 = self
                .script
                .key(&key)
                .arg(&raw)
                .arg(&value)
                .arg(px)
                .invoke_async(&mut self.connection())
                .await
                .map_err(|e| failed("write a lease", e))?;
            if wrote == 1 {
                return Ok(answer);
            }
        }
        Err(StateError(format!(
            "the lease on {device} changed {ATTEMPTS} times while this call read it; try again"
        )))
    }
}

impl Leases for Redis {
    fn take<'a>(&'a self, device: &'a str, holder: &'a Holder, ttl_ms: u64) -> Pending<'a, Taken> {
        Box::pin(self.with(device, move |current, now| {
            decide::take(current, now, device, holder, ttl_ms)
        }))
    }

    fn touch<'a>(&'a self, device: &'a str, holder: &'a Holder) -> Pending<'a, Option<Taken>> {
        Box::pin(self.with(device, move |current, now| decide::touch(current, now, holder)))
    }

    fn release<'a>(&'a self, device: &'a str, holder: &'a Holder) -> Pending<'a, Option<Taken>> {
        Box::pin(self.with(device, move |current, _| decide::release(current, holder)))
    }

    fn list(&self) -> Pending<'_, Vec<Lease>> {
        Box::pin(async move {
            let pattern = self.lease_key("*");
            let mut connection = self.connection();
            let mut keys: Vec<String> = Vec::new();
            let mut cursor: u64 = 0;
            loop {
                let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(500)
                    .query_async(&mut connection)
                    .await
                    .map_err(|e| failed("list the leases", e))?;
                keys.extend(batch);
                cursor = next;
                if cursor == 0 {
                    break;
                }
            }
            if keys.is_empty() {
                return Ok(Vec::new());
            }
            let values: Vec<Option<String>> = redis::cmd("MGET")
                .arg(&keys)
                .query_async(&mut connection)
                .await
                .map_err(|e| failed("list the leases", e))?;
            let now = self.clock.now_ms();
            let mut live: Vec<Lease> = values
                .into_iter()
                .flatten()
                .filter_map(|raw| serde_json::from_str::<Lease>(&raw).ok())
                .filter(|l| l.until_ms > now)
                .collect();
            live.sort_by(|a, b| a.device.cmp(&b.device));
            Ok(live)
        })
    }
}

impl Handles for Redis {
    fn put<'a>(&'a self, principal: &'a str, id: &'a str, value: &'a str, ttl_ms: u64) -> Pending<'a, ()> {
        Box::pin(async move {
            let until_ms = self.clock.now_ms().saturating_add(ttl_ms);
            let kept = serde_json::to_string(&Kept {
                until_ms,
                value: value.to_string(),
            })
            .map_err(|e| StateError(e.to_string()))?;
            let () = redis::cmd("SET")
                .arg(self.key(&handles::key(principal, id)))
                .arg(kept)
                .arg("PX")
                .arg(ttl_ms.saturating_add(COLLECT_AFTER_MS))
                .query_async(&mut self.connection())
                .await
                .map_err(|e| failed("keep a cache entry", e))?;
            Ok(())
        })
    }

    fn get<'a>(&'a self, principal: &'a str, id: &'a str) -> Pending<'a, Option<String>> {
        Box::pin(async move {
            let raw: Option<String> = redis::cmd("GET")
                .arg(self.key(&handles::key(principal, id)))
                .query_async(&mut self.connection())
                .await
                .map_err(|e| failed("read a cache entry", e))?;
            let now = self.clock.now_ms();
            Ok(raw
                .and_then(|raw| serde_json::from_str::<Kept>(&raw).ok())
                .filter(|k| k.until_ms > now)
                .map(|k| k.value))
        })
    }
}
