//! `ui`: what is on the screen (a compact, paged element list), finding an element, acting on
//! it (tap, long press, swipe, type, key), and screenshots as JPEG image blocks with a tap grid.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use base64::Engine;
use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ProgressNotificationParam};
use rmcp::service::RequestContext;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{State, error, parse_args};
use crate::adb::quote;
use crate::android::activity::{Focus, focus_for_screen};
use crate::android::keys::key_code;
use crate::android::ui_elements::{Element, Field, Found, Matcher, Rank, best_target, closest, elements, find};
use crate::android::ui_refs::{Resolved, parse_ref, resolve};
use crate::android::uiautomator::{Bounds, UiTree, parse_ui_dump};
use crate::context::budget::{Budgeted, respond};
use crate::context::{Data, Kind};
use crate::image::grid::{self, Position};

const DEFAULT_LIMIT: u64 = 40;
const MAX_LIMIT: u64 = 200;
const MAX_MATCHES: usize = 5;
const JPEG_QUALITY: u8 = 70;
const DEFAULT_MAX_SIZE: u32 = 1000;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UiArgs {
    pub operation: UiOperation,
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub limit: Option<u64>,
    #[serde(default)]
    pub offset: Option<u64>,
    #[serde(default)]
    pub filter: Option<String>,
    /// Text, desc or label.
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub resource_id: Option<String>,
    #[serde(default)]
    pub content_desc: Option<String>,
    #[serde(default)]
    pub class_name: Option<String>,
    /// Default contains.
    #[serde(default, rename = "match")]
    pub matching: Option<MatchKind>,
    #[serde(default)]
    pub grid: Option<bool>,
    #[serde(default)]
    pub x: Option<i32>,
    #[serde(default)]
    pub y: Option<i32>,
    #[serde(default)]
    pub space: Option<Space>,
    #[serde(default, rename = "ref")]
    pub reference: Option<String>,
    #[serde(default)]
    pub grid_cell: Option<u32>,
    #[serde(default)]
    pub grid_position: Option<Position>,
    #[serde(default)]
    pub from: Option<[i32; 2]>,
    #[serde(default)]
    pub to: Option<[i32; 2]>,
    #[serde(default)]
    pub direction: Option<Direction>,
    /// swipe: % of screen.
    #[serde(default)]
    pub distance: Option<u32>,
    #[serde(default)]
    pub duration_ms: Option<u32>,
    #[serde(default)]
    pub clear: Option<bool>,
    #[serde(default)]
    pub submit: Option<bool>,
    /// key: BACK, HOME, ENTER, DEL… or a code.
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub max_size: Option<u32>,
    #[serde(default)]
    pub annotate: Option<bool>,
    #[serde(default)]
    pub gone: Option<bool>,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub observe: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum UiOperation {
    Dump,
    Find,
    Tap,
    LongPress,
    Swipe,
    Type,
    Key,
    Scroll,
    Wait,
    Screenshot,
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MatchKind {
    Exact,
    Contains,
    Regex,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Space {
    Device,
    Image,
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Up,
    Down,
    Left,
    Right,
}

#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UiOutput {
    pub operation: String,
    pub device: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focused: Option<Focus>,
    /// Device pixels: the display, whatever window is dumped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen: Option<[u32; 2]>,
    /// The dumped window, when it is not the whole screen (a dialog or popup): left, top, right,
    /// bottom in device pixels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<[i32; 4]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elements: Option<Vec<Element>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<Vec<Element>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_id: Option<String>,
    /// Where an action landed, in device pixels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<[i32; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<Element>,
    /// screenshot: the image's size and the device pixels per image pixel.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<[u32; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<Observed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Budgeted for UiOutput {
    const KEY_FIELDS: &'static [&'static str] = &[
        "operation",
        "device",
        "focused",
        "screen",
        "window",
        "count",
        "totalCount",
        "hasMore",
        "nextOffset",
        "cacheId",
        "at",
        "target",
        "observed",
    ];
    const BULK_FIELDS: &'static [&'static str] = &["elements", "matches"];
    const KIND: Kind = Kind::Ui;
}

#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
pub struct Observed {
    pub changed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focused: Option<Focus>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub appeared: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disappeared: Vec<String>,
}

/// One reading of the screen, kept per device so refs can be checked and changes observed.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub tree: UiTree,
    pub elements: Vec<Element>,
    pub focused: Option<Focus>,
    pub screen: [u32; 2],
    /// The dumped window's bounds when it is smaller than the screen (a dialog, a popup).
    pub window: Option<Bounds>,
    pub signature: u64,
}

/// The last screenshot's geometry, to map image pixels back to the device.
#[derive(Debug, Clone, Copy)]
pub struct Shot {
    pub image: [u32; 2],
    pub screen: [u32; 2],
}

type Outcome = Result<(UiOutput, Option<ContentBlock>), String>;

pub async fn run(state: &State, args: JsonObject, ctx: RequestContext<RoleServer>) -> CallToolResult {
    let args: UiArgs = match parse_args("ui", args) {
        Ok(a) => a,
        Err(e) => return error(e),
    };
    if args.operation == UiOperation::Type
        && args.text.as_deref().is_some_and(str::is_empty)
        && !args.clear.unwrap_or(false)
        && !args.submit.unwrap_or(false)
    {
        return error(
            "type needs non-empty `text` (or `clear: true` to empty the field, `submit: true` to press ENTER)",
        );
    }
    let serial = match state.device(args.device.as_deref()).await {
        Ok(s) => s,
        Err(e) => return e.into(),
    };
    // Actions and screenshots on one device take turns, so a screenshot never races a tap;
    // reads (dump, find, wait) and other devices go on in parallel.
    let _turn = match args.operation {
        UiOperation::Dump | UiOperation::Find | UiOperation::Wait => None,
        _ => Some(state.device_turn(&serial).await),
    };
    let outcome = match args.operation {
        UiOperation::Dump => dump(state, &serial, &args).await,
        UiOperation::Find => find_op(state, &serial, &args).await,
        UiOperation::Screenshot => screenshot_op(state, &serial, &args).await,
        UiOperation::Scroll => scroll(state, &serial, &args).await,
        UiOperation::Wait => wait(state, &serial, &args, &ctx).await,
        action => act(state, &serial, action, &args).await,
    };
    match outcome {
        Ok((output, image)) => {
            let mut result = respond(
                &output,
                state.budget,
                &state.cache,
                &format!("ui {} on {serial}", output.operation),
            );
            result.content.extend(image);
            result
        }
        Err(message) => error(message),
    }
}

fn output(operation: UiOperation, serial: &str) -> UiOutput {
    let name = serde_json::to_value(operation)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string));
    UiOutput {
        operation: name.unwrap_or_default(),
        device: serial.into(),
        ..Default::default()
    }
}

/// Reads the screen: the window dump (one round trip, `uiautomator dump /dev/tty`) and the
/// resumed activity. A reading that hands out refs (dump, find, scroll, wait, tap by text)
/// becomes the one refs are checked against; a check's own reading never does, so a stale ref
/// stays stale until the next dump.
async fn read_screen(state: &State, serial: &str, hands_out_refs: bool) -> Result<Snapshot, String> {
    let out = state
        .adb
        .shell(serial, "uiautomator dump /dev/tty")
        .await
        .map_err(|e| e.to_string())?;
    let tree = parse_ui_dump(&out.stdout_text()).map_err(|e| {
        format!(
            "could not read the screen: {e}. uiautomator said: {}",
            crate::android::cut(
                format!("{}{}", out.stdout_text(), String::from_utf8_lossy(&out.stderr)).trim(),
                200
            )
        )
    })?;
    let activities = state
        .adb
        .shell(serial, "dumpsys activity activities")
        .await
        .map_err(|e| e.to_string())?;
    let focused = focus_for_screen(
        &activities.stdout_text(),
        tree.nodes.first().and_then(|n| n.attr("package")),
    );
    let natural = state.display(serial).await?;
    // Turned a quarter (rotation 1 or 3): the display is as wide as it is naturally tall.
    let screen = if tree.rotation % 2 == 1 {
        [natural[1], natural[0]]
    } else {
        natural
    };
    // The dumped window, when it is not the whole screen: a dialog or a popup.
    let window = tree
        .nodes
        .iter()
        .filter(|n| n.parent.is_none())
        .filter_map(|n| n.bounds())
        .reduce(|a, b| Bounds {
            left: a.left.min(b.left),
            top: a.top.min(b.top),
            right: a.right.max(b.right),
            bottom: a.bottom.max(b.bottom),
        })
        .filter(|w| w.left > 0 || w.top > 0 || w.right < screen[0] as i32 || w.bottom < screen[1] as i32);
    let mut els = elements(&tree);
    state.number_refs(serial, &tree, &mut els);
    let mut hasher = DefaultHasher::new();
    for e in &els {
        (&e.label, &e.kind, e.at, &e.flags).hash(&mut hasher);
    }
    focused.as_ref().map(|f| &f.activity).hash(&mut hasher);
    let snapshot = Snapshot {
        tree,
        elements: els,
        focused,
        screen,
        window,
        signature: hasher.finish(),
    };
    if hands_out_refs {
        state.remember_screen(serial, snapshot.clone());
    }
    Ok(snapshot)
}

async fn dump(state: &State, serial: &str, args: &UiArgs) -> Outcome {
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(format!("limit must be between 1 and {MAX_LIMIT}; got {limit}"));
    }
    let offset = args.offset.unwrap_or(0) as usize;
    let snap = read_screen(state, serial, true).await?;
    let needle = args.filter.as_deref().filter(|f| !f.is_empty()).map(str::to_lowercase);
    let matching: Vec<Element> = snap
        .elements
        .iter()
        .filter(|e| {
            needle.as_ref().is_none_or(|n| {
                e.label.to_lowercase().contains(n) || e.id.as_deref().is_some_and(|i| i.to_lowercase().contains(n))
            })
        })
        .cloned()
        .collect();
    let total = matching.len();
    if offset > 0 && offset >= total {
        return Err(format!(
            "offset {offset} is past the end: {total} elements. Use an offset below {total}"
        ));
    }
    let page: Vec<Element> = matching.into_iter().skip(offset).take(limit as usize).collect();
    let end = offset + page.len();
    let tree_items: Vec<Value> = snap
        .tree
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mut o = serde_json::Map::new();
            o.insert("i".into(), json!(i));
            o.insert("depth".into(), json!(n.depth));
            for (k, v) in &n.attrs {
                o.insert(k.clone(), json!(v));
            }
            Value::Object(o)
        })
        .collect();
    let entry = state
        .cache
        .put(Kind::Ui, format!("window dump of {serial}"), Data::List(tree_items));
    let hint = match snap.window {
        Some(w) => format!(
            "the dump is a window of {}×{} at ({}, {}) over the {}×{} screen: a dialog or popup; tap {{ref}} acts on its elements",
            w.right - w.left,
            w.bottom - w.top,
            w.left,
            w.top,
            snap.screen[0],
            snap.screen[1]
        ),
        None => "tap {ref} acts on an element; a ref names its element while it is on the screen".into(),
    };
    Ok((
        UiOutput {
            focused: snap.focused.clone(),
            screen: Some(snap.screen),
            window: snap.window.map(|w| [w.left, w.top, w.right, w.bottom]),
            count: Some(page.len()),
            elements: Some(page),
            total_count: Some(total),
            has_more: Some(end < total),
            next_offset: (end < total).then_some(end),
            cache_id: Some(entry.id.clone()),
            hint: Some(hint),
            ..output(UiOperation::Dump, serial)
        },
        None,
    ))
}

/// The field and matcher a call asks for (`text`, `resourceId`, `contentDesc` or `className`).
fn query(args: &UiArgs) -> Result<Option<(Field, Matcher, String)>, String> {
    let (field, value) = match (&args.text, &args.resource_id, &args.content_desc, &args.class_name) {
        (Some(t), None, None, None) => (Field::Text, t),
        (None, Some(r), None, None) => (Field::ResourceId, r),
        (None, None, Some(d), None) => (Field::ContentDesc, d),
        (None, None, None, Some(c)) => (Field::ClassName, c),
        (None, None, None, None) => return Ok(None),
        _ => return Err("give one of text, resourceId, contentDesc, className".into()),
    };
    if value.trim().is_empty() {
        return Err("the text to look for is empty".into());
    }
    let matcher = match args.matching.unwrap_or(MatchKind::Contains) {
        MatchKind::Exact => Matcher::Exact(value.trim().to_string()),
        MatchKind::Contains => Matcher::Contains(value.to_string()),
        MatchKind::Regex => Matcher::Regex(
            regex::RegexBuilder::new(value)
                .case_insensitive(true)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| format!("not a valid regex: {e}"))?,
        ),
    };
    Ok(Some((field, matcher, value.clone())))
}

fn screen_bounds(snap: &Snapshot) -> Bounds {
    Bounds {
        left: 0,
        top: 0,
        right: snap.screen[0] as i32,
        bottom: snap.screen[1] as i32,
    }
}

async fn find_op(state: &State, serial: &str, args: &UiArgs) -> Outcome {
    let (field, matcher, value) = query(args)?.ok_or("find needs text, resourceId, contentDesc or className")?;
    let snap = read_screen(state, serial, true).await?;
    let found = find(&snap.tree, &snap.elements, field, &matcher, screen_bounds(&snap));
    let total = found.len();
    let matches: Vec<Element> = found.into_iter().take(MAX_MATCHES).map(|f| f.element).collect();
    let want_grid = args.grid.unwrap_or(false) || matches.is_empty();
    let mut out = UiOutput {
        focused: snap.focused.clone(),
        count: Some(matches.len()),
        total_count: Some(total),
        ..output(UiOperation::Find, serial)
    };
    if matches.is_empty() {
        let near: Vec<Element> = closest(&snap.elements, &value, MAX_MATCHES)
            .into_iter()
            .cloned()
            .collect();
        out.hint = Some(format!(
            "nothing matches {value:?}; the closest labels are listed; or tap {{gridCell: 1-24, gridPosition: center|top-left|top-right|bottom-left|bottom-right}} on the grid image"
        ));
        out.matches = Some(near);
    } else {
        out.matches = Some(matches);
        out.hint = Some("tap {ref: matches[0].ref} taps the best match".into());
    }
    let image = if want_grid {
        let (meta, block) = capture(state, serial, DEFAULT_MAX_SIZE, true, None).await?;
        out.image = Some(meta.image);
        out.screen = Some(meta.screen);
        out.scale = Some(scale(&meta));
        if args.grid.unwrap_or(false) && out.hint.as_deref().is_some_and(|h| h.starts_with("tap {ref")) {
            out.hint = Some("tap {ref} for a match, or tap {gridCell: 1-24, gridPosition: center|top-left|top-right|bottom-left|bottom-right} on the grid".into());
        }
        Some(block)
    } else {
        None
    };
    Ok((out, image))
}

fn scale(shot: &Shot) -> f64 {
    let s = shot.screen[0].max(shot.screen[1]) as f64 / shot.image[0].max(shot.image[1]).max(1) as f64;
    (s * 1000.0).round() / 1000.0
}

/// Takes a screenshot, makes the JPEG image block, and remembers its geometry.
async fn capture(
    state: &State,
    serial: &str,
    max_size: u32,
    with_grid: bool,
    annotate: Option<&[Element]>,
) -> Result<(Shot, ContentBlock), String> {
    // PNG: 70-100× fewer bytes than a raw frame, which wins on USB and Wi-Fi links and on the
    // simulator (benches/ui_pipeline.rs; README has the numbers and the reasoning).
    let raw = state
        .adb
        .exec(serial, "screencap -p", None, state.adb.timeout(), &|_| {})
        .await
        .map_err(|e| e.to_string())?;
    let frame = crate::image::decode(&raw).map_err(|e| e.to_string())?;
    let (w, h) = crate::image::fit(frame.width, frame.height, max_size);
    let mut small = crate::image::resize(&frame, w, h).map_err(|e| e.to_string())?;
    if with_grid {
        grid::draw(&mut small);
    }
    if let Some(els) = annotate {
        let (fx, fy) = (w as f64 / frame.width as f64, h as f64 / frame.height as f64);
        let boxes: Vec<(String, u32, u32, u32, u32)> = els
            .iter()
            .map(|e| {
                let px = |v: i32, f: f64| (v.max(0) as f64 * f).round() as u32;
                (
                    e.reference.trim_start_matches('e').to_string(),
                    px(e.bounds.left, fx),
                    px(e.bounds.top, fy),
                    px(e.bounds.right, fx),
                    px(e.bounds.bottom, fy),
                )
            })
            .collect();
        grid::annotate(&mut small, &boxes);
    }
    let jpeg = crate::image::encode_jpeg(&small, JPEG_QUALITY).map_err(|e| e.to_string())?;
    let shot = Shot {
        image: [w, h],
        screen: [frame.width, frame.height],
    };
    state.remember_shot(serial, shot);
    let b64 = base64::engine::general_purpose::STANDARD.encode(jpeg);
    Ok((shot, ContentBlock::image(b64, "image/jpeg")))
}

async fn screenshot_op(state: &State, serial: &str, args: &UiArgs) -> Outcome {
    let max_size = args.max_size.unwrap_or(DEFAULT_MAX_SIZE);
    if !(200..=2000).contains(&max_size) {
        return Err(format!("maxSize must be between 200 and 2000; got {max_size}"));
    }
    let with_grid = args.grid.unwrap_or(false);
    // Annotations number the current screen's elements as a fresh dump's refs.
    let snapshot = match args.annotate.unwrap_or(false) {
        true => Some(read_screen(state, serial, true).await?),
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
        "boxes are numbered as the refs of a fresh dump: tap {ref: \"eN\"}"
    } else if with_grid {
        "tap {x, y, space: \"image\"} maps image pixels to the device; or tap {gridCell, gridPosition}"
    } else {
        "tap {x, y, space: \"image\"} maps image pixels to the device"
    };
    Ok((
        UiOutput {
            image: Some(shot.image),
            screen: Some(shot.screen),
            scale: Some(scale(&shot)),
            hint: Some(format!(
                "JPEG q{JPEG_QUALITY}, {}×{} of a {}×{} screen; {hint}",
                shot.image[0], shot.image[1], shot.screen[0], shot.screen[1]
            )),
            ..output(UiOperation::Screenshot, serial)
        },
        Some(block),
    ))
}

/// The point an action aims at, from whichever target the call gave.
async fn target(state: &State, serial: &str, args: &UiArgs) -> Result<([i32; 2], Option<Element>), String> {
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
            Resolved::One(element) => Ok((element.at, Some(element.clone()))),
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
        let screen = screen_size(state, serial).await?;
        let at = grid::point(cell, position.unwrap_or(Position::Center), screen[0], screen[1])
            .ok_or(format!("gridCell must be between 1 and {}; got {cell}", grid::CELLS))?;
        return Ok(([at.0, at.1], None));
    }
    if let (Some(x), Some(y)) = (args.x, args.y) {
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
            return Err(format!("({x}, {y}) is off the {}×{} screen", screen[0], screen[1]));
        }
        return Ok(([x, y], None));
    }
    if let Some((field, matcher, value)) = query(args)? {
        let snap = read_screen(state, serial, true).await?;
        let found = find(&snap.tree, &snap.elements, field, &matcher, screen_bounds(&snap));
        return match best_target(&found) {
            Ok(one) => Ok((one.element.at, Some(one.element.clone()))),
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

fn describe_rank(found: &Found) -> String {
    let rank = match found.rank {
        Rank::ExactCase | Rank::Exact => "exactly",
        Rank::Prefix => "at the start",
        Rank::Substring => "somewhere in the label",
    };
    let place = if found.visible { "on screen" } else { "off screen" };
    format!("{rank}, {place}")
}

/// The screen as the last reading saw it (turned or not), else the display.
async fn screen_size(state: &State, serial: &str) -> Result<[u32; 2], String> {
    if let Some(s) = state.screen(serial) {
        return Ok(s.screen);
    }
    state.display(serial).await
}

async fn act(state: &State, serial: &str, action: UiOperation, args: &UiArgs) -> Outcome {
    let observe = args.observe.unwrap_or(false);
    let mut out = output(action, serial);
    let command = match action {
        UiOperation::Tap | UiOperation::LongPress => {
            let (at, element) = target(state, serial, args).await?;
            out.at = Some(at);
            out.target = element;
            if action == UiOperation::Tap {
                format!("input tap {} {}", at[0], at[1])
            } else {
                let ms = args.duration_ms.unwrap_or(800).clamp(500, 10_000);
                format!("input swipe {0} {1} {0} {1} {ms}", at[0], at[1])
            }
        }
        UiOperation::Swipe => {
            let screen = screen_size(state, serial).await?;
            let (from, to) = match (args.from, args.to, args.direction) {
                (Some(from), Some(to), _) => (from, to),
                (_, _, Some(direction)) => {
                    // A finger moving `direction` across `distance`% of the screen, through its middle.
                    let percent = args.distance.unwrap_or(60);
                    if !(5..=90).contains(&percent) {
                        return Err(format!("distance is a % of the screen, 5 to 90; got {percent}"));
                    }
                    let (w, h) = (screen[0] as i32, screen[1] as i32);
                    let (cx, cy) = (w / 2, h / 2);
                    let (dx, dy) = (w * percent as i32 / 200, h * percent as i32 / 200);
                    match direction {
                        Direction::Up => ([cx, cy + dy], [cx, cy - dy]),
                        Direction::Down => ([cx, cy - dy], [cx, cy + dy]),
                        Direction::Left => ([cx + dx, cy], [cx - dx, cy]),
                        Direction::Right => ([cx - dx, cy], [cx + dx, cy]),
                    }
                }
                _ => return Err("swipe needs from and to ([x, y] each), or a direction".into()),
            };
            for p in [from, to] {
                if p[0] < 0 || p[1] < 0 || p[0] >= screen[0] as i32 || p[1] >= screen[1] as i32 {
                    return Err(format!("{p:?} is off the {}×{} screen", screen[0], screen[1]));
                }
            }
            let ms = args.duration_ms.unwrap_or(300).clamp(50, 10_000);
            out.at = Some(to);
            format!("input swipe {} {} {} {} {ms}", from[0], from[1], to[0], to[1])
        }
        UiOperation::Key => {
            let name = args
                .name
                .as_deref()
                .ok_or("key needs `name`: BACK, HOME, ENTER, TAB, DEL, APP_SWITCH, VOLUME_UP… or a key code")?;
            let code = key_code(name).ok_or(format!(
                "unknown key {name:?}: use BACK, HOME, ENTER, TAB, DEL, APP_SWITCH, VOLUME_UP, VOLUME_DOWN, POWER, MENU, SEARCH… or a key code (0-400)"
            ))?;
            format!("input keyevent {code}")
        }
        UiOperation::Type => {
            let text = args.text.as_deref().ok_or("type needs `text`")?;
            let escaped = input_text(text)?;
            let mut steps = Vec::new();
            if args.reference.is_some() {
                let (at, element) = target(state, serial, args).await?;
                steps.push(format!("input tap {} {}", at[0], at[1]));
                out.target = element;
            }
            if args.clear.unwrap_or(false) {
                // End of the field, then one DEL per character it may hold.
                steps.push(format!("input keyevent 123 {}", vec!["67"; 256].join(" ")));
            }
            if !escaped.is_empty() {
                steps.push(format!("input text {}", quote(&escaped)));
            }
            if args.submit.unwrap_or(false) {
                steps.push("input keyevent 66".into());
            }
            steps.join(" && ")
        }
        UiOperation::Dump | UiOperation::Find | UiOperation::Screenshot | UiOperation::Scroll | UiOperation::Wait => {
            unreachable!("not plain actions")
        }
    };
    // A fresh reading, taken after the target was checked (a ref is checked against the dump
    // that made it), and before the action: the stored one may predate actions that read nothing.
    let before = if observe {
        Some(read_screen(state, serial, false).await?)
    } else {
        None
    };
    checked_shell(state, serial, &command).await?;
    if let Some(before) = before {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let after = read_screen(state, serial, false).await?;
        let seen = observed(&before, &after);
        if !seen.changed {
            out.hint = Some("unchanged: the screen looks the same as before".into());
        }
        out.observed = Some(seen);
        out.focused = after.focused.clone();
    }
    Ok((out, None))
}

/// Scrolls `direction` (where the content moves: down shows what is below), and with `text`,
/// until an element matching it is on screen, at most `MAX_SCROLLS` times or to the end.
const MAX_SCROLLS: usize = 8;

async fn scroll(state: &State, serial: &str, args: &UiArgs) -> Outcome {
    let direction = args
        .direction
        .ok_or("scroll needs `direction`: up, down, left or right")?;
    let until = query(args)?;
    let screen = screen_size(state, serial).await?;
    let (w, h) = (screen[0] as i32, screen[1] as i32);
    let (cx, cy, dx, dy) = (w / 2, h / 2, w * 3 / 10, h * 3 / 10);
    // The finger moves against the content: to scroll down, swipe up.
    let (from, to) = match direction {
        Direction::Down => ([cx, cy + dy], [cx, cy - dy]),
        Direction::Up => ([cx, cy - dy], [cx, cy + dy]),
        Direction::Right => ([cx + dx, cy], [cx - dx, cy]),
        Direction::Left => ([cx - dx, cy], [cx + dx, cy]),
    };
    let swipe = format!("input swipe {} {} {} {} 300", from[0], from[1], to[0], to[1]);
    let mut out = output(UiOperation::Scroll, serial);
    let observe = args.observe.unwrap_or(false);
    let Some((field, matcher, value)) = until else {
        let before = match observe {
            true => Some(read_screen(state, serial, false).await?),
            false => None,
        };
        checked_shell(state, serial, &swipe).await?;
        out.at = Some(to);
        if let Some(before) = before {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let after = read_screen(state, serial, true).await?;
            let seen = observed(&before, &after);
            if !seen.changed {
                out.hint = Some(format!(
                    "unchanged: nothing moved; the end is reached scrolling {}",
                    name_of(direction)
                ));
            }
            out.observed = Some(seen);
            out.focused = after.focused.clone();
        }
        return Ok((out, None));
    };
    let first = read_screen(state, serial, true).await?;
    let mut snap = first.clone();
    for attempt in 0..=MAX_SCROLLS {
        let found = find(&snap.tree, &snap.elements, field, &matcher, screen_bounds(&snap));
        if let Some(hit) = found
            .into_iter()
            .find(|f| screen_bounds(&snap).contains(f.element.at[0], f.element.at[1]))
        {
            out.target = Some(hit.element);
            out.count = Some(attempt);
            out.focused = snap.focused.clone();
            out.hint = Some(format!("found after {attempt} scrolls; tap {{ref}} acts on it"));
            if observe {
                out.observed = Some(observed(&first, &snap));
            }
            return Ok((out, None));
        }
        if attempt == MAX_SCROLLS {
            break;
        }
        checked_shell(state, serial, &swipe).await?;
        tokio::time::sleep(Duration::from_millis(250)).await;
        let next = read_screen(state, serial, true).await?;
        if next.signature == snap.signature {
            return Err(format!(
                "{value:?} is not on the screen, and scrolling {} changes nothing more: the end is reached",
                name_of(direction)
            ));
        }
        snap = next;
    }
    Err(format!(
        "{value:?} did not appear in {MAX_SCROLLS} scrolls {}",
        name_of(direction)
    ))
}

/// Runs an input command and fails with its stderr when it fails.
async fn checked_shell(state: &State, serial: &str, command: &str) -> Result<(), String> {
    let out = state.adb.shell(serial, command).await.map_err(|e| e.to_string())?;
    match out.exit_code {
        Some(0) | None => Ok(()),
        Some(code) => Err(format!(
            "`{command}` failed (exit {code}): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

fn name_of(direction: Direction) -> &'static str {
    match direction {
        Direction::Up => "up",
        Direction::Down => "down",
        Direction::Left => "left",
        Direction::Right => "right",
    }
}

const DEFAULT_WAIT_MS: u64 = 10_000;
const MAX_WAIT_MS: u64 = 120_000;

/// Polls the screen (200 ms, growing to 2 s) until an element matches (or, with `gone`, until none
/// does), with progress notifications; the client's cancel ends it.
async fn wait(state: &State, serial: &str, args: &UiArgs, ctx: &RequestContext<RoleServer>) -> Outcome {
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
    let limit = Duration::from_millis(timeout);
    loop {
        polls += 1;
        // Each look is bounded by what is left, so the wait ends within one look of its time.
        let look = super::time_left(started, limit, Duration::from_millis(200));
        let snap = match tokio::time::timeout(look, read_screen(state, serial, true)).await {
            Ok(snap) => snap?,
            Err(_) => break,
        };
        let found = find(&snap.tree, &snap.elements, field, &matcher, screen_bounds(&snap));
        if found.is_empty() == gone {
            let mut out = output(UiOperation::Wait, serial);
            out.target = found.into_iter().next().map(|f| f.element);
            out.focused = snap.focused;
            out.count = Some(polls);
            out.hint = Some(format!("after {} ms", started.elapsed().as_millis()));
            return Ok((out, None));
        }
        if let Some(token) = &token {
            let note = ProgressNotificationParam::new(token.clone(), started.elapsed().as_millis() as f64)
                .with_total(timeout as f64)
                .with_message(format!(
                    "poll {polls}: {value:?} {}",
                    if gone { "still there" } else { "not yet" }
                ));
            let _ = ctx.peer.notify_progress(note).await;
        }
        let Some(sleep) = super::next_pause(started, limit, pause) else {
            break;
        };
        tokio::select! {
            _ = tokio::time::sleep(sleep) => {}
            _ = ctx.ct.cancelled() => return Err("wait cancelled by the client".into()),
        }
        pause = (pause * 3 / 2).min(Duration::from_secs(2));
    }
    Err(format!(
        "{value:?} {} after {} ms ({polls} looks); ui dump shows what is there",
        if gone {
            "is still on the screen"
        } else {
            "did not appear"
        },
        started.elapsed().as_millis()
    ))
}

/// Escapes text for `input text`: a space becomes `%s`; the shell quoting is done by `quote`.
/// `input text` cannot deliver non-ASCII or control characters, nor a literal `%s`.
pub fn input_text(text: &str) -> Result<String, String> {
    if let Some(c) = text.chars().find(|c| !c.is_ascii() || c.is_ascii_control()) {
        return Err(format!(
            "cannot type {c:?}: `input text` delivers printable ASCII only; type the rest another way (e.g. paste)"
        ));
    }
    if text.contains("%s") {
        return Err("cannot type a literal \"%s\": `input text` turns it into a space".into());
    }
    Ok(text.replace(' ', "%s"))
}

fn observed(before: &Snapshot, after: &Snapshot) -> Observed {
    let labels = |s: &Snapshot| -> Vec<String> {
        s.elements
            .iter()
            .filter(|e| !e.label.is_empty())
            .map(|e| e.label.clone())
            .collect()
    };
    let (b, a) = (labels(before), labels(after));
    let appeared: Vec<String> = a.iter().filter(|l| !b.contains(l)).take(8).cloned().collect();
    let disappeared: Vec<String> = b.iter().filter(|l| !a.contains(l)).take(8).cloned().collect();
    let focus_changed = before.focused != after.focused;
    Observed {
        changed: before.signature != after.signature,
        focused: focus_changed.then(|| after.focused.clone()).flatten(),
        appeared,
        disappeared,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_text_escapes_spaces_and_refuses_what_it_cannot_send() {
        assert_eq!(input_text("user name").unwrap(), "user%sname");
        assert_eq!(
            input_text("a&b;c|d<e>f$g`h'i\"j\\k").unwrap(),
            "a&b;c|d<e>f$g`h'i\"j\\k"
        );
        assert!(input_text("café").is_err());
        assert!(input_text("100%s").is_err());
        assert!(input_text("tab\there").is_err());
    }
}
