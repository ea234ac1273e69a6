//! The store several instances share: Redis (`--state redis://HOST:PORT[/DB]`), for leases and
//! handles (`crate::handles`: a handle is one key with its JSON, ended by the shared clock, and
//! its id in its shelf's index, a set, for `list` and the bound `PUT` counts). Each lease is
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
use crate::handles::{self, Bound, Full, Handles, Kept, Kind, Versioned};
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

/// Keeps a value (KEYS[1]: its shelf's index; ARGV: the values' key prefix, id, the kept JSON,
/// expiry in ms or 0, bounded 0|1, the bound's items and bytes, now, the value's bytes, and
/// the version it must be written over: empty for any, `-` for no live value, `=VERSION`). The
/// index drops ids whose keys Redis collected; a bounded write counts the shelf's other live
/// values first and writes only if this one fits. Answers {wrote 1|0, their items, their
/// bytes}, or {2, 0, 0} when the value is not at the version asked. (It reads keys of the
/// shelf it was not handed: one Redis, not a cluster.)
const PUT: &str = r"
if ARGV[10] ~= '' then
  local raw = redis.call('GET', ARGV[1] .. ARGV[2])
  local at = '-'
  if raw ~= false then
    local kept = cjson.decode(raw)
    if tonumber(kept.until_ms) > tonumber(ARGV[8]) then
      at = '='
      if type(kept.version) == 'string' then at = '=' .. kept.version end
    end
  end
  if at ~= ARGV[10] then return {2, 0, 0} end
end
local items, bytes = 0, 0
local bounded = ARGV[5] == '1'
for _, m in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if bounded then
    local raw = redis.call('GET', ARGV[1] .. m)
    if raw == false then
      redis.call('SREM', KEYS[1], m)
    elseif m ~= ARGV[2] then
      local kept = cjson.decode(raw)
      if tonumber(kept.until_ms) > tonumber(ARGV[8]) then
        items = items + 1
        bytes = bytes + string.len(kept.value)
      end
    end
  elseif redis.call('EXISTS', ARGV[1] .. m) == 0 then
    redis.call('SREM', KEYS[1], m)
  end
end
if bounded and (items + 1 > tonumber(ARGV[6]) or bytes + tonumber(ARGV[9]) > tonumber(ARGV[7])) then
  return {0, items, bytes}
end
if ARGV[4] == '0' then
  redis.call('SET', ARGV[1] .. ARGV[2], ARGV[3])
else
  redis.call('SET', ARGV[1] .. ARGV[2], ARGV[3], 'PX', ARGV[4])
end
redis.call('SADD', KEYS[1], ARGV[2])
return {1, items, bytes}
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
    put: Arc<redis::Script>,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redis({})", self.prefix)
    }
}

/// The longest any operation waits for Redis, reconnecting included: a store that is down
/// answers as down, not as a call's timeout blaming the device.
const OPERATION_LIMIT: Duration = Duration::from_secs(5);

/// An operation on its way, bounded by `OPERATION_LIMIT`.
fn bounded<'a, T: Send + 'a>(operation: impl Future<Output = Result<T, StateError>> + Send + 'a) -> Pending<'a, T> {
    Box::pin(async move {
        tokio::time::timeout(OPERATION_LIMIT, operation).await.unwrap_or_else(|_| {
            Err(StateError(format!(
                "the shared state (Redis, --state) did not answer within {} s; check that redis-server is up and reachable",
                OPERATION_LIMIT.as_secs()
            )))
        })
    })
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
            put: Arc::new(redis::Script::new(PUT)),
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
        bounded(self.with(device, move |current, now| {
            decide::take(current, now, device, holder, ttl_ms)
        }))
    }

    fn touch<'a>(&'a self, device: &'a str, holder: &'a Holder) -> Pending<'a, Option<Taken>> {
        bounded(self.with(device, move |current, now| decide::touch(current, now, holder)))
    }

    fn release<'a>(&'a self, device: &'a str, holder: &'a Holder) -> Pending<'a, Option<Taken>> {
        bounded(self.with(device, move |current, _| decide::release(current, holder)))
    }

    fn list(&self) -> Pending<'_, Vec<Lease>> {
        bounded(async move {
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

impl Redis {
    /// The index of a shelf (its ids) and the prefix of its values' keys.
    fn shelf_keys(&self, principal: &str, kind: Kind) -> (String, String) {
        let shelf = self.key(&handles::shelf(principal, kind));
        (format!("{shelf}:index"), format!("{shelf}:i:"))
    }

    /// Writes one value through `PUT` (bounded or not, over a version or any): what it came to.
    #[allow(clippy::too_many_arguments)]
    async fn put_kept(
        &self,
        principal: &str,
        kind: Kind,
        id: &str,
        value: &str,
        ttl_ms: Option<u64>,
        bound: Option<Bound>,
        over: Option<Option<&str>>,
    ) -> Result<Wrote, StateError> {
        let now = self.clock.now_ms();
        let kept = serde_json::to_string(&Kept::new(handles::until(now, ttl_ms), value))
            .map_err(|e| StateError(e.to_string()))?;
        let over = match over {
            None => String::new(),
            Some(None) => "-".to_string(),
            Some(Some(version)) => format!("={version}"),
        };
        let (index, values) = self.shelf_keys(principal, kind);
        let px = ttl_ms.map_or(0, |ttl| ttl.saturating_add(COLLECT_AFTER_MS));
        let (items, bytes) = bound.map_or((0, 0), |b| (b.items as u64, b.bytes));
        let (wrote, held_items, held_bytes): (i64, u64, u64) = self
            .put
            .key(&index)
            .arg(&values)
            .arg(id)
            .arg(kept)
            .arg(px)
            .arg(u8::from(bound.is_some()))
            .arg(items)
            .arg(bytes)
            .arg(now)
            .arg(value.len())
            .arg(over)
            .invoke_async(&mut self.connection())
            .await
            .map_err(|e| failed(&format!("keep a {}", kind.name()), e))?;
        Ok(match wrote {
            1 => Wrote::Yes,
            2 => Wrote::NotAtVersion,
            _ => Wrote::Full(Full {
                items: usize::try_from(held_items).unwrap_or(usize::MAX),
                bytes: held_bytes,
            }),
        })
    }
}

/// What `PUT` came to.
enum Wrote {
    Yes,
    Full(Full),
    NotAtVersion,
}

impl Handles for Redis {
    fn put<'a>(
        &'a self,
        principal: &'a str,
        kind: Kind,
        id: &'a str,
        value: &'a str,
        ttl_ms: Option<u64>,
    ) -> Pending<'a, ()> {
        bounded(async move {
            // Without a bound or a version nothing refuses it.
            self.put_kept(principal, kind, id, value, ttl_ms, None, None).await?;
            Ok(())
        })
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
        bounded(async move {
            let wrote = self
                .put_kept(principal, kind, id, value, ttl_ms, None, Some(version))
                .await?;
            Ok(matches!(wrote, Wrote::Yes))
        })
    }

    fn fetch<'a>(&'a self, principal: &'a str, kind: Kind, id: &'a str) -> Pending<'a, Option<Versioned>> {
        bounded(async move {
            let (_, values) = self.shelf_keys(principal, kind);
            let raw: Option<String> = redis::cmd("GET")
                .arg(format!("{values}{id}"))
                .query_async(&mut self.connection())
                .await
                .map_err(|e| failed(&format!("read a {}", kind.name()), e))?;
            Ok(self.live(raw).map(|k| Versioned {
                value: k.value,
                version: k.version,
            }))
        })
    }

    fn put_within<'a>(
        &'a self,
        principal: &'a str,
        kind: Kind,
        id: &'a str,
        value: &'a str,
        bound: Bound,
    ) -> Pending<'a, Result<(), Full>> {
        bounded(async move {
            Ok(
                match self
                    .put_kept(principal, kind, id, value, None, Some(bound), None)
                    .await?
                {
                    Wrote::Full(full) => Err(full),
                    _ => Ok(()),
                },
            )
        })
    }

    fn get<'a>(&'a self, principal: &'a str, kind: Kind, id: &'a str) -> Pending<'a, Option<String>> {
        bounded(async move { Ok(self.fetch(principal, kind, id).await?.map(|v| v.value)) })
    }

    fn list<'a>(&'a self, principal: &'a str, kind: Kind) -> Pending<'a, Vec<(String, String)>> {
        bounded(async move {
            let (index, values) = self.shelf_keys(principal, kind);
            let mut connection = self.connection();
            let what = format!("list the {}s", kind.name());
            let mut ids: Vec<String> = redis::cmd("SMEMBERS")
                .arg(&index)
                .query_async(&mut connection)
                .await
                .map_err(|e| failed(&what, e))?;
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            ids.sort();
            let keys: Vec<String> = ids.iter().map(|id| format!("{values}{id}")).collect();
            let raws: Vec<Option<String>> = redis::cmd("MGET")
                .arg(&keys)
                .query_async(&mut connection)
                .await
                .map_err(|e| failed(&what, e))?;
            Ok(ids
                .into_iter()
                .zip(raws)
                .filter_map(|(id, raw)| Some((id, self.live(raw)?.value)))
                .collect())
        })
    }

    fn remove<'a>(&'a self, principal: &'a str, kind: Kind, id: &'a str) -> Pending<'a, bool> {
        bounded(async move {
            let (index, values) = self.shelf_keys(principal, kind);
            let mut connection = self.connection();
            let what = format!("remove a {}", kind.name());
            let raw: Option<String> = redis::cmd("GETDEL")
                .arg(format!("{values}{id}"))
                .query_async(&mut connection)
                .await
                .map_err(|e| failed(&what, e))?;
            let _: i64 = redis::cmd("SREM")
                .arg(&index)
                .arg(id)
                .query_async(&mut connection)
                .await
                .map_err(|e| failed(&what, e))?;
            Ok(self.live(raw).is_some())
        })
    }
}

impl Redis {
    /// A stored value, while it lives on the shared clock.
    fn live(&self, raw: Option<String>) -> Option<Kept> {
        let now = self.clock.now_ms();
        raw.and_then(|raw| serde_json::from_str::<Kept>(&raw).ok())
            .filter(|k| k.until_ms > now)
    }
}
