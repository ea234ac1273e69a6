//! Waiting for an element to appear or go, polling until the deadline, with progress.

use super::*;

pub(super) const DEFAULT_WAIT_MS: u64 = 10_000;
pub(super) const MAX_WAIT_MS: u64 = 120_000;

/// Polls the screen (200 ms, growing to 2 s) until an element matches (or, with `gone`, until none
/// does), with progress notifications; the client's cancel ends it.
pub(super) async fn wait(state: &State, serial: &str, args: &UiArgs, ctx: &RequestContext<RoleServer>) -> Outcome {
    let (field, matcher, value) = query(args)?.ok_or("wait needs text, resourceId, contentDesc or className")?;
    let timeout = args.timeout_ms.unwrap_or(DEFAULT_WAIT_MS);
    if !(1..=MAX_WAIT_MS).contains(&timeout) {
        return Err(format!("timeoutMs must be between 1 and {MAX_WAIT_MS}; got {timeout}"));
    }
    let gone = args.gone.unwrap_or(false);
    let started = std::time::Instant::now();
    let token = ctx.meta.get_progress_token();
    let mut pause = Duration::from_millis(200);
    let mut polls = 0;
    let mut last = None;
    let limit = Duration::from_millis(timeout);
    loop {
        polls += 1;
        // Each look is bounded by what is left, so the wait ends within one look of its time.
        let look = crate::tools::time_left(started, limit, Duration::from_millis(200));
        let snap = match tokio::time::timeout(look, read_screen(state, serial, true)).await {
            Ok(snap) => snap?,
            Err(_) => break,
        };
        let found = find(&snap.tree, &snap.elements, field, &matcher, screen_bounds(&snap));
        last = describe(&snap.state, &snap.elements);
        if found.is_empty() == gone {
            let exact = matches!(matcher, Matcher::Exact(_));
            if let Some(selector) = recorded_query(field, exact, &value, found.first().map(|f| (&snap, &f.element))) {
                let timeout_ms = args.timeout_ms;
                let step = crate::flow::Action::Wait {
                    selector,
                    gone,
                    timeout_ms,
                };
                state.flows.record(serial, crate::flow::Step::new(step));
            }
            let mut out = output(UiOperation::Wait, serial);
            out.target = found.into_iter().next().map(|f| f.element);
            out.state = describe(&snap.state, &snap.elements);
            out.focused = snap.focused;
            out.count = Some(polls);
            out.hint = Some(format!("after {} ms", started.elapsed().as_millis()));
            return Ok((out, None));
        }
        if let Some(token) = &token {
            let message = format!(
                "poll {polls}: {:?} {}",
                crate::adb::cut(&value),
                if gone { "still there" } else { "not yet" }
            );
            let elapsed = started.elapsed().as_millis() as f64;
            let note =
                crate::context::budget::progress(token.clone(), elapsed, Some(timeout as f64), &message, state.budget);
            let _ = ctx.peer.notify_progress(note).await;
        }
        let Some(sleep) = crate::tools::next_pause(started, limit, pause) else {
            break;
        };
        tokio::select! {
            _ = tokio::time::sleep(sleep) => {}
            _ = ctx.ct.cancelled() => return Err("wait cancelled by the client".into()),
        }
        pause = (pause * 3 / 2).min(Duration::from_secs(2));
    }
    Err(format!(
        "{:?} {} after {} ms ({polls} looks); {}",
        crate::adb::cut(&value),
        if gone {
            "is still on the screen"
        } else {
            "did not appear"
        },
        started.elapsed().as_millis(),
        last.map_or("ui dump shows what is there".to_string(), |s| s.next)
    ))
}
