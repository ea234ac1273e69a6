//! The script API, made from the tools' own schemas: the prelude that defines `device.list()`
//! and the rest inside the sandbox, and `droidmcp.d.ts`, the typed description a model reads as
//! the resource `droidmcp://api/droidmcp.d.ts`. Both come from the namespaces the tools layer
//! hands in (`tools::script::namespaces`, the same input schemas as `tools/list`), so neither
//! can drift from the tools, and the engine knows no tool by name.

use serde_json::{Map, Value};

/// One tool as the script sees it.
pub struct Namespace {
    /// The global the script uses, e.g. `device`.
    pub name: &'static str,
    /// The MCP tool it calls, e.g. `adb-device`.
    pub tool: &'static str,
    pub input: Map<String, Value>,
    pub output: Map<String, Value>,
}

impl Namespace {
    /// The tool's operations, from its schema's `operation` enum.
    pub fn operations(&self) -> Vec<String> {
        let values = &self.input["properties"]["operation"]["enum"];
        values
            .as_array()
            .map(|ops| ops.iter().filter_map(|o| o.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    }
}

/// `long-press` → `longPress`: how an operation is named in the script.
pub fn function_name(operation: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in operation.chars() {
        if c == '-' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The JavaScript lines that define each namespace in the sandbox (see `sandbox::PRELUDE`).
pub fn definitions(namespaces: &[Namespace]) -> String {
    namespaces
        .iter()
        .map(|ns| {
            let ops: Vec<String> = ns.operations().iter().map(|o| format!("{o:?}")).collect();
            format!("  define({:?}, api({:?}, [{}]));\n", ns.name, ns.tool, ops.join(", "))
        })
        .collect()
}

/// `droidmcp.d.ts`: every namespace, operation, argument and key answer field, typed.
pub fn declarations(namespaces: &[Namespace]) -> String {
    let mut out = String::from(
        "// droidmcp script API (generated from the tools' schemas). Each function takes the tool's\n\
         // own arguments and resolves to its full answer; a tool's error is thrown as an Error.\n\
         // console.log is the script's answer.\n\n",
    );
    for ns in namespaces {
        let args_type = format!("{}Args", pascal(ns.name));
        let output_type = format!("{}Answer", pascal(ns.name));
        out.push_str(&format!("/** The `{}` tool. */\n", ns.tool));
        out.push_str(&format!("declare const {}: {{\n", ns.name));
        for op in ns.operations() {
            out.push_str(&format!(
                "  {}(args?: {args_type}): Promise<{output_type}>;\n",
                function_name(&op)
            ));
        }
        out.push_str("};\n");
        out.push_str(&format!("interface {args_type} {{\n"));
        out.push_str(&fields(&ns.input, &["operation"]));
        out.push_str("}\n");
        out.push_str(&format!(
            "/** The fields every answer keeps; an operation adds its own. */\ninterface {output_type} {{\n"
        ));
        out.push_str(&fields(&ns.output, &[]));
        out.push_str("  [field: string]: unknown;\n}\n\n");
    }
    out.push_str(RUN_DECLARATIONS);
    out
}

/// What the sandbox adds beside the tools (`sandbox::PRELUDE_HEAD` defines them; a test in
/// `tests/it/code_mode.rs` checks each one is there).
const RUN_DECLARATIONS: &str = r#"/** `script run {args}`, or what `skills.run(name, args)` passed; {} when none. */
declare const args: Record<string, unknown>;
/** Waits; the run's time limit still applies. The only timer. */
declare function sleep(ms: number): Promise<void>;
/** This run's own folder (each tool answer is also saved as results/NNN-ns-op.json) and,
 *  read-only, skills/NAME.js. Paths: letters, digits, _ - ., up to 4 parts, no "..". */
declare const workspace: {
  read(path: string): Promise<string>;
  /** Not under results/ or skills/; a non-string is saved as JSON. Held to the run's quota. */
  write(path: string, data: unknown): Promise<{ bytes: number }>;
  list(dir?: string): Promise<{ path: string; bytes: number }[]>;
};
/** What `droidmcp replay` runs a Maestro command with a ${…} through: the command (its fields
 *  as the flow wrote them, each ${…} rendered) read by the flow's reader, as script lines. */
declare const replay: {
  read(command: { command: string | null; arg: unknown; app?: unknown; file?: string; line?: number }): Promise<string>;
};
/** Saved scripts, shared by every run, listed as resources droidmcp://skills/NAME. */
declare const skills: {
  save(name: string, code: string, description?: string): Promise<{ name: string; description: string; chars: number }>;
  list(): Promise<{ name: string; description: string; chars: number }[]>;
  /** Removes a saved skill, from every instance with --state, freeing its place in the quota. */
  remove(name: string): Promise<{ removed: string }>;
  /** Runs the skill here, under this run's limits; it reads `args`; resolves to what it returns. */
  run(name: string, args?: Record<string, unknown>): Promise<unknown>;
};
"#;

fn pascal(name: &str) -> String {
    let mut chars = name.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().collect::<String>() + chars.as_str())
        .unwrap_or_default()
}

/// The properties of an object schema as TypeScript fields, with their descriptions.
fn fields(schema: &Map<String, Value>, skip: &[&str]) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return String::new();
    };
    let mut out = String::new();
    for (name, property) in properties.iter().filter(|(n, _)| !skip.contains(&n.as_str())) {
        if let Some(doc) = property.get("description").and_then(Value::as_str) {
            out.push_str(&format!("  /** {} */\n", doc.replace("*/", "* /")));
        }
        let optional = if required.contains(&name.as_str()) { "" } else { "?" };
        out.push_str(&format!("  {name}{optional}: {};\n", ts_type(property)));
    }
    out
}

/// A JSON schema as a TypeScript type.
fn ts_type(schema: &Value) -> String {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let literals: Vec<String> = values.iter().map(Value::to_string).collect();
        return literals.join(" | ");
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            let types: Vec<String> = options.iter().map(ts_type).collect();
            return types.join(" | ");
        }
    }
    let one = |t: &str| match t {
        "string" => "string".to_string(),
        "integer" | "number" => "number".to_string(),
        "boolean" => "boolean".to_string(),
        "null" => "null".to_string(),
        "array" => {
            let item = schema.get("items").map(ts_type).unwrap_or_else(|| "unknown".into());
            if item.contains(' ') {
                format!("({item})[]")
            } else {
                format!("{item}[]")
            }
        }
        "object" => match schema.get("properties") {
            Some(Value::Object(props)) if !props.is_empty() => {
                let inner: Vec<String> = props.iter().map(|(k, v)| format!("{k}?: {}", ts_type(v))).collect();
                format!("{{ {} }}", inner.join("; "))
            }
            _ => "Record<string, unknown>".to_string(),
        },
        _ => "unknown".to_string(),
    };
    match schema.get("type") {
        Some(Value::String(t)) => one(t),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .map(one)
            .collect::<Vec<_>>()
            .join(" | "),
        _ => "unknown".to_string(),
    }
}

/// `examples.md`: short worked scripts (each one runs in `tests/it/code_mode.rs`).
pub const EXAMPLES: &str = r#"# droidmcp script examples

Each block is one `script run {code}`. Only what a script prints comes back.

Open Settings, tap an entry, and say whether the screen changed:

```js
await app.launch({package: "com.android.settings"});
const found = await ui.find({text: "Network & internet"});
const tapped = await ui.tap({ref: found.matches[0].ref, observe: true});
console.log(tapped.observed.changed, tapped.focused.activity);
```

The packages that crashed, from the log (the crash list is complete whatever the window):

```js
const log = await logcat.read({lines: 0});
console.log([...new Set(log.crashes.map((c) => c.process))].sort().join("\n"));
```

Count the user apps, page by page:

```js
let count = 0, offset = 0, page;
do {
  page = await app.list({kind: "user", limit: 100, offset});
  count += page.count; offset = page.nextOffset;
} while (page.hasMore);
console.log(count);
```

A few properties, from the full map behind the summary:

```js
const props = await device.properties();
const build = await cache.get({id: props.cacheId, prefix: "ro.build.version."});
console.log(props.summary.model, build.items["ro.build.version.release"]);
```

Wait for a screen, then type into a field found by its id:

```js
await app.launch({package: "org.droidmcp.demo.login"});
await ui.wait({text: "Sign in", timeoutMs: 5000});
const field = (await ui.find({resourceId: "username"})).matches[0];
await ui.type({ref: field.ref, text: "ada"});
console.log((await ui.find({resourceId: "username"})).matches[0].label);
```

A shell pipeline, and a tool error caught:

Save a routine as a skill, then run it with arguments (later: `script run {skill, args}`):

```js
await skills.save("count-apps", `
  let count = 0, offset = 0, page;
  do {
    page = await app.list({kind: args.kind || "user", limit: 100, offset});
    count += page.count; offset = page.nextOffset;
  } while (page.hasMore);
  return count;`, "Counts installed apps of args.kind (user, system, all)");
console.log(await skills.run("count-apps", {kind: "system"}));
```

Keep a screen for a later look, and read a saved tool answer back:

```js
const screen = await ui.dump();
await workspace.write("screens/home.json", screen);
console.log((await workspace.list()).map((f) => f.path).join("\n"));
```

```js
const run = await shell.run({command: "pm list packages | grep -c google"});
console.log("google packages:", run.stdout.trim());
try {
  await app.info({package: "no.such.app"});
} catch (e) {
  console.log("as expected:", e.message.split(".")[0]);
}
```
"#;
