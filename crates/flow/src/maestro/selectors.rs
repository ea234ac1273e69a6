//! The selectors of a Maestro flow: what `tapOn` points at (an id with the text it shows),
//! a command's selector, Maestro's `text` as a pattern or a literal, points, and Maestro's whole
//! selector (index, flags, size, the relational keys with selectors of their own), which `ui`
//! resolves as Maestro does (`android::selector`).

use saphyr::{MarkedYamlOwned, YamlDataOwned};

use super::super::{Selector, Target};
use android::ui_elements::Matcher;

use super::fields::{COMMAND_SELECTOR, MAESTRO_KEYS, SELECTOR, TARGET};
use super::template::marked;
use super::yaml::{at, field, flag_value, integer, key, only_keys, scalar, string, typed};
use android::selector::{ElementSelector, Index};

/// `allowed` and, beside `text`, Maestro's other selector keys.
fn with_maestro_keys<'a>(allowed: &[&'a str]) -> Vec<&'a str> {
    let mut all = allowed.to_vec();
    if allowed.contains(&"text") {
        all.extend(MAESTRO_KEYS);
    }
    all
}

/// What `tapOn` and `longPressOn` point at. `label` only names the step in Maestro's report, so
/// it is a caption here too. A selector with both `id` and a literal `text` (as `flow export`
/// writes a recorded element) means what Maestro says, the element with that id showing that
/// text: it is found by its id and acted on only when it shows the text (`verify`), else refused
/// naming both.
pub(super) fn target(node: &MarkedYamlOwned) -> Result<Target, String> {
    if let Some(label) = field(node, "label") {
        string(label, "label")?;
    }
    let allowed = TARGET;
    if scalar(node).is_none() && MAESTRO_KEYS.iter().any(|k| field(node, k).is_some()) {
        return Ok(Target::bare(selector_in(node, allowed)?));
    }
    if let (Some(id), Some(text)) = (field(node, "id"), field(node, "text")) {
        only_keys(node, allowed)?;
        if field(node, "point").is_some() {
            return Err(at(node, "a selector takes id and text, or point, not both"));
        }
        let id = string(id, "id")?;
        return match text_selector(text, &string(text, "text")?)? {
            Selector::Text(shown) => Ok(Target {
                label: Some(shown),
                ..Target::bare(Selector::ResourceId(id))
            }),
            // A pattern beside an id: both must hold, as Maestro resolves them.
            _ => Ok(Target::bare(Selector::Maestro(element_selector(node)?))),
        };
    }
    Ok(Target::bare(selector_in(node, allowed)?))
}

/// What a tap with a point inside its element points at: always Maestro's selector (even a lone
/// `id` or `text`), so the element whose bounds place the point is the very node Maestro picks
/// (a text's own node, not the row a plain text query would tap).
pub(super) fn element_target(node: &MarkedYamlOwned) -> Result<Target, String> {
    if let Some(label) = field(node, "label") {
        string(label, "label")?;
    }
    only_keys(node, &with_maestro_keys(&["id", "text", "label", "optional"]))?;
    Ok(Target::bare(Selector::Maestro(element_selector(node)?)))
}

pub(super) fn selector(node: &MarkedYamlOwned) -> Result<Selector, String> {
    selector_in(node, SELECTOR)
}

/// A selector that is a command's whole argument (`assertVisible: {text, optional}`).
pub(super) fn command_selector(node: &MarkedYamlOwned) -> Result<Selector, String> {
    selector_in(node, COMMAND_SELECTOR)
}

fn selector_in(node: &MarkedYamlOwned, allowed: &[&str]) -> Result<Selector, String> {
    if let Some(text) = scalar(node) {
        return text_selector(node, &text);
    }
    only_keys(node, &with_maestro_keys(allowed))?;
    let both = field(node, "id").is_some() && field(node, "text").is_some();
    if both || MAESTRO_KEYS.iter().any(|k| field(node, k).is_some()) {
        if let Some(point) = key(node, "point") {
            return Err(at(point, "point taps a place: it takes no other selector key"));
        }
        return Ok(Selector::Maestro(element_selector(node)?));
    }
    let keys = ["id", "text", "point"];
    let given: Vec<&str> = keys.into_iter().filter(|k| field(node, k).is_some()).collect();
    match given.as_slice() {
        ["id"] => Ok(Selector::ResourceId(string(field(node, "id").expect("given"), "id")?)),
        ["text"] => {
            let text = field(node, "text").expect("given");
            text_selector(text, &string(text, "text")?)
        }
        ["point"] => spot(field(node, "point").expect("given")),
        // Maestro would take any element (`label` is only a caption): a replay does not guess.
        [] => Err(at(
            first_key(node),
            "this selector names no element (a label is only a caption): give text, id, or another selector key",
        )),
        _ => Err(at(first_key(node), "a selector takes one of id, text, point")),
    }
}

/// Maestro's `text` is a regular expression over an element's whole text. One whose every
/// metacharacter is escaped (as `write` escapes a label) is that literal text, and replays as a
/// text target (waited for, healed); any other is a pattern, matched as Maestro matches it, and
/// checked here so a pattern `ui` cannot read fails at once with its line.
fn text_selector(node: &MarkedYamlOwned, pattern: &str) -> Result<Selector, String> {
    // Read as the step runs, rendered.
    if marked(node) {
        return Ok(Selector::Text(pattern.to_string()));
    }
    let mut literal = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        let escaped = match c {
            '\\' => chars.next(),
            c if !super::write::REGEX_SPECIAL.contains(c) => {
                literal.push(c);
                continue;
            }
            _ => None,
        };
        match escaped {
            Some(next) if super::write::REGEX_SPECIAL.contains(next) => literal.push(next),
            // A metacharacter, or a class such as `\d`: a pattern.
            _ => {
                let whole = crate::whole_text_regex(pattern);
                // Maestro matches a text that is no valid regex as that very text (its
                // `toRegexSafe`); one Java reads but Rust does not (look-around,
                // back-references, too big) is refused.
                if let Some(e) = Matcher::beyond_ui(&whole) {
                    return Err(at(node, &format!("text {pattern:?} is {e}")));
                }
                return match Matcher::regex(&whole) {
                    Ok(_) => Ok(Selector::Pattern(pattern.to_string())),
                    Err(_) => Ok(Selector::Text(pattern.to_string())),
                };
            }
        }
    }
    Ok(Selector::Text(literal))
}

/// `"540, 1200"`: device pixels (percentages are refused).
pub(super) fn spot(node: &MarkedYamlOwned) -> Result<Selector, String> {
    let text = string(node, "point")?;
    // Maestro evaluates it as the step runs (a script's output, say): so does the replay.
    if marked(node) {
        super::template::sampled();
        return Ok(Selector::Point([0, 0]));
    }
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let percent = |p: &str| {
        p.strip_suffix('%')
            .and_then(|n| n.trim().parse::<u32>().ok())
            .filter(|n| *n <= 100)
    };
    match parts.as_slice() {
        [x, y] if x.ends_with('%') || y.ends_with('%') => match (percent(x), percent(y)) {
            (Some(x), Some(y)) => Ok(Selector::Percent([x, y])),
            _ => Err(at(node, "a point in percent is \"x%, y%\", each 0 to 100")),
        },
        [x, y] => match (x.parse(), y.parse()) {
            (Ok(x), Ok(y)) => Ok(Selector::Point([x, y])),
            _ => Err(at(
                node,
                "a point is \"x, y\" in device pixels, or \"x%, y%\" of the screen",
            )),
        },
        _ => Err(at(
            node,
            "a point is \"x, y\" in device pixels, or \"x%, y%\" of the screen",
        )),
    }
}

/// A Maestro selector map (its selector keys; a command's own, such as `optional`, are read by
/// the command), nested selectors read the same way, each value checked with its line.
fn element_selector(node: &MarkedYamlOwned) -> Result<ElementSelector, String> {
    let text =
        |name: &str| -> Result<Option<String>, String> { field(node, name).map(|v| pattern(v, name)).transpose() };
    let flag = |name: &str| -> Result<Option<bool>, String> {
        let Some(v) = field(node, name) else { return Ok(None) };
        flag_value(v, name, true).map(Some)
    };
    let pixels = |name: &str| -> Result<Option<i32>, String> {
        let Some(v) = field(node, name) else { return Ok(None) };
        typed(v, Some(0), || {
            match integer(v).ok().and_then(|n| i32::try_from(n).ok()) {
                Some(n) if n >= 0 => Ok(Some(n)),
                _ => Err(at(v, &format!("{name} is a whole number of pixels, 0 or more"))),
            }
        })
    };
    let index = match field(node, "index") {
        // Maestro reads it as a number (`2`, `"2"`, `2.0`), cut to a whole one.
        Some(v) => typed(v, Some(Index::At(0)), || {
            let given = string(v, "index")?;
            match given.trim().parse::<f64>() {
                Ok(n) if n.is_finite() && n >= 0.0 => Ok(Some(Index::At(n.trunc() as i64))),
                _ => Err(at(
                    v,
                    "index is the match's place, from 0 (by position: top, then left)",
                )),
            }
        })?,
        None => None,
    };
    let descendants = match field(node, "containsDescendants") {
        Some(list) => {
            let YamlDataOwned::Sequence(items) = &list.data else {
                return Err(at(list, "containsDescendants is a list of selectors"));
            };
            if items.is_empty() {
                return Err(at(list, "containsDescendants is a list of selectors"));
            }
            let name = key(node, "containsDescendants").unwrap_or(list);
            Some(
                items
                    .iter()
                    .map(|item| element(name, item))
                    .collect::<Result<Vec<_>, _>>()?,
            )
        }
        None => None,
    };
    let relation = |name: &str| -> Result<Option<Box<ElementSelector>>, String> {
        match (key(node, name), field(node, name)) {
            (Some(k), Some(v)) => element(k, v).map(|s| Some(Box::new(s))),
            _ => Ok(None),
        }
    };
    Ok(ElementSelector {
        text: text("text")?,
        id: text("id")?,
        index,
        enabled: flag("enabled")?,
        selected: flag("selected")?,
        checked: flag("checked")?,
        focused: flag("focused")?,
        width: pixels("width")?,
        height: pixels("height")?,
        tolerance: pixels("tolerance")?,
        below: relation("below")?,
        above: relation("above")?,
        left_of: relation("leftOf")?,
        right_of: relation("rightOf")?,
        child_of: relation("childOf")?,
        contains_child: relation("containsChild")?,
        contains_descendants: descendants,
    })
}

/// A selector inside another (`below: {text: "Row 3"}`, or `below: "Row 3"`, its text), under
/// the key `name` (whose line an error names: a flow mapping's own span has none).
pub(super) fn element(name: &MarkedYamlOwned, node: &MarkedYamlOwned) -> Result<ElementSelector, String> {
    if scalar(node).is_some() {
        return Ok(ElementSelector {
            text: Some(pattern(node, "text")?),
            ..ElementSelector::default()
        });
    }
    let mut keys = vec!["id", "text"];
    keys.extend(MAESTRO_KEYS);
    only_keys(node, &keys)?;
    if node.data.as_mapping().is_none_or(|m| m.is_empty()) {
        return Err(at(name, "a selector names an element: text, id, …"));
    }
    element_selector(node)
}

/// The first key of a mapping (its line is the mapping's), else the node.
fn first_key(node: &MarkedYamlOwned) -> &MarkedYamlOwned {
    node.data.as_mapping().and_then(|m| m.keys().next()).unwrap_or(node)
}

/// A selector's `text` or `id`: a regular expression as Maestro reads it, checked here so one
/// `ui` cannot read fails at once with its line (one that is no regex at all is its own text).
/// One with a `${…}` is read the same way as its step runs, rendered.
fn pattern(node: &MarkedYamlOwned, what: &str) -> Result<String, String> {
    let value = string(node, what)?;
    if marked(node) {
        return Ok(value);
    }
    match Matcher::beyond_ui(&value) {
        Some(e) => Err(at(node, &format!("{what} {value:?} is {e}"))),
        None => Ok(value),
    }
}

/// A Maestro selector as a flow's fields, one key a line at `indent`; a nested selector as a
/// flow mapping (JSON, which YAML reads).
pub(super) fn write_fields(selector: &ElementSelector, indent: &str) -> String {
    let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(selector) else {
        return String::new();
    };
    fields
        .iter()
        .map(|(k, v)| format!("{indent}{k}: {}\n", super::super::literal(v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::Step;

    #[test]
    fn maestro_s_whole_selector_is_read_with_each_value_checked_on_its_line() {
        // Maestro's whole selector, nested ones too; a value it cannot mean is refused with its line.
        let whole = "appId: a.b\n---\n- tapOn:\n    text: Delete\n    index: 1\n    below: Row 3\n    childOf:\n      id: list\n      enabled: true\n";
        let described: Vec<String> = super::super::parse(whole).unwrap().iter().map(Step::describe).collect();
        assert_eq!(
            described,
            ["tap text \"Delete\", below (text \"Row 3\"), childOf (id \"list\", enabled true), index 1"]
        );
        for (flow, error) in [
            (
                "- tapOn:\n    text: x\n    index: -1\n",
                "line 5: index is the match's place, from 0",
            ),
            (
                "- tapOn:\n    text: x\n    below: {}\n",
                "line 5: a selector names an element",
            ),
            (
                "- tapOn:\n    text: x\n    enabled: maybe\n",
                "line 5: enabled is true or false",
            ),
            (
                "- tapOn:\n    text: x\n    width: wide\n",
                "line 5: width is a whole number of pixels",
            ),
            (
                "- tapOn:\n    text: x\n    childOf:\n      point: 1,2\n",
                "line 6: `point` is not supported here",
            ),
            (
                "- tapOn:\n    index: 0\n    point: 150%,2%\n",
                "line 5: point \"150%,2%\": percentages of the element are 0 to 100",
            ),
            (
                "- assertVisible:\n    label: Read only\n",
                "line 4: this selector names no element",
            ),
            (
                "- tapOn:\n    containsDescendants: x\n",
                "line 4: containsDescendants is a list of selectors",
            ),
        ] {
            let refused = super::super::parse(&format!("appId: a.b\n---\n{flow}")).unwrap_err();
            assert!(refused.starts_with(error), "{flow}: {refused}");
        }
    }
}
