//! `ui swipe`: between two points, or a finger's direction across a share of the screen.

use std::time::Duration;

use super::act::{Act, act, swipe_across};
use super::answer::{Outcome, output};
use super::args::UiOperation;
use super::command::SwipePath;
use super::input::Gesture;
use super::read::screen_size;
use crate::flow;
use crate::tools::State;

pub(super) async fn swipe(
    state: &State,
    serial: &str,
    path: &SwipePath,
    duration_ms: Option<u32>,
    lasts: Duration,
    observe: bool,
) -> Outcome {
    let mut out = output(UiOperation::Swipe, serial);
    let screen = screen_size(state, serial).await?;
    let (from, to) = match *path {
        SwipePath::Between { from, to } => (from, to),
        SwipePath::Toward { finger, distance } => swipe_across(screen, finger, distance.unwrap_or(60)),
    };
    for p in [from, to] {
        if p[0] < 0 || p[1] < 0 || p[0] >= screen[0] as i32 || p[1] >= screen[1] as i32 {
            return Err(format!("{p:?} is off the {}×{} screen", screen[0], screen[1]).into());
        }
    }
    out.at = Some(to);
    let step = match *path {
        SwipePath::Toward { finger, distance: None } => flow::Action::SwipeToward {
            direction: finger.name().into(),
            duration_ms,
        },
        _ => flow::Action::Swipe { from, to, duration_ms },
    };
    let gesture = Gesture::Swipe { from, to, lasts };
    act(
        state,
        serial,
        Act::new(out, step, String::new(), observe).gesture(Some(gesture)),
    )
    .await
}
