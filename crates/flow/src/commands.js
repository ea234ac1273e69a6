// The helpers Maestro's device commands replay with (crates/flow/src/commands.rs renders the calls):
// appended to the replay script's prelude (crates/flow/src/js.rs).
// Files the replay pulls beside its report after the run (takeScreenshot).
const files = [];
async function pullLater(devicePath, name, program) {
  const made = await shellChecked(program + quoted(devicePath));
  files.push({ device: made.device, path: devicePath, name });
  await workspace.write("flow-files.json", files);
}

// A path this script wrote itself, quoted for the device's shell (it holds no quote).
function quoted(path) {
  if (!/^[A-Za-z0-9_.\/-]+$/.test(path)) throw new Error(`not a device path: ${path}`);
  return `'${path}'`;
}

// A device command the script wrote (its values quoted as it was written); fails with its
// error output.
async function shellChecked(command) {
  const done = await shell.run({ command });
  if (done.exitCode !== 0 && done.exitCode !== null) {
    throw new Error(`${command.split(" ")[0]} failed (exit ${done.exitCode}): ${(done.stderr || done.stdout).trim()}`);
  }
  if (/^Error|Exception occurred/m.test(done.stderr + done.stdout)) {
    throw new Error((done.stderr + done.stdout).trim());
  }
  return done;
}

// startRecording: the device's screenrecord, running beside the next steps (its own limit,
// 180 s) until stopRecording interrupts it; its file is pulled beside the report.
let recording = null;
async function startRecording(devicePath, name) {
  if (recording !== null) throw new Error("a recording is running already: stopRecording first");
  const run = shell.run({ command: "screenrecord --time-limit 180 " + quoted(devicePath), timeoutMs: 190000 })
    .then((done) => done, (e) => ({ error: String((e && e.message) || e) }));
  recording = { run, devicePath, name };
}

// stopRecording: SIGINT to screenrecord (it may take a moment to start), then its file listed.
async function stopRecording() {
  if (recording === null) throw new Error("no recording is running: startRecording first");
  const { run, devicePath, name } = recording;
  recording = null;
  for (let tries = 0; (await shell.run({ command: "pkill -INT screenrecord" })).exitCode !== 0; tries++) {
    if (tries === 10) throw new Error("screenrecord is not running: it ended or never started");
    await sleep(200);
  }
  const done = await run;
  if (done.error || done.exitCode !== 0) throw new Error(`screenrecord failed: ${done.error || done.stderr}`);
  files.push({ device: done.device, path: devicePath, name });
  await workspace.write("flow-files.json", files);
}

// Where the element shows now, or null: looked for half a second, and on the screen.
async function shownAt(selector, [w, h]) {
  try {
    const found = await ui.wait({ match: "exact", ...selector, timeoutMs: 500 });
    const [x, y] = found.target.at;
    return x >= 0 && y >= 0 && x < w && y < h ? [x, y] : null;
  } catch (e) {
    if (String((e && e.message) || e).includes("did not appear")) return null;
    throw e;
  }
}

// A finger from `from` moving `direction` to a tenth of the screen from that edge (Maestro's
// swipe on Android).
function towards([x, y], direction, [w, h]) {
  const to = { up: [x, Math.round(h * 0.1)], down: [x, Math.round(h * 0.9)],
    left: [Math.round(w * 0.1), y], right: [Math.round(w * 0.9), y] }[direction];
  return { from: [x, y], to };
}

// Maestro's scrollUntilVisible: look, swipe from the centre against the direction the content
// moves, until the element shows or the time is up; centred, at most 4 swipes more.
async function scrollUntil(selector, direction, timeoutMs, swipeMs, centre, warnings) {
  const screen = (await ui.dump({ limit: 1 })).screen;
  const finger = { down: "up", up: "down", left: "right", right: "left" }[direction];
  const middle = [Math.round(screen[0] / 2), Math.round(screen[1] / 2)];
  const started = Date.now();
  let swipes = 0;
  for (;;) {
    const at = await shownAt(selector, screen);
    if (at !== null) {
      if (centre) await centred(selector, at, direction, screen, middle, swipeMs);
      if (swipes > 0) warnings.push(`shown after ${swipes} swipes`);
      return;
    }
    if (Date.now() - started >= timeoutMs) {
      throw new Error(`${JSON.stringify(selector)} did not show after ${swipes} swipes (${timeoutMs} ms)`);
    }
    await ui.swipe({ ...towards(middle, finger, screen), durationMs: Math.max(50, swipeMs) });
    swipes++;
  }
}

// Swipes the element towards the middle of the screen until it is within a tenth of it.
async function centred(selector, at, direction, screen, middle, swipeMs) {
  const axis = direction === "up" || direction === "down" ? 1 : 0;
  for (let i = 0; i < 4 && at !== null && Math.abs(at[axis] - middle[axis]) > screen[axis] / 10; i++) {
    const to = axis === 1 ? [at[0], middle[1]] : [middle[0], at[1]];
    await ui.swipe({ from: at, to, durationMs: Math.max(50, swipeMs) });
    at = await shownAt(selector, screen);
  }
}

// A tap with Maestro's options: the first checked as any replayed tap (`recorded`), the
// repeats at its point `delayMs` apart; once more when nothing changed and `retry`.
async function tapWith(aim, o, warnings) {
  // Maestro's long press on Android lasts 3 s.
  const act = o.long ? (a) => ui.longPress({ ...a, durationMs: 3000 }) : ui.tap;
  const first = await act({ ...aim, observe: o.retry });
  const [x, y] = first.at.map(Math.round);
  for (let i = 1; i < o.repeat; i++) {
    await sleep(o.delayMs);
    await shellChecked(`input tap ${x} ${y}`);
  }
  if (o.retry && first.observed && !first.observed.changed) {
    warnings.push("tapped again: the screen did not change");
    await act({ ...aim });
  }
  if (o.settleMs !== null) await Promise.race([settle(), sleep(o.settleMs)]);
}

// Grants (pm grant) or revokes each permission; `null` is every permission the app requests.
// What the device refuses (a permission the app does not request, one not granted at run
// time) is a warning, as Maestro goes on past it.
async function permissions(pkg, quotedPkg, set, warnings) {
  const refused = [];
  for (const [names, allow] of set) {
    let list = names;
    if (names[0] === null) {
      const dump = (await shell.run({ command: `dumpsys package ${quotedPkg}` })).stdout;
      const requested = dump.split("requested permissions:")[1] || "";
      list = requested.split("\n").slice(1).map((l) => l.trim()).filter((l) => /^[A-Za-z0-9_.]+$/.test(l))
        .map((p) => `'${p}'`);
    }
    for (const p of list) {
      const done = await shell.run({ command: `pm ${allow ? "grant" : "revoke"} ${quotedPkg} ${p}` });
      if (done.exitCode !== 0) refused.push(p.replace(/'/g, ""));
    }
  }
  if (refused.length) warnings.push(`the device did not change ${refused.join(", ")}`);
}

// Maestro's own object in a flow's scripts: what copyTextFrom copied, the platform.
globalThis.maestro = globalThis.maestro || { copiedText: null, platform: "android" };

// copyTextFrom: the found element's whole text, else its hint, else its content-desc, read from
// the screen's nodes (a listed label is cut at 60 characters): the deepest node the selector
// matches, at the element's point when several do (Maestro takes the deepest match).
async function copyTextFrom(selector) {
  const found = await ui.wait({ match: "exact", ...selector, timeoutMs: TIMEOUT });
  const [x, y] = found.target.at;
  const dump = await ui.dump({ limit: 1 });
  const value = selector.text ?? selector.resourceId ?? selector.contentDesc;
  const literal = selector.match === "regex" ? null : value;
  const nodes = (await cache.get({ id: dump.cacheId, ...(literal ? { filter: literal } : {}), limit: 500 })).items || [];
  const pattern = literal ? null : new RegExp(value.replace(/^\(\?s\)/, ""), "si");
  const is = (v) => typeof v === "string" && v !== "" && (pattern ? pattern.test(v) : v === literal);
  const matches = (n) => "resourceId" in selector
    ? is(n["resource-id"]) || is(String(n["resource-id"]).split("/").pop())
    : is(n.text) || is(n["content-desc"]) || ("text" in selector && is(n.hint));
  const within = (n) => {
    const [l, t, r, b] = (String(n.bounds).match(/-?\d+/g) || []).map(Number);
    return x >= l && x <= r && y >= t && y <= b;
  };
  const all = nodes.filter(matches);
  const node = all.filter(within).pop() || all.pop();
  const text = node && (node.text || node.hint || node["content-desc"]);
  if (!text) throw new Error(`${JSON.stringify(selector)} shows no text to copy`);
  maestro.copiedText = text;
}

// Airplane mode on, off, or (null) the other way from now (Android 11+'s cmd connectivity).
async function airplane(on) {
  if (on === null) {
    on = (await shellChecked("cmd connectivity airplane-mode")).stdout.trim() !== "enabled";
  }
  await shellChecked(`cmd connectivity airplane-mode ${on ? "enable" : "disable"}`);
}

// travel: each point set through the emulator console in turn, after the time the distance
// from the last takes at `speed` m/s (a real phone has no console: the step says so).
async function travel(points, speed) {
  const rad = (d) => (d * Math.PI) / 180;
  for (let i = 0; i < points.length; i++) {
    if (i > 0) {
      const [[a, b], [c, d]] = [points[i - 1], points[i]];
      const h = Math.sin(rad(c - a) / 2) ** 2 + Math.cos(rad(a)) * Math.cos(rad(c)) * Math.sin(rad(d - b) / 2) ** 2;
      await sleep((2 * 6371000 * Math.asin(Math.sqrt(h)) / speed) * 1000);
    }
    await device.emulator({ command: `geo fix ${points[i][1]} ${points[i][0]}` });
  }
}

// The app's launcher activity started with the flow's arguments as intent extras.
async function launchWith(pkg, extras) {
  const activity = (await app.info({ package: pkg })).info.launcherActivity;
  if (!activity || !/^[A-Za-z0-9_.$]+\/[A-Za-z0-9_.$]+$/.test(activity)) {
    throw new Error(`${pkg} has no launcher activity to start with arguments`);
  }
  await shellChecked(`am start -n '${activity}' ${extras}`);
  await settle();
}
