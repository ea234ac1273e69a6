//! Who may act on a device: the one door. A device is its holder's while a lease on it lives
//! (`adb-device lease`, or a person's take-over in the device panel, `crate::panel`), in the store
//! every principal shares (`state::Leases`; the rule itself is `state::Lease::lets`). An acting
//! call (`Command::acts`) by anyone else is refused, naming the holder and until when; the
//! holder's acting calls renew it. It lives with the tools, below the panel, because a script's
//! calls pass it too.

use std::time::Duration;

use rmcp::model::CallToolResult;

use super::State;
use super::command::Command;
use crate::state::{Holder, Lease, Taken};

/// How long a person's take-over lasts from the panel's last acting call or hold.
pub const PANEL_TTL: Duration = Duration::from_secs(3600);

/// The caller: this principal's assistant, or a person at its panel.
pub fn holder(state: &State, person: bool) -> Holder {
    Holder {
        principal: state.principal.to_string(),
        person,
    }
}

/// The key of the device a call resolved to `serial`: the phone itself, whichever route or name
/// reaches it (`Adb::identity`: its ro.serialno; an emulator's with its boot id), read once per
/// route. A device that cannot say which phone it is gets no lease, and acting calls on it are
/// refused while any lease lives: keyed by its route instead, another route to the same phone
/// would pass. A replay's shards tell two routes to one phone by it too (`replay::suite`).
pub async fn key(state: &State, serial: &str) -> Result<String, String> {
    state.adb.identity(serial).await.map_err(|e| e.to_string())
}

/// When a lease ends, as people read it (UTC, to the millisecond: a renewal shows).
pub fn until(lease: &Lease) -> String {
    i64::try_from(lease.until_ms)
        .ok()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map_or_else(
            || format!("{} ms after 1970", lease.until_ms),
            |t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        )
}

/// Who holds a lease, as a message names them.
pub fn who(lease: &Lease) -> String {
    match lease.holder.person {
        true => format!("a person ({}) in the droidmcp device panel", lease.holder.principal),
        false => lease.holder.principal.clone(),
    }
}

/// Why `caller` may not act on `serial`, held by `lease`: who holds it, until when, what to do.
pub fn refused(serial: &str, lease: &Lease, caller: &Holder) -> String {
    let until = until(lease);
    if lease.holder.person && lease.holder.principal == caller.principal {
        return format!(
            "a person has taken over {serial} in the droidmcp device panel: acting calls on it are paused until they release it (at the latest {until}), and nothing was done. Reading the screen (ui dump, find, screenshot) still works; ask them, or try again later"
        );
    }
    format!(
        "{serial} is leased to {} until {until}: another's acting calls on it are refused, and nothing was done. Reading (ui dump, screenshot, properties, logcat read) still works. Wait until then (each of their acting calls renews it), ask {} to release it (adb-device release), or lease another device (adb-device lease with match)",
        who(lease),
        lease.holder.principal
    )
}

/// Whether a call acts: the one reading of `Command::acts` (the registry's `Built::acts` too).
pub fn acts(command: &impl Command) -> bool {
    command.acts()
}

/// The answer to an acting call on a device someone else holds: refused, nothing done. `None`
/// lets the call run (calls that only read, free devices, the holder's own calls, which renew
/// its lease). It reads the typed command (`Command::acts`, `Command::device`), once it is
/// built: a call that cannot be built is refused for its arguments first. The server's calls,
/// the panel's (`by_panel`: a person) and a script's come here.
pub async fn refusal(state: &State, command: &impl Command, by_panel: bool) -> Option<CallToolResult> {
    if !acts(command) {
        return None;
    }
    match state.leases.list().await {
        Ok(leases) if leases.is_empty() => return None,
        Ok(_) => {}
        Err(e) => {
            return Some(super::error(format!(
                "could not read the device leases ({e}); nothing was done"
            )));
        }
    }
    let serial = state.device(command.device()).await.ok()?;
    let caller = holder(state, by_panel);
    let key = match key(state, &serial).await {
        Ok(key) => key,
        Err(e) => {
            return Some(super::error(format!(
                "{e}; while a device is leased, acting calls need it, so nothing was done"
            )));
        }
    };
    match state.leases.touch(&key, &caller).await {
        Ok(None | Some(Taken::Yours(_))) => None,
        Ok(Some(Taken::Theirs(lease))) => Some(super::error(refused(&serial, &lease, &caller))),
        Err(e) => Some(super::error(format!(
            "could not check the lease on {serial} ({e}); nothing was done"
        ))),
    }
}
