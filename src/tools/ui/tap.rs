//! `ui tap` and `ui long-press`: aim (`resolve.rs`'s `land`, verified against what a replayed
//! step recorded), then press there: a web element through DevTools, anything else with `input`.

use std::time::Duration;

use super::act::{Act, act, web_target};
use super::answer::{Outcome, output};
use super::args::UiOperation;
use super::resolve::land;
use super::target::Target;
use super::web::WebAction;
use crate::flow::{self, Recorded};
use crate::tools::State;

pub(super) async fn tap(
    state: &State,
    serial: &str,
    target: &Target,
    observe: bool,
    recorded: Option<&Recorded>,
) -> Outcome {
    let mut out = output(UiOperation::Tap, serial);
    let landing = land(state, serial, target, recorded).await?;
    out.at = Some(landing.at);
    // A point within a web element is pressed there, as any point is: DevTools taps its centre.
    let web = match landing.within {
        Some(_) => None,
        None => web_target(state, serial, landing.element.as_ref()),
    };
    let (command, web) = match web {
        Some((page, selector)) => (String::new(), Some(WebAction::Tap { page, selector })),
        None => (format!("input tap {} {}", landing.at[0], landing.at[1]), None),
    };
    out.target = landing.element;
    let step = match landing.within {
        Some(within) => flow::Action::Command(flow::commands::Command::Tap(flow::commands::Tap::within(
            landing.selector,
            within,
            false,
        ))),
        None => flow::Action::Tap {
            target: landing.selector,
        },
    };
    let aimed = target.reads_screen();
    act(
        state,
        serial,
        Act::new(out, step, command, observe).web(web).aimed(aimed),
    )
    .await
}

/// A press held `lasts` (the command's duration, clamped as the device is asked).
pub(super) async fn long_press(
    state: &State,
    serial: &str,
    target: &Target,
    duration_ms: Option<u32>,
    lasts: Duration,
    observe: bool,
    recorded: Option<&Recorded>,
) -> Outcome {
    let mut out = output(UiOperation::LongPress, serial);
    let landing = land(state, serial, target, recorded).await?;
    let [x, y] = landing.at;
    out.at = Some(landing.at);
    out.target = landing.element;
    // Within an element, kept as Maestro's longPressOn at that point (which has no length).
    let step = match landing.within {
        Some(within) => flow::Action::Command(flow::commands::Command::Tap(flow::commands::Tap::within(
            landing.selector,
            within,
            true,
        ))),
        None => flow::Action::LongPress {
            target: landing.selector,
            duration_ms,
        },
    };
    let command = format!("input swipe {x} {y} {x} {y} {}", lasts.as_millis());
    let aimed = target.reads_screen();
    act(
        state,
        serial,
        Act::new(out, step, command, observe).lasting(lasts).aimed(aimed),
    )
    .await
}
