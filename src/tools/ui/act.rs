//! Acting on the screen: tap, long press, swipe, type, key, scroll; each can observe what changed.

use super::*;
use crate::flow;

pub(super) async fn act(state: &State, serial: &str, action: UiOperation, args: &UiArgs) -> Outcome {
    let observe = args.observe.unwrap_or(false);
    let mut out = output(action, serial);
    // What a recorded flow keeps of this call, once it has worked.
    let step: Option<flow::Action>;
    // A reading taken for this call before it acts (typing reads the focus), which an
    // `observe` can take as its "before".
    let mut reading: Option<Snapshot> = None;
    // A gesture's command lasts its duration on the device: its timeout allows for it.
    let lasts = Duration::from_millis(gesture_ms(action, args.duration_ms));
    // On a web element the action goes through DevTools, where the device command would run.
    let mut web_action = None;
    let command = match action {
        UiOperation::Tap | UiOperation::LongPress => {
            let (at, element, aim) = target(state, serial, args).await?;
            let aim = state.flows.guarded(serial, element.as_ref(), aim);
            out.at = Some(at);
            out.target = element;
            step = Some(if action == UiOperation::Tap {
                flow::Action::Tap { target: aim }
            } else {
                flow::Action::LongPress {
                    target: aim,
                    duration_ms: args.duration_ms,
                }
            });
            let web = web_target(state, serial, out.target.as_ref());
            if let (UiOperation::Tap, Some((page, selector))) = (action, web) {
                web_action = Some(web::WebAction::Tap { page, selector });
                String::new()
            } else if action == UiOperation::Tap {
                format!("input tap {} {}", at[0], at[1])
            } else {
                format!("input swipe {0} {1} {0} {1} {2}", at[0], at[1], lasts.as_millis())
            }
        }
        UiOperation::Swipe => {
            let percent = args.distance.unwrap_or(60);
            if !(5..=90).contains(&percent) {
                return Err(format!("`distance` is a % of the screen, 5 to 90; got {percent}"));
            }
            const NEEDS: &str = "swipe needs from and to ([x, y] each), or a direction";
            if !((args.from.is_some() && args.to.is_some()) || args.direction.is_some()) {
                return Err(NEEDS.into());
            }
            let screen = screen_size(state, serial).await?;
            let (from, to) = match (args.from, args.to, args.direction) {
                (Some(from), Some(to), _) => (from, to),
                (_, _, Some(direction)) => {
                    // A finger moving `direction` across `distance`% of the screen, through its middle.
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
                _ => return Err(NEEDS.into()),
            };
            for p in [from, to] {
                if p[0] < 0 || p[1] < 0 || p[0] >= screen[0] as i32 || p[1] >= screen[1] as i32 {
                    return Err(format!("{p:?} is off the {}×{} screen", screen[0], screen[1]));
                }
            }
            let ms = lasts.as_millis();
            out.at = Some(to);
            step = Some(match (args.from, args.direction) {
                (None, Some(direction)) if args.distance.is_none() => flow::Action::SwipeToward {
                    direction: name_of(direction).into(),
                    duration_ms: args.duration_ms,
                },
                _ => flow::Action::Swipe {
                    from,
                    to,
                    duration_ms: args.duration_ms,
                },
            });
            format!("input swipe {} {} {} {} {ms}", from[0], from[1], to[0], to[1])
        }
        UiOperation::Key => {
            let name = args
                .name
                .as_deref()
                .ok_or("key needs `name`: BACK, HOME, ENTER, TAB, DEL, APP_SWITCH, VOLUME_UP… or a key code")?;
            let code = key_code(name).ok_or(format!(
                "`name` {:?} is not a key: use BACK, HOME, ENTER, TAB, DEL, APP_SWITCH, VOLUME_UP, VOLUME_DOWN, POWER, MENU, SEARCH… or a key code (0-400)",
                crate::adb::cut(name)
            ))?;
            step = Some(flow::Action::Key {
                name: name.to_ascii_uppercase(),
            });
            // ENTER in a web field with focus goes to the page through DevTools, as a replayed
            // Maestro `pressKey: Enter` after `inputText` meant it (the simulator's WebView gets no
            // key events; a phone's would).
            let web = match code {
                66 => web::focused_field(state, serial).await,
                _ => None,
            };
            match web {
                Some((page, selector)) => {
                    web_action = Some(web::WebAction::Type {
                        page,
                        selector,
                        text: String::new(),
                        clear: false,
                        submit: true,
                    });
                    String::new()
                }
                None => format!("input keyevent {code}"),
            }
        }
        UiOperation::Type => {
            let text = args.text.as_deref().ok_or("type needs `text`")?;
            let length = text.chars().count();
            if length > MAX_TYPE_CHARS {
                return Err(format!(
                    "`text` is {length} chars; type at most {MAX_TYPE_CHARS} per call (split it over several calls)"
                ));
            }
            // What `input text` cannot send goes through an input method that takes broadcasts
            // (or, on a web field, DevTools); control characters go nowhere.
            if let Some(c) = text.chars().find(|c| c.is_control()) {
                return Err(format!(
                    "`text`: cannot type the control character {c:?}; send keys with ui key (ENTER, TAB, DEL)"
                ));
            }
            let mut steps = Vec::new();
            let mut aim = None;
            let mut web = None;
            if args.reference.is_some() {
                let (at, element, recorded) = target(state, serial, args).await?;
                let recorded = state.flows.guarded(serial, element.as_ref(), recorded);
                web = web_target(state, serial, element.as_ref());
                if web.is_none() {
                    steps.push(format!("input tap {} {}", at[0], at[1]));
                }
                out.target = element;
                aim = Some(recorded);
            }
            // A password is recorded as a placeholder, never as itself: decided now, from the
            // field typed into (the ref's, just read) or the one with input focus now. The
            // screen remembered from an earlier call predates the tap that focused the field.
            if out.target.is_none() {
                reading = Some(read_screen(state, serial, true).await?);
            }
            if web.is_none() && args.reference.is_none() {
                // A replayed `inputText` after a tap on a web field: the page's focused field.
                web = web::focused_field(state, serial).await;
            }
            let screen = reading.as_ref().map(|s| s.elements.as_slice()).unwrap_or_default();
            let field = out.target.as_ref().or_else(|| focused_field(screen));
            step = Some(flow::Action::Type {
                target: aim,
                text: state.flows.typed(serial, text, field, screen),
                clear: args.clear.unwrap_or(false),
                submit: args.submit.unwrap_or(false),
            });
            if let Some((page, selector)) = web {
                // A web field takes any text through DevTools.
                web_action = Some(web::WebAction::Type {
                    page,
                    selector,
                    text: text.to_string(),
                    clear: args.clear.unwrap_or(false),
                    submit: args.submit.unwrap_or(false),
                });
                String::new()
            } else {
                if args.clear.unwrap_or(false) {
                    // The field must have focus before it is read and emptied.
                    if !steps.is_empty() {
                        checked_shell(state, serial, &steps.join(" && ")).await?;
                        steps.clear();
                    }
                    clear_field(state, serial, out.target.as_ref().map(|e| e.reference.as_str())).await?;
                }
                match input_text(text).ok() {
                    Some(escaped) if !escaped.is_empty() => steps.push(format!("input text {}", quote(&escaped))),
                    Some(_) => {}
                    None => {
                        // After the focusing tap, before the ENTER.
                        if !steps.is_empty() {
                            checked_shell(state, serial, &steps.join(" && ")).await?;
                            steps.clear();
                        }
                        ime::type_by_broadcast(state, serial, text).await?;
                    }
                }
                if args.submit.unwrap_or(false) {
                    steps.push("input keyevent 66".into());
                }
                steps.join(" && ")
            }
        }
        UiOperation::Dump | UiOperation::Find | UiOperation::Screenshot | UiOperation::Scroll | UiOperation::Wait => {
            unreachable!("not plain actions")
        }
    };
    // A fresh reading, taken after the target was checked (a ref is checked against the dump
    // that made it), and before the action: the stored one may predate actions that read nothing.
    // A tap or long press aimed by ref or text has just read the screen, and nothing ran since:
    // that reading is the "before" (as typing's own reading is).
    let aimed_by_reading = matches!(action, UiOperation::Tap | UiOperation::LongPress)
        && (args.reference.is_some() || query(args)?.is_some());
    let before = match (observe, reading) {
        (false, _) => None,
        (true, Some(reading)) => Some(reading),
        (true, None) if aimed_by_reading => state.screen(serial),
        (true, None) => Some(read_screen(state, serial, false).await?),
    };
    if let Some(web_action) = web_action {
        web::perform(state, serial, web_action).await?;
    }
    if !command.is_empty() {
        checked_shell_lasting(state, serial, &command, lasts).await?;
    }
    if let Some(action) = step {
        state.flows.record(serial, flow::Step::new(action));
    }
    if let Some(before) = before {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let after = read_screen(state, serial, false).await?;
        let seen = observed(&before, &after);
        if !seen.changed {
            out.hint = Some("unchanged: the screen looks the same as before".into());
        }
        out.observed = Some(seen);
        out.focused = after.focused.clone();
        out.state = describe(&after.state, &after.elements);
    }
    Ok((out, None))
}

/// The text field with input focus in a reading: an EditText, or any field shown as a password.
fn focused_field(elements: &[Element]) -> Option<&Element> {
    elements
        .iter()
        .find(|e| (e.kind.ends_with("EditText") || flow::is_password(e)) && e.flags.iter().any(|f| f == "focused"))
}

/// The page and selector of a web element (`web.rs`), from the reading that resolved it.
fn web_target(state: &State, serial: &str, element: Option<&Element>) -> Option<(web::WebPage, String)> {
    let snap = state.screen(serial)?;
    let selector = web::selector_of(&snap, element?)?;
    Some((snap.web?, selector))
}

/// DEL key events sent in one command: long fields are emptied over several.
const DELS_PER_COMMAND: usize = 500;

/// Empties a text field of any length: the end of the field, then one DEL per character it
/// shows (and a few more), read again until it is empty. `reference` names the field, else the
/// focused one. A field that shows the same text after its DELs holds no text of its own: it
/// shows its hint (uiautomator reports an empty field's hint as its text; not every Android
/// names it as a hint).
async fn clear_field(state: &State, serial: &str, reference: Option<&str>) -> Result<(), String> {
    let mut before: Option<String> = None;
    for _ in 0..4 {
        let snap = read_screen(state, serial, false).await?;
        let field = match reference {
            Some(r) => match resolve(&snap.elements, r) {
                Resolved::One(e) => e.clone(),
                _ => {
                    return Err(format!(
                        "ref {r} left the screen while its field was being emptied; nothing was typed"
                    ));
                }
            },
            None => focused_field(&snap.elements).cloned().ok_or(
                "type {clear: true} empties the focused field, and no field has focus: pass its ref, or tap it first",
            )?,
        };
        let node = &snap.tree.nodes[field.node];
        let text = node.text().to_string();
        let hint = node.attr("hint").unwrap_or_default();
        if text.is_empty() || text == hint || before.as_deref() == Some(text.as_str()) {
            return Ok(());
        }
        // MOVE_END (123) first, then DELs (67).
        let mut left = text.chars().count() + 8;
        let mut keys = vec!["123"];
        while left > 0 {
            let n = left.min(DELS_PER_COMMAND);
            keys.extend(std::iter::repeat_n("67", n));
            checked_shell(state, serial, &format!("input keyevent {}", keys.join(" "))).await?;
            keys.clear();
            left -= n;
        }
        before = Some(text);
    }
    Err("the field still holds text after four rounds of deleting; check it with ui dump".into())
}

pub(super) const MAX_SCROLLS: usize = 8;

pub(super) async fn scroll(state: &State, serial: &str, args: &UiArgs) -> Outcome {
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
    let Some((query, value)) = until else {
        let before = match observe {
            true => Some(read_screen(state, serial, false).await?),
            false => None,
        };
        checked_shell(state, serial, &swipe).await?;
        state.flows.record(
            serial,
            flow::Step::new(flow::Action::Scroll {
                direction: name_of(direction).into(),
                until: None,
            }),
        );
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
            out.state = describe(&after.state, &after.elements);
        }
        return Ok((out, None));
    };
    let first = read_screen(state, serial, true).await?;
    let mut snap = first.clone();
    for attempt in 0..=MAX_SCROLLS {
        let found = query.find(&snap);
        if let Some(hit) = found
            .into_iter()
            .find(|f| screen_bounds(&snap).contains(f.element.at[0], f.element.at[1]))
        {
            state.flows.record(
                serial,
                flow::Step::new(flow::Action::Scroll {
                    direction: name_of(direction).into(),
                    until: recorded_query(&query, &value, Some((&snap, &hit.element))),
                }),
            );
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

/// How long a gesture lasts on the device, in ms: a long press's or a swipe's duration, clamped
/// as the device is asked; 0 for everything else.
pub fn gesture_ms(action: UiOperation, duration_ms: Option<u32>) -> u64 {
    match action {
        UiOperation::LongPress => u64::from(duration_ms.unwrap_or(800).clamp(500, 10_000)),
        UiOperation::Swipe => u64::from(duration_ms.unwrap_or(300).clamp(50, 10_000)),
        _ => 0,
    }
}

/// Runs an input command and fails with its stderr when it fails.
pub(super) async fn checked_shell(state: &State, serial: &str, command: &str) -> Result<(), String> {
    checked_shell_lasting(state, serial, command, Duration::ZERO).await
}

/// `checked_shell` for a command that lasts `lasts` on the device beyond its usual time.
async fn checked_shell_lasting(state: &State, serial: &str, command: &str, lasts: Duration) -> Result<(), String> {
    let limit = state.adb.timeout() + lasts;
    let out = state
        .adb
        .shell_with_timeout(serial, command, limit)
        .await
        .map_err(|e| e.to_string())?;
    match out.exit_code {
        Some(0) | None => Ok(()),
        Some(code) => Err(format!(
            "`{}` failed (exit {code}): {}",
            crate::adb::shown(command),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

pub(super) fn name_of(direction: Direction) -> &'static str {
    match direction {
        Direction::Up => "up",
        Direction::Down => "down",
        Direction::Left => "left",
        Direction::Right => "right",
    }
}

/// One `input text` command line stays well inside adbd's 1 MiB service-name limit.
const MAX_TYPE_CHARS: usize = 10_000;

/// Escapes text for `input text`: a space becomes `%s`; the shell quoting is done by `quote`.
/// `input text` cannot deliver non-ASCII or control characters, nor a literal `%s`.
pub fn input_text(text: &str) -> Result<String, String> {
    if let Some(c) = text.chars().find(|c| !c.is_ascii() || c.is_ascii_control()) {
        return Err(format!(
            "`text`: cannot type {c:?}: `input text` delivers printable ASCII only; type the rest another way (e.g. paste)"
        ));
    }
    if text.contains("%s") {
        return Err("`text`: cannot type a literal \"%s\": `input text` turns it into a space".into());
    }
    Ok(text.replace(' ', "%s"))
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
