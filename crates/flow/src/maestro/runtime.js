// What a replayed Maestro flow's JavaScript runs on (issue 35), after the prelude: its ${…}, its
// variables and their scopes, `output`, `maestro`, `json`, runScript, evalScript, assertTrue,
// and the blocks (repeat, retry, onFlowComplete). All in this run, under its limits.

// Maestro's globals (its Js.kt initScript): `output` (what scripts and subflows hand on),
// `maestro` (the platform, the text copyTextFrom copied), `json(text)`, `relativePoint(x, y)`
// (a point in percent of the screen, "50%,20%"). Its `http` is the sandbox's, refused unless the
// replay is given --allow-network.
globalThis.output = {};
globalThis.maestro = { platform: "android", copiedText: null };
globalThis.json = (text) => JSON.parse(text);
globalThis.relativePoint = (x, y) => `${Math.ceil(x * 100)}%,${Math.ceil(y * 100)}%`;

// A flow variable is a global, as in Maestro. One the replay's own API holds cannot be one.
function setVar(name, value) {
  const own = Object.getOwnPropertyDescriptor(globalThis, name);
  if (own !== undefined && own.writable === false) {
    throw new Error(`the variable ${name} has the name of the replay's own ${name}: rename it in the flow`);
  }
  globalThis[name] = value;
}

// --env NAME=VALUE: variables no flow env overrides.
const FIXED = new Set(Object.keys(args.env || {}));
for (const [name, value] of Object.entries(args.env || {})) setVar(name, value);
// The names each runFlow env being run holds over its subflow's own header env.
const held = [];

// One ${…}'s JavaScript, evaluated over the flow's variables. A name nobody defined reads as
// undefined (as Maestro's GraalJS reads it, so `${X || 'default'}` works); `missing` collects
// such names, and one assigned becomes a variable.
function evaluate(body) {
  const missing = [];
  const scope = new Proxy({}, {
    has: (_, name) => typeof name === "string" && !(name in globalThis) && (missing.push(name), true),
    get: () => undefined,
    set: (_, name, value) => (setVar(name, value), true),
  });
  return [compiled(body)(scope), missing];
}

// One ${…}'s JavaScript as a function of its scope, parsed, not run: a syntax error throws here
// (the flow's reading compiles every template through this, `maestro::template::compiles`).
function compiled(body) {
  try {
    return new Function("scope", `with (scope) { return (\n${body}\n); }`);
  } catch (e) {
    throw new Error(`\${${body}} is not a JavaScript expression (${e.message})`);
  }
}

// A template's text: each ${…} evaluated now, a whole `\${…}` the literal `${…}` (as Maestro's
// Env.evaluateScripts: a `\${` with no closing brace keeps its backslash). In a field
// (`strict`) one that comes out undefined or null fails, naming the variable; in a condition it
// is its text.
function interp(template, strict = true) {
  return String(template).replace(/\\\$\{([^$]*)\}|\$\{([^$]*)\}/g, (whole, escaped, body) => {
    if (escaped !== undefined) return whole.slice(1);
    if (body.trim() === "") return "";
    const [value, missing] = evaluate(body);
    if (strict && (value === undefined || value === null)) {
      if (missing.length > 0) {
        throw new Error(`\${${body}}: ${missing[0]} is not defined; replay with --env ${missing[0]}=VALUE, or define it in the flow's env`);
      }
      throw new Error(`\${${body}} is ${value}`);
    }
    return String(value);
  });
}

// A variable's value: a template that is one ${…} keeps the value's type (a number, an object,
// undefined); any other is its text.
function value(template) {
  const whole = /^\$\{([^$]*)\}$/.exec(String(template));
  return whole === null ? interp(template, false) : evaluate(whole[1])[0];
}

// Maestro's truth of a condition's text: true unless blank, false, undefined, null or 0.
function truthy(text) {
  const t = String(text).trim();
  return !(t === "" || t.toLowerCase() === "false" || t === "undefined" || t === "null" || Number(t) === 0);
}

// Variables for the steps of `body`, put back as it ends: a runFlow's env (`strong`) holds over
// its subflow's header env; --env holds over both.
async function within(vars, strong, body) {
  const saved = [];
  const holding = new Set();
  for (const [name, template] of vars) {
    if (FIXED.has(name) || (!strong && held.some((names) => names.has(name)))) continue;
    const defined = value(template);
    saved.push([name, Object.getOwnPropertyDescriptor(globalThis, name)]);
    setVar(name, defined);
    if (strong) holding.add(name);
  }
  held.push(holding);
  try {
    await body();
  } finally {
    held.pop();
    for (const [name, own] of saved.reverse()) {
      if (own === undefined) delete globalThis[name];
      else Object.defineProperty(globalThis, name, own);
    }
  }
}

// runScript: the file's code, run here as a function with `env` as its own variables; what it
// leaves in `output` (or any global it sets) the flow reads after it.
function runScript(file, code, env) {
  const vars = {};
  for (const [name, template] of env) vars[name] = FIXED.has(name) ? globalThis[name] : value(template);
  let run;
  try {
    run = new Function("scope", "with (scope) {\n" + code + "\n}");
  } catch (e) {
    throw new Error(`${file}: ${e.message}`);
  }
  try {
    run(vars);
  } catch (e) {
    const at = /<input>:(\d+)/.exec(String(e && e.stack));
    const line = at === null ? "" : ` line ${Number(at[1]) - 3}`;
    const message = String((e && e.message) || e);
    const limit = /out of memory/.test(message) ? " (the run's memory limit)" : "";
    throw new Error(`${file}${line}: ${message}${limit}`);
  }
}

// A command's fields as the flow wrote them (`maestro::template::encode`), each ${…} rendered:
// every template of every command goes through `interp` here, and nowhere else.
function renderFields(node) {
  if (node === null) return null;
  if ("t" in node) return { ...node, v: interp(node.t) };
  if ("m" in node) return { ...node, m: node.m.map(([k, v]) => [renderFields(k), renderFields(v)]) };
  if ("s" in node) return { ...node, s: node.s.map(renderFields) };
  return node;
}

// A command with a ${…}, as its step runs: rendered, read again by the reader that read the flow
// (`replay.read`, which refuses what it would have refused written so), and run. A command read
// as several steps is rendered once, by the first, which keeps the steps' lines for the others
// (all of them when its templates gave another number of steps).
// A failure quotes a value its templates gave as the template it came from (a step is reported
// as written; the value may be a secret given with --env).
let renderedSteps = [];
let renderedGave = [];
async function rendered(command, w) {
  if (command.part === 0) {
    renderedSteps = [];
    const request = { ...command, arg: renderFields(command.arg), app: renderFields(command.app) };
    renderedGave = [];
    gave(request.arg, renderedGave);
    gave(request.app, renderedGave);
    renderedSteps = JSON.parse(await replay.read(request));
  }
  const mine = renderedSteps.length === command.parts ? [renderedSteps[command.part]]
    : command.part === 0 ? renderedSteps : [];
  try {
    for (const code of mine) await eval(`(async (w) => {\n${code}\n})`)(w);
  } catch (e) {
    throw new Error(asWritten(String((e && e.message) || e), renderedGave));
  }
}

// Each [value, template] of a rendered field (`renderFields`'s `v` of a `t`).
function gave(node, out) {
  if (node === null || node === undefined) return;
  if ("t" in node && node.v !== node.t) out.push([String(node.v), node.t]);
  if ("m" in node) node.m.forEach(([k, v]) => (gave(k, out), gave(v, out)));
  if ("s" in node) node.s.forEach((item) => gave(item, out));
}

// `message` with each quoted value (quoted once or twice, as a message quotes a selector it
// names) written as its template, quoted alike: whole quoted values only.
function asWritten(message, given) {
  const quote = (text, times) => (times === 0 ? text : quote(JSON.stringify(text), times - 1));
  let out = message;
  for (const [value, template] of given) {
    for (const times of [2, 1]) {
      const inner = (text) => quote(text, times).slice(times === 2 ? 1 : 0, times === 2 ? -1 : undefined);
      out = out.split(inner(value)).join(inner(template));
    }
  }
  return out;
}

// A condition's selector with a ${…}: rendered and read as it is looked for.
async function renderedSelector(selector) {
  return (0, eval)(`(${await replay.read({ ...selector, arg: renderFields(selector.arg) })})`);
}

// assertTrue: the condition's text is true.
function assertTrue(condition) {
  const text = interp(condition, false);
  if (!truthy(text)) throw new Error(`${JSON.stringify(condition)} is ${JSON.stringify(text)}, not true`);
}

// retry: the steps again after a failure, at most maxRetries more times (1 by default, 3 at
// most, as Maestro).
async function retry(maxRetries, body) {
  const n = Math.min(3, Math.max(0, Math.floor(Number(interp(maxRetries)))));
  if (Number.isNaN(n)) throw new Error(`retry maxRetries ${JSON.stringify(maxRetries)} is not a number`);
  for (let attempt = 0; ; attempt++) {
    const from = results.length;
    try {
      return await body();
    } catch (e) {
      if (attempt >= n || !(await excuse(from, "failed, then retried"))) throw e;
    }
  }
}

// The failed records from `from` on become warnings (`why: error`); whether there was one (a
// failure outside any step is no step's to excuse).
async function excuse(from, why) {
  const failed = results.slice(from).filter((r) => !r.ok);
  for (const r of failed) {
    r.warnings.push(`${why}: ${r.error}`);
    [r.ok, r.error] = [true, null];
  }
  await workspace.write("flow-results.json", results);
  return failed.length > 0;
}

// An optional runFlow or retry: a failure of its steps is a warning, and the flow goes on.
async function optionally(body) {
  const from = results.length;
  try {
    await body();
  } catch (e) {
    if (!(await excuse(from, "optional, failed"))) throw e;
  }
}

// repeat: the steps while the condition holds (read before each round), at most `times`. Maestro
// bounds a while without times by nothing; here the run's time limit ends it.
async function repeat(times, condition, body) {
  const most = times === null ? Infinity : Math.floor(Number(interp(times)));
  if (Number.isNaN(most)) throw new Error(`repeat times ${JSON.stringify(times)} is not a number`);
  for (let round = 0; round < most; round++) {
    if (condition !== null && !(await holds(condition))) return;
    await body();
  }
}

// A runFlow when inside another's: its steps run when its condition holds as it starts.
async function only(condition, body) {
  if (await holds(condition)) await body();
}

// onFlowComplete: run after the flow, even after it failed; the first failure is the flow's.
async function complete(body, after) {
  let failure = null;
  try {
    await body();
  } catch (e) {
    failure = e;
  }
  try {
    await after();
  } catch (e) {
    failure = failure ?? e;
  }
  if (failure !== null) throw failure;
}
