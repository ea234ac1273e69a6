//! The one poll loop, for every wait (`adb-device wait`, `ui wait`): look, and until a look
//! finds what it waits for, report progress, pause, and look again, until the time is up or the
//! client cancels.

use std::future::Future;
use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::service::RequestContext;

/// What one look saw.
pub enum Look<T, E> {
    /// What the wait waits for: it ends with this.
    Found(T),
    /// Not yet; what it saw instead (the progress message and, for the last look, the error).
    NotYet(String),
    /// A failure that ends the wait at once.
    Failed(E),
    /// The look itself ran out of time: the wait is over.
    TimeUp,
}

/// How a wait ended.
pub enum Polled<T, E> {
    Found(T),
    Failed(E),
    /// The time is up after `looks` looks; `last` is what the last one saw.
    TimedOut {
        looks: u32,
        last: String,
    },
    Cancelled,
}

/// How a wait paces itself.
pub struct Pace {
    /// How long it may take in all.
    pub timeout: Duration,
    /// A look gets what is left of the time, but at least this (a fair chance to finish).
    pub floor: Duration,
    /// The pause after look `n` (from 1).
    pub pause: fn(u32) -> Duration,
    /// What a progress message calls a look ("check", "poll").
    pub look_name: &'static str,
}

/// Looks (`look(n, time for this look)`) until one finds what the wait waits for, fails, or the
/// time is up; between looks it sends a progress notification when the client asked for them,
/// and pauses (cut to what is left, so it looks once more at the deadline rather than give up a
/// pause early); the client's cancel ends it.
pub async fn poll<T, E, F, Fut>(
    ctx: &RequestContext<RoleServer>,
    budget: usize,
    pace: Pace,
    mut look: F,
) -> Polled<T, E>
where
    F: FnMut(u32, Duration) -> Fut,
    Fut: Future<Output = Look<T, E>>,
{
    let started = Instant::now();
    let token = ctx.meta.get_progress_token();
    let mut looks = 0;
    loop {
        looks += 1;
        // Each look is bounded by what is left of the wait, so it ends within one look's time.
        let bound = pace.timeout.saturating_sub(started.elapsed()).max(pace.floor);
        let last = match look(looks, bound).await {
            Look::Found(found) => return Polled::Found(found),
            Look::Failed(e) => return Polled::Failed(e),
            Look::TimeUp => {
                return Polled::TimedOut {
                    looks,
                    last: String::new(),
                };
            }
            Look::NotYet(saw) => saw,
        };
        if let Some(token) = &token {
            let message = format!("{} {looks}: {last}", pace.look_name);
            let elapsed = started.elapsed().as_millis() as f64;
            let total = Some(pace.timeout.as_millis() as f64);
            let note = crate::context::budget::progress(token.clone(), elapsed, total, &message, budget);
            let _ = ctx.peer.notify_progress(note).await;
        }
        let left = pace.timeout.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Polled::TimedOut { looks, last };
        }
        tokio::select! {
            _ = tokio::time::sleep((pace.pause)(looks).min(left)) => {}
            _ = ctx.ct.cancelled() => return Polled::Cancelled,
        }
    }
}
