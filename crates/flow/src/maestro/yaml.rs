//! Reading saphyr's YAML nodes as a flow's fields, each error naming its line.

use saphyr::{MarkedYamlOwned, ScalarOwned, YamlDataOwned};

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

pub(super) fn string(node: &MarkedYamlOwned, what: &str) -> Result<String, String> {
    scalar(node).ok_or_else(|| at(node, &format!("{what} is a text")))
}

pub(super) fn number(node: &MarkedYamlOwned, what: &str) -> Result<u64, String> {
    let text = scalar(node);
    // Numbers are read with the flow; only texts are templates a step evaluates as it runs.
    if text.as_deref().is_some_and(|t| t.contains("${")) {
        return Err(at(
            node,
            &format!("{what} is a number of ms, read with the flow: a ${{…}} there is not evaluated; write the number"),
        ));
    }
    text.and_then(|s| s.parse().ok())
        .ok_or_else(|| at(node, &format!("{what} is a number of ms")))
}

/// A message that names the line it is about.
pub(super) fn at(node: &MarkedYamlOwned, message: &str) -> String {
    format!("line {}: {message}", node.span.start.line())
}
