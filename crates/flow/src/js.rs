//! A flow as a droidmcp script (code mode): each step waits for its target, acts through the
//! same API an assistant uses, then waits for what the recording saw after it. `droidmcp
//! replay` runs it (a Maestro flow too, turned into this first), and so does `script run`.

use super::commands::Command;
use super::{Action, Control, Js, Selector, Step, Target, When, literal, one_line, quoted as lit};

/// What a replay reads back from the run's folder: one record per step.
pub const RESULTS_FILE: &str = "flow-results.json";

/// The longest one `ui wait` call waits (the tool's own limit, `tools::ui::wait` reads it here).
/// A flow's longer wait (Maestro's extendedWaitUntil has none) waits in turns (`waitLong`).
pub const LONGEST_WAIT_MS: u64 = 120_000;

/// Defines `step`, `target` and `expect` for the steps below it.
const PRELUDE: &str = include_str!("prelude.js");

/// The whole script: a header that says where the flow came from, the prelude, then one
/// `step(…)` per step, each commented with what the assistant did; a block's steps inside it.
pub fn render(steps: &[Step], header: &[String]) -> String {
    let mut out = String::new();
    for line in header {
        out.push_str(&format!("// {}\n", one_line(line)));
    }
    out.push('\n');
    out.push_str(PRELUDE);
    out.push_str(&super::maestro::command::prelude());
    let mut number = 0;
    let mut body = String::new();
    render_steps(steps, "", &mut number, &mut body);
    // Only a flow that evaluates something as it runs carries the runtime (a recording's export
    // has none: its texts are literal but for a `${` typed, written `\${`).
    if steps.iter().any(evaluates) {
        out.push_str(RUNTIME);
    }
    // Each script file's code once, however often the flow runs it (a repeat spelled out).
    let mut defined = std::collections::BTreeSet::new();
    for step in super::control::leaves(steps) {
        if let Action::Script(Js::Run { code, .. }) = &step.action
            && defined.insert(script_name(code))
        {
            out.push_str(&format!("const {} = {};\n", script_name(code), lit(code)));
        }
    }
    // Maestro closes a recording left open as the flow's commands end, passed or failed
    // (`Orchestra.runFlow`), and keeps its file: so does a flow that starts one.
    let records = super::control::leaves(steps).iter().any(|s| match &s.action {
        Action::Command(Command::StartRecording(_)) => true,
        Action::Rendered(r) => r.command.as_deref() == Some("startRecording"),
        _ => false,
    });
    match records {
        true => out.push_str(&format!(
            "try {{\n{body}}} finally {{\n  await stopRecordingLeftOpen();\n}}\n"
        )),
        false => out.push_str(&body),
    }
    out
}

/// Maestro's JavaScript: `${…}`, variables, scripts and blocks (`maestro/runtime.js`).
pub(crate) const RUNTIME: &str = include_str!("maestro/runtime.js");

/// Whether `step` needs the runtime, by what it is: JavaScript, a block, or a template read again
/// as it runs (its command, or any selector it looks for, its outcome's and condition's too).
fn evaluates(step: &Step) -> bool {
    let rendered = |s: &Selector| matches!(s, Selector::Rendered(_));
    let mut looked_for: Vec<&Selector> = step.expect.visible.iter().collect();
    if let Some(when) = &step.when {
        if when.script.is_some() {
            return true;
        }
        looked_for.extend(when.visible.iter().chain(&when.not_visible));
    }
    match &step.action {
        Action::Script(_) | Action::Block { .. } | Action::Rendered(_) => return true,
        Action::Tap { target }
        | Action::LongPress { target, .. }
        | Action::Type {
            target: Some(target), ..
        } => looked_for.push(&target.selector),
        Action::SwipeFrom { from: s, .. }
        | Action::Wait { selector: s, .. }
        | Action::Scroll { until: Some(s), .. } => looked_for.push(s),
        Action::Command(command) => {
            // The selectors its own writer writes.
            let found = std::cell::Cell::new(false);
            command.body(
                |s| {
                    found.set(found.get() || rendered(s));
                    String::new()
                },
                |_| String::new(),
            );
            if found.get() {
                return true;
            }
        }
        _ => {}
    }
    looked_for.into_iter().any(rendered)
}

/// Each step as `await step(…)` (numbered on from `number`), a block as its JavaScript around
/// its own steps, every line after `indent`.
fn render_steps(steps: &[Step], indent: &str, number: &mut usize, out: &mut String) {
    for step in steps {
        if let Action::Block { control, body } = &step.action {
            render_block(step, control, body, indent, number, out);
            continue;
        }
        *number += 1;
        let name = format!("{} {}", number, step.describe());
        out.push('\n');
        out.push_str(&format!("{indent}// {}", one_line(&name)));
        if let Some(on) = &step.on {
            out.push_str(&format!(", on {}", one_line(on)));
        }
        if step.fragile() {
            out.push_str(" (by coordinates: fragile)");
        }
        out.push('\n');
        out.push_str(&format!("{indent}await step({}, async (w) => {{\n", lit(&name)));
        for line in body(step) {
            out.push_str(&format!("{indent}  {line}\n"));
        }
        if step.expect == Default::default()
            && !matches!(
                step.action,
                Action::Wait { .. } | Action::Check | Action::Settle { .. } | Action::Script(_)
            )
        {
            out.push_str(&format!("{indent}  await settle();\n"));
        } else if step.expect != Default::default() {
            out.push_str(&format!("{indent}  {}\n", expectation(step)));
        }
        out.push_str(indent);
        out.push_str(&match &step.when {
            Some(when) => format!("}}, {}, {});\n", step.optional, condition(when)),
            None if step.optional => "}, true);\n".into(),
            None => "});\n".into(),
        });
    }
}

/// A block: the runtime's function for its rule, its steps in an `async () => {…}` (run only when
/// its runFlow-when block runs).
fn render_block(step: &Step, control: &Control, body: &[Step], indent: &str, number: &mut usize, out: &mut String) {
    let inner = format!("{indent}  ");
    let gate = match &step.when {
        Some(when) => format!("if (await runs({})) ", condition(when)),
        None => String::new(),
    };
    out.push_str(&format!("\n{indent}// {}\n", one_line(&control.describe())));
    let head = match control {
        Control::Env { vars, strong } => format!("within({}, {strong}, ", pairs(vars)),
        Control::Repeat { times, condition: c } => format!(
            "repeat({}, {}, ",
            times.as_deref().map_or("null".into(), lit),
            c.as_ref().map_or("null".into(), condition)
        ),
        Control::Retry { max_retries } => format!("retry({}, ", lit(max_retries)),
        Control::Complete { .. } => "complete(".into(),
        Control::If { condition: c } => format!("only({}, ", condition(c)),
        Control::Optional => "optionally(".into(),
    };
    out.push_str(&format!("{indent}{gate}await {head}async () => {{"));
    render_steps(body, &inner, number, out);
    out.push_str(&format!("{indent}}}"));
    if let Control::Complete { after } = control {
        out.push_str(", async () => {");
        render_steps(after, &inner, number, out);
        out.push_str(&format!("{indent}}}"));
    }
    out.push_str(");\n");
}

/// The constant that holds a script file's code in the flow's script: named by its code's hash.
fn script_name(code: &str) -> String {
    // FNV-1a: stable across runs and builds, unlike the standard library's hasher.
    let hash = code.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("SCRIPT_{hash:016x}")
}

/// `[["NAME", "template"], …]`.
fn pairs(vars: &[(String, String)]) -> String {
    let pairs: Vec<String> = vars.iter().map(|(n, v)| format!("[{}, {}]", lit(n), lit(v))).collect();
    format!("[{}]", pairs.join(", "))
}

/// The lines a step runs inside its `step(…)`: its action, then what must show after it (a
/// command read again as its step runs, `maestro::read_rendered`, runs these).
pub(crate) fn lines(steps: &[Step]) -> Vec<String> {
    let mut out = Vec::new();
    for step in steps {
        out.extend(body(step));
        if step.expect != Default::default() {
            out.push(expectation(step));
        }
    }
    out
}

fn expectation(step: &Step) -> String {
    let visible: Vec<String> = step.expect.visible.iter().map(selector).collect();
    format!(
        "await expect({}, [{}]);",
        step.expect.activity.as_deref().map_or("null".into(), lit),
        visible.join(", ")
    )
}

/// A call a step makes to a tool with what the flow gave it: `body` writes it, and a replay has
/// the tool's own parse read it before the flow runs (`tools::flow::replayable`), so what the
/// tool would refuse is refused with the flow's line.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The tool, as tools/list names it, and its namespace and method in a script.
    pub tool: &'static str,
    pub namespace: &'static str,
    pub method: &'static str,
    /// Its arguments, `operation` included.
    pub args: serde_json::Map<String, serde_json::Value>,
}

/// The tool calls `step`'s script makes whose arguments are the step's own (not a helper's
/// computation, nor a secret the run is given).
pub fn calls(step: &Step) -> Vec<Call> {
    use serde_json::{Value, json};
    let call = |tool, namespace, method, operation: &str, args: Value| {
        let mut all = serde_json::Map::new();
        all.insert("operation".into(), operation.into());
        if let Value::Object(args) = args {
            all.extend(args);
        }
        Call {
            tool,
            namespace,
            method,
            args: all,
        }
    };
    let app = |method, operation: &str, package: &str| {
        call("adb-app", "app", method, operation, json!({ "package": package }))
    };
    let one = match &step.action {
        Action::Launch { package } => app("launch", "launch", package),
        Action::Stop { package } => app("stop", "stop", package),
        Action::ClearData { package } => app("clearData", "clear-data", package),
        Action::Key { name } => call("ui", "ui", "key", "key", json!({ "name": name })),
        Action::Type {
            target: None,
            text,
            clear,
            submit,
        } if super::placeholder_name(text).is_none() => {
            let mut args = json!({ "text": super::maestro::template::literal(text) });
            if *clear {
                args["clear"] = true.into();
            }
            if *submit {
                args["submit"] = true.into();
            }
            call("ui", "ui", "type", "type", args)
        }
        Action::Wait {
            selector: s,
            gone,
            timeout_ms,
        } => {
            let Some(mut args) = ui_query(s) else {
                return Vec::new();
            };
            if *gone {
                args.insert("gone".into(), true.into());
            }
            if let Some(ms) = timeout_ms {
                args.insert("timeoutMs".into(), (*ms).min(LONGEST_WAIT_MS).into());
            }
            call("ui", "ui", "wait", "wait", Value::Object(args))
        }
        Action::SwipeToward { direction, duration_ms } => {
            let mut args = json!({ "direction": direction });
            if let Some(ms) = duration_ms {
                args["durationMs"] = (*ms).into();
            }
            call("ui", "ui", "swipe", "swipe", args)
        }
        Action::Scroll { direction, until } => {
            let mut args = match until {
                Some(s) => match ui_query(s) {
                    Some(query) => query,
                    None => return Vec::new(),
                },
                None => serde_json::Map::new(),
            };
            args.insert("direction".into(), direction.as_str().into());
            call("ui", "ui", "scroll", "scroll", Value::Object(args))
        }
        Action::Emulator { command } => call(
            "adb-device",
            "device",
            "emulator",
            "emulator",
            json!({ "command": command }),
        ),
        _ => return Vec::new(),
    };
    vec![one]
}

/// How `ui` looks for `s` (matched exactly unless the selector says how), when the flow gave it
/// all: not a point, nor a template read as the step runs.
fn ui_query(s: &Selector) -> Option<serde_json::Map<String, serde_json::Value>> {
    let mut query = serde_json::Map::new();
    if !matches!(s, Selector::Maestro(_)) {
        query.insert("match".into(), "exact".into());
    }
    match selector_json(s) {
        serde_json::Value::Object(fields)
            if !matches!(s, Selector::Point(_) | Selector::Percent(_) | Selector::Rendered(_)) =>
        {
            query.extend(fields);
            Some(query)
        }
        _ => None,
    }
}

/// The script line of a step that is one tool call, its arguments as `calls` built them; a wait
/// longer than one call may wait, in turns (`waitLong`).
fn called(step: &Step, call: &Call) -> Vec<String> {
    let mut fields: Vec<String> = call
        .args
        .iter()
        .filter(|(k, _)| *k != "operation")
        .map(|(k, v)| format!("{k}: {}", js(v)))
        .collect();
    match step.action {
        Action::Wait { timeout_ms: None, .. } => fields.push("timeoutMs: TIMEOUT".into()),
        // Longer than one call may wait: in turns, each the call `calls` checked.
        Action::Wait {
            timeout_ms: Some(ms), ..
        } if ms > LONGEST_WAIT_MS => {
            return vec![format!(
                "await waitLong({{ {} }}, {ms}, {LONGEST_WAIT_MS});",
                fields.join(", ")
            )];
        }
        _ => {}
    }
    vec![format!(
        "await {}.{}({{ {} }});",
        call.namespace,
        call.method,
        fields.join(", ")
    )]
}

fn body(step: &Step) -> Vec<String> {
    let pick = |t: &Target| format!("await target({}, {}, w)", selector(&t.selector), recorded(t));
    let aim = |t: &Target| format!("{}, {}, w", selector(&t.selector), recorded(t));
    // A call whose arguments are all the step's: written as `calls` has the tools read it.
    if let [call] = calls(step).as_slice() {
        return called(step, call);
    }
    match &step.action {
        Action::Install { path } => vec![format!("await app.install({{ path: {} }});", lit(path))],
        Action::Tap { target } => vec![format!("await acted(ui.tap, {});", aim(target))],
        Action::LongPress { target, duration_ms } => vec![format!(
            "await acted((a) => ui.longPress({{ ...a{} }}), {});",
            duration_ms.map_or(String::new(), |d| format!(", durationMs: {d}")),
            aim(target)
        )],
        Action::Type {
            target,
            text,
            clear,
            submit,
        } => {
            let mut lines: Vec<String> = target.iter().map(|t| format!("await ui.tap({});", pick(t))).collect();
            let text = match super::placeholder_name(text) {
                Some(name) => format!("env({})", lit(name)),
                None => lit(&super::maestro::template::literal(text)),
            };
            lines.push(format!(
                "await ui.type({{ text: {}{}{} }});",
                text,
                if *clear { ", clear: true" } else { "" },
                if *submit { ", submit: true" } else { "" }
            ));
            lines
        }
        Action::Swipe { from, to, duration_ms } => vec![swipe(
            &format!("[{}, {}]", from[0], from[1]),
            &format!("[{}, {}]", to[0], to[1]),
            *duration_ms,
        )],
        Action::SwipePercent { from, to, duration_ms } => vec![swipe(
            &format!("await percent([{}, {}])", from[0], from[1]),
            &format!("await percent([{}, {}])", to[0], to[1]),
            *duration_ms,
        )],
        Action::SwipeFrom {
            from,
            direction,
            duration_ms,
        } => vec![format!(
            "await swipeFrom({}, {}, {});",
            selector(from),
            lit(direction),
            duration_ms.map_or("null".into(), |d| d.to_string())
        )],
        Action::Erase { chars } => vec![format!(
            "for (let i = 0; i < {chars}; i++) await ui.key({{ name: \"DEL\" }});"
        )],
        Action::Scroll { direction, until } => vec![match until {
            Some(s) => format!("await ui.scroll({{ direction: {}, {} }});", lit(direction), query(s)),
            None => format!("await ui.scroll({{ direction: {} }});", lit(direction)),
        }],
        Action::Wait {
            selector: s,
            gone,
            timeout_ms,
        } => vec![format!(
            "await waitLong({{ {}{} }}, {}, {LONGEST_WAIT_MS});",
            query(s),
            if *gone { ", gone: true" } else { "" },
            timeout_ms.map_or("TIMEOUT".into(), |t| t.to_string())
        )],
        Action::Check => Vec::new(),
        Action::Command(command) => command.body(selector, recorded),
        Action::Rendered(r) => vec![format!("await rendered({}, w);", literal(&super::maestro::request(r)))],
        Action::Script(Js::Run { file, code, env }) => {
            vec![format!(
                "runScript({}, {}, {});",
                lit(file),
                script_name(code),
                pairs(env)
            )]
        }
        Action::Script(Js::Eval { script }) => vec![format!("interp({}, false);", lit(script))],
        Action::Script(Js::Assert { condition }) => vec![format!("assertTrue({});", lit(condition))],
        // Rendered around its steps (`render_block`).
        Action::Block { .. } => Vec::new(),
        // A reading waits until the app is idle; Maestro goes on after its timeout either way.
        Action::Settle { timeout_ms } => vec![format!(
            "await Promise.race([settle(), sleep({})]);",
            timeout_ms.unwrap_or(15_000)
        )],
        // Written by `calls` above.
        Action::Launch { .. }
        | Action::Stop { .. }
        | Action::ClearData { .. }
        | Action::Key { .. }
        | Action::SwipeToward { .. }
        | Action::Emulator { .. } => Vec::new(),
    }
}

/// What the recording saw of a target, as `ui` takes it (`recorded`), or `null`.
fn recorded(t: &Target) -> String {
    let fields: Vec<String> = [("label", &t.label), ("class", &t.class), ("id", &t.id)]
        .into_iter()
        .filter_map(|(name, value)| value.as_deref().map(|v| format!("{name}: {}", lit(v))))
        .collect();
    match fields.is_empty() {
        true => "null".into(),
        false => format!("{{ {} }}", fields.join(", ")),
    }
}

/// A runFlow when's condition as `step` takes it.
fn condition(when: &When) -> String {
    let mut fields = vec![format!("opens: {}", when.opens)];
    if let Some(s) = &when.visible {
        fields.push(format!("visible: {}", selector(s)));
    }
    if let Some(s) = &when.not_visible {
        fields.push(format!("notVisible: {}", selector(s)));
    }
    if let Some(script) = &when.script {
        fields.push(format!("script: {}", lit(script)));
    }
    format!("{{ {} }}", fields.join(", "))
}

/// A swipe between two points (each a JavaScript expression of `[x, y]` in pixels).
fn swipe(from: &str, to: &str, duration_ms: Option<u32>) -> String {
    format!(
        "await ui.swipe({{ from: {from}, to: {to}{} }});",
        duration_ms.map_or(String::new(), |d| format!(", durationMs: {d}"))
    )
}

/// A selector as the fields of a call that looks for it (the prelude's `query`): matched exactly,
/// but a Maestro selector, which `ui` resolves as Maestro does.
fn query(s: &Selector) -> String {
    match s {
        Selector::Maestro(_) => format!("...{}", selector(s)),
        _ => format!("match: \"exact\", ...{}", selector(s)),
    }
}

/// A selector as the API's arguments.
fn selector(s: &Selector) -> String {
    selector_value(s)
}

/// A selector as the script's value: what `target` and `query` take.
pub(crate) fn selector_value(s: &Selector) -> String {
    js(&selector_json(s))
}

fn selector_json(s: &Selector) -> serde_json::Value {
    use serde_json::json;
    match s {
        Selector::ResourceId(v) => json!({ "resourceId": v }),
        Selector::Text(v) => json!({ "text": v }),
        Selector::ContentDesc(v) => json!({ "contentDesc": v }),
        Selector::Point([x, y]) => json!({ "x": x, "y": y }),
        Selector::Percent([x, y]) => json!({ "percent": [x, y] }),
        Selector::Pattern(p) => json!({ "text": super::whole_text_regex(p), "match": "regex" }),
        // One object in Maestro's shape; `ui` resolves it as Maestro does.
        Selector::Maestro(m) => json!({ "selector": m }),
        // Read as the condition is looked at, rendered then (`runtime.js`'s `renderedSelector`).
        Selector::Rendered(r) => json!({ "rendered": super::maestro::request(r) }),
    }
}

/// A value as JavaScript reads it, as a person would write it (`{ text: "OK" }`).
fn js(value: &serde_json::Value) -> String {
    let name = |k: &str| {
        let plain = k.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        match plain {
            true => k.to_string(),
            false => lit(k),
        }
    };
    match value {
        serde_json::Value::Object(fields) if !fields.is_empty() => {
            let each: Vec<String> = fields.iter().map(|(k, v)| format!("{}: {}", name(k), js(v))).collect();
            format!("{{ {} }}", each.join(", "))
        }
        serde_json::Value::Array(items) => format!("[{}]", items.iter().map(js).collect::<Vec<_>>().join(", ")),
        other => literal(other),
    }
}
