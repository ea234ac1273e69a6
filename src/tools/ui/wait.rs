//! Waiting for an element to appear or go, polling until the deadline, with progress.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::service::RequestContext;

use super::answer::{Done, Outcome, output};
use super::args::UiOperation;
use super::phone::describe;
use super::read::read_current;
use super::resolve::{not_on_screen, recorded_query};
use super::target::Query;
use crate::flow;
use crate::tools::State;
use crate::tools::poll::{Look, Pace, Polled, poll};

pub(super) const DEFAULT_WAIT_MS: u64 = 10_000;
pub(super) const MAX_WAIT_MS: u64 = crate::flow::js::LONGEST_WAIT_MS;

/// Polls the screen (200 ms, growing to 2 s) until an element matches (or, with `gone`, until none
/// does), with progress notifications; the client's cancel ends it. `timeout_ms` is what the
/// call gave (a recorded wait keeps it).
pub(super) async fn wait(
    state: &State,
    serial: &str,
    query: &Query,
    gone: bool,
    timeout: Duration,
    timeout_ms: Option<u64>,
    ctx: &RequestContext<RoleServer>,
) -> Outcome {
    let value = &query.value();
    let started = std::time::Instant::now();
    let pace = Pace {
        timeout,
        floor: Duration::from_millis(200),
        pause: |n| {
            (1..n).fold(Duration::from_millis(200), |p, _| {
                (p * 3 / 2).min(Duration::from_secs(2))
            })
        },
        look_name: "poll",
    };
    // The phone's state at the last look, for the way forward when the wait runs out.
    let last = std::sync::Mutex::new(None);
    let last = &last;
    let polled = poll(ctx, state.budget, pace, move |polls, bound| async move {
        let snap = match tokio::time::timeout(bound, read_current(state, serial)).await {
            Ok(Ok(snap)) => snap,
            Ok(Err(e)) => return Look::Failed(e.into()),
            Err(_) => return Look::TimeUp,
        };
        let found = query.find(&snap);
        *last.lock().unwrap_or_else(|p| p.into_inner()) = describe(&snap.state, &snap.elements);
        if found.is_empty() != gone {
            let saw = if gone { "still there" } else { "not yet" };
            return Look::NotYet(format!("{:?} {saw}", crate::android::text::echoed(value)));
        }
        let step =
            recorded_query(query, found.first().map(|f| (&snap, &f.element))).map(|selector| flow::Action::Wait {
                selector,
                gone,
                timeout_ms,
            });
        let mut out = output(UiOperation::Wait, serial);
        out.target = found.into_iter().next().map(|f| f.element);
        out.state = describe(&snap.state, &snap.elements);
        out.focused = snap.focused;
        out.count = Some(polls as usize);
        out.hint = Some(format!("after {} ms", started.elapsed().as_millis()));
        Look::Found((out, step))
    })
    .await;
    let polls = match polled {
        Polled::Found((out, step)) => {
            return Ok(Done {
                step,
                ..Done::answer(out, None)
            });
        }
        Polled::Failed(e) => return Err(e),
        Polled::Cancelled => return Err("wait cancelled by the client".into()),
        Polled::TimedOut { looks, .. } => looks,
    };
    let message = format!(
        "{:?} {} after {} ms ({polls} looks); {}",
        crate::android::text::echoed(value),
        if gone {
            "is still on the screen"
        } else {
            "did not appear"
        },
        started.elapsed().as_millis(),
        last.lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .map_or("ui dump shows what is there".to_string(), |s| s.next)
    );
    // An element that did not appear is not on the screen; one still there is no such kind.
    Err(if gone { message.into() } else { not_on_screen(message) })
}
