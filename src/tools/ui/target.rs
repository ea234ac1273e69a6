//! Where an action aims (`Target`: a ref, a query, a point or a grid cell) and what a call looks
//! for (`Query`: a field with its matcher, or a Maestro selector), built from the wire once:
//! a new way to aim is built here and resolved in `resolve.rs::resolve_target`;
//! `Target::reads_screen` says whether resolving it reads the screen. Nothing else matches on
//! `Target`.

use super::args::{MatchKind, Space, UiArgs};
use crate::android::relative_point::RelativePoint;
use crate::android::selector::ElementSelector;
use crate::android::ui_elements::{Field, Matcher};
use crate::android::ui_refs::parse_ref;
use crate::image::grid::{self, Position};
use crate::tools::command::Range;

pub(super) const GRID_CELL: Range = Range::new("gridCell", 1, grid::CELLS as u64);

/// Where an action aims: exactly one of these.
pub enum Target {
    /// A ref as a reading gave it (`e12`); whether it is on the screen now is the device's to say.
    Ref(String),
    /// The best match of a query on the screen now.
    Query(Query),
    /// 0 or more each, in device pixels or the last screenshot's.
    Point { x: i32, y: i32, space: Space },
    /// A cell of the tap grid (1 to `grid::CELLS`) and where in it.
    Grid { cell: u32, position: Position },
    /// A point inside the element a ref or a query names (Maestro's element-relative `point`),
    /// placed on the bounds of the reading that resolved it.
    Within { of: Box<Target>, point: RelativePoint },
}

impl Target {
    /// Whether resolving it reads the screen (always, not only to verify a recorded element):
    /// that reading is an `observe`'s "before".
    pub fn reads_screen(&self) -> bool {
        match self {
            Target::Ref(_) | Target::Query(_) => true,
            Target::Point { .. } | Target::Grid { .. } => false,
            Target::Within { of, .. } => of.reads_screen(),
        }
    }
}

/// What to look for: one field, its matcher, and the value as given (for messages and the
/// recording); or a Maestro `selector`. Resolved in resolve.rs (`Query::find`, `value`, `exact`).
pub enum Query {
    Field {
        field: Field,
        matcher: Matcher,
        value: String,
    },
    Maestro(ElementSelector),
}

const SELECTOR_ALONE: &str = "give `selector` (Maestro's, whose text and id are regexes) or text, resourceId, contentDesc, className with match, not both";
const MATCH_ALONE: &str = "`match` says how a text, resourceId, contentDesc or className matches; give one";

/// The field and matcher a call asks for (`text`, `resourceId`, `contentDesc`, `className`), or its `selector`.
pub(super) fn query(a: &UiArgs) -> Result<Option<Query>, String> {
    if let Some(selector) = &a.selector {
        let texts = [&a.text, &a.resource_id, &a.content_desc, &a.class_name];
        if texts.iter().any(|t| t.is_some()) || a.matching.is_some() {
            return Err(SELECTOR_ALONE.into());
        }
        return Ok(Some(Query::Maestro(selector.clone())));
    }
    let (field, value) = match (&a.text, &a.resource_id, &a.content_desc, &a.class_name) {
        (Some(t), None, None, None) => (Field::Text, t),
        (None, Some(r), None, None) => (Field::ResourceId, r),
        (None, None, Some(d), None) => (Field::ContentDesc, d),
        (None, None, None, Some(c)) => (Field::ClassName, c),
        (None, None, None, None) if a.matching.is_some() => return Err(MATCH_ALONE.into()),
        (None, None, None, None) => return Ok(None),
        _ => return Err("give one of text, resourceId, contentDesc, className".into()),
    };
    if value.trim().is_empty() {
        return Err("the text to look for is empty".into());
    }
    let matcher = match a.matching.unwrap_or(MatchKind::Contains) {
        MatchKind::Exact => Matcher::Exact(value.trim().to_string()),
        MatchKind::Contains => Matcher::Contains(value.to_string()),
        MatchKind::Regex => Matcher::regex(value)?,
    };
    Ok(Some(Query::Field {
        field,
        matcher,
        value: value.clone(),
    }))
}

/// A tap's or long press's one target, and the fields that go with it: with a `relativePoint`,
/// a point inside the element a ref or a query names.
pub(super) fn target(a: &UiArgs, operation: &str) -> Result<Target, String> {
    let of = aim(a, operation)?;
    let Some(point) = &a.relative_point else {
        return Ok(of);
    };
    let point = RelativePoint::parse(point).map_err(|e| format!("`relativePoint` {e}"))?;
    match of {
        Target::Ref(_) | Target::Query(_) => Ok(Target::Within { of: Box::new(of), point }),
        _ => Err(
            "`relativePoint` says where inside an element: give the element by ref or a query (text, resourceId, contentDesc, className, selector), not x and y or gridCell"
                .into(),
        ),
    }
}

/// The target the aiming fields name.
fn aim(a: &UiArgs, operation: &str) -> Result<Target, String> {
    let by_query = [&a.text, &a.resource_id, &a.content_desc, &a.class_name]
        .iter()
        .any(|t| t.is_some())
        || a.selector.is_some();
    let by_point = a.x.is_some() || a.y.is_some();
    let given = [a.reference.is_some(), by_query, by_point, a.grid_cell.is_some()];
    if given.iter().filter(|g| **g).count() > 1 {
        return Err(format!(
            "ui {operation} takes one target: ref, a text query, x and y, or gridCell; this call gave several"
        ));
    }
    if a.grid_position.is_some() && a.grid_cell.is_none() {
        return Err("`gridPosition` says where in a gridCell to tap; give the gridCell".into());
    }
    if a.matching.is_some() && !by_query {
        return Err(MATCH_ALONE.into());
    }
    if a.space.is_some() && !by_point {
        return Err("`space` says how x and y are measured; give x and y".into());
    }
    if let Some(reference) = &a.reference {
        if parse_ref(reference).is_none() {
            return Err(format!(
                "{:?} is not a ref: refs look like e12, as ui dump and ui find give them",
                crate::android::text::echoed(reference)
            ));
        }
        return Ok(Target::Ref(reference.clone()));
    }
    if let Some(cell) = a.grid_cell {
        return Ok(Target::Grid {
            cell: GRID_CELL.check(Some(u64::from(cell)), 1)? as u32,
            position: a.grid_position.unwrap_or(Position::Center),
        });
    }
    if let (Some(x), Some(y)) = (a.x, a.y) {
        if x < 0 || y < 0 {
            return Err(format!("`x` and `y` must be 0 or more; got ({x}, {y})"));
        }
        return Ok(Target::Point {
            x,
            y,
            space: a.space.unwrap_or(Space::Device),
        });
    }
    match query(a)? {
        Some(query) => Ok(Target::Query(query)),
        None => Err("say where: ref, text (or resourceId, contentDesc, className), x and y, or gridCell".into()),
    }
}
