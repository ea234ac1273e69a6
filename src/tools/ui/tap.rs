//! `ui tap` and `ui long-press`: aim (`resolve.rs`'s `land`, verified against what a replayed
//! step recorded), then press there: a web element through DevTools, anything else through `input.rs`.

use std::time::Duration;

use super::act::{Act, act, web_target};
use super::answer::{Outcome, output};
use super::args::UiOperation;
use super::input::Gesture;
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
    out.aimed_by_reading_ms = landing.reading_ms;
    // A point within a web element is pressed there, as any point is: DevTools taps its centre.
    let web = match landing.within {
        Some(_) => None,
        None => web_target(state, serial, landing.element.as_ref()),
    };
    let web = web.map(|(page, selector)| WebAction::Tap { page, selector });
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
        Act::new(out, step, String::new(), observe)
            .web(web)
            .gesture(Some(Gesture::Tap(landing.at)))
            .aimed(aimed),
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
    out.aimed_by_reading_ms = landing.reading_ms;
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
    let press = Gesture::Press { at: [x, y], lasts };
    let aimed = target.reads_screen();
    act(
        state,
        serial,
        Act::new(out, step, String::new(), observe)
            .gesture(Some(press))
            .aimed(aimed),
    )
    .await
}
