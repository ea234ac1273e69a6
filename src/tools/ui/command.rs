//! `ui`'s typed command: the flat wire arguments (`UiArgs`, one compact schema in tools/list)
//! read once, through `tools::command::parse`, into one `UiAction` whose parts are valid: an
//! action's one `Target`, a query with its matcher built, a key's code, a swipe's path, every
//! number in its range. The server's deadline and task decision read it; `act`, `resolve` and
//! the rest are handed it and check only what needs the device (a ref still on the screen, a
//! point on it).
//!
//! Where an action aims and what it looks for are built in `target.rs` (a new way to aim gets
//! its wire field in `UiArgs` and `fields_of`, args.rs).

use std::time::Duration;

use rmcp::model::JsonObject;

use super::args::{UiArgs, UiOperation, WireDirection, fields_of};
use super::capture::DEFAULT_MAX_SIZE;
use super::target::{Query, Target, query, target};
use super::wait::{DEFAULT_WAIT_MS, MAX_WAIT_MS};
use crate::android::keys::key_code;
use crate::android::ui_refs::parse_ref;
use crate::flow::Recorded;
use crate::tools::command::{self, OFFSET, Range};

/// One valid ui call: the device it names (if any) and what to do there.
pub struct UiCommand {
    pub device: Option<String>,
    pub action: UiAction,
}

pub enum UiAction {
    Dump {
        limit: usize,
        offset: usize,
        /// Not empty.
        filter: Option<String>,
    },
    Find {
        query: Query,
        grid: bool,
    },
    Tap {
        target: Target,
        observe: bool,
        /// What a replayed flow's recording saw of the element: the tap acts only on that one.
        recorded: Option<Recorded>,
    },
    LongPress {
        target: Target,
        duration_ms: Option<u32>,
        observe: bool,
        recorded: Option<Recorded>,
    },
    Swipe {
        path: SwipePath,
        duration_ms: Option<u32>,
        observe: bool,
    },
    Type(Typing),
    Key {
        /// As given (the recording keeps it upper-cased).
        name: String,
        code: u32,
        observe: bool,
    },
    Scroll {
        toward: ContentDirection,
        /// Scroll until an element matching it is on the screen.
        until: Option<Query>,
        observe: bool,
    },
    Wait {
        query: Query,
        gone: bool,
        timeout: Duration,
        /// The timeoutMs given, which a recorded wait keeps.
        timeout_ms: Option<u64>,
    },
    Screenshot {
        grid: bool,
        annotate: bool,
        max_size: u32,
    },
}

/// What `type` types, and where: into the field of a ref (tapped first), else the focused one.
pub struct Typing {
    pub text: String,
    pub into: Option<String>,
    pub clear: bool,
    pub submit: bool,
    pub observe: bool,
}

/// A swipe's path: two points, or a finger's direction across a share of the screen.
pub enum SwipePath {
    Between {
        from: [i32; 2],
        to: [i32; 2],
    },
    Toward {
        finger: FingerDirection,
        /// % of the screen; `None`: the default, which the recording leaves unsaid.
        distance: Option<u32>,
    },
}

/// Which way a finger moves on the glass (a swipe's `direction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FingerDirection {
    Up,
    Down,
    Left,
    Right,
}

/// Which way through the content a scroll goes (a scroll's `direction`): down shows what is
/// below, so the finger moves up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentDirection {
    Up,
    Down,
    Left,
    Right,
}

impl FingerDirection {
    pub fn name(self) -> &'static str {
        match self {
            FingerDirection::Up => "up",
            FingerDirection::Down => "down",
            FingerDirection::Left => "left",
            FingerDirection::Right => "right",
        }
    }
}

impl ContentDirection {
    pub fn name(self) -> &'static str {
        match self {
            ContentDirection::Up => "up",
            ContentDirection::Down => "down",
            ContentDirection::Left => "left",
            ContentDirection::Right => "right",
        }
    }

    /// The way the finger moves to scroll this way.
    pub fn finger(self) -> FingerDirection {
        match self {
            ContentDirection::Down => FingerDirection::Up,
            ContentDirection::Up => FingerDirection::Down,
            ContentDirection::Right => FingerDirection::Left,
            ContentDirection::Left => FingerDirection::Right,
        }
    }
}

impl From<WireDirection> for FingerDirection {
    fn from(d: WireDirection) -> FingerDirection {
        match d {
            WireDirection::Up => FingerDirection::Up,
            WireDirection::Down => FingerDirection::Down,
            WireDirection::Left => FingerDirection::Left,
            WireDirection::Right => FingerDirection::Right,
        }
    }
}

impl From<WireDirection> for ContentDirection {
    fn from(d: WireDirection) -> ContentDirection {
        match d {
            WireDirection::Up => ContentDirection::Up,
            WireDirection::Down => ContentDirection::Down,
            WireDirection::Left => ContentDirection::Left,
            WireDirection::Right => ContentDirection::Right,
        }
    }
}

/// A dump's page: by default, and at most.
const DEFAULT_LIMIT: u64 = 40;
const MAX_LIMIT: u64 = 200;

const LIMIT: Range = Range::new("limit", 1, MAX_LIMIT);
const MAX_SIZE: Range = Range::new("maxSize", 200, 2000);
const TIMEOUT: Range = Range::new("timeoutMs", 1, MAX_WAIT_MS);
const DISTANCE: Range = Range::new("`distance` (a % of the screen)", 5, 90);

/// One `input text` command line stays well inside adbd's 1 MiB service-name limit.
pub(super) const MAX_TYPE_CHARS: usize = 10_000;

impl UiCommand {
    /// Builds the command from `ui`'s wire arguments: `Command::parse` (mod.rs) is this.
    pub(super) fn build(args: JsonObject) -> Result<UiCommand, String> {
        let a: UiArgs = command::parse("ui", args, |a: &UiArgs| fields_of(a.operation))?;
        let observe = a.observe.unwrap_or(false);
        let action = match a.operation {
            UiOperation::Dump => UiAction::Dump {
                limit: LIMIT.check_count(a.limit, DEFAULT_LIMIT)?,
                offset: OFFSET.check_count(a.offset, 0)?,
                filter: a.filter.clone().filter(|f| !f.is_empty()),
            },
            UiOperation::Find => UiAction::Find {
                query: query(&a)?.ok_or("find needs text, resourceId, contentDesc, className or selector")?,
                grid: a.grid.unwrap_or(false),
            },
            UiOperation::Tap => UiAction::Tap {
                target: target(&a, "tap")?,
                observe,
                recorded: a.recorded.clone(),
            },
            UiOperation::LongPress => UiAction::LongPress {
                target: target(&a, "long-press")?,
                duration_ms: a.duration_ms,
                observe,
                recorded: a.recorded.clone(),
            },
            UiOperation::Swipe => UiAction::Swipe {
                path: swipe_path(&a)?,
                duration_ms: a.duration_ms,
                observe,
            },
            UiOperation::Type => UiAction::Type(typing(&a)?),
            UiOperation::Key => {
                let name = a
                    .name
                    .clone()
                    .ok_or("key needs `name`: BACK, HOME, ENTER, TAB, DEL, APP_SWITCH, VOLUME_UP… or a key code")?;
                let code = key_code(&name).ok_or(format!(
                    "`name` {:?} is not a key: use BACK, HOME, ENTER, TAB, DEL, APP_SWITCH, VOLUME_UP, VOLUME_DOWN, POWER, MENU, SEARCH… or a key code (0-400)",
                    crate::android::text::echoed(&name)
                ))?;
                UiAction::Key { name, code, observe }
            }
            UiOperation::Scroll => UiAction::Scroll {
                toward: a
                    .direction
                    .ok_or("scroll needs `direction`: up, down, left or right")?
                    .into(),
                until: query(&a)?,
                observe,
            },
            UiOperation::Wait => UiAction::Wait {
                query: query(&a)?.ok_or("wait needs text, resourceId, contentDesc, className or selector")?,
                gone: a.gone.unwrap_or(false),
                timeout: TIMEOUT.check_ms(a.timeout_ms, DEFAULT_WAIT_MS)?,
                timeout_ms: a.timeout_ms,
            },
            UiOperation::Screenshot => UiAction::Screenshot {
                grid: a.grid.unwrap_or(false),
                annotate: a.annotate.unwrap_or(false),
                max_size: MAX_SIZE.check(a.max_size.map(u64::from), u64::from(DEFAULT_MAX_SIZE))? as u32,
            },
        };
        Ok(UiCommand {
            device: a.device,
            action,
        })
    }
}

impl UiAction {
    pub fn operation(&self) -> UiOperation {
        match self {
            UiAction::Dump { .. } => UiOperation::Dump,
            UiAction::Find { .. } => UiOperation::Find,
            UiAction::Tap { .. } => UiOperation::Tap,
            UiAction::LongPress { .. } => UiOperation::LongPress,
            UiAction::Swipe { .. } => UiOperation::Swipe,
            UiAction::Type(_) => UiOperation::Type,
            UiAction::Key { .. } => UiOperation::Key,
            UiAction::Scroll { .. } => UiOperation::Scroll,
            UiAction::Wait { .. } => UiOperation::Wait,
            UiAction::Screenshot { .. } => UiOperation::Screenshot,
        }
    }

    /// How long the gesture lasts on the device, in ms: a long press's or a swipe's duration,
    /// clamped as the device is asked; 0 for everything else.
    pub fn gesture_ms(&self) -> u64 {
        match self {
            UiAction::LongPress { duration_ms, .. } => u64::from(duration_ms.unwrap_or(800).clamp(500, 10_000)),
            UiAction::Swipe { duration_ms, .. } => u64::from(duration_ms.unwrap_or(300).clamp(50, 10_000)),
            _ => 0,
        }
    }
}

fn swipe_path(a: &UiArgs) -> Result<SwipePath, String> {
    const NEEDS: &str = "swipe needs from and to ([x, y] each), or a direction";
    match (a.from, a.to, a.direction) {
        (Some(from), Some(to), None) if a.distance.is_none() => Ok(SwipePath::Between { from, to }),
        (Some(_), Some(_), _) => {
            Err("swipe goes from and to two points, or in a direction (with a distance): give one of them".into())
        }
        (None, None, Some(direction)) => Ok(SwipePath::Toward {
            finger: direction.into(),
            distance: match a.distance {
                Some(d) => Some(DISTANCE.check(Some(u64::from(d)), 0)? as u32),
                None => None,
            },
        }),
        (Some(_), None, _) | (None, Some(_), _) => Err(format!("{NEEDS}: `from` and `to` go together")),
        (None, None, None) => Err(NEEDS.into()),
    }
}

fn typing(a: &UiArgs) -> Result<Typing, String> {
    let text = a.text.clone().ok_or("type needs `text`")?;
    let (clear, submit) = (a.clear.unwrap_or(false), a.submit.unwrap_or(false));
    if text.is_empty() && !clear && !submit {
        return Err(
            "type needs non-empty `text` (or `clear: true` to empty the field, `submit: true` to press ENTER)".into(),
        );
    }
    let length = text.chars().count();
    if length > MAX_TYPE_CHARS {
        return Err(format!(
            "`text` is {length} chars; type at most {MAX_TYPE_CHARS} per call (split it over several calls)"
        ));
    }
    // What `input text` cannot send goes through an input method that takes broadcasts (or, on
    // a web field, DevTools); control characters go nowhere.
    if let Some(c) = text.chars().find(|c| c.is_control()) {
        return Err(format!(
            "`text`: cannot type the control character {c:?}; send keys with ui key (ENTER, TAB, DEL)"
        ));
    }
    if let Some(reference) = &a.reference
        && parse_ref(reference).is_none()
    {
        return Err(format!(
            "{:?} is not a ref: refs look like e12, as ui dump and ui find give them",
            crate::android::text::echoed(reference)
        ));
    }
    Ok(Typing {
        text,
        into: a.reference.clone(),
        clear,
        submit,
        observe: a.observe.unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::target::GRID_CELL;
    use super::{ContentDirection, Duration, FingerDirection, SwipePath, Target, UiAction, UiCommand};
    use crate::image::grid::Position;
    use crate::tools::command::{Command, Deadline};

    fn parse(args: Value) -> Result<UiCommand, String> {
        UiCommand::parse(args.as_object().unwrap().clone())
    }

    fn refused(args: Value) -> String {
        parse(args).err().unwrap_or_else(|| panic!("built"))
    }

    #[test]
    fn a_tap_is_built_with_its_one_target_and_its_ranges_checked_once() {
        let tap = parse(json!({"operation": "tap", "gridCell": 14, "gridPosition": "top-left"})).unwrap();
        assert!(matches!(
            tap.action,
            UiAction::Tap {
                target: Target::Grid {
                    cell: 14,
                    position: Position::TopLeft
                },
                ..
            }
        ));
        // Each range is refused with the one check's message (`Range`).
        assert_eq!(
            refused(json!({"operation": "tap", "gridCell": 0})),
            GRID_CELL.check(Some(0), 1).unwrap_err()
        );
        assert_eq!(
            refused(json!({"operation": "tap", "x": -5, "y": 10})),
            "`x` and `y` must be 0 or more; got (-5, 10)"
        );
        assert!(refused(json!({"operation": "tap", "ref": "e1", "text": "OK"})).contains("takes one target"));
        assert!(refused(json!({"operation": "tap", "ref": "e0"})).contains("\"e0\" is not a ref"));
        assert!(refused(json!({"operation": "tap", "x": 10})).starts_with("say where"));
        assert!(refused(json!({"operation": "tap", "text": "(", "match": "regex"})).contains("regex"));
        let long = parse(json!({"operation": "long-press", "ref": "e3", "durationMs": 20000})).unwrap();
        assert_eq!(long.action.gesture_ms(), 10_000);
        assert_eq!(
            long.deadline(),
            Deadline::Within {
                timeout: None,
                gesture: Duration::from_secs(10)
            }
        );
    }

    #[test]
    fn a_field_that_would_be_ignored_is_refused() {
        // Each of these was accepted and ignored before the typed command.
        assert!(refused(json!({"operation": "tap", "ref": "e1", "gridPosition": "center"})).contains("gridPosition"));
        assert!(refused(json!({"operation": "tap", "ref": "e1", "space": "image"})).contains("`space`"));
        assert!(refused(json!({"operation": "tap", "ref": "e1", "match": "exact"})).contains("`match`"));
        assert!(refused(json!({"operation": "scroll", "direction": "down", "match": "exact"})).contains("`match`"));
        assert!(refused(json!({"operation": "swipe", "from": [1, 2], "direction": "up"})).contains("go together"));
        assert!(
            refused(json!({"operation": "swipe", "from": [1, 2], "to": [3, 4], "direction": "up"}))
                .contains("give one of them")
        );
        assert_eq!(
            refused(json!({"operation": "dump", "gone": true})),
            "`gone` does not apply to ui dump; it takes limit, offset, filter"
        );
    }

    #[test]
    fn every_operation_is_built_from_its_fields_and_says_its_deadline() {
        let wait = parse(json!({"operation": "wait", "text": "OK", "timeoutMs": 1500})).unwrap();
        assert_eq!(wait.deadline(), Deadline::Own);
        assert!(wait.runs_long());
        assert!(refused(json!({"operation": "wait", "text": "OK", "timeoutMs": 0})).ends_with("1 and 120000; got 0"));
        assert!(refused(json!({"operation": "screenshot", "maxSize": 5})).ends_with("200 and 2000; got 5"));
        assert!(refused(json!({"operation": "dump", "limit": 0})).starts_with("limit must be"));
        let scroll = parse(json!({"operation": "scroll", "direction": "down"})).unwrap();
        assert!(matches!(
            scroll.action,
            UiAction::Scroll {
                toward: ContentDirection::Down,
                until: None,
                ..
            }
        ));
        assert_eq!(ContentDirection::Down.finger(), FingerDirection::Up);
        let swipe = parse(json!({"operation": "swipe", "direction": "left", "distance": 50})).unwrap();
        assert!(matches!(
            swipe.action,
            UiAction::Swipe {
                path: SwipePath::Toward {
                    finger: FingerDirection::Left,
                    distance: Some(50)
                },
                ..
            }
        ));
        assert!(refused(json!({"operation": "swipe", "direction": "up", "distance": 1000})).contains("distance"));
        let key = parse(json!({"operation": "key", "name": "back"})).unwrap();
        assert!(matches!(key.action, UiAction::Key { code: 4, .. }));
        assert!(refused(json!({"operation": "type", "text": ""})).starts_with("type needs non-empty `text`"));
        assert!(parse(json!({"operation": "type", "text": "", "clear": true})).is_ok());
        assert!(refused(json!({"operation": "type", "text": "a\u{0}b"})).contains("control character"));
        assert!(refused(json!({"operation": "type", "text": "x", "ref": "12"})).contains("is not a ref"));
    }
}
