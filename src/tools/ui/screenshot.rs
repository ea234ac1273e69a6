//! `ui screenshot`: the screen as a JPEG image block, with the tap grid or the elements'
//! numbered boxes (as a fresh dump's refs) drawn on it; a black frame names the phone's state.

use super::answer::{Done, Outcome, UiOutput, output};
use super::args::UiOperation;
use super::capture::{JPEG_QUALITY, capture, scale};
use super::phone::asleep_state;
use super::read::read_current;
use crate::image::grid;
use crate::tools::State;

pub(super) async fn screenshot(state: &State, serial: &str, with_grid: bool, annotate: bool, max_size: u32) -> Outcome {
    // Annotations number the current screen's elements as a fresh dump's refs.
    let snapshot = match annotate {
        true => Some(read_current(state, serial).await?),
        false => None,
    };
    let (shot, block) = capture(
        state,
        serial,
        max_size,
        with_grid,
        snapshot.as_ref().map(|s| s.elements.as_slice()),
    )
    .await?;
    let hint = if snapshot.is_some() {
        "boxes are numbered as the refs of a fresh dump: tap {ref: \"eN\"}".to_string()
    } else if with_grid {
        format!(
            "tap {{x, y, space: \"image\"}} maps image pixels to the device; or tap {{gridCell, gridPosition}}: {}",
            grid::NUMBERING
        )
    } else {
        "tap {x, y, space: \"image\"} maps image pixels to the device".to_string()
    };
    // A black frame is a screen that is off, or a secure window: the power report says which.
    let asleep = match shot.dark {
        true => Some(asleep_state(state, serial).await),
        false => None,
    };
    Ok(Done::answer(
        UiOutput {
            state: asleep.flatten(),
            image: Some(shot.image),
            screen: Some(shot.screen),
            scale: Some(scale(&shot)),
            frame: Some(shot.frame),
            hint: Some(format!(
                "JPEG q{JPEG_QUALITY}, {}×{} of a {}×{} screen; {hint}",
                shot.image[0], shot.image[1], shot.screen[0], shot.screen[1]
            )),
            ..output(UiOperation::Screenshot, serial)
        },
        Some(block),
    ))
}
