//! The guard every tool call passes: a task of its own, stopped by the client's cancel or its
//! deadline (moved by the time it waited in a queue), a panic turned into an `isError` result,
//! links dropped for an old protocol, and the answer through the budget.

use rmcp::model::CallToolResult;

use super::CALL_GRACE;
use crate::tools;

/// What `guard` needs to know about one call.
pub(super) struct Call {
    pub cancel: tokio_util::sync::CancellationToken,
    pub limit: Option<std::time::Duration>,
    /// Whether the limit came from the call's own `timeoutMs` (else the server's `--timeout-ms`),
    /// which decides what a timed-out call is told to raise.
    pub own_timeout: bool,
    /// Whether the session's protocol has `resource_link` blocks (2025-06-18 on): an older
    /// client rejects a whole result that holds one.
    pub links: bool,
    /// The answer's size limit in chars (`--budget`).
    pub budget: usize,
}

/// Runs one tool call as a task of its own. The client's cancellation (or the server shutting
/// down) aborts it, which drops its device streams and so ends the device command at once. A
/// panic, which would otherwise leave the request unanswered, becomes an `isError` result and
/// the server goes on serving.
pub(super) async fn guard(call: Call, work: impl Future<Output = CallToolResult> + Send + 'static) -> CallToolResult {
    let result = run_guarded(&call.cancel, call.limit, call.own_timeout, work).await;
    let result = if call.links { result } else { without_links(result) };
    // The one place every answer passes: none leaves larger than the budget (a plain-text
    // error, which may quote an argument, than MAX_ERROR_CHARS).
    let limit = if result.is_error == Some(true) && result.structured_content.is_none() {
        MAX_ERROR_CHARS.min(call.budget)
    } else {
        call.budget
    };
    crate::context::budget::enforce(result, limit)
}

async fn run_guarded(
    cancel: &tokio_util::sync::CancellationToken,
    limit: Option<std::time::Duration>,
    own_timeout: bool,
    call: impl Future<Output = CallToolResult> + Send + 'static,
) -> CallToolResult {
    // Time queued (behind another call's long scroll on the device, or its connection to it) is
    // not the call's own work: the deadline moves by it (each wait has its own bound).
    let queue = std::sync::Arc::new(crate::adb::queue::Queue::default());
    let mut task = tokio::spawn(crate::adb::queue::counting(queue.clone(), call));
    let deadline = async {
        use std::sync::atomic::Ordering::SeqCst;
        let Some(limit) = limit else {
            return std::future::pending().await;
        };
        let started = tokio::time::Instant::now();
        let mut counted = 0;
        loop {
            tokio::time::sleep_until(started + limit + std::time::Duration::from_millis(counted)).await;
            if queue.waiting.load(SeqCst) {
                // Still in the queue: look again shortly (the wait itself is bounded).
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
            let now = queue.waited_ms.load(SeqCst);
            if now == counted {
                break;
            }
            counted = now;
        }
    };
    tokio::select! {
        joined = &mut task => match joined {
            Ok(result) => result,
            Err(e) if e.is_panic() => {
                let what = e.into_panic();
                let what = what
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| what.downcast_ref::<&str>().copied())
                    .unwrap_or("a panic");
                tracing::error!(what, "a tool call panicked");
                tools::error(format!(
                    "internal error: this call failed on a bug in droidmcp ({}); nothing else is affected. Please report it with the arguments you used",
                    crate::android::text::echoed(what)
                ))
            }
            Err(_) => tools::error("the call was aborted"),
        },
        _ = cancel.cancelled() => {
            task.abort();
            tools::error("cancelled by the client; droidmcp closed the call's device streams, which ends their commands")
        }
        _ = deadline => {
            task.abort();
            let ms = limit.unwrap_or_default().saturating_sub(CALL_GRACE).as_millis();
            let raise = if own_timeout {
                "pass a larger timeoutMs"
            } else {
                "start droidmcp with a larger --timeout-ms (the bound of calls without a timeoutMs of their own)"
            };
            tools::error(format!(
                "the call ran past its {ms} ms timeout, so it was stopped and its device streams closed, which ends their commands: the device answers slowly or not at all. Check `adb-device health`, or {raise}"
            ))
        }
    }
}

/// For a session older than 2025-06-18: the answer's `resource_link` blocks go, and its budget
/// hint names their URIs instead (with the text twin rewritten to match).
fn without_links(mut result: CallToolResult) -> CallToolResult {
    let uris: Vec<String> = result
        .content
        .iter()
        .filter_map(|c| c.as_resource_link().map(|r| r.uri.clone()))
        .collect();
    if uris.is_empty() {
        return result;
    }
    result.content.retain(|c| c.as_resource_link().is_none());
    if let Some(serde_json::Value::Object(answer)) = result.structured_content.as_mut() {
        if let Some(serde_json::Value::Object(note)) = answer.get_mut("budget") {
            let hint = note.get("hint").and_then(|h| h.as_str()).unwrap_or_default();
            let hint = format!("{hint}; resources/read {} returns it whole", uris.join(", "));
            note.insert("hint".into(), serde_json::Value::String(hint));
        }
        let twin = serde_json::Value::Object(answer.clone()).to_string();
        if let Some(first) = result.content.first_mut().filter(|c| c.as_text().is_some()) {
            *first = rmcp::model::ContentBlock::text(twin);
        }
    }
    result
}

/// Error texts are written by us but may quote arguments (serde quotes a wrong value whole): a
/// plain-text error never outgrows this many chars, whatever it was given.
pub(super) const MAX_ERROR_CHARS: usize = 1000;

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::run_guarded;

    /// A call its deadline stopped is told the bound it can raise: its own `timeoutMs` when the
    /// limit was its own, else the server's `--timeout-ms` (a screenshot takes no timeoutMs).
    #[tokio::test]
    async fn a_stopped_call_is_told_which_bound_to_raise() {
        let cancel = tokio_util::sync::CancellationToken::new();
        let limit = Some(Duration::from_millis(50) + super::CALL_GRACE);
        for (own, says, never) in [
            (true, "pass a larger timeoutMs", "--timeout-ms"),
            (false, "--timeout-ms", "pass a larger timeoutMs"),
        ] {
            let slow = async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                crate::tools::error("finished")
            };
            let result = run_guarded(&cancel, limit, own, slow).await;
            let text = result.content[0].as_text().unwrap().text.clone();
            assert!(text.contains("50 ms timeout") && text.contains(says), "{text}");
            assert!(!text.contains(never), "{text}");
        }
    }
}
