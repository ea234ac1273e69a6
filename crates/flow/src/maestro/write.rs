//! Steps written as a Maestro flow: `appId`, then one command per step (`launchApp`, `tapOn`,
//! `inputText`, `pressKey`, …) with the outcome as `assertVisible`; what Maestro cannot say is a
//! comment.

use super::super::{Action, Rendered, Selector, Step, Target, When, one_line, same_block};
use super::template::{escape, plain};

/// A text as a flow's field that reads as itself: a `${` in it written `\${` (not a template).
pub(super) fn quoted(text: &str) -> String {
    super::super::quoted(&escape(text))
}

/// The flow file: a header (comments, `appId`), `---`, one command per line group.
pub fn render(steps: &[Step], header: &[String], app_id: &str) -> String {
    let mut out = String::new();
    for line in header {
        out.push_str(&format!("# {}\n", one_line(line)));
    }
    out.push_str(&format!("appId: {}\n---\n", quoted(app_id)));
    for (i, step) in steps.iter().enumerate() {
        let text = step_text(i, step, app_id);
        match &step.when {
            // A conditional block's steps go inside its `runFlow`, the block opened by its first.
            Some(when) => {
                let continues = steps[..i].last().is_some_and(|s| same_block(&s.when, &step.when));
                if when.opens || !continues {
                    out.push_str(&run_flow_when(when));
                }
                for line in text.lines() {
                    out.push_str(&format!("      {line}\n"));
                }
            }
            None => out.push_str(&text),
        }
    }
    out
}

/// The head of a `runFlow` block that runs only when `when` holds (its commands follow).
fn run_flow_when(when: &When) -> String {
    let mut out = "- runFlow:\n    when:\n".to_string();
    for (key, shown) in [("visible", &when.visible), ("notVisible", &when.not_visible)] {
        match shown {
            Some(Selector::Rendered(r)) => out.push_str(&format!("      {key}: {}\n", plain_text(&r.arg))),
            Some(s) => out.push_str(&format!("      {key}:\n{}", selector_fields(s, "        "))),
            None => {}
        }
    }
    out.push_str("    commands:\n");
    out
}

/// One step: its comment, its commands and the assertions of its outcome.
fn step_text(i: usize, step: &Step, app_id: &str) -> String {
    let mut out = String::new();
    out.push_str(&format!("# {} {}", i + 1, one_line(&step.describe())));
    if let Some(on) = &step.on {
        out.push_str(&format!(", on {}", one_line(on)));
    }
    out.push('\n');
    for command in commands(step, app_id) {
        out.push_str(&match step.optional {
            true => optional(&command),
            false => command,
        });
    }
    if let Some(activity) = &step.expect.activity {
        out.push_str(&format!("# reached {}\n", one_line(activity)));
    }
    // A check of its own (no action) carries the step's optional; after an action, the
    // assertions are the step's outcome.
    let checked_alone = step.optional && matches!(step.action, Action::Check);
    for s in &step.expect.visible {
        if let Selector::Rendered(r) = s {
            out.push_str(&format!("- assertVisible: {}\n", plain_text(&r.arg)));
            continue;
        }
        out.push_str(&format!("- assertVisible:\n{}", selector_fields(s, "    ")));
        if checked_alone {
            out.push_str("    optional: true\n");
        }
    }
    out
}

/// A command marked `optional: true`, where it takes a mapping (`- tapOn:` and its fields);
/// a scalar command (`- back`) cannot say it, and a comment does.
fn optional(command: &str) -> String {
    match command.split_once('\n') {
        Some((first, rest)) if first.starts_with("- ") && first.ends_with(':') => {
            format!("{first}\n    optional: true\n{rest}")
        }
        _ if command.starts_with("- ") => format!("# optional in the flow it came from\n{command}"),
        _ => command.to_string(),
    }
}

fn commands(step: &Step, app_id: &str) -> Vec<String> {
    let app = |package: &str, command: &str| {
        if package == app_id {
            format!("- {command}\n")
        } else {
            format!("- {command}: {}\n", quoted(package))
        }
    };
    match &step.action {
        Action::Launch { package } => vec![if package == app_id {
            "- launchApp\n".into()
        } else {
            format!("- launchApp:\n    appId: {}\n", quoted(package))
        }],
        Action::Stop { package } => vec![app(package, "stopApp")],
        Action::ClearData { package } => vec![app(package, "clearState")],
        Action::Install { path } => vec![format!(
            "# droidmcp installed {} here; Maestro does not install: install it before the flow\n",
            one_line(path)
        )],
        Action::Tap { target } => vec![format!("- tapOn:\n{}", target_fields(target))],
        Action::LongPress { target, .. } => vec![format!("- longPressOn:\n{}", target_fields(target))],
        Action::Type {
            target,
            text,
            clear,
            submit,
        } => {
            let mut out: Vec<String> = target
                .iter()
                .map(|t| format!("- tapOn:\n{}", target_fields(t)))
                .collect();
            if *clear {
                out.push("- eraseText\n".into());
            }
            // A step's text is a template already (a `${` typed is `\${`, a secret `${NAME}`).
            if !text.is_empty() {
                out.push(format!("- inputText: {}\n", super::super::quoted(text)));
            }
            if *submit {
                out.push("- pressKey: Enter\n".into());
            }
            out
        }
        Action::Key { name } if name.eq_ignore_ascii_case("BACK") => vec!["- back\n".into()],
        Action::Key { name } => vec![format!("- pressKey: {}\n", quoted(&maestro_key(name)))],
        Action::Swipe { from, to, duration_ms } => vec![swipe(
            &format!("{}, {}", from[0], from[1]),
            &format!("{}, {}", to[0], to[1]),
            *duration_ms,
        )],
        Action::SwipePercent { from, to, duration_ms } => vec![swipe(
            &format!("{}%, {}%", from[0], from[1]),
            &format!("{}%, {}%", to[0], to[1]),
            *duration_ms,
        )],
        Action::SwipeToward { direction, duration_ms } => vec![format!(
            "- swipe:\n    direction: {}\n{}",
            direction.to_uppercase(),
            duration_ms.map_or(String::new(), |d| format!("    duration: {d}\n"))
        )],
        Action::SwipeFrom {
            from,
            direction,
            duration_ms,
        } => vec![format!(
            "- swipe:\n    from:\n{}    direction: {}\n{}",
            selector_fields(from, "      "),
            direction.to_uppercase(),
            duration_ms.map_or(String::new(), |d| format!("    duration: {d}\n"))
        )],
        Action::Erase { chars } => vec![format!("- eraseText: {chars}\n")],
        Action::Scroll { direction, until: None } if direction == "down" => vec!["- scroll\n".into()],
        // Maestro's scroll only goes down: another way is the swipe that does it.
        Action::Scroll { direction, until: None } => vec![format!(
            "- swipe:\n    direction: {}\n",
            finger_for_scroll(direction).to_uppercase()
        )],
        Action::Scroll {
            direction,
            until: Some(s),
        } => vec![format!(
            "- scrollUntilVisible:\n    element:\n{}    direction: {}\n",
            selector_fields(s, "      "),
            direction.to_uppercase()
        )],
        Action::Wait {
            selector,
            gone,
            timeout_ms,
        } => vec![format!(
            "- extendedWaitUntil:\n    {}:\n{}{}",
            if *gone { "notVisible" } else { "visible" },
            selector_fields(selector, "      "),
            timeout_ms.map_or(String::new(), |t| format!("    timeout: {t}\n"))
        )],
        Action::Emulator { command } => vec![match location(command) {
            Some((longitude, latitude)) => {
                format!("- setLocation:\n    latitude: {latitude}\n    longitude: {longitude}\n")
            }
            None => format!(
                "# droidmcp sent the emulator console `{}` here; Maestro has no console command: replay the js export to keep it\n",
                one_line(command)
            ),
        }],
        Action::Check => Vec::new(),
        Action::Command(command) => vec![command.write()],
        // One command, whichever of the steps it reads as.
        Action::Rendered(r) if r.part.0 == 0 => vec![rendered(r)],
        Action::Rendered(_) => Vec::new(),
        // Only a Maestro flow has them (a recording has none): said, not written.
        Action::Script(_) | Action::Block { .. } => vec![format!("# not written: {}\n", one_line(&step.describe()))],
        Action::Settle { timeout_ms: None } => vec!["- waitForAnimationToEnd\n".into()],
        Action::Settle { timeout_ms: Some(ms) } => {
            vec![format!("- waitForAnimationToEnd:\n    timeout: {ms}\n")]
        }
    }
}

/// `geo fix LON LAT` (nothing more): the one console command Maestro says, as `setLocation`.
pub fn location(command: &str) -> Option<(f64, f64)> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let [geo, fix, lon, lat] = words.as_slice() else {
        return None;
    };
    let (longitude, latitude) = (lon.parse::<f64>().ok()?, lat.parse::<f64>().ok()?);
    let valid = geo.eq_ignore_ascii_case("geo")
        && fix.eq_ignore_ascii_case("fix")
        && (-180.0..=180.0).contains(&longitude)
        && (-90.0..=90.0).contains(&latitude);
    valid.then_some((longitude, latitude))
}

/// A swipe between two points as Maestro writes them (`"540, 1200"` or `"50%, 90%"`).
fn swipe(start: &str, end: &str, duration_ms: Option<u32>) -> String {
    format!(
        "- swipe:\n    start: \"{start}\"\n    end: \"{end}\"\n{}",
        duration_ms.map_or(String::new(), |d| format!("    duration: {d}\n"))
    )
}

/// The finger's direction that scrolls the content `direction`.
fn finger_for_scroll(direction: &str) -> &'static str {
    match direction {
        "up" => "down",
        "left" => "right",
        "right" => "left",
        _ => "up",
    }
}

/// A selector's fields, one per line at `indent`. Maestro matches `text` as a regular
/// expression: a label is written escaped so it matches itself.
pub(super) fn selector_fields(s: &Selector, indent: &str) -> String {
    match s {
        Selector::ResourceId(v) => format!("{indent}id: {}\n", quoted(v)),
        Selector::Text(v) => format!("{indent}text: {}\n", quoted(&escaped(v))),
        // Maestro's `text` matches content-desc as well (accessibility text).
        Selector::ContentDesc(v) => format!("{indent}text: {}\n", quoted(&escaped(v))),
        Selector::Point([x, y]) => format!("{indent}point: \"{x}, {y}\"\n"),
        Selector::Percent([x, y]) => format!("{indent}point: \"{x}%, {y}%\"\n"),
        Selector::Rendered(r) => format!("{indent}text: {}\n", plain_text(&r.arg)),
        Selector::Pattern(v) => format!("{indent}text: {}\n", quoted(v)),
        Selector::Maestro(m) => super::selectors::write_fields(m, indent),
    }
}

/// The characters a regular expression gives a meaning of their own.
pub(super) const REGEX_SPECIAL: &str = "\\.+*?()|[]{}^$";

/// Text as a regular expression matching only itself: the metacharacters get a backslash
/// (Java's regex, Maestro's, takes one before any non-letter), nothing else does, so most labels
/// read as written.
fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if REGEX_SPECIAL.contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A target's selector, and where it is an id, the recorded label as the text that element
/// shows: Maestro finds only an element that has both (`label` is only a report's caption), and a
/// replay acts only on the element with that id when it has that label. The label is the
/// element's identity's (`android::identity`): never what was typed into a field, nor the
/// state word a switch shows.
pub(super) fn target_fields(t: &Target) -> String {
    let mut out = selector_fields(&t.selector, "    ");
    if let (Selector::ResourceId(_), Some(label)) = (&t.selector, &t.label)
        && !label.trim().is_empty()
    {
        out.push_str(&format!("    text: {}\n", quoted(&escaped(label))));
    }
    out
}

/// Our key names as Maestro writes them.
fn maestro_key(name: &str) -> String {
    match name.to_ascii_uppercase().as_str() {
        "HOME" => "Home".into(),
        "ENTER" => "Enter".into(),
        "DEL" => "Backspace".into(),
        "TAB" => "Tab".into(),
        "VOLUME_UP" => "Volume Up".into(),
        "VOLUME_DOWN" => "Volume Down".into(),
        "POWER" => "Power".into(),
        _ => name.to_string(),
    }
}

/// A command with a template, as it was written (its templates kept).
fn rendered(r: &Rendered) -> String {
    let name = r.command.as_deref().unwrap_or("assertVisible");
    match &r.arg {
        serde_json::Value::Null => format!("- {name}\n"),
        arg => format!("- {name}: {}\n", plain_text(arg)),
    }
}

/// A field as written (`template::plain`), as a flow value (JSON, which YAML reads).
fn plain_text(arg: &serde_json::Value) -> String {
    super::super::literal(&plain(arg))
}
