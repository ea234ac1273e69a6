//! Time a call spends queued (behind another call's turn on the device, or another call's
//! connection to it) is not its own work. Each call runs inside `counting`; whatever waits wraps
//! the wait in `waited`, and the server moves the call's deadline by the total (`server.rs`).
//! Every such wait has its own bound and its own message.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};

/// The time a call spent queued, and whether it is queued now.
#[derive(Debug, Default)]
pub struct Queue {
    pub waited_ms: AtomicU64,
    pub waiting: AtomicBool,
}

tokio::task_local! {
    /// The running call's queue (set by `server.rs` for every call).
    static QUEUED: Arc<Queue>;
}

/// Runs a call, counting in `queue` the time it waits in `waited`.
pub async fn counting<F: Future>(queue: Arc<Queue>, call: F) -> F::Output {
    QUEUED.scope(queue, call).await
}

/// Awaits `wait` as time queued: outside a call (a test, a script's own task) it is just awaited.
pub async fn waited<F: Future>(wait: F) -> F::Output {
    let _queued = Queued::start();
    wait.await
}

/// Marks the call queued until dropped, so a wait that is cancelled still ends its count.
struct Queued(std::time::Instant);

impl Queued {
    fn start() -> Queued {
        let _ = QUEUED.try_with(|q| q.waiting.store(true, SeqCst));
        Queued(std::time::Instant::now())
    }
}

impl Drop for Queued {
    fn drop(&mut self) {
        let _ = QUEUED.try_with(|q| {
            q.waited_ms.fetch_add(self.0.elapsed().as_millis() as u64, SeqCst);
            q.waiting.store(false, SeqCst);
        });
    }
}
