//! The take-over pause: the devices a person holds in the device panel (`crate::panel`), and
//! the refusal an assistant's acting call on one gets. It lives with the tools, below the panel,
//! because a script's calls check it too.

use std::collections::HashSet;
use std::sync::Mutex;

use rmcp::model::{CallToolResult, JsonObject};
use serde_json::Value;

use super::State;

/// The devices a person has taken over in the panel, for this principal.
#[derive(Debug, Default)]
pub struct Holds(Mutex<HashSet<String>>);

impl Holds {
    pub fn holds(&self, serial: &str) -> bool {
        self.lock().contains(serial)
    }

    pub fn set(&self, serial: &str, held: bool) {
        match held {
            true => self.lock().insert(serial.to_string()),
            false => self.lock().remove(serial),
        };
    }

    pub fn any(&self) -> bool {
        !self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Whether a call acts on a device (and so waits while a person holds it): what the recording
/// records, and the shell. Reading (dump, find, screenshot, logs, export) goes on.
fn acts(tool: &str, args: &JsonObject) -> bool {
    let op = args.get("operation").and_then(Value::as_str).unwrap_or_default();
    match tool {
        "ui" => matches!(op, "tap" | "long-press" | "swipe" | "type" | "key" | "scroll"),
        "adb-app" => matches!(op, "launch" | "stop" | "clear-data" | "install" | "uninstall"),
        "adb-shell" => true,
        "adb-device" => op == "emulator",
        _ => false,
    }
}

/// The answer to an acting call on a device a person holds: refused, nothing done. `None` lets
/// the call run (the panel's own calls, calls that only read, devices nobody holds).
pub async fn refusal(state: &State, tool: &str, args: &JsonObject, by_panel: bool) -> Option<CallToolResult> {
    if by_panel || !state.holds.any() || !acts(tool, args) {
        return None;
    }
    let requested = args.get("device").and_then(Value::as_str);
    let serial = state.device(requested).await.ok()?;
    state.holds.holds(&serial).then(|| {
        super::error(format!(
            "a person has taken over {serial} in the droidmcp device panel: acting calls on it are paused until they release it, and nothing was done. Reading the screen (ui dump, find, screenshot) still works; ask them, or try again later"
        ))
    })
}
