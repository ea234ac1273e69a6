//! `${…}` in a Maestro flow, as the reader sees it: which texts are templates (an unescaped
//! `${…}`, rendered as the step runs by `runtime.js`'s `interp`, the one door that evaluates
//! them), and `\${`, a literal `${`. Texts are told apart here by the same rule `interp` applies,
//! so the reader and the run never disagree on what is a template.

use std::sync::LazyLock;

use saphyr::{MarkedYamlOwned, ScalarStyle, Tag, YamlDataOwned};

use super::yaml::scalar;

/// `interp`'s own scan (`runtime.js`): a whole `\${…}` (literal, group 1), or a `${…}` (group 2),
/// neither with a `$` inside; a `\${` with no closing brace is neither, as in Maestro.
static SCAN: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"\\\$\{([^$]*)\}|\$\{([^$]*)\}").expect("a valid regex"));

/// Whether `text` has a `${…}` to render (not only a `\${…}`).
pub fn is_template(text: &str) -> bool {
    text.contains("${") && SCAN.captures_iter(text).any(|c| c.get(2).is_some())
}

/// A text with no template, as it reads: each whole `\${…}` a `${…}`.
pub fn literal(text: &str) -> String {
    SCAN.replace_all(text, |c: &regex::Captures| match c.get(1) {
        Some(_) => c[0][1..].to_string(),
        None => c[0].to_string(),
    })
    .into_owned()
}

/// `text` written so that it reads as itself (`literal` undoes it): a `\` before the `${` of
/// each `${…}` or `\${…}` the scan would take.
pub fn escape(text: &str) -> String {
    SCAN.replace_all(text, |c: &regex::Captures| {
        let whole = &c[0];
        let at = whole.find("${").unwrap_or(0);
        format!("{}\\{}", &whole[..at], &whole[at..])
    })
    .into_owned()
}

/// The JavaScript of each `${…}` in `text` (`interp` evaluates these, the blank ones aside).
pub fn bodies(text: &str) -> impl Iterator<Item = &str> {
    SCAN.captures_iter(text)
        .filter_map(|c| c.get(2).map(|b| b.as_str()))
        .filter(|b| !b.trim().is_empty())
}

/// The tag `mark` puts on a template as the flow is read; and the one a rendered field carries as
/// its step reads it again, with the template it came from.
const TEMPLATE: &str = "!droidmcp-template";
const RENDERED: &str = "!droidmcp-rendered";

/// Marks every template of a flow's document (values and keys; not a `label`, a caption nothing
/// reads), so the reader knows them whatever it reads them as.
pub(super) fn mark(node: &mut MarkedYamlOwned) {
    match &mut node.data {
        YamlDataOwned::Mapping(map) => {
            for (mut key, mut value) in std::mem::take(map) {
                if scalar(&key).as_deref() != Some("label") {
                    mark(&mut key);
                    mark(&mut value);
                }
                map.insert(key, value);
            }
        }
        YamlDataOwned::Sequence(items) => items.iter_mut().for_each(mark),
        _ => {
            if let Some(text) = scalar(node).filter(|t| is_template(t)) {
                node.data = tagged(text, TEMPLATE, String::new());
            }
        }
    }
}

fn tagged(text: String, handle: &str, suffix: String) -> YamlDataOwned<MarkedYamlOwned> {
    let tag = Tag {
        handle: handle.into(),
        suffix,
    };
    YamlDataOwned::Representation(text, ScalarStyle::DoubleQuoted, Some(tag))
}

fn tag(node: &MarkedYamlOwned) -> Option<&Tag> {
    match &node.data {
        YamlDataOwned::Representation(_, _, Some(tag)) => Some(tag),
        _ => None,
    }
}

/// Whether `node` is a template (`mark`): its value is known only as its step runs.
pub(super) fn marked(node: &MarkedYamlOwned) -> bool {
    tag(node).is_some_and(|t| t.handle == TEMPLATE)
}

/// The template a field rendered as its step runs was written as.
pub(super) fn rendered_from(node: &MarkedYamlOwned) -> Option<&str> {
    tag(node).filter(|t| t.handle == RENDERED).map(|t| t.suffix.as_str())
}

thread_local! {
    /// Whether the command being read has a template standing in for a value of another type
    /// than text (`yaml::typed`): its step is then named as it was written.
    static SAMPLED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A template read now as a sample of its field's type (a number, a point, a choice).
pub(super) fn sampled() {
    SAMPLED.with(|s| s.set(true));
}

/// Whether a sample was read since the last call (which starts afresh).
pub(super) fn took_sample() -> bool {
    SAMPLED.with(|s| s.replace(false))
}

/// Refuses, at its line, a template under `node` whose JavaScript does not parse: no run can
/// render it. Each body is compiled by `runtime.js`'s own `compiled`, which the run evaluates it
/// through, in QuickJS (parsed, never run). The lists of commands under `node` are left to their
/// own commands' reading.
pub(super) fn compiles(node: &MarkedYamlOwned) -> Result<(), String> {
    match &node.data {
        YamlDataOwned::Mapping(map) => map
            .iter()
            .filter(|(k, _)| {
                !matches!(
                    scalar(k).as_deref(),
                    Some("commands" | "onFlowStart" | "onFlowComplete")
                )
            })
            .try_for_each(|(k, v)| compiles(k).and_then(|()| compiles(v))),
        YamlDataOwned::Sequence(items) => items.iter().try_for_each(compiles),
        _ if marked(node) => {
            let text = scalar(node).unwrap_or_default();
            bodies(&text).try_for_each(|body| {
                compile(body).map_err(|e| super::yaml::at(node, &format!("{e}: no run can render it")))
            })
        }
        _ => Ok(()),
    }
}

/// `runtime.js`'s `compiled(body)`, in a QuickJS of this thread's that holds the runtime.
fn compile(body: &str) -> Result<(), String> {
    thread_local! {
        static CONTEXT: Result<rquickjs::Context, String> = {
            let start = || -> rquickjs::Result<rquickjs::Context> {
                let runtime = rquickjs::Runtime::new()?;
                runtime.set_memory_limit(32 << 20);
                let context = rquickjs::Context::full(&runtime)?;
                context.with(|ctx| ctx.eval::<(), _>(format!("globalThis.args = {{}};\n{}", crate::js::RUNTIME)))?;
                Ok(context)
            };
            start().map_err(|e| format!("cannot start QuickJS: {e}"))
        };
    }
    CONTEXT.with(|context| {
        let context = context.as_ref().map_err(Clone::clone)?;
        context.with(|ctx| {
            let call = format!("void compiled({});", serde_json::to_string(body).unwrap_or_default());
            ctx.eval::<(), _>(call).map_err(|_| {
                let caught = ctx.catch();
                caught
                    .as_exception()
                    .and_then(|e| e.message())
                    .unwrap_or_else(|| format!("${{{body}}} is not a JavaScript expression"))
            })
        })
    })
}

/// `read`'s value, and whether it took a sample; a sample taken before it still counts for the
/// command being read.
pub(super) fn sampling<T>(read: impl FnOnce() -> T) -> (T, bool) {
    let before = took_sample();
    let value = read();
    let took = took_sample();
    if before || took {
        sampled();
    }
    (value, took)
}

/// Whether anything under `node` is a template.
pub(super) fn holds_one(node: &MarkedYamlOwned) -> bool {
    match &node.data {
        YamlDataOwned::Mapping(map) => map.iter().any(|(k, v)| holds_one(k) || holds_one(v)),
        YamlDataOwned::Sequence(items) => items.iter().any(holds_one),
        _ => marked(node),
    }
}

/// A field as the replay's script carries it to its step (`runtime.js`'s `rendered`): each
/// scalar with its line, a template as `t` (the script renders it into `v`), any other as its
/// value `v`; a mapping's entries `m`, a list's items `s`.
pub(super) fn encode(node: &MarkedYamlOwned) -> serde_json::Value {
    use serde_json::{Value, json};
    let line = node.span.start.line();
    match &node.data {
        YamlDataOwned::Mapping(map) => {
            let entries: Vec<Value> = map.iter().map(|(k, v)| json!([encode(k), encode(v)])).collect();
            json!({ "m": entries, "l": line })
        }
        YamlDataOwned::Sequence(items) => json!({ "s": items.iter().map(encode).collect::<Vec<_>>(), "l": line }),
        _ if marked(node) => json!({ "t": scalar(node), "l": line }),
        YamlDataOwned::Value(saphyr::ScalarOwned::Boolean(b)) => json!({ "v": b, "l": line }),
        YamlDataOwned::Value(saphyr::ScalarOwned::Integer(i)) => json!({ "v": i, "l": line }),
        YamlDataOwned::Value(saphyr::ScalarOwned::FloatingPoint(f)) => json!({ "v": f.into_inner(), "l": line }),
        _ => json!({ "v": scalar(node), "l": line }),
    }
}

/// A field the script rendered (`encode`'s form, each `t` with its value `v`), as the reader
/// reads it: its lines kept, each rendered value naming the template it came from.
pub(super) fn decode(value: &serde_json::Value) -> Result<MarkedYamlOwned, String> {
    use saphyr::ScalarOwned;
    use serde_json::Value;
    let data = if let Some(entries) = value.get("m").and_then(Value::as_array) {
        let mut map = saphyr::AnnotatedMapping::default();
        for entry in entries {
            let [k, v] = entry.as_array().map(Vec::as_slice).unwrap_or_default() else {
                return Err("a mapping's entry is [key, value]".into());
            };
            map.insert(decode(k)?, decode(v)?);
        }
        YamlDataOwned::Mapping(map)
    } else if let Some(items) = value.get("s").and_then(Value::as_array) {
        YamlDataOwned::Sequence(items.iter().map(decode).collect::<Result<_, _>>()?)
    } else {
        match (value.get("v"), value.get("t").and_then(Value::as_str)) {
            (Some(Value::String(v)), Some(t)) => tagged(v.clone(), RENDERED, t.to_string()),
            (Some(Value::String(v)), None) => YamlDataOwned::Value(ScalarOwned::String(v.clone())),
            (Some(Value::Bool(b)), _) => YamlDataOwned::Value(ScalarOwned::Boolean(*b)),
            (Some(Value::Number(n)), _) => match n.as_i64() {
                Some(i) => YamlDataOwned::Value(ScalarOwned::Integer(i)),
                None => YamlDataOwned::Value(ScalarOwned::FloatingPoint(n.as_f64().unwrap_or_default().into())),
            },
            (Some(Value::Null), _) => YamlDataOwned::Value(ScalarOwned::Null),
            _ => return Err("a field is rendered as {v} (a template's value), {m} or {s}".into()),
        }
    };
    let mut node = MarkedYamlOwned::from(data);
    let line = value.get("l").and_then(Value::as_u64).unwrap_or_default() as usize;
    node.span.start = saphyr::Marker::new(0, line, 0);
    node.span.end = node.span.start;
    Ok(node)
}

/// A field in `encode`'s form as the plain value it was written as (its templates as written).
pub(super) fn plain(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    if let Some(entries) = value.get("m").and_then(Value::as_array) {
        let fields = entries
            .iter()
            .filter_map(|entry| match entry.as_array().map(Vec::as_slice) {
                Some([k, v]) => {
                    let key = match plain(k) {
                        Value::String(k) => k,
                        other => other.to_string(),
                    };
                    Some((key, plain(v)))
                }
                _ => None,
            });
        return Value::Object(fields.collect());
    }
    if let Some(items) = value.get("s").and_then(Value::as_array) {
        return Value::Array(items.iter().map(plain).collect());
    }
    match (value.get("t"), value.get("v")) {
        (Some(t), _) => t.clone(),
        // As written: a literal text keeps its `\${`.
        (None, Some(v)) => v.clone(),
        (None, None) => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// `interp` (the run) and `is_template` / `literal` (the reader) read every text alike: a text
    /// with no template renders to its `literal`, and any text `escape`d renders to itself.
    #[test]
    fn the_reader_and_the_run_read_a_text_alike() {
        let runtime = rquickjs::Runtime::new().unwrap();
        let context = rquickjs::Context::full(&runtime).unwrap();
        context.with(|ctx| {
            let runtime = format!("globalThis.args = {{}};\n{}", include_str!("runtime.js"));
            ctx.eval::<(), _>(runtime).unwrap();
        });
        let interp = |text: &str| -> Result<String, String> {
            context.with(|ctx| {
                let source = format!("interp({})", serde_json::to_string(text).unwrap());
                ctx.eval::<String, _>(source).map_err(|_| {
                    let caught = ctx.catch();
                    caught.as_exception().and_then(|e| e.message()).unwrap_or_default()
                })
            })
        };
        let cases = std::cell::Cell::new(0);
        let texts = proptest::string::string_regex(r"[a-z$\\{} ]{0,12}").unwrap();
        let mut runner = proptest::test_runner::TestRunner::default();
        runner
            .run(&texts, |text| {
                cases.set(cases.get() + 1);
                let rendered = interp(&text);
                if !is_template(&text) {
                    prop_assert_eq!(rendered, Ok(literal(&text)), "{:?}", text);
                }
                prop_assert_eq!(interp(&escape(&text)), Ok(text.clone()));
                prop_assert!(!is_template(&escape(&text)), "{:?}", text);
                prop_assert_eq!(literal(&escape(&text)), text);
                Ok(())
            })
            .unwrap();
        println!("{} texts read alike by the reader and the run", cases.get());
        assert!(is_template("a ${B} c") && !is_template("a \\${B} c") && !is_template("${a$b}"));
    }
}
