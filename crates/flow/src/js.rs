//! A flow as a droidmcp script (code mode): each step waits for its target, acts through the
//! same API an assistant uses, then waits for what the recording saw after it. `droidmcp
//! replay` runs it (a Maestro flow too, turned into this first), and so does `script run`.

use super::{Action, Control, Js, Selector, Step, Target, When, one_line, quoted as lit};

/// What a replay reads back from the run's folder: one record per step.
pub const RESULTS_FILE: &str = "flow-results.json";

/// Defines `step`, `target` and `expect` for the steps below it.
const PRELUDE: &str = r#"const TIMEOUT = Number(args.timeoutMs ?? 10000);
const results = [];

// Whether the runFlow-when block being run runs: its first step reads the condition.
let blockRuns = true;

// Runs one step and keeps its record (ok, ms, warnings, error) in flow-results.json. An optional
// step's failure is a warning; a step in a block whose condition does not hold is not run.
async function step(name, body, optional = false, when = null) {
  const started = Date.now();
  if (!(await runs(when))) {
    const [ms, warnings] = [Date.now() - started, ["not run: its runFlow condition does not hold"]];
    results.push({ name, ok: true, ms, warnings, error: null });
    await workspace.write("flow-results.json", results);
    console.log(`ok ${name} (${ms} ms); ${warnings[0]}`);
    return;
  }
  const warnings = [];
  let error = null;
  try {
    await body(warnings);
  } catch (e) {
    error = String((e && e.message) || e);
    if (optional) {
      warnings.push(`optional, failed: ${error}`);
      error = null;
    }
  }
  const ms = Date.now() - started;
  results.push({ name, ok: error === null, ms, warnings, error });
  await workspace.write("flow-results.json", results);
  console.log(`${error === null ? "ok" : "FAILED"} ${name} (${ms} ms)` +
    (warnings.length ? `; ${warnings.join("; ")}` : "") + (error === null ? "" : `: ${error}`));
  if (error !== null) throw new Error(`step ${name} failed: ${error}`);
}

// The element a step acts on. It waits for the recorded selector (exactly, unless the selector
// says how: a Maestro text pattern is a regex); the call it returns carries what the recording
// saw of the element (`recorded`: its label, class and resource-id), and `ui` acts only on an
// element that has them, refusing any other before it touches the device. When the selector no
// longer matches, the one element whose label is exactly the recorded label is used, with a
// warning (healed), and `ui` checks it has that label and class.
async function target(selector, recorded, warnings) {
  const checked = recorded === null ? {} : { recorded };
  if ("x" in selector) return { ...selector, ...checked };
  if ("percent" in selector) {
    const [x, y] = await percent(selector.percent);
    return { x, y, ...checked };
  }
  if ("point" in selector) {
    // A point a `${…}` gave as the step ran: "x, y" in pixels or "x%, y%" of the screen.
    const parts = String(selector.point).split(",").map((p) => p.trim());
    const pct = parts.map((p) => /^\d+%$/.test(p));
    if (parts.length === 2 && pct[0] && pct[1]) {
      const [x, y] = await percent(parts.map((p) => Number(p.slice(0, -1))));
      return { x, y, ...checked };
    }
    if (parts.length === 2 && parts.every((p) => /^\d+$/.test(p))) return { x: Number(parts[0]), y: Number(parts[1]), ...checked };
    throw new Error(`the point ${JSON.stringify(selector.point)} is not "x, y" in pixels or "x%, y%" of the screen`);
  }
  try {
    await ui.wait({ ...query(selector), timeoutMs: TIMEOUT });
    return { ...query(selector), ...checked };
  } catch (e) {
    const label = recorded === null ? null : recorded.label ?? null;
    if (label === null || label.trim() === "" || selector.text === label) throw e;
    const found = await ui.find({ text: label, match: "exact" });
    if (found.totalCount !== 1) throw e;
    warnings.push(`healed: ${JSON.stringify(selector)} no longer matches; now ${JSON.stringify({ text: label })}`);
    return { text: label, match: "exact", recorded: { label, class: recorded.class ?? null } };
  }
}

// How `ui` takes a selector: a Maestro selector as it is (`ui` resolves it as Maestro does), any
// other matched exactly.
function query(selector) {
  return "selector" in selector ? selector : { match: "exact", ...selector };
}

// A point given in percent of the screen, in device pixels (the screen as it is now, turned or
// not).
async function percent([x, y]) {
  const [w, h] = (await ui.dump({ limit: 1 })).screen;
  return [Math.min(w - 1, Math.round((w * x) / 100)), Math.min(h - 1, Math.round((h * y) / 100))];
}

// Maestro's swipe from an element: from its centre to a tenth of the screen from the edge the
// finger moves toward.
async function swipeFrom(selector, direction, durationMs) {
  const [x, y] = (await ui.wait({ ...query(selector), timeoutMs: TIMEOUT })).target.at;
  const [w, h] = (await ui.dump({ limit: 1 })).screen;
  const [near, far] = [(n) => Math.round(n * 0.1), (n) => Math.round(n * 0.9)];
  const to = { up: [x, near(h)], down: [x, far(h)], left: [near(w), y], right: [far(w), y] }[direction];
  await ui.swipe({ from: [x, y], to, ...(durationMs === null ? {} : { durationMs }) });
}

// Whether a step of a runFlow-when block runs: the block's first step reads the condition.
async function runs(when) {
  if (when === null) return true;
  if (when.opens) blockRuns = await holds(when);
  return blockRuns;
}

// What the recording left out of the file (a password): `droidmcp replay --env NAME=VALUE`, or a
// Maestro flow's own env.
function env(name) {
  const value = globalThis[name] ?? (args.env || {})[name];
  if (typeof value !== "string") {
    throw new Error(`this step types \${${name}}, which the recording left out: replay with --env ${name}=VALUE`);
  }
  return value;
}

// A runFlow when's condition, read as its block starts (a repeat while's, before each round):
// each selector given shows (visible) or does not (notVisible) within a short look, at most 2 s,
// and its JavaScript (`true`) is true.
async function holds(when) {
  const shows = async (selector) => {
    try {
      await ui.wait({ ...query(selector), timeoutMs: Math.min(TIMEOUT, 2000) });
      return true;
    } catch (e) {
      if (String((e && e.message) || e).includes("did not appear")) return false;
      throw e;
    }
  };
  if (when.visible && !(await shows(when.visible))) return false;
  if (when.notVisible && (await shows(when.notVisible))) return false;
  if (when.script !== undefined && !truthy(interp(when.script, false))) return false;
  return true;
}

// A step the recording saw no outcome of waits for the screen to settle: a reading waits until
// the app is idle.
async function settle() {
  await ui.dump({ limit: 1 });
}

// What the recording saw after the step: each label shows, and the activity is in front.
async function expect(activity, visible) {
  let focused = null;
  for (const selector of visible) {
    focused = (await ui.wait({ ...query(selector), timeoutMs: TIMEOUT })).focused;
  }
  const started = Date.now();
  while (activity !== null && (focused === null || focused.activity !== activity)) {
    if (Date.now() - started > TIMEOUT) {
      throw new Error(`expected ${activity} in front; the screen shows ${focused ? focused.activity : "no activity"}`);
    }
    if (focused !== null) await sleep(300);
    focused = (await ui.dump({ limit: 1 })).focused || { activity: "none" };
  }
}
"#;

/// The whole script: a header that says where the flow came from, the prelude, then one
/// `step(…)` per step, each commented with what the assistant did; a block's steps inside it.
pub fn render(steps: &[Step], header: &[String]) -> String {
    let mut out = String::new();
    for line in header {
        out.push_str(&format!("// {}\n", one_line(line)));
    }
    out.push('\n');
    out.push_str(PRELUDE);
    out.push_str(super::commands::PRELUDE);
    let mut number = 0;
    let mut body = String::new();
    render_steps(steps, "", &mut number, &mut body);
    // Only a flow that evaluates something as it runs carries the runtime (a recording's export
    // has none: its texts are literal but for a `${` typed, written `\${`).
    let evaluates = |s: &Step| {
        matches!(s.action, Action::Script(_) | Action::Block { .. })
            || s.when.as_ref().is_some_and(|w| w.script.is_some())
    };
    if steps.iter().any(evaluates) || body.contains("interp(") || body.contains("pattern(") {
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
    out.push_str(&body);
    out
}

/// Maestro's JavaScript: `${…}`, variables, scripts and blocks (`maestro/runtime.js`).
const RUNTIME: &str = include_str!("maestro/runtime.js");

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
            let visible: Vec<String> = step.expect.visible.iter().map(selector).collect();
            out.push_str(&format!(
                "{indent}  await expect({}, [{}]);\n",
                step.expect.activity.as_deref().map_or("null".into(), lit),
                visible.join(", ")
            ));
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

/// A string field as JavaScript: its literal, or for a Maestro template (a `${…}` in it) its
/// text evaluated as the step runs.
fn tpl(s: &str) -> String {
    match s.contains("${") {
        true => format!("interp({})", lit(s)),
        false => lit(s),
    }
}

fn body(step: &Step) -> Vec<String> {
    let pick = |t: &Target| format!("await target({}, {}, w)", selector(&t.selector), recorded(t));
    match &step.action {
        Action::Launch { package } => vec![format!("await app.launch({{ package: {} }});", tpl(package))],
        Action::Stop { package } => vec![format!("await app.stop({{ package: {} }});", tpl(package))],
        Action::ClearData { package } => vec![format!("await app.clearData({{ package: {} }});", tpl(package))],
        Action::Install { path } => vec![format!("await app.install({{ path: {} }});", lit(path))],
        Action::Tap { target } => vec![format!("await ui.tap({});", pick(target))],
        Action::LongPress { target, duration_ms } => vec![format!(
            "await ui.longPress({{ ...({}){} }});",
            pick(target),
            duration_ms.map_or(String::new(), |d| format!(", durationMs: {d}"))
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
                None => tpl(text),
            };
            lines.push(format!(
                "await ui.type({{ text: {}{}{} }});",
                text,
                if *clear { ", clear: true" } else { "" },
                if *submit { ", submit: true" } else { "" }
            ));
            lines
        }
        Action::Key { name } => vec![format!("await ui.key({{ name: {} }});", lit(name))],
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
        Action::SwipeToward { direction, duration_ms } => vec![format!(
            "await ui.swipe({{ direction: {}{} }});",
            lit(direction),
            duration_ms.map_or(String::new(), |d| format!(", durationMs: {d}"))
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
            "await ui.wait({{ {}{}, timeoutMs: {} }});",
            query(s),
            if *gone { ", gone: true" } else { "" },
            timeout_ms.map_or("TIMEOUT".into(), |t| t.to_string())
        )],
        Action::Emulator { command } => vec![format!("await device.emulator({{ command: {} }});", lit(command))],
        Action::Check => Vec::new(),
        Action::Command(command) => command.body(selector, recorded),
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

/// A Maestro selector as a JavaScript object, each text with a `${…}` evaluated as the step runs
/// (`tpl`), nested selectors' too.
fn maestro_object(m: &android::selector::ElementSelector) -> String {
    fn value(v: &serde_json::Value) -> String {
        match v {
            serde_json::Value::String(s) => tpl(s),
            serde_json::Value::Array(items) => format!("[{}]", items.iter().map(value).collect::<Vec<_>>().join(", ")),
            serde_json::Value::Object(fields) => {
                let fields: Vec<String> = fields.iter().map(|(k, v)| format!("{k}: {}", value(v))).collect();
                format!("{{ {} }}", fields.join(", "))
            }
            other => super::literal(other),
        }
    }
    serde_json::to_value(m).map_or_else(|_| "{}".into(), |v| value(&v))
}

/// A selector as the API's arguments.
fn selector(s: &Selector) -> String {
    match s {
        Selector::ResourceId(v) => format!("{{ resourceId: {} }}", tpl(v)),
        Selector::Text(v) => format!("{{ text: {} }}", lit(v)),
        Selector::ContentDesc(v) => format!("{{ contentDesc: {} }}", lit(v)),
        Selector::Point([x, y]) => format!("{{ x: {x}, y: {y} }}"),
        Selector::Percent([x, y]) => format!("{{ percent: [{x}, {y}] }}"),
        Selector::PointTemplate(t) => format!("{{ point: {} }}", tpl(t)),
        Selector::Pattern(p) if p.contains("${") => format!("pattern({})", tpl(p)),
        Selector::Pattern(p) => format!("{{ text: {}, match: \"regex\" }}", lit(&super::whole_text_regex(p))),
        // One object in Maestro's shape; `ui` resolves it as Maestro does.
        Selector::Maestro(m) => format!("{{ selector: {} }}", maestro_object(m)),
    }
}
