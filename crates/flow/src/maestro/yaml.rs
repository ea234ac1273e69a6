//! Reading saphyr's YAML nodes as a flow's fields, each error naming its line; a field that is
//! a `${…}` (marked so by `template::mark` when the flow is read) stands for a value of its type
//! until its step renders it (`typed`), or is refused where the reading needs its value
//! (`written`).
//!
//! Scalars are read as Maestro reads them (Jackson over SnakeYAML 2.2's YAML 1.1 resolver), not
//! as YAML 1.2 would: a plain scalar keeps its text as written (`load`), and a field Maestro types
//! as a number or a boolean reads it here alone (`integer`, `boolean`, through `plain`).

use saphyr::{MarkedYamlOwned, ScalarOwned, ScalarStyle, YamlDataOwned, YamlLoader};

use std::sync::LazyLock;

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
/// its caption in Maestro's report (a replay names each step itself), and `optional`, which every
/// one of Maestro's mappings takes, its selectors too (`YamlElementSelector.optional`): read as a
/// true or false here; what it does is the command's (`read::element_optional`).
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
        if name == "optional" {
            written(value, "optional", "read with the flow (whether a failure fails it)")?;
            boolean(value).map_err(|()| at(value, "optional is true or false"))?;
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

/// A flow's documents with each scalar as Maestro's reader has it: a plain one as its text as
/// written (`0612345678` keeps its 0, `1_000` its `_`; YAML 1.2 would make them numbers), a null
/// (`~`, `null`, nothing) null, a quoted one text. A field reads a number or a boolean from it
/// with `integer` or `boolean`.
pub(crate) fn load(text: &str) -> Result<Vec<MarkedYamlOwned>, String> {
    let mut loader = YamlLoader::<MarkedYamlOwned>::default();
    loader.early_parse(false);
    saphyr_parser::Parser::new_from_str(text)
        .load(&mut loader, true)
        .map_err(|e| format!("not YAML: {e}"))?;
    let mut docs = loader.into_documents();
    docs.iter_mut().for_each(as_maestro_reads);
    Ok(docs)
}

fn as_maestro_reads(node: &mut MarkedYamlOwned) {
    match &mut node.data {
        YamlDataOwned::Mapping(map) => {
            for (mut key, mut value) in std::mem::take(map) {
                as_maestro_reads(&mut key);
                as_maestro_reads(&mut value);
                map.insert(key, value);
            }
        }
        YamlDataOwned::Sequence(items) => items.iter_mut().for_each(as_maestro_reads),
        YamlDataOwned::Representation(text, style, tag) => {
            node.data = match (style, tag) {
                (ScalarStyle::Plain, None) if matches!(plain(text), Plain::Null) => {
                    YamlDataOwned::Value(ScalarOwned::Null)
                }
                (ScalarStyle::Plain, None) => return,
                (_, None) => YamlDataOwned::Value(ScalarOwned::String(std::mem::take(text))),
                // An explicit tag (`!!str 10`): as saphyr reads it.
                _ => {
                    let mut data = node.data.take();
                    data.parse_representation_recursive();
                    data
                }
            }
        }
        _ => {}
    }
}

/// A plain scalar as SnakeYAML 2.2's resolver (`Resolver.java`: BOOL, INT, FLOAT, NULL) tags it
/// and Jackson's `YAMLParser._decodeScalar` reads it: `0x1F`, `0b101`, `017` (octal) and `1_000`
/// are integers, sexagesimal `1:30` a text (Jackson reads no base 60), `yes`/`no`/`on`/`off` in
/// SnakeYAML's three cases booleans.
#[derive(Debug, PartialEq)]
pub(super) enum Plain {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Text,
}

pub(super) fn plain(text: &str) -> Plain {
    static INT: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            r"^(?:[-+]?0b_*[0-1][0-1_]*|[-+]?0_*[0-7][0-7_]*|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x_*[0-9a-fA-F][0-9a-fA-F_]*|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$",
        )
        .expect("a valid regex")
    });
    static FLOAT: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)|[-+]?\.[0-9_]+(?:[eE][-+]?[0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        )
        .expect("a valid regex")
    });
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Plain::Null,
        "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "true" | "True" | "TRUE" => return Plain::Bool(true),
        "no" | "No" | "NO" | "off" | "Off" | "OFF" | "false" | "False" | "FALSE" => return Plain::Bool(false),
        _ => {}
    }
    if INT.is_match(text) {
        // Jackson's `_decodeNumberScalar`: a sign, then 0b / 0x / a leading 0 (octal) or decimal
        // digits, `_` dropped; a base-60 value stays a text.
        let (negative, digits) = match text.as_bytes()[0] {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let clean = |s: &str| s.replace('_', "");
        let value = if let Some(bin) = digits.strip_prefix("0b") {
            i64::from_str_radix(&clean(bin), 2).ok()
        } else if let Some(hex) = digits.strip_prefix("0x") {
            i64::from_str_radix(&clean(hex), 16).ok()
        } else if digits.len() > 1 && digits.starts_with('0') {
            i64::from_str_radix(&clean(digits), 8).ok()
        } else if digits.contains(':') {
            return Plain::Text;
        } else {
            clean(digits).parse::<i64>().ok()
        };
        return match value {
            Some(v) if negative => Plain::Int(-v),
            Some(v) => Plain::Int(v),
            None => Plain::Text,
        };
    }
    if FLOAT.is_match(text) {
        let clean = text.replace('_', "");
        return match clean.trim_start_matches(['+', '-']) {
            ".inf" | ".Inf" | ".INF" if clean.starts_with('-') => Plain::Float(f64::NEG_INFINITY),
            ".inf" | ".Inf" | ".INF" => Plain::Float(f64::INFINITY),
            ".nan" | ".NaN" | ".NAN" => Plain::Float(f64::NAN),
            _ => clean.parse::<f64>().map_or(Plain::Text, Plain::Float),
        };
    }
    Plain::Text
}

/// What a field Maestro reads as `Any` holds (a launch argument): Jackson's untyped value of it.
pub(super) fn untyped(node: &MarkedYamlOwned) -> Option<Plain> {
    resolved(node).map(|(plain, _)| plain)
}

/// What a scalar node holds as Maestro reads it: a plain one resolved (`plain`), a quoted one or
/// one a step rendered a text, saphyr's own values as they are.
fn resolved(node: &MarkedYamlOwned) -> Option<(Plain, String)> {
    let text = scalar(node)?;
    let plain = match &node.data {
        YamlDataOwned::Representation(t, ScalarStyle::Plain, None) => plain(t),
        YamlDataOwned::Value(ScalarOwned::Boolean(b)) => Plain::Bool(*b),
        YamlDataOwned::Value(ScalarOwned::Integer(i)) => Plain::Int(*i),
        YamlDataOwned::Value(ScalarOwned::FloatingPoint(f)) => Plain::Float(f.into_inner()),
        _ => Plain::Text,
    };
    Some((plain, text))
}

/// A field Maestro types as an `Int` or a `Long` (Jackson's coercions): a YAML 1.1 integer
/// (`plain`), a float cut to a whole number (`ACCEPT_FLOAT_AS_INT`), a text of decimal digits
/// with an optional sign (`"300"`); `Err(())` for anything else, which the caller words.
pub(super) fn integer(node: &MarkedYamlOwned) -> Result<i64, ()> {
    match resolved(node).ok_or(())? {
        (Plain::Int(i), _) => Ok(i),
        (Plain::Float(f), _) if f.is_finite() => Ok(f.trunc() as i64),
        (Plain::Text, text) => {
            let t = text.trim();
            let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
            match !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                true => t.parse::<i64>().map_err(|_| ()),
                false => Err(()),
            }
        }
        _ => Err(()),
    }
}

/// A field Maestro types as a `Boolean` (Jackson's `_parseBoolean`): a YAML 1.1 boolean
/// (`yes`, `off`, …), a text `true`/`True`/`TRUE`/`false`/`False`/`FALSE` (`"true"`), an integer
/// (0 false, any other true); `Err(())` for anything else, which the caller words.
pub(crate) fn boolean(node: &MarkedYamlOwned) -> Result<bool, ()> {
    match resolved(node).ok_or(())? {
        (Plain::Bool(b), _) => Ok(b),
        (Plain::Int(i), _) => Ok(i != 0),
        (Plain::Text, text) => match text.trim() {
            "true" | "True" | "TRUE" => Ok(true),
            "false" | "False" | "FALSE" => Ok(false),
            _ => Err(()),
        },
        _ => Err(()),
    }
}

/// A `true`/`false` field as Maestro reads it, or when it is a `${…}`, `sample`.
pub(super) fn flag_value(node: &MarkedYamlOwned, what: &str, sample: bool) -> Result<bool, String> {
    typed(node, sample, || {
        boolean(node).map_err(|()| at(node, &format!("{what} is true or false")))
    })
}

/// A scalar as text (numbers and booleans as written).
pub(crate) fn scalar(node: &MarkedYamlOwned) -> Option<String> {
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

/// A number of ms, at most `max`, as Maestro reads it (`integer`; a text with `_` between its
/// digits too, as extendedWaitUntil's `timeout`, a text Maestro reads itself, takes `"10_000"`).
pub(super) fn number(node: &MarkedYamlOwned, what: &str, max: u64) -> Result<u64, String> {
    typed(node, 0, || {
        integer(node)
            .ok()
            .or_else(|| scalar(node).and_then(|s| s.trim().replace('_', "").parse::<i64>().ok()))
            .and_then(|n| u64::try_from(n).ok())
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use proptest::prelude::*;

    use super::super::parse;
    use super::{Plain, boolean, integer, load, plain};
    use crate::{Action, Selector};

    /// A flow shaped like the public ones: YAML 1.1's scalars where Maestro types a field
    /// (`retryTapIfNoChange: no`, `optional: yes`, `timeout: 1_000`, a hex and an octal number) and
    /// a phone number with its leading 0 where it types a text.
    #[test]
    fn scalars_read_as_maestro_reads_them() {
        let flow = "appId: a.b\n---\n- tapOn:\n    text: OK\n    retryTapIfNoChange: no\n    optional: yes\n- inputText: 0612345678\n- waitForAnimationToEnd:\n    timeout: 1_000\n- eraseText:\n    charactersToErase: 010\n- waitForAnimationToEnd:\n    timeout: 0x7d0\n";
        let steps = parse(flow).unwrap_or_else(|e| panic!("refused: {e}"));
        let actions: Vec<&Action> = steps.iter().map(|s| &s.action).collect();
        assert!(steps[0].optional, "optional: yes");
        assert!(matches!(actions[0], Action::Tap { target } if target.selector == Selector::Text("OK".into())));
        assert!(
            matches!(actions[1], Action::Type { text, .. } if text == "0612345678"),
            "{:?}",
            actions[1]
        );
        assert!(
            matches!(actions[2], Action::Settle { timeout_ms: Some(1000) }),
            "{:?}",
            actions[2]
        );
        assert!(
            matches!(actions[3], Action::Erase { chars: 8 }),
            "octal 010: {:?}",
            actions[3]
        );
        assert!(
            matches!(actions[4], Action::Settle { timeout_ms: Some(2000) }),
            "{:?}",
            actions[4]
        );
    }

    /// What SnakeYAML 2.2 and Jackson make of a plain scalar, case by case (their sources' tables).
    #[test]
    fn plain_scalars_resolve_as_snakeyaml_and_jackson_resolve_them() {
        let cases: &[(&str, Plain)] = &[
            ("300_000", Plain::Int(300_000)),
            ("0x1F", Plain::Int(31)),
            ("0b101", Plain::Int(5)),
            ("017", Plain::Int(15)),
            ("-0_17", Plain::Int(-15)),
            ("+42", Plain::Int(42)),
            ("0", Plain::Int(0)),
            ("0612345678", Plain::Text),
            ("1:30", Plain::Text),
            ("0o17", Plain::Text),
            ("1.5", Plain::Float(1.5)),
            ("1e3", Plain::Float(1000.0)),
            ("yes", Plain::Bool(true)),
            ("OFF", Plain::Bool(false)),
            ("yEs", Plain::Text),
            ("y", Plain::Text),
            ("~", Plain::Null),
            ("Null", Plain::Null),
            ("abc", Plain::Text),
        ];
        for (text, want) in cases {
            assert_eq!(&plain(text), want, "{text}");
        }
        println!(
            "{} plain scalars resolved as Maestro's reader resolves them",
            cases.len()
        );
    }

    /// Generated: an integer written in each of YAML 1.1's forms (decimal with `_`, hex, binary,
    /// octal, quoted decimal) reads as that integer; a boolean in each form Jackson takes reads
    /// as that boolean, and a quoted `yes` (which Jackson refuses) does not.
    #[test]
    fn every_written_form_reads_as_its_value() {
        let cases = AtomicUsize::new(0);
        let field = |written: &str| load(&format!("v: {written}\n")).unwrap()[0].clone();
        let value = |doc: &saphyr::MarkedYamlOwned| super::field(doc, "v").cloned().unwrap();
        proptest!(|(n in 0i64..1_000_000_000, form in 0usize..5, neg: bool)| {
            cases.fetch_add(1, Ordering::Relaxed);
            let sign = if neg { "-" } else { "" };
            let written = match form {
                0 => {
                    let digits = n.to_string();
                    let mut with = String::new();
                    for (i, c) in digits.chars().enumerate() {
                        if i > 0 && (digits.len() - i) % 3 == 0 { with.push('_'); }
                        with.push(c);
                    }
                    format!("{sign}{with}")
                }
                1 => format!("{sign}0x{n:x}"),
                2 => format!("{sign}0b{n:b}"),
                3 => format!("{sign}0{n:o}"),
                _ => format!("\"{sign}{n}\""),
            };
            let want = if neg { -n } else { n };
            prop_assert_eq!(integer(&value(&field(&written))), Ok(want), "{}", written);
        });
        for (written, want) in [
            ("yes", Ok(true)),
            ("No", Ok(false)),
            ("ON", Ok(true)),
            ("off", Ok(false)),
            ("true", Ok(true)),
            ("\"True\"", Ok(true)),
            ("\"FALSE\"", Ok(false)),
            ("1", Ok(true)),
            ("0", Ok(false)),
            ("\"yes\"", Err(())),
            ("maybe", Err(())),
            ("1.5", Err(())),
        ] {
            cases.fetch_add(1, Ordering::Relaxed);
            assert_eq!(boolean(&value(&field(written))), want, "{written}");
        }
        println!(
            "{} written numbers and booleans read as Maestro reads them",
            cases.load(Ordering::Relaxed)
        );
    }
}
