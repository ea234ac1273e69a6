//! Reading saphyr's YAML nodes as a flow's fields, each error naming its line; a field that is
//! a `${…}` (marked so by `template::mark` when the flow is read) stands for a value of its type
//! until its step renders it (`typed`), or is refused where the reading needs its value
//! (`written`).

use saphyr::{MarkedYamlOwned, ScalarOwned, YamlDataOwned};

use super::template;

/// A command's argument, or an error naming the command that needs one.
pub(super) fn required<'a>(
    arg: Option<&'a MarkedYamlOwned>,
    item: &MarkedYamlOwned,
    name: &str,
) -> Result<&'a MarkedYamlOwned, String> {
    arg.filter(|a| !a.data.is_null())
        .ok_or_else(|| at(item, &format!("{name} needs an argument")))
}

/// A mapping's entry named `key`: the key node and its value.
fn entry<'a>(node: &'a MarkedYamlOwned, key: &str) -> Option<(&'a MarkedYamlOwned, &'a MarkedYamlOwned)> {
    node.data
        .as_mapping()?
        .iter()
        .find(|(k, _)| scalar(k).as_deref() == Some(key))
}

pub(super) fn field<'a>(node: &'a MarkedYamlOwned, key: &str) -> Option<&'a MarkedYamlOwned> {
    entry(node, key).map(|(_, v)| v)
}

/// The key `key` itself (its span is its line; a mapping value's may not be).
pub(super) fn key<'a>(node: &'a MarkedYamlOwned, key: &str) -> Option<&'a MarkedYamlOwned> {
    entry(node, key).map(|(k, _)| k)
}

/// Refuses any key but `allowed` and `label`, which every Maestro command and condition takes as
/// its caption in Maestro's report (a replay names each step itself).
pub(super) fn only_keys(node: &MarkedYamlOwned, allowed: &[&str]) -> Result<(), String> {
    let Some(map) = node.data.as_mapping() else {
        return Err(at(node, &format!("expected a mapping with {}", allowed.join(", "))));
    };
    for (key, value) in map {
        let name = scalar(key).unwrap_or_default();
        if name == "label" {
            string(value, "label")?;
            continue;
        }
        if !allowed.contains(&name.as_str()) {
            return Err(at(
                key,
                &format!(
                    "`{}` is not supported here ({} are)",
                    android::text::echoed(&name),
                    allowed.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// A scalar as text (numbers and booleans as written).
pub(super) fn scalar(node: &MarkedYamlOwned) -> Option<String> {
    match &node.data {
        YamlDataOwned::Value(ScalarOwned::String(s)) => Some(s.clone()),
        YamlDataOwned::Value(ScalarOwned::Integer(i)) => Some(i.to_string()),
        YamlDataOwned::Value(ScalarOwned::FloatingPoint(f)) => Some(f.to_string()),
        YamlDataOwned::Value(ScalarOwned::Boolean(b)) => Some(b.to_string()),
        YamlDataOwned::Representation(s, _, _) => Some(s.clone()),
        _ => None,
    }
}

/// A field's text as it reads: a template as written (its step renders it), what a template
/// rendered as it is, any other with each `\${` a `${` (`template::literal`).
pub(super) fn string(node: &MarkedYamlOwned, what: &str) -> Result<String, String> {
    let text = scalar(node).ok_or_else(|| at(node, &format!("{what} is a text")))?;
    Ok(
        match template::marked(node) || template::rendered_from(node).is_some() {
            true => text,
            false => template::literal(&text),
        },
    )
}

/// A text the replay's script evaluates as it runs (`runtime.js`: a repeat's `times`, an env
/// value, a script's condition), kept as written.
pub(super) fn raw(node: &MarkedYamlOwned, what: &str) -> Result<String, String> {
    scalar(node).ok_or_else(|| at(node, &format!("{what} is a text")))
}

/// A number of ms, at most `max`, as Maestro writes it: digits, `_` between them allowed
/// (`"10_000"`).
pub(super) fn number(node: &MarkedYamlOwned, what: &str, max: u64) -> Result<u64, String> {
    typed(node, 0, || {
        scalar(node)
            .map(|s| s.trim().replace('_', ""))
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|n| *n <= max)
            .ok_or_else(|| match max {
                u64::MAX => at(node, &format!("{what} is a number of ms")),
                max => at(node, &format!("{what} is a number of ms, up to {max}")),
            })
    })
}

/// A field read as `read` does, or when it is a `${…}`, `sample`: a value of its type standing
/// for it, so the rest of its command is checked with the flow; the step reads the field again,
/// rendered, with this same `read` (`maestro::rendered`).
pub(super) fn typed<T>(
    node: &MarkedYamlOwned,
    sample: T,
    read: impl FnOnce() -> Result<T, String>,
) -> Result<T, String> {
    match template::marked(node) {
        true => {
            template::sampled();
            Ok(sample)
        }
        false => read(),
    }
}

/// Refuses a `${…}` in `field`, which the flow's reading needs as written (`why`): nothing renders
/// it before then.
pub(super) fn written(node: &MarkedYamlOwned, field: &str, why: &str) -> Result<(), String> {
    match template::marked(node) {
        true => Err(at(
            node,
            &format!("`{field}` is {why}, before any step runs: a ${{…}} there cannot be rendered; write its value"),
        )),
        false => Ok(()),
    }
}

/// A message that names the line it is about, and for a field a step rendered, the template it
/// came from (not its value: a step is reported as written, and a value may be a secret).
pub(super) fn at(node: &MarkedYamlOwned, message: &str) -> String {
    let line = node.span.start.line();
    match template::rendered_from(node) {
        Some(written) => format!("line {line}: {message} (the value of {written})"),
        None => format!("line {line}: {message}"),
    }
}
