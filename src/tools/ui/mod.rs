//! `ui`: what is on the screen (a compact, paged element list), finding and waiting for an
//! element, acting on it (tap, long press, swipe, type, key, scroll), and screenshots as JPEG
//! image blocks with a tap grid. A call's wire form (`args.rs`) is built into a `UiCommand`
//! (`command.rs`); its `Command::apply`, here, hands it to its operation's file (`dump.rs`, `find.rs`, `tap.rs`,
//! `swipe.rs`, `key.rs`, `typing.rs`, `scroll.rs`, `wait.rs`, `screenshot.rs`), each returning a
//! `Done` (`answer.rs`); an acting operation's `Done` holds the step it took, which `finish`
//! records once it worked. Beneath them: reading the screen (`read.rs`), resolving a target
//! (`resolve.rs`), acting (`act.rs`), the phone's state (`phone.rs`), web content (`web.rs`),
//! screenshots (`capture.rs`) and typing by broadcast (`ime.rs`).

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::service::RequestContext;

use super::command::{Command, Deadline};
use super::{State, error, error_of, handles};
use crate::context::budget::respond;

mod act;
mod answer;
mod args;
mod capture;
pub mod command;
mod dump;
mod find;
mod ime;
mod input;
mod key;
mod phone;
mod read;
mod resolve;
mod screenshot;
mod scroll;
mod swipe;
mod tap;
mod target;
#[cfg(test)]
mod tests;
mod typing;
mod wait;
mod web;

use answer::{Observe, Outcome, name_of};
use capture::capture;
use dump::dump;
use find::find;
use key::key;
use phone::describe;
use read::{observed, read_after_acting, read_current};
use screenshot::screenshot;
use scroll::scroll;
use swipe::swipe;
use tap::{long_press, tap};
use typing::type_text;
use wait::wait;

pub use act::input_text;
pub use answer::{Observed, UiOutput};
pub use args::{MatchKind, Space, UiArgs, UiOperation, WireDirection, fields_of};
pub use capture::Shot;
pub use command::{ContentDirection, FingerDirection, SwipePath, Typing, UiAction, UiCommand};
pub use input::Inputs;
pub use phone::PhoneState;
pub use read::{Snapshot, read};
pub use target::{Query, Target};
pub use web::WebPage;

/// How an answer names the phone's state in a reading (asleep, locked, the keyboard, a dialog…)
/// and the way forward; `None` when the phone is simply ready.
pub fn phone_state(snapshot: &Snapshot) -> Option<PhoneState> {
    phone::describe(&snapshot.state, &snapshot.elements)
}

/// What the device panel shows (`crate::panel`): a fresh reading, its refs numbered and
/// remembered as a dump's, and the screen as base64 JPEG (longest side `max_size`), in the
/// device's turn so that a frame never races a tap.
pub async fn view(state: &State, serial: &str, max_size: u32) -> Result<(Snapshot, Shot, String), String> {
    let _turn = state.device_turn(serial, "the device panel's frame").await?;
    let snapshot = read_current(state, serial).await?;
    let (shot, block) = capture(state, serial, max_size, false, None).await?;
    let jpeg = block.as_image().map(|i| i.data.clone()).unwrap_or_default();
    Ok((snapshot, shot, jpeg))
}

/// What the server needs of a ui call (`tools::command::Command`): its one parse (`command.rs`),
/// its deadline, whether it acts or runs long, and its apply.
impl Command for UiCommand {
    fn parse(args: JsonObject) -> Result<UiCommand, String> {
        UiCommand::build(args)
    }

    /// A wait bounds itself by its timeoutMs; a long press or a swipe lasts its duration on the
    /// device, on top of the usual time.
    fn deadline(&self) -> Deadline {
        match self.action {
            UiAction::Wait { .. } => Deadline::Own,
            _ => Deadline::Within {
                timeout: None,
                gesture: Duration::from_millis(self.action.gesture_ms()),
            },
        }
    }

    fn runs_long(&self) -> bool {
        matches!(self.action, UiAction::Wait { .. })
    }

    fn acts(&self) -> bool {
        use UiAction::*;
        match self.action {
            Tap { .. } | LongPress { .. } | Swipe { .. } | Type(_) | Key { .. } | Scroll { .. } => true,
            Dump { .. } | Find { .. } | Wait { .. } | Screenshot { .. } => false,
        }
    }

    fn device(&self) -> Option<&str> {
        self.device.as_deref()
    }

    /// Hands the command to its operation's file, in the device's turn where it acts, then
    /// `finish`es it (records its step, observes) and shapes the answer for the budget.
    async fn apply(self, state: Arc<State>, ctx: RequestContext<RoleServer>) -> CallToolResult {
        let (state, command) = (&*state, self);
        let serial = match state.device(command.device.as_deref()).await {
            Ok(s) => s,
            Err(e) => return error(e.to_string()),
        };
        let action = &command.action;
        // Actions and screenshots on one device take turns, so a screenshot never races a tap;
        // reads (dump, find, wait) and other devices go on in parallel.
        let _turn = match action {
            UiAction::Dump { .. } | UiAction::Find { .. } | UiAction::Wait { .. } => None,
            _ => match state
                .device_turn(&serial, &format!("ui {}", name_of(action.operation())))
                .await
            {
                Ok(turn) => Some(turn),
                Err(e) => return error(e),
            },
        };
        // Every operation may change the recording: an act records, a reading gives the
        // newest step its outcome and learns the secret fields.
        let shared = handles::recording_in(state, &serial).await;
        let lasts = Duration::from_millis(action.gesture_ms());
        let outcome = match action {
            UiAction::Dump { limit, offset, filter } => dump(state, &serial, *limit, *offset, filter.as_deref()).await,
            UiAction::Find { query, grid } => find(state, &serial, query, *grid).await,
            UiAction::Tap {
                target,
                observe,
                recorded,
            } => tap(state, &serial, target, *observe, recorded.as_ref()).await,
            UiAction::LongPress {
                target,
                duration_ms,
                observe,
                recorded,
            } => long_press(state, &serial, target, *duration_ms, lasts, *observe, recorded.as_ref()).await,
            UiAction::Swipe {
                path,
                duration_ms,
                observe,
            } => swipe(state, &serial, path, *duration_ms, lasts, *observe).await,
            UiAction::Type(typing) => type_text(state, &serial, typing).await,
            UiAction::Key { name, code, observe } => key(state, &serial, name, *code, *observe).await,
            UiAction::Scroll { toward, until, observe } => {
                scroll(state, &serial, *toward, until.as_ref(), *observe).await
            }
            UiAction::Wait {
                query,
                gone,
                timeout,
                timeout_ms,
            } => wait(state, &serial, query, *gone, *timeout, *timeout_ms, &ctx).await,
            UiAction::Screenshot {
                grid,
                annotate,
                max_size,
            } => screenshot(state, &serial, *grid, *annotate, *max_size).await,
        };
        let finished = finish(state, &serial, outcome).await;
        handles::recording_out(state, &serial, shared).await;
        match finished {
            Ok(done) => {
                let mut result = respond(
                    &done.out,
                    state.budget,
                    &state.cache,
                    &format!("ui {} on {serial}", done.out.operation),
                );
                result.content.extend(done.image);
                result
            }
            Err(failed) => error_of(failed.message, failed.kind),
        }
    }
}

/// After an operation worked: the step it took is recorded (the one place ui records), then
/// the screen after it is read for an `observe`; that reading is the step's outcome.
async fn finish(state: &State, serial: &str, outcome: Outcome) -> Outcome {
    let mut done = outcome?;
    if let Some(step) = done.step.take() {
        state.flows.record(serial, step);
    }
    if let Some(Observe { before, unchanged }) = done.observe.take() {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let after = read_after_acting(state, serial).await?;
        let seen = observed(&before, &after);
        if !seen.changed {
            done.out.hint = Some(unchanged);
        }
        done.out.observed = Some(seen);
        done.out.focused = after.focused.clone();
        done.out.state = describe(&after.state, &after.elements);
    }
    Ok(done)
}
