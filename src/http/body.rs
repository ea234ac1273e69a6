//! A POST body, read before rmcp parses it: within `BODY_TIMEOUT` in all (else 408), at most
//! `MAX_BODY` bytes, a large one (or one of unknown length) only while it holds a reading slot
//! (`LARGE_PER_PRINCIPAL` per principal, `LARGE_AT_ONCE` in all), so cheap-to-send bodies cannot
//! take the memory and the cores other clients' calls need. Then a scan by serde_json, building
//! nothing: more than `MAX_VALUES` values, nesting deeper than `MAX_DEPTH`, or a key twice in
//! one object is refused (400, a JSON-RPC error saying which) before rmcp builds the message.
//! Last, rmcp's plain-text 415 for what it cannot read becomes a JSON-RPC error.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::principals::Principal;

/// The largest request body read (rmcp's own default, set so both agree).
pub const MAX_BODY: usize = 4 << 20;
/// The most JSON values one message may hold (a tool call holds tens).
pub const MAX_VALUES: usize = 50_000;
/// The deepest one message may nest.
pub const MAX_DEPTH: usize = 64;
/// A body arrives whole within this.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// A body longer than this, or of unknown length, waits for a reading slot.
const LARGE: u64 = 64 << 10;
const LARGE_PER_PRINCIPAL: usize = 2;
const LARGE_AT_ONCE: usize = 4;

/// The reading slots for large bodies.
pub struct Bodies {
    each: Mutex<HashMap<Arc<str>, Arc<Semaphore>>>,
    all: Arc<Semaphore>,
}

impl Default for Bodies {
    fn default() -> Bodies {
        Bodies {
            each: Mutex::new(HashMap::new()),
            all: Arc::new(Semaphore::new(LARGE_AT_ONCE)),
        }
    }
}

impl Bodies {
    /// The principal's slot, then one of all: its own large bodies queue behind each other
    /// first, so one principal holds at most `LARGE_PER_PRINCIPAL` of the shared ones.
    async fn slot(&self, principal: &Principal) -> (OwnedSemaphorePermit, OwnedSemaphorePermit) {
        let own = self
            .each
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(principal.0.clone())
            .or_insert_with(|| Arc::new(Semaphore::new(LARGE_PER_PRINCIPAL)))
            .clone();
        let own = own.acquire_owned().await.expect("never closed");
        let all = self.all.clone().acquire_owned().await.expect("never closed");
        (own, all)
    }
}

fn refuse(status: StatusCode, why: String) -> Response {
    // The rest of the body, if any, is not read: the connection cannot carry another request.
    (status, [(header::CONNECTION, "close")], why).into_response()
}

/// Reads a POST's body within the bounds, scans it, and hands it on (see the module's comment).
/// A body as `read` read it, in its request's extensions.
#[derive(Clone)]
pub struct Read(pub axum::body::Bytes);

pub async fn read(bodies: &Bodies, request: Request, next: Next) -> Response {
    if request.method() != axum::http::Method::POST {
        return next.run(request).await;
    }
    let principal = request.extensions().get::<Principal>().cloned();
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let large = declared.is_none_or(|n| n > LARGE);
    let slot = match (&principal, large) {
        (Some(principal), true) => match tokio::time::timeout(BODY_TIMEOUT, bodies.slot(principal)).await {
            Ok(slot) => Some(slot),
            Err(_) => {
                tracing::warn!(principal = %principal.0, "refused a large body: no reading slot within the body timeout");
                return refuse(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!(
                        "Service Unavailable: this token's large bodies (over {LARGE} bytes) are read {LARGE_PER_PRINCIPAL} at a time, and none was free within {} s; retry later\n",
                        BODY_TIMEOUT.as_secs()
                    ),
                );
            }
        },
        _ => None,
    };
    let (parts, body) = request.into_parts();
    let bytes = match tokio::time::timeout(BODY_TIMEOUT, axum::body::to_bytes(body, MAX_BODY)).await {
        Ok(Ok(bytes)) => bytes,
        Err(_) => {
            tracing::warn!("refused a body that did not arrive within the body timeout");
            return refuse(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "Request Timeout: the body did not arrive whole within {} s; send it at once\n",
                    BODY_TIMEOUT.as_secs()
                ),
            );
        }
        Ok(Err(e)) => {
            let too_long = std::error::Error::source(&e).is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
            return if too_long {
                refuse(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("Payload Too Large: a request body is at most {MAX_BODY} bytes\n"),
                )
            } else {
                refuse(
                    StatusCode::BAD_REQUEST,
                    format!("Bad Request: the body could not be read: {e}\n"),
                )
            };
        }
    };
    if let Err((id, why)) = scan(&bytes) {
        tracing::warn!(%why, "refused a body");
        let error = crate::jsonrpc::error(id, -32600, &why);
        return (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "application/json")],
            error.to_string(),
        )
            .into_response();
    }
    drop(slot);
    let mut parts = parts;
    // Read once: what looks at the body after this (the token's scopes) takes it from here.
    parts.extensions.insert(Read(bytes.clone()));
    json_rpc_errors(Request::from_parts(parts, bytes.clone().into()), bytes, next).await
}

/// rmcp answers a body it cannot read with 415 and plain text; a JSON-RPC client expects 400 and
/// an error object: -32700 for what is not JSON, -32600 for JSON that is not a message this
/// server reads, with the request's id where it has one.
async fn json_rpc_errors(request: Request, bytes: axum::body::Bytes, next: Next) -> Response {
    let response = next.run(request).await;
    if response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return response;
    }
    let (head, text) = response.into_parts();
    let text = axum::body::to_bytes(text, 64 << 10).await.unwrap_or_default();
    let Some(why) = std::str::from_utf8(&text)
        .ok()
        .and_then(|t| t.strip_prefix("fail to deserialize request body "))
    else {
        return Response::from_parts(head, text.into());
    };
    let error = crate::jsonrpc::unreadable(&bytes, why);
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        error.to_string(),
    )
        .into_response()
}

/// Walks a body as JSON without building it: Err with the message's id (when seen before) and
/// what was wrong when it breaks a bound or repeats a key; Ok for anything else, JSON or not
/// (what is not JSON, rmcp says so).
pub fn scan(bytes: &[u8]) -> Result<(), (Value, String)> {
    let walk = Walk {
        left: Cell::new(MAX_VALUES),
        why: RefCell::new(None),
        id: RefCell::new(Value::Null),
    };
    let mut json = serde_json::Deserializer::from_slice(bytes);
    let walked = At {
        walk: &walk,
        depth: 0,
        is_id: false,
    }
    .deserialize(&mut json);
    match (walked, walk.why.into_inner()) {
        (Err(_), Some(why)) => Err((walk.id.into_inner(), why)),
        _ => Ok(()),
    }
}

struct Walk {
    left: Cell<usize>,
    why: RefCell<Option<String>>,
    id: RefCell<Value>,
}

/// One value of the walk: its depth, and whether it is the message's `id`.
#[derive(Clone, Copy)]
struct At<'w> {
    walk: &'w Walk,
    depth: usize,
    is_id: bool,
}

impl At<'_> {
    fn count<E: serde::de::Error>(&self) -> Result<(), E> {
        let left = self.walk.left.get();
        if left == 0 {
            return Err(self.refuse(format!(
                "Invalid Request: more than {MAX_VALUES} JSON values in one message; no request needs so many: send fewer"
            )));
        }
        self.walk.left.set(left - 1);
        Ok(())
    }

    fn refuse<E: serde::de::Error>(&self, why: String) -> E {
        let e = E::custom(&why);
        self.walk.why.replace(Some(why));
        e
    }

    fn inner<E: serde::de::Error>(&self) -> Result<At<'_>, E> {
        self.count()?;
        if self.depth == MAX_DEPTH {
            return Err(self.refuse(format!(
                "Invalid Request: JSON nested deeper than {MAX_DEPTH} levels; no request needs it: send a flatter message"
            )));
        }
        Ok(At {
            walk: self.walk,
            depth: self.depth + 1,
            is_id: false,
        })
    }

    fn scalar<E: serde::de::Error>(&self, id: impl FnOnce() -> Value) -> Result<(), E> {
        self.count()?;
        if self.is_id {
            self.walk.id.replace(id());
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for At<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for At<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        self.scalar(|| Value::Null)
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<(), E> {
        self.scalar(|| json!(v))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        self.scalar(|| json!(v))
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
        self.scalar(|| Value::Null)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        self.scalar(|| json!(crate::android::text::cut(v, 64)))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.scalar(|| Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = self.inner()?;
        while seq.next_element_seed(inner)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let inner = self.inner()?;
        let mut keys = HashSet::new();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if keys.contains(&key) {
                return Err(self.refuse(format!(
                    "Invalid Request: the key `{}` appears twice in one object; which one is meant is ambiguous: send it once",
                    crate::android::text::echoed(&key)
                )));
            }
            let is_id = self.depth == 0 && key == "id";
            keys.insert(key);
            map.next_value_seed(At { is_id, ..inner })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_DEPTH, MAX_VALUES, scan};

    #[test]
    fn bounds_and_repeated_keys_are_refused_and_the_rest_passes() {
        let many = format!("[{}]", vec!["0"; MAX_VALUES].join(","));
        assert!(scan(many.as_bytes()).unwrap_err().1.contains("JSON values"));
        let fewer = format!("[{}]", vec!["0"; MAX_VALUES - 1].join(","));
        assert!(scan(fewer.as_bytes()).is_ok());
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(scan(deep.as_bytes()).unwrap_err().1.contains("deeper"));
        let shallow = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(scan(shallow.as_bytes()).is_ok());
        let (id, why) = scan(br#"{"id":"r1","params":{"a":1,"b":{"k":1,"k":2}}}"#).unwrap_err();
        assert_eq!(id, "r1");
        assert!(why.contains("`k`"), "{why}");
        // The same key in two objects, an escaped twin, JSON or not: all for rmcp to read.
        assert!(scan(br#"{"a":{"k":1},"b":{"k":2}}"#).is_ok());
        assert!(scan(br#"{"k":1,"\u006b":2}"#).is_err(), "an escaped repeat is a repeat");
        assert!(scan(b"not json").is_ok());
    }
}
