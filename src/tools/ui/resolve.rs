//! Resolving what a call points at: a ref (by identity), a text query (the element a person
//! would tap), a point (device or image pixels) or a grid cell; and `find`.

use super::*;

/// What a call looks for: a field with its matcher (`text`, `resourceId`, `contentDesc`,
/// `className`), or a Maestro selector (`selector`), resolved as Maestro resolves it.
pub(super) enum Query {
    Field(Field, Matcher),
    Maestro(ElementSelector),
}

impl Query {
    /// The matches on a reading, best first; a Maestro selector's in Maestro's order, the first
    /// being the one Maestro acts on.
    pub(super) fn find(&self, snap: &Snapshot) -> Vec<Found> {
        let screen = screen_bounds(snap);
        match self {
            Query::Field(field, matcher) => find(&snap.tree, &snap.elements, *field, matcher, screen),
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

    /// What the call acts on among the matches: a Maestro selector's first (Maestro's choice),
    /// else the one best (`Err`: the tied best, or none).
    fn pick<'a>(&self, found: &'a [Found]) -> Result<&'a Found, Vec<&'a Found>> {
        match self {
            Query::Maestro(_) => found.first().ok_or_else(Vec::new),
            Query::Field(..) => best_target(found),
        }
    }
}

/// The query a call asks for, and how a message quotes it.
pub(super) fn query(args: &UiArgs) -> Result<Option<(Query, String)>, String> {
    let texts = [&args.text, &args.resource_id, &args.content_desc, &args.class_name];
    if let Some(selector) = &args.selector {
        if texts.iter().any(|t| t.is_some()) || args.matching.is_some() {
            return Err(
                "give `selector` (Maestro's, whose text and id are regexes) or text, resourceId, contentDesc, className with match, not both".into(),
            );
        }
        return Ok(Some((Query::Maestro(selector.clone()), selector.describe())));
    }
    let (field, value) = match texts {
        [Some(t), None, None, None] => (Field::Text, t),
        [None, Some(r), None, None] => (Field::ResourceId, r),
        [None, None, Some(d), None] => (Field::ContentDesc, d),
        [None, None, None, Some(c)] => (Field::ClassName, c),
        [None, None, None, None] => return Ok(None),
        _ => return Err("give one of text, resourceId, contentDesc, className".into()),
    };
    if value.trim().is_empty() {
        return Err("the text to look for is empty".into());
    }
    let matcher = match args.matching.unwrap_or(MatchKind::Contains) {
        MatchKind::Exact => Matcher::Exact(value.trim().to_string()),
        MatchKind::Contains => Matcher::Contains(value.to_string()),
        MatchKind::Regex => Matcher::regex(value)?,
    };
    Ok(Some((Query::Field(field, matcher), value.clone())))
}

pub(super) async fn find_op(state: &State, serial: &str, args: &UiArgs) -> Outcome {
    let (query, value) = query(args)?.ok_or("find needs text, resourceId, contentDesc, className or selector")?;
    let snap = match read_screen(state, serial, true).await {
        Err(ReadError::NeverIdle(waited)) => return grid_instead(state, serial, UiOperation::Find, waited).await,
        read => read?,
    };
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
    let want_grid = args.grid.unwrap_or(false) || matches.is_empty();
    let mut out = UiOutput {
        focused: snap.focused.clone(),
        state: describe(&snap.state, &snap.elements),
        count: Some(matches.len()),
        total_count: Some(total),
        ..output(UiOperation::Find, serial)
    };
    // The hint quotes the query by its head: a 5,000-char text must not crowd out the caption.
    let quoted = crate::adb::cut(&value);
    if matches.is_empty() {
        let near: Vec<Element> = closest(&snap.elements, &value, MAX_MATCHES)
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
        if args.grid.unwrap_or(false) && out.hint.as_deref().is_some_and(|h| h.starts_with("tap {ref")) {
            out.hint = Some(format!(
                "tap {{ref}} for a match, or tap {{gridCell, gridPosition: center|top-left|top-right|bottom-left|bottom-right}} on the grid: {}",
                grid::NUMBERING
            ));
        }
        Some(block)
    } else {
        None
    };
    Ok((out, image))
}

/// The point an action aims at, from whichever target the call gave, and how a recorded flow
/// finds it again (`flow::selector_for`).
pub(super) async fn target(state: &State, serial: &str, args: &UiArgs) -> Result<Aim, String> {
    if let Some(reference) = &args.reference {
        if parse_ref(reference).is_none() {
            return Err(format!(
                "{:?} is not a ref: refs look like e12, as ui dump and ui find give them",
                crate::adb::cut(reference)
            ));
        }
        if !state.knows_ref(serial, reference) {
            return Err(format!(
                "unknown ref {reference}: no reading of this device's screen gave it; ui dump or ui find gives refs"
            ));
        }
        // Refs are identities: the element must be on the screen now, exactly once.
        let now = read_screen(state, serial, true).await?;
        return match resolve(&now.elements, reference) {
            Resolved::One(element) => {
                refuse(&now, Some(element))?;
                // A web element off the screen is scrolled into view by the tap itself.
                if web::selector_of(&now, element).is_none() {
                    on_screen(element, now.screen)?;
                }
                verified(args, &now, element, &format!("ref {reference}"))?;
                Ok((element.at, Some(element.clone()), recorded(&now, element)))
            }
            Resolved::Gone => Err(format!(
                "ref {reference} is no longer on the screen (it changed{}); nothing was done. ui find or ui dump gives the current refs",
                now.focused
                    .as_ref()
                    .map(|f| format!("; now showing {}", f.activity))
                    .unwrap_or_default()
            )),
            Resolved::Several(hits) => Err(format!(
                "ref {reference} is not unique on this screen ({} identical elements); nothing was done. Tap one by position: {}",
                hits.len(),
                hits.iter()
                    .map(|e| format!("{:?}", e.at))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        };
    }
    if let (Some(cell), position) = (args.grid_cell, args.grid_position) {
        if !(1..=grid::CELLS).contains(&cell) {
            return Err(format!("gridCell must be between 1 and {}; got {cell}", grid::CELLS));
        }
        let screen = screen_size(state, serial).await?;
        let at = grid::point(cell, position.unwrap_or(Position::Center), screen[0], screen[1])
            .ok_or(format!("gridCell must be between 1 and {}; got {cell}", grid::CELLS))?;
        let element = verified_point(state, serial, args, [at.0, at.1]).await?;
        return Ok(([at.0, at.1], element, by_point(state, serial, [at.0, at.1])));
    }
    if let (Some(x), Some(y)) = (args.x, args.y) {
        if x < 0 || y < 0 {
            return Err(format!("`x` and `y` must be 0 or more; got ({x}, {y})"));
        }
        let (x, y) = match args.space.unwrap_or(Space::Device) {
            Space::Device => (x, y),
            Space::Image => {
                let shot = state.shot(serial).ok_or(
                    "space \"image\" maps from the last screenshot, and there is none yet: ui screenshot first",
                )?;
                if x < 0 || y < 0 || x >= shot.image[0] as i32 || y >= shot.image[1] as i32 {
                    return Err(format!(
                        "({x}, {y}) is outside the {}×{} screenshot",
                        shot.image[0], shot.image[1]
                    ));
                }
                let fx = shot.screen[0] as f64 / shot.image[0] as f64;
                let fy = shot.screen[1] as f64 / shot.image[1] as f64;
                ((x as f64 * fx).round() as i32, (y as f64 * fy).round() as i32)
            }
        };
        let screen = screen_size(state, serial).await?;
        if x < 0 || y < 0 || x >= screen[0] as i32 || y >= screen[1] as i32 {
            return Err(format!("(x {x}, y {y}) is off the {}×{} screen", screen[0], screen[1]));
        }
        let element = verified_point(state, serial, args, [x, y]).await?;
        return Ok(([x, y], element, by_point(state, serial, [x, y])));
    }
    if let Some((query, value)) = query(args)? {
        let snap = read_screen(state, serial, true).await?;
        // Asleep or locked, the dump is the keyguard's: say so before "nothing matches".
        refuse(&snap, None)?;
        let found = query.find(&snap);
        return match query.pick(&found) {
            Ok(one) => {
                refuse(&snap, Some(&one.element))?;
                on_screen(&one.element, snap.screen)?;
                let what = match &query {
                    Query::Field(field, _) => format!("{} {value:?}", query_field(*field)),
                    Query::Maestro(_) => format!("the selector's {value}"),
                };
                verified(args, &snap, &one.element, &what)?;
                Ok((one.element.at, Some(one.element.clone()), recorded(&snap, &one.element)))
            }
            Err(tied) if tied.is_empty() => {
                let near: Vec<String> = closest(&snap.elements, &value, 3)
                    .iter()
                    .map(|e| format!("{} {:?}", e.reference, e.label))
                    .collect();
                Err(format!(
                    "nothing on the screen matches {value:?}; closest: {}",
                    near.join(", ")
                ))
            }
            Err(tied) => Err(format!(
                "{value:?} is ambiguous: {} elements match it equally well ({}): {}. Tap one by ref",
                tied.len(),
                describe_rank(tied[0]),
                tied.iter()
                    .take(MAX_MATCHES)
                    .map(|f| format!("{} {:?} at {:?}", f.element.reference, f.element.label, f.element.at))
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
        };
    }
    Err("say where: ref, text (or resourceId, contentDesc, className), x and y, or gridCell".into())
}

/// Verify before act: a call that carries what a recording saw of its element (`recorded`, from
/// a replayed flow) acts only on that element; another is refused, naming both, before the
/// device is touched.
fn verified(args: &UiArgs, snap: &Snapshot, element: &Element, what: &str) -> Result<(), String> {
    match &args.recorded {
        Some(recorded) => crate::flow::verify::check(&snap.tree, element, recorded, what),
        None => Ok(()),
    }
}

/// `verified` for a point: the element a tap there lands on, on a fresh reading.
async fn verified_point(state: &State, serial: &str, args: &UiArgs, at: [i32; 2]) -> Result<Option<Element>, String> {
    if args.recorded.is_none() {
        return Ok(None);
    }
    let snap = read_screen(state, serial, true).await?;
    let what = format!("the element at ({}, {})", at[0], at[1]);
    let element = crate::flow::verify::under(&snap.elements, at).ok_or(format!(
        "nothing tappable is at ({}, {}), where the recording tapped {}; nothing was done",
        at[0],
        at[1],
        args.recorded
            .as_ref()
            .and_then(|r| r.label.as_deref())
            .map_or("an element".into(), |l| format!("{:?}", crate::adb::cut(l)))
    ))?;
    verified(args, &snap, element, &what)?;
    Ok(Some(element.clone()))
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

/// Where an action lands, the element there, and its selector for a recorded flow.
pub(super) type Aim = ([i32; 2], Option<Element>, crate::flow::Target);

pub(super) fn recorded(snap: &Snapshot, element: &Element) -> crate::flow::Target {
    crate::flow::selector_for(&snap.tree, &snap.elements, screen_bounds(snap), element)
}

/// A point's selector: that of the smallest tappable element under it on the last reading (when
/// no recorded action came after it), if one names it alone; else the point (fragile).
fn by_point(state: &State, serial: &str, at: [i32; 2]) -> crate::flow::Target {
    let point = crate::flow::Target::bare(crate::flow::Selector::Point(at));
    let Some(snap) = state.screen(serial).filter(|_| state.flows.screen_is_current(serial)) else {
        return point;
    };
    match crate::flow::verify::under(&snap.elements, at) {
        Some(element) => {
            let mut found = recorded(&snap, element);
            if found.selector.fragile() {
                found.selector = crate::flow::Selector::Point(at);
            }
            found
        }
        None => point,
    }
}

/// How a recorded wait or scroll names what it looked for: the query itself when it is exact
/// (and not a class, nor a framework id such as `android:id/button1`, which names no element
/// alone: unless nothing was found), else the element it found, by its selector or its label.
pub(super) fn recorded_query(
    query: &Query,
    value: &str,
    found: Option<(&Snapshot, &Element)>,
) -> Option<crate::flow::Selector> {
    use crate::flow::Selector;
    let (field, exact) = match query {
        // A Maestro selector is recorded as it was given.
        Query::Maestro(selector) => return Some(Selector::Maestro(selector.clone())),
        Query::Field(field, matcher) => (*field, matches!(matcher, Matcher::Exact(_))),
    };
    let framework = value.trim().starts_with("android:id/") && found.is_some();
    match (field, exact) {
        (Field::Text, true) => return Some(Selector::Text(value.trim().to_string())),
        (Field::ResourceId, true) if !framework => return Some(Selector::ResourceId(value.trim().to_string())),
        (Field::ContentDesc, true) => return Some(Selector::ContentDesc(value.trim().to_string())),
        _ => {}
    }
    let (snap, element) = found?;
    let aim = recorded(snap, element);
    match aim.selector {
        Selector::Point(_) => aim.label.map(Selector::Text),
        selector => Some(selector),
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
        crate::adb::cut(&element.label)
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
