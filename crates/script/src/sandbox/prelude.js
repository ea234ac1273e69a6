// The API a script sees (sandbox.rs's `prelude`), before the tools' own namespaces.
(() => {
  const hidden = {};
  for (const name of ["__call", "__local", "__sleep", "__args", "__http"]) {
    hidden[name] = globalThis[name];
    delete globalThis[name];
  }
  // Taken now, so a script that replaces them changes nothing the API does.
  const { parse, stringify } = JSON;
  const assign = Object.assign;
  const invoke = (raw) => async (name, args) => {
    // Taken before the first await, while the script's calling frame is still on the stack,
    // so a tool's error points at the script's line.
    const site = new Error().stack;
    const text = stringify(args === undefined ? {} : args);
    // Measured here, before anything is copied out of the sandbox.
    if (text.length > MAX_ARGUMENT) {
      const error = new Error(`a call's arguments are ${text.length} chars, over the ${MAX_ARGUMENT} a call takes; pass big data through workspace.write`);
      error.stack = site;
      throw error;
    }
    // Parsed by the host, into the heap, where the run's memory limit counts it.
    const answer = await raw(name, text);
    if (answer.error !== undefined) {
      const error = new Error(answer.error);
      error.stack = site;
      // What kind of error, where the tool says (`not_found`): a script steers by this, never the words.
      if (answer.code !== undefined) error.code = answer.code;
      throw error;
    }
    return answer.ok;
  };
  const call = invoke(hidden.__call);
  const local = invoke(hidden.__local);
  const api = (tool, operations) => Object.freeze(Object.fromEntries(operations.map((op) => [
    op.replace(/-([a-z])/g, (_, c) => c.toUpperCase()),
    (args) => call(tool, assign({}, args, { operation: op })),
  ])));
  const define = (name, value) =>
    Object.defineProperty(globalThis, name, { value, writable: false, configurable: false });
  const text = (value) => (typeof value === "string" ? value : stringify(value, null, 2));
  define("args", parse(hidden.__args));
  define("sleep", (ms) => hidden.__sleep(Number(ms)));
  define("workspace", Object.freeze({
    read: (path) => local("workspace.read", { path }),
    write: (path, data) => local("workspace.write", { path, text: text(data) }),
    list: (dir) => local("workspace.list", { dir }),
  }));
  // A replayed Maestro command whose ${…} the script rendered, read again by the flow's reader.
  define("replay", Object.freeze({
    read: async (command) => local("replay.read", command),
  }));
  const AsyncFunction = (async () => {}).constructor;
  define("skills", Object.freeze({
    save: (name, code, description) =>
      local("skills.save", { name, code: String(code), description: description === undefined ? "" : String(description) }),
    list: () => local("skills.list", {}),
    remove: (name) => local("skills.remove", { name }),
    // A skill is code run here, in this run, under its limits, with its own `args`.
    run: async (name, args) => new AsyncFunction("args", await local("skills.load", { name }))(args === undefined ? {} : args),
  }));
