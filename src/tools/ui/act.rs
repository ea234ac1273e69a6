//! Acting on the screen: tap, long press, swipe, type, key, scroll. Each returns the step it
//! took and, for an `observe`, the reading before it; `apply` records and observes.

use super::*;

pub(super) async fn act(state: &State, serial: &str, action: &UiAction) -> Outcome {
    let mut out = output(action.operation(), serial);
    // A reading taken for this call before it acts (typing reads the focus), which an
    // `observe` can take as its "before".
    let mut reading: Option<Snapshot> = None;
    // A gesture's command lasts its duration on the device: its timeout allows for it.
    let lasts = Duration::from_millis(action.gesture_ms());
    // On a web element the action goes through DevTools, where the device command would run.
    let mut web_action = None;
    // What a recorded flow keeps of this call (`apply` records it once it worked), the device
    // command, and whether to observe.
    let (step, command, observe) = match action {
        UiAction::Tap {
            target,
            observe,
            recorded,
        } => {
            let landing = land(state, serial, target, recorded.as_ref()).await?;
            out.at = Some(landing.at);
            let web = web_target(state, serial, landing.element.as_ref());
            let command = match web {
                Some((page, selector)) => {
                    web_action = Some(web::WebAction::Tap { page, selector });
                    String::new()
                }
                None => format!("input tap {} {}", landing.at[0], landing.at[1]),
            };
            out.target = landing.element;
            let step = flow::Action::Tap {
                target: landing.selector,
            };
            (step, command, *observe)
        }
        UiAction::LongPress {
            target,
            duration_ms,
            observe,
            recorded,
        } => {
            let landing = land(state, serial, target, recorded.as_ref()).await?;
            let [x, y] = landing.at;
            out.at = Some(landing.at);
            out.target = landing.element;
            let step = flow::Action::LongPress {
                target: landing.selector,
                duration_ms: *duration_ms,
            };
            let command = format!("input swipe {x} {y} {x} {y} {}", lasts.as_millis());
            (step, command, *observe)
        }
        UiAction::Swipe {
            path,
            duration_ms,
            observe,
        } => {
            let screen = screen_size(state, serial).await?;
            let (from, to) = match *path {
                SwipePath::Between { from, to } => (from, to),
                SwipePath::Toward { finger, distance } => swipe_across(screen, finger, distance.unwrap_or(60)),
            };
            for p in [from, to] {
                if p[0] < 0 || p[1] < 0 || p[0] >= screen[0] as i32 || p[1] >= screen[1] as i32 {
                    return Err(format!("{p:?} is off the {}×{} screen", screen[0], screen[1]));
                }
            }
            out.at = Some(to);
            let step = match *path {
                SwipePath::Toward { finger, distance: None } => flow::Action::SwipeToward {
                    direction: finger.name().into(),
                    duration_ms: *duration_ms,
                },
                _ => flow::Action::Swipe {
                    from,
                    to,
                    duration_ms: *duration_ms,
                },
            };
            let ms = lasts.as_millis();
            let command = format!("input swipe {} {} {} {} {ms}", from[0], from[1], to[0], to[1]);
            (step, command, *observe)
        }
        UiAction::Key { name, code, observe } => {
            let step = flow::Action::Key {
                name: name.to_ascii_uppercase(),
            };
            // ENTER in a web field with focus goes to the page through DevTools, as a replayed
            // Maestro `pressKey: Enter` after `inputText` meant it (the simulator's WebView gets no
            // key events; a phone's would).
            let web = match code {
                66 => web::focused_field(state, serial).await,
                _ => None,
            };
            let command = match web {
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
            };
            (step, command, *observe)
        }
        UiAction::Type(typing) => {
            let Typing {
                text,
                into,
                clear,
                submit,
                observe,
            } = typing;
            let mut steps = Vec::new();
            let mut selector = None;
            let mut web = None;
            if let Some(reference) = into {
                let landing = land(state, serial, &Target::Ref(reference.clone()), None).await?;
                web = web_target(state, serial, landing.element.as_ref());
                if web.is_none() {
                    steps.push(format!("input tap {} {}", landing.at[0], landing.at[1]));
                }
                out.target = landing.element;
                selector = Some(landing.selector);
            }
            // A password is recorded as a placeholder, never as itself: decided now, from the
            // field typed into (the ref's, just read) or the one with input focus now. The
            // screen remembered from an earlier call predates the tap that focused the field.
            if out.target.is_none() {
                let now = read_current(state, serial).await?;
                reading = Some(now);
            }
            if web.is_none() && into.is_none() {
                // A replayed `inputText` after a tap on a web field: the page's focused field.
                web = web::focused_field(state, serial).await;
            }
            // The reading the field is of: this call's, or the one that resolved its ref.
            let screen = match &reading {
                Some(now) => now.elements.clone(),
                None => state.screen(serial).map(|s| s.elements).unwrap_or_default(),
            };
            let field = out.target.as_ref().or_else(|| focused_field(&screen));
            let step = flow::Action::Type {
                target: selector,
                text: state.flows.typed(serial, text, field, &screen),
                clear: *clear,
                submit: *submit,
            };
            let command = if let Some((page, selector)) = web {
                // A web field takes any text through DevTools.
                web_action = Some(web::WebAction::Type {
                    page,
                    selector,
                    text: text.to_string(),
                    clear: *clear,
                    submit: *submit,
                });
                String::new()
            } else {
                if *clear {
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
                if *submit {
                    steps.push("input keyevent 66".into());
                }
                steps.join(" && ")
            };
            (step, command, *observe)
        }
        UiAction::Dump { .. }
        | UiAction::Find { .. }
        | UiAction::Screenshot { .. }
        | UiAction::Scroll { .. }
        | UiAction::Wait { .. } => return Err(format!("ui {} is not a plain action", out.operation)),
    };
    // A fresh reading, taken after the target was checked (a ref is checked against the dump
    // that made it), and before the action: the stored one may predate actions that read nothing.
    // A tap or long press aimed by ref or text has just read the screen, and nothing ran since:
    // that reading is the "before" (as typing's own reading is).
    let aimed_by_reading = match action {
        UiAction::Tap { target, .. } | UiAction::LongPress { target, .. } => target.reads_screen(),
        _ => false,
    };
    let before = match (observe, reading) {
        (false, _) => None,
        (true, Some(reading)) => Some(reading),
        (true, None) if aimed_by_reading => state.screen(serial),
        (true, None) => {
            let now = read_screen(state, serial).await?;
            Some(now)
        }
    };
    if let Some(web_action) = web_action {
        web::perform(state, serial, web_action).await?;
    }
    if !command.is_empty() {
        checked_shell_lasting(state, serial, &command, lasts).await?;
    }
    Ok(Done {
        out,
        image: None,
        step: Some(step),
        observe: before.map(|before| Observe {
            before,
            unchanged: "unchanged: the screen looks the same as before".into(),
        }),
    })
}

/// Where a finger swiping `finger` across `percent`% of the screen goes, through its middle:
/// the one swipe geometry (a scroll is a swipe across 60%).
fn swipe_across(screen: [u32; 2], finger: FingerDirection, percent: u32) -> ([i32; 2], [i32; 2]) {
    let (w, h) = (screen[0] as i32, screen[1] as i32);
    let (cx, cy) = (w / 2, h / 2);
    let (dx, dy) = (w * percent as i32 / 200, h * percent as i32 / 200);
    match finger {
        FingerDirection::Up => ([cx, cy + dy], [cx, cy - dy]),
        FingerDirection::Down => ([cx, cy - dy], [cx, cy + dy]),
        FingerDirection::Left => ([cx + dx, cy], [cx - dx, cy]),
        FingerDirection::Right => ([cx - dx, cy], [cx + dx, cy]),
    }
}

/// The text field with input focus in a reading: an EditText, a web page's text box, or any
/// field shown as a password.
pub(super) fn focused_field(elements: &[Element]) -> Option<&Element> {
    elements.iter().find(|e| {
        (crate::android::identity::field_class(&e.identity.class) || flow::is_password(e))
            && e.flags.iter().any(|f| f == "focused")
    })
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
        let snap = read_screen(state, serial).await?;
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

pub(super) async fn scroll(
    state: &State,
    serial: &str,
    toward: ContentDirection,
    until: Option<&Query>,
    observe: bool,
) -> Outcome {
    let screen = screen_size(state, serial).await?;
    // The finger moves against the content: to scroll down, swipe up.
    let (from, to) = swipe_across(screen, toward.finger(), 60);
    let swipe = format!("input swipe {} {} {} {} 300", from[0], from[1], to[0], to[1]);
    let mut out = output(UiOperation::Scroll, serial);
    let Some(query) = until else {
        let before = match observe {
            true => {
                let now = read_screen(state, serial).await?;
                Some(now)
            }
            false => None,
        };
        checked_shell(state, serial, &swipe).await?;
        out.at = Some(to);
        return Ok(Done {
            out,
            image: None,
            step: Some(flow::Action::Scroll {
                direction: toward.name().into(),
                until: None,
            }),
            observe: before.map(|before| Observe {
                before,
                unchanged: format!(
                    "unchanged: nothing moved; the end is reached scrolling {}",
                    toward.name()
                ),
            }),
        });
    };
    let first = read_current(state, serial).await?;
    let mut snap = first.clone();
    for attempt in 0..=MAX_SCROLLS {
        let found = query.find(&snap);
        if let Some(hit) = found
            .into_iter()
            .find(|f| screen_bounds(&snap).contains(f.element.at[0], f.element.at[1]))
        {
            let step = flow::Action::Scroll {
                direction: toward.name().into(),
                until: recorded_query(query, Some((&snap, &hit.element))),
            };
            out.target = Some(hit.element);
            out.count = Some(attempt);
            out.focused = snap.focused.clone();
            out.hint = Some(format!("found after {attempt} scrolls; tap {{ref}} acts on it"));
            if observe {
                out.observed = Some(observed(&first, &snap));
            }
            return Ok(Done {
                out,
                image: None,
                step: Some(step),
                observe: None,
            });
        }
        if attempt == MAX_SCROLLS {
            break;
        }
        checked_shell(state, serial, &swipe).await?;
        tokio::time::sleep(Duration::from_millis(250)).await;
        let next = read_current(state, serial).await?;
        if next.signature == snap.signature {
            return Err(format!(
                "{:?} is not on the screen, and scrolling {} changes nothing more: the end is reached",
                crate::android::text::echoed(&query.value()),
                toward.name()
            ));
        }
        snap = next;
    }
    Err(format!(
        "{:?} did not appear in {MAX_SCROLLS} scrolls {}",
        query.value(),
        toward.name()
    ))
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
