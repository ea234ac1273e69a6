//! `ui scroll`: one swipe across 60% of the screen, or swipes until an element is on it (at
//! most `MAX_SCROLLS`, stopping where nothing moves any more).

use std::time::Duration;

use super::act::swipe_across;
use super::answer::{Done, Observe, Outcome, output};
use super::args::UiOperation;
use super::command::ContentDirection;
use super::input::{self, Gesture};
use super::read::{observed, read_current, read_screen, screen_bounds, screen_size};
use super::resolve::{not_on_screen, recorded_query};
use super::target::Query;
use crate::flow;
use crate::tools::State;

pub(super) const MAX_SCROLLS: usize = 8;

pub(super) async fn scroll(
    state: &State,
    serial: &str,
    toward: ContentDirection,
    until: Option<&Query>,
    observe: bool,
) -> Outcome {
    let screen = screen_size(state, serial).await?;
    // The finger moves against the content: to scroll down, swipe up.
    let (from, to) = swipe_across(screen, toward.finger(), 60);
    let swipe = Gesture::Swipe {
        from,
        to,
        lasts: Duration::from_millis(300),
    };
    let mut out = output(UiOperation::Scroll, serial);
    let Some(query) = until else {
        let before = match observe {
            true => {
                let now = read_screen(state, serial).await?;
                Some(now)
            }
            false => None,
        };
        out.via = Some(input::send(state, serial, &swipe).await?);
        out.at = Some(to);
        return Ok(Done {
            out,
            image: None,
            step: Some(flow::Action::Scroll {
                direction: toward.name().into(),
                until: None,
            }),
            observe: before.map(|before| Observe {
                before,
                unchanged: format!(
                    "unchanged: nothing moved; the end is reached scrolling {}",
                    toward.name()
                ),
            }),
        });
    };
    let first = read_current(state, serial).await?;
    let mut snap = first.clone();
    for attempt in 0..=MAX_SCROLLS {
        let found = query.find(&snap);
        if let Some(hit) = found
            .into_iter()
            .find(|f| screen_bounds(&snap).contains(f.element.at[0], f.element.at[1]))
        {
            let step = flow::Action::Scroll {
                direction: toward.name().into(),
                until: recorded_query(query, Some((&snap, &hit.element))),
            };
            out.target = Some(hit.element);
            out.count = Some(attempt);
            out.focused = snap.focused.clone();
            out.hint = Some(format!("found after {attempt} scrolls; tap {{ref}} acts on it"));
            if observe {
                out.observed = Some(observed(&first, &snap));
            }
            return Ok(Done {
                out,
                image: None,
                step: Some(step),
                observe: None,
            });
        }
        if attempt == MAX_SCROLLS {
            break;
        }
        out.via = Some(input::send(state, serial, &swipe).await?);
        tokio::time::sleep(Duration::from_millis(250)).await;
        let next = read_current(state, serial).await?;
        if next.signature == snap.signature {
            return Err(not_on_screen(format!(
                "{:?} is not on the screen, and scrolling {} changes nothing more: the end is reached",
                crate::android::text::echoed(&query.value()),
                toward.name()
            )));
        }
        snap = next;
    }
    Err(not_on_screen(format!(
        "{:?} did not appear in {MAX_SCROLLS} scrolls {}",
        query.value(),
        toward.name()
    )))
}
