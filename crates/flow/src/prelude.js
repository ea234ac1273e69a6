// What every replayed flow's script runs first (js.rs's `render`): `step`, `target`, `expect`
// and their helpers; then commands.js, and for a Maestro flow with JavaScript, runtime.js.
const TIMEOUT = Number(args.timeoutMs ?? 10000);
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
// warning (healed), and `ui` checks it has that label and class. Any other failure is the step's.
async function target(selector, recorded, warnings) {
  const checked = recorded === null ? {} : { recorded };
  if ("x" in selector) return { ...selector, ...checked };
  if ("percent" in selector) {
    const [x, y] = await percent(selector.percent);
    return { x, y, ...checked };
  }
  try {
    await ui.wait({ ...query(selector), timeoutMs: TIMEOUT });
    return { ...query(selector), ...checked };
  } catch (e) {
    if (!notThere(e)) throw e;
    const label = recorded === null ? null : recorded.label ?? null;
    if (label === null || label.trim() === "" || selector.text === label) throw e;
    const found = await ui.find({ text: label, match: "exact" });
    if (found.totalCount !== 1) throw e;
    warnings.push(`healed: ${JSON.stringify(selector)} no longer matches; now ${JSON.stringify({ text: label })}`);
    return { text: label, match: "exact", recorded: { label, class: recorded.class ?? null } };
  }
}

// Acts on a step's element (`act`, given how `ui` aims at it), reading the screen once per
// attempt: the act resolves, checks (`recorded`) and acts on one reading; only when the element
// is not on the screen (`notThere`: nothing was done) is it waited for (`target`, which heals a
// selector that no longer matches) and acted on again. Any other failure (a refusal, or a device
// command that failed, perhaps after it landed) fails the step: never acted twice. A point or a
// percent is acted on as `target` gives it.
async function acted(act, selector, recorded, warnings) {
  if (!("x" in selector) && !("percent" in selector)) {
    try {
      return await act({ ...query(selector), ...(recorded === null ? {} : { recorded }) });
    } catch (e) {
      if (!notThere(e)) throw e;
    }
  }
  return act(await target(selector, recorded, warnings));
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
  const at = (await ui.wait({ ...query(selector), timeoutMs: TIMEOUT })).target.at;
  const screen = (await ui.dump({ limit: 1 })).screen;
  await ui.swipe({ ...towards(at, direction, screen), ...(durationMs === null ? {} : { durationMs }) });
}

// A finger from `from` moving `direction` to a tenth of the screen from that edge (Maestro's
// swipe on Android; scrollUntilVisible's too).
function towards([x, y], direction, [w, h]) {
  const to = { up: [x, Math.round(h * 0.1)], down: [x, Math.round(h * 0.9)],
    left: [Math.round(w * 0.1), y], right: [Math.round(w * 0.9), y] }[direction];
  return { from: [x, y], to };
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
    // One with a ${…}: rendered and read now (`renderedSelector`, runtime.js).
    if ("rendered" in selector) selector = await renderedSelector(selector.rendered);
    return (await lookFor(query(selector), Math.min(TIMEOUT, 2000))) !== null;
  };
  if (when.visible && !(await shows(when.visible))) return false;
  if (when.notVisible && (await shows(when.notVisible))) return false;
  if (when.script !== undefined && !truthy(interp(when.script, false))) return false;
  return true;
}

// `ui.wait` for `q` (a query as `ui` takes it, `gone` too) for `timeoutMs`, in turns of at most
// `turnMs` (one call's limit): Maestro's extendedWaitUntil waits as long as it is told.
async function waitLong(q, timeoutMs, turnMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await ui.wait({ ...q, timeoutMs: Math.max(1, Math.min(deadline - Date.now(), turnMs)) });
    } catch (e) {
      if (Date.now() >= deadline) throw e;
    }
  }
}

// The element `q` (a query as `ui` takes it) as `ui.wait` found it within `timeoutMs`, or null
// when it did not appear.
async function lookFor(q, timeoutMs) {
  try {
    return await ui.wait({ ...q, timeoutMs });
  } catch (e) {
    if (notThere(e)) return null;
    throw e;
  }
}

// Whether a tool's error says the element is not on the screen (yet), nothing done: the one
// place a replay tells "not there" from a failure, by the error's code (`ui`'s `not_found`),
// never its words.
function notThere(e) {
  return e !== null && typeof e === "object" && e.code === "not_found";
}

// A step the recording saw no outcome of waits for the screen to settle: a reading waits until
// the app is idle.
async function settle() {
  await ui.dump({ limit: 1 });
}

// What the recording saw after the step: each label shows, and the activity is in front.
async function expect(activity, visible) {
  let focused = null;
  for (let selector of visible) {
    // One with a ${…}: rendered and read now (`renderedSelector`, runtime.js).
    if ("rendered" in selector) selector = await renderedSelector(selector.rendered);
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
