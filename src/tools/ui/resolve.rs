//! Resolving what a call points at, a `Target`: a ref (by identity), a text query (the element a
//! person would tap), a point (device or image pixels) or a grid cell, each verified against
//! what a replayed step recorded before anything touches the device (`ref_on`, `query_on`,
//! `point_on`: the resolution on a reading, no device in it); and what a query finds on a reading.

use std::time::Duration;

use super::answer::Failed;
use super::args::Space;
use super::phone::refuse;
use super::read::{ReadError, Snapshot, read_current, screen_bounds, screen_size};
use super::target::{Query, Target};
use super::web;
use crate::android::relative_point::RelativePoint;
use crate::android::selector::find_nodes;
use crate::android::ui_elements::{Element, Field, Found, Matcher, Rank, best_target, closest, element_of, find};
use crate::android::ui_refs::{Resolved, resolve};
use crate::flow::Recorded;
use crate::image::grid;
use crate::tools::{ErrorKind, State, handles};

/// At most this many matches are listed (`find`) or named (an ambiguous target).
pub(super) const MAX_MATCHES: usize = 5;

/// Where an action lands: the point, the element there (when one was resolved), and how a
/// recorded step finds it again (`flow::selector_for`), as a step may keep it (a secret field's
/// text left out: `Recordings::guarded`).
pub(super) struct Landing {
    pub at: [i32; 2],
    pub element: Option<Element>,
    pub selector: crate::flow::Target,
    /// Where inside `element` `at` was placed (`Target::Within`); `None`: its centre, or a point.
    pub within: Option<RelativePoint>,
    /// Aimed by a remembered reading this many ms old (`aim_reading`), not a fresh one.
    pub reading_ms: Option<u64>,
}

/// How old a remembered reading may be for a tap to aim by it (`aim_reading`): an app's own
/// timers, animations and pushes change a screen with no call of ours.
pub(super) const REUSE_WITHIN: Duration = Duration::from_secs(5);

/// The reading a tap (or `type`'s field) aims by: the device's remembered one when it is still
/// the screen as far as anyone here knows, else a fresh one. Remembered counts when it is
/// younger than `REUSE_WITHIN`, no acting call (any principal's, any tool's, on any device: one
/// phone may have two routes' names) ran or was running since it was taken but the one asking, and it shows no web page (a page is
/// checked afresh through DevTools). Never with a shared store (`--state`): another instance's
/// acting calls are not counted here. `Some(ms)`: reused, that old. The one place this is decided.
pub(super) async fn aim_reading(state: &State, serial: &str) -> Result<(Snapshot, Option<u64>), ReadError> {
    if let Some(snap) = state.screen(serial).filter(|_| state.handles.is_none()) {
        let age = snap.taken.elapsed();
        let now = state.acting_calls();
        if snap.web.is_none() && snap.acts.running == 0 && now.started == snap.acts.started + 1 && age < REUSE_WITHIN {
            tracing::info!(target: "droidmcp::tools::ui::resolve", serial, age_ms = age.as_millis() as u64, "aimed by the remembered reading");
            return Ok((snap, Some(age.as_millis() as u64)));
        }
    }
    Ok((read_current(state, serial).await?, None))
}

/// Resolves `target` on the screen now, verified against what a replayed flow `recorded` of it.
pub(super) async fn land(
    state: &State,
    serial: &str,
    target: &Target,
    recorded: Option<&Recorded>,
) -> Result<Landing, Failed> {
    let landing = resolve_target(state, serial, target, recorded).await?;
    Ok(Landing {
        selector: state.flows.guarded(serial, landing.element.as_ref(), landing.selector),
        ..landing
    })
}

/// The one match on `Target`: each way to aim, resolved to a point and (where it names one) an
/// element. A new `Target` variant is resolved here.
async fn resolve_target(
    state: &State,
    serial: &str,
    target: &Target,
    recorded: Option<&Recorded>,
) -> Result<Landing, Failed> {
    match target {
        Target::Ref(reference) => by_ref(state, serial, reference, recorded).await,
        Target::Query(query) => by_query(state, serial, query, recorded).await,
        // The element resolved and checked on one reading, then the point placed on its bounds.
        Target::Within { of, point } => {
            let landing = match of.as_ref() {
                Target::Ref(reference) => by_ref(state, serial, reference, recorded).await?,
                Target::Query(query) => by_query(state, serial, query, recorded).await?,
                _ => return Err("`relativePoint` is a point inside an element a ref or a query names".into()),
            };
            let element = landing.element.as_ref().ok_or("no element to place the point in")?;
            let at = point.within(element.bounds)?;
            // The reading that resolved it is the device's screen now: no second reading.
            let screen = screen_size(state, serial).await?;
            if at[0] < 0 || at[1] < 0 || at[0] >= screen[0] as i32 || at[1] >= screen[1] as i32 {
                return Err(format!(
                    "{} of {} {:?} is ({}, {}), off the {}×{} screen; nothing was done (scroll it into view)",
                    point.written(),
                    element.reference,
                    crate::android::text::echoed(&element.label),
                    at[0],
                    at[1],
                    screen[0],
                    screen[1]
                )
                .into());
            }
            Ok(Landing {
                at,
                within: Some(*point),
                ..landing
            })
        }
        Target::Grid { cell, position } => {
            let screen = screen_size(state, serial).await?;
            let (x, y) = grid::point(*cell, *position, screen[0], screen[1])
                .ok_or(format!("gridCell {cell} is not on the {}-cell grid", grid::CELLS))?;
            at_point(state, serial, [x, y], recorded).await
        }
        Target::Point { x, y, space } => {
            let (x, y) = match space {
                Space::Device => (*x, *y),
                Space::Image => {
                    let shot = state.shot(serial).ok_or(
                        "space \"image\" maps from the last screenshot, and there is none yet: ui screenshot first",
                    )?;
                    if *x >= shot.image[0] as i32 || *y >= shot.image[1] as i32 {
                        return Err(format!(
                            "({x}, {y}) is outside the {}×{} screenshot",
                            shot.image[0], shot.image[1]
                        )
                        .into());
                    }
                    let fx = shot.screen[0] as f64 / shot.image[0] as f64;
                    let fy = shot.screen[1] as f64 / shot.image[1] as f64;
                    ((*x as f64 * fx).round() as i32, (*y as f64 * fy).round() as i32)
                }
            };
            let screen = screen_size(state, serial).await?;
            if x >= screen[0] as i32 || y >= screen[1] as i32 {
                return Err(format!("(x {x}, y {y}) is off the {}×{} screen", screen[0], screen[1]).into());
            }
            at_point(state, serial, [x, y], recorded).await
        }
    }
}

/// A ref is an identity: its element must be on the screen now, exactly once.
async fn by_ref(state: &State, serial: &str, reference: &str, recorded: Option<&Recorded>) -> Result<Landing, Failed> {
    handles::refs_in(state, serial).await;
    if !state.knows_ref(serial, reference) {
        return Err(Failed::from(format!(
            "unknown ref {reference}: no reading of this device's screen gave it; ui dump or ui find gives refs"
        )));
    }
    let (now, reading_ms) = aim_reading(state, serial).await?;
    let element = ref_on(&now, reference, recorded)?;
    Ok(Landing {
        at: element.at,
        element: Some(element.clone()),
        selector: step_selector(&now, element),
        within: None,
        reading_ms,
    })
}

/// The element `reference` names on a reading numbered by the device's book, verified against
/// what a recording saw of it: the resolution a ref gets, with no device in it.
pub(super) fn ref_on<'a>(
    now: &'a Snapshot,
    reference: &str,
    recorded: Option<&Recorded>,
) -> Result<&'a Element, Failed> {
    match resolve(&now.elements, reference) {
        Resolved::One(element) => {
            refuse(now, Some(element))?;
            // A web element off the screen is scrolled into view by the tap itself.
            if web::selector_of(now, element).is_none() {
                on_screen(element, now.screen)?;
            }
            verified(recorded, now, element, &format!("ref {reference}"))?;
            Ok(element)
        }
        Resolved::Gone => Err(not_on_screen(format!(
            "ref {reference} is no longer on the screen (it changed{}); nothing was done. ui find or ui dump gives the current refs",
            now.focused
                .as_ref()
                .map(|f| format!("; now showing {}", f.activity))
                .unwrap_or_default()
        ))),
        Resolved::Several(hits) => Err(Failed::from(format!(
            "ref {reference} is not unique on this screen ({} identical elements); nothing was done. Tap one by position: {}",
            hits.len(),
            hits.iter()
                .map(|e| format!("{:?}", e.at))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

async fn by_query(state: &State, serial: &str, query: &Query, recorded: Option<&Recorded>) -> Result<Landing, Failed> {
    let (snap, reading_ms) = aim_reading(state, serial).await?;
    let element = query_on(&snap, query, recorded)?;
    Ok(Landing {
        at: element.at,
        element: Some(element.clone()),
        selector: step_selector(&snap, &element),
        within: None,
        reading_ms,
    })
}

/// The element a query names on a reading, verified against what a recording saw of it: the
/// resolution a text, id, content-desc or Maestro selector gets, with no device in it.
pub(super) fn query_on(snap: &Snapshot, query: &Query, recorded: Option<&Recorded>) -> Result<Element, Failed> {
    let value = &query.value();
    // Asleep or locked, the dump is the keyguard's: say so before "nothing matches".
    refuse(snap, None)?;
    let found = query.find(snap);
    match query.pick(&found) {
        Ok(one) => {
            refuse(snap, Some(&one.element))?;
            on_screen(&one.element, snap.screen)?;
            let what = match query {
                Query::Field { field, .. } => format!("{} {value:?}", query_field(*field)),
                Query::Maestro(_) => format!("the selector's {value}"),
            };
            verified(recorded, snap, &one.element, &what)?;
            Ok(one.element.clone())
        }
        Err(tied) if tied.is_empty() => {
            let near: Vec<String> = closest(&snap.elements, value, 3)
                .iter()
                .map(|e| format!("{} {:?}", e.reference, e.label))
                .collect();
            Err(not_on_screen(format!(
                "nothing on the screen matches {value:?}; closest: {}",
                near.join(", ")
            )))
        }
        Err(tied) => Err(Failed::from(format!(
            "{value:?} is ambiguous: {} elements match it equally well ({}): {}. Tap one by ref",
            tied.len(),
            describe_rank(tied[0]),
            tied.iter()
                .take(MAX_MATCHES)
                .map(|f| format!("{} {:?} at {:?}", f.element.reference, f.element.label, f.element.at))
                .collect::<Vec<_>>()
                .join("; ")
        ))),
    }
}

/// The one door of `ErrorKind::NotFound`: the element a call names is not on the screen (yet),
/// and nothing was done on the device, so a replay may wait for it and act again.
pub(super) fn not_on_screen(message: String) -> Failed {
    Failed {
        message,
        kind: Some(ErrorKind::NotFound),
    }
}

/// A point on the screen: the element there when a recording's is to be verified, and the
/// selector of the element under it on the last reading (when no recorded step came after
/// it), else the point itself (fragile).
async fn at_point(state: &State, serial: &str, at: [i32; 2], recorded: Option<&Recorded>) -> Result<Landing, Failed> {
    let element = verified_point(state, serial, recorded, at).await?;
    let current = state.screen(serial).filter(|_| state.flows.screen_is_current(serial));
    let reading = current
        .as_ref()
        .map(|s| (&s.tree, s.elements.as_slice(), screen_bounds(s)));
    Ok(Landing {
        at,
        element,
        selector: crate::flow::record::selector_at(reading, at),
        within: None,
        reading_ms: None,
    })
}

/// Verify before act: a call that carries what a recording saw of its element (`recorded`, from
/// a replayed flow) acts only on that element; another is refused, naming both, before the
/// device is touched.
fn verified(recorded: Option<&Recorded>, snap: &Snapshot, element: &Element, what: &str) -> Result<(), String> {
    match recorded {
        Some(recorded) => crate::flow::verify::check(&snap.tree, element, recorded, what),
        None => Ok(()),
    }
}

/// `verified` for a point: the element a tap there lands on, on a fresh reading.
async fn verified_point(
    state: &State,
    serial: &str,
    recorded: Option<&Recorded>,
    at: [i32; 2],
) -> Result<Option<Element>, String> {
    let Some(recorded) = recorded else {
        return Ok(None);
    };
    let snap = read_current(state, serial).await?;
    point_on(&snap, at, recorded).map(|e| Some(e.clone()))
}

/// The element a tap at `at` lands on in a reading, verified against what a recording saw of
/// it: the resolution a recorded point gets, with no device in it.
pub(super) fn point_on<'a>(snap: &'a Snapshot, at: [i32; 2], recorded: &Recorded) -> Result<&'a Element, String> {
    let what = format!("the element at ({}, {})", at[0], at[1]);
    let element = crate::flow::verify::under(&snap.elements, at).ok_or(format!(
        "nothing tappable is at ({}, {}), where the recording tapped {}; nothing was done",
        at[0],
        at[1],
        recorded
            .label
            .as_deref()
            .filter(|l| !l.trim().is_empty())
            .map_or("an element".into(), |l| format!(
                "{:?}",
                crate::android::text::echoed(l)
            ))
    ))?;
    verified(Some(recorded), snap, element, &what)?;
    Ok(element)
}

/// How a query's field is named in the call.
fn query_field(field: Field) -> &'static str {
    match field {
        Field::Text => "text",
        Field::ResourceId => "resourceId",
        Field::ContentDesc => "contentDesc",
        Field::ClassName => "className",
    }
}

/// How a recorded step finds `element` of this reading again (`flow::selector_for`).
pub(super) fn step_selector(snap: &Snapshot, element: &Element) -> crate::flow::Target {
    crate::flow::selector_for(&snap.tree, &snap.elements, screen_bounds(snap), element)
}

/// How a recorded wait or scroll names what it looked for (`flow::record::selector_for_query`),
/// from the reading that found it.
pub(super) fn recorded_query(query: &Query, found: Option<(&Snapshot, &Element)>) -> Option<crate::flow::Selector> {
    let found = found.map(|(snap, element)| (&snap.tree, snap.elements.as_slice(), screen_bounds(snap), element));
    match query {
        Query::Field { field, value, .. } => {
            crate::flow::record::selector_for_query(*field, query.exact(), value, found)
        }
        // A Maestro selector is recorded as it was given.
        Query::Maestro(selector) => Some(crate::flow::Selector::Maestro(selector.clone())),
    }
}

impl Query {
    /// An exact match of a field (not contains, a regex or a selector).
    pub fn exact(&self) -> bool {
        matches!(
            self,
            Query::Field {
                matcher: Matcher::Exact(_),
                ..
            }
        )
    }

    /// How messages name it: the value given, or a selector's keys (`text "Delete", below
    /// (text "Row 3")`).
    pub fn value(&self) -> String {
        match self {
            Query::Field { value, .. } => value.clone(),
            Query::Maestro(selector) => selector.describe(),
        }
    }

    /// The matches on a reading, best first; a Maestro selector's in Maestro's order, the first
    /// being the one Maestro acts on.
    pub(super) fn find(&self, snap: &Snapshot) -> Vec<Found> {
        let screen = screen_bounds(snap);
        match self {
            Query::Field { field, matcher, .. } => find(&snap.tree, &snap.elements, *field, matcher, screen),
            Query::Maestro(selector) => find_nodes(&snap.tree, snap.screen, selector)
                .into_iter()
                .filter_map(|node| element_of(&snap.tree, &snap.elements, node))
                .map(|element| Found {
                    visible: screen.contains(element.at[0], element.at[1]),
                    rank: Rank::ExactCase,
                    direct: true,
                    element,
                })
                .collect(),
        }
    }

    /// What a tap acts on among the matches: a Maestro selector's first (Maestro's choice), else
    /// the one best (`Err`: the tied best, or none).
    pub(super) fn pick<'a>(&self, found: &'a [Found]) -> Result<&'a Found, Vec<&'a Found>> {
        match self {
            Query::Maestro(_) => found.first().ok_or_else(Vec::new),
            Query::Field { .. } => best_target(found),
        }
    }
}

/// Refuses an element whose center (where a tap lands) is outside the screen: a tap there would
/// land nowhere, or on whatever the system draws at the edge. Says which way to scroll.
fn on_screen(element: &Element, screen: [u32; 2]) -> Result<(), String> {
    let [x, y] = element.at;
    let (w, h) = (screen[0] as i32, screen[1] as i32);
    let direction = if y >= h {
        "down"
    } else if y < 0 {
        "up"
    } else if x >= w {
        "right"
    } else if x < 0 {
        "left"
    } else {
        return Ok(());
    };
    Err(format!(
        "off screen: scroll {direction} first. {} {:?} sits at ({x}, {y}), outside the {w}×{h} screen; nothing was done (ui scroll {{direction: \"{direction}\"}}, then find it again)",
        element.reference,
        crate::android::text::echoed(&element.label)
    ))
}

pub(super) fn describe_rank(found: &Found) -> String {
    let rank = match found.rank {
        Rank::ExactCase | Rank::Exact => "exactly",
        Rank::Prefix => "at the start",
        Rank::Substring => "somewhere in the label",
    };
    let place = if found.visible { "on screen" } else { "off screen" };
    format!("{rank}, {place}")
}
