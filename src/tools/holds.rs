//! The take-over pause: the devices a person holds in the device panel (`crate::panel`), and
//! the refusal an assistant's acting call on one gets. It lives with the tools, below the panel,
//! because a script's calls check it too.

use std::collections::HashSet;
use std::sync::Mutex;

use rmcp::model::CallToolResult;

use super::State;
use super::command::Command;

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

/// The answer to an acting call on a device a person holds: refused, nothing done. `None` lets
/// the call run (the panel's own calls, calls that only read, devices nobody holds). It reads
/// the typed command (`Command::acts`, `Command::device`), once it is built: a call that cannot
/// be built is refused for its arguments first. The server's calls and a script's come here.
/// Whether a built command acts on the device, as its command says: what the take-over pauses
/// and what needs the `act` scope rather than `read` (`registry::Tool::scope`).
pub fn acting(command: &impl Command) -> bool {
    command.acts()
}

pub async fn refusal(state: &State, command: &impl Command, by_panel: bool) -> Option<CallToolResult> {
    if by_panel || !state.holds.any() || !acting(command) {
        return None;
    }
    let serial = state.device(command.device()).await.ok()?;
    state.holds.holds(&serial).then(|| {
        super::error(format!(
            "a person has taken over {serial} in the droidmcp device panel: acting calls on it are paused until they release it, and nothing was done. Reading the screen (ui dump, find, screenshot) still works; ask them, or try again later"
        ))
    })
}
