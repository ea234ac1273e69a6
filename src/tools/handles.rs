//! Handles that outlive an instance (`--state`): the one door between a principal's cache and
//! the store instances share (`state::Handles`). Every entry a call made is kept there before
//! the call's answer leaves (`publish`, from `DroidMcp::dispatch`), so its `cacheId` reads
//! through any instance at once; an id this instance does not hold is looked up there under the
//! caller's principal (`find`), so another's id answers as a made-up one. Without `--state`
//! both do nothing.

use super::State;
use crate::context::cache::{Cache, parse_id};
use crate::state::Kind;

/// Keeps the entries this principal's calls made since the last time in the shared store. A
/// store out of reach is logged: the answer stands, and this instance still serves the id.
pub async fn publish(state: &State) {
    let Some(handles) = &state.handles else {
        return;
    };
    for entry in state.cache.unpublished() {
        let (json, ttl_ms) = Cache::export(&entry);
        if let Err(e) = handles.put(&state.principal, Kind::Cache, &entry.id, &json, Some(ttl_ms)).await {
            tracing::warn!(id = %entry.id, "a cache entry is served by this instance only: {e}");
        }
    }
}

/// Brings `id` into this principal's cache from the shared store when another instance made it.
pub async fn find(state: &State, id: &str) {
    let Some(handles) = &state.handles else {
        return;
    };
    if parse_id(id).is_err() || state.cache.peek(id).is_some() {
        return;
    }
    match handles.get(&state.principal, Kind::Cache, id).await {
        Ok(Some(json)) => {
            state.cache.adopt(id, &json);
        }
        Ok(None) => {}
        Err(e) => tracing::warn!(id, "the shared store could not be asked for a cache entry: {e}"),
    }
}
