//! `ui find`: the elements a query matches, best first (exact matches, when there are any, are
//! what was meant), the closest labels when none does, and the grid image when asked or needed.

use super::answer::{Done, Outcome, UiOutput, output};
use super::args::UiOperation;
use super::capture::{DEFAULT_MAX_SIZE, capture, scale};
use super::phone::{describe, grid_instead};
use super::read::{ReadError, read_current};
use super::resolve::MAX_MATCHES;
use super::target::Query;
use crate::android::ui_elements::{Element, closest};
use crate::image::grid;
use crate::tools::State;

pub(super) async fn find(state: &State, serial: &str, query: &Query, grid: bool) -> Outcome {
    let snap = match read_current(state, serial).await {
        Err(ReadError::NeverIdle(waited)) => return grid_instead(state, serial, UiOperation::Find, waited).await,
        read => read?,
    };
    let value = &query.value();
    let found = query.find(&snap);
    let total = found.len();
    // Exact matches, when there are any, are what was meant: the ones that merely contain the
    // text are counted, not listed.
    let exact = found.iter().filter(|f| f.exact()).count();
    let shown = if exact > 0 { exact } else { total };
    let matches: Vec<Element> = found
        .into_iter()
        .take(shown.min(MAX_MATCHES))
        .map(|f| f.element)
        .collect();
    let want_grid = grid || matches.is_empty();
    let mut out = UiOutput {
        focused: snap.focused.clone(),
        state: describe(&snap.state, &snap.elements),
        count: Some(matches.len()),
        total_count: Some(total),
        ..output(UiOperation::Find, serial)
    };
    // The hint quotes the query by its head: a 5,000-char text must not crowd out the caption.
    let quoted = crate::android::text::echoed(value);
    if matches.is_empty() {
        let near: Vec<Element> = closest(&snap.elements, value, MAX_MATCHES)
            .into_iter()
            .cloned()
            .collect();
        out.hint = Some(format!(
            "nothing matches {quoted:?}; the closest labels are listed; or tap {{gridCell, gridPosition: center|top-left|top-right|bottom-left|bottom-right}} on the grid image: {}",
            grid::NUMBERING
        ));
        out.matches = Some(near);
    } else {
        out.matches = Some(matches);
        out.hint = Some(match total - shown {
            0 => "tap {ref: matches[0].ref} taps the best match".to_string(),
            more => format!(
                "tap {{ref: matches[0].ref}} taps the best match; {more} more only contain {quoted:?} (ui dump {{filter}} lists them)"
            ),
        });
    }
    let image = if want_grid {
        let (meta, block) = capture(state, serial, DEFAULT_MAX_SIZE, true, None).await?;
        out.image = Some(meta.image);
        out.screen = Some(meta.screen);
        out.scale = Some(scale(&meta));
        if grid && out.hint.as_deref().is_some_and(|h| h.starts_with("tap {ref")) {
            out.hint = Some(format!(
                "tap {{ref}} for a match, or tap {{gridCell, gridPosition: center|top-left|top-right|bottom-left|bottom-right}} on the grid: {}",
                grid::NUMBERING
            ));
        }
        Some(block)
    } else {
        None
    };
    Ok(Done::answer(out, image))
}
