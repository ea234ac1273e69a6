//! The selectors of a Maestro flow: what `tapOn` points at (an id with the text it shows),
//! a command's selector, Maestro's `text` as a pattern or a literal, and points.

use saphyr::MarkedYamlOwned;

use super::super::{Selector, Target};
use super::yaml::{at, field, only_keys, scalar, string};

/// What `tapOn` and `longPressOn` point at. `label` only names the step in Maestro's report, so
/// it is a caption here too. A selector with both `id` and a literal `text` (as `flow export`
/// writes a recorded element) means what Maestro says, the element with that id showing that
/// text: it is found by its id and acted on only when it shows the text (`verify`), else refused
/// naming both.
pub(super) fn target(node: &MarkedYamlOwned) -> Result<Target, String> {
    if let Some(label) = field(node, "label") {
        string(label, "label")?;
    }
    // Maestro taps again when the screen did not change (its default); a replay taps once, which
    // is what `retryTapIfNoChange: false` asks for.
    if let Some(retry) = field(node, "retryTapIfNoChange")
        && scalar(retry).as_deref() != Some("false")
    {
        return Err(at(
            retry,
            "retryTapIfNoChange: true is not replayed yet (a replay taps once): write false, or remove it",
        ));
    }
    let allowed = ["id", "text", "point", "label", "optional", "retryTapIfNoChange"];
    if let (Some(id), Some(text)) = (field(node, "id"), field(node, "text")) {
        only_keys(node, &allowed)?;
        if field(node, "point").is_some() {
            return Err(at(node, "a selector takes id and text, or point, not both"));
        }
        let id = string(id, "id")?;
        return match text_selector(text, &string(text, "text")?)? {
            Selector::Text(shown) => Ok(Target {
                label: Some(shown),
                ..Target::bare(Selector::ResourceId(id))
            }),
            _ => Err(at(
                text,
                "a text pattern beside an id is not replayed: give the id with a literal text (metacharacters escaped), or the pattern alone",
            )),
        };
    }
    Ok(Target::bare(selector_in(node, &allowed)?))
}

pub(super) fn selector(node: &MarkedYamlOwned) -> Result<Selector, String> {
    selector_in(node, &["id", "text", "point"])
}

/// A selector that is a command's whole argument (`assertVisible: {text, optional}`).
pub(super) fn command_selector(node: &MarkedYamlOwned) -> Result<Selector, String> {
    selector_in(node, &["id", "text", "point", "optional"])
}

fn selector_in(node: &MarkedYamlOwned, allowed: &[&str]) -> Result<Selector, String> {
    if let Some(text) = scalar(node) {
        return text_selector(node, &text);
    }
    only_keys(node, allowed)?;
    let keys = ["id", "text", "point"];
    let given: Vec<&str> = keys.into_iter().filter(|k| field(node, k).is_some()).collect();
    match given.as_slice() {
        ["id"] => Ok(Selector::ResourceId(string(field(node, "id").expect("given"), "id")?)),
        ["text"] => {
            let text = field(node, "text").expect("given");
            text_selector(text, &string(text, "text")?)
        }
        ["point"] => spot(field(node, "point").expect("given")),
        _ => Err(at(node, "a selector takes one of id, text, point")),
    }
}

/// Maestro's `text` is a regular expression over an element's whole text. One whose every
/// metacharacter is escaped (as `write` escapes a label) is that literal text, and replays as a
/// text target (waited for, healed); any other is a pattern, matched as Maestro matches it, and
/// checked here so a pattern `ui` cannot read fails at once with its line.
fn text_selector(node: &MarkedYamlOwned, pattern: &str) -> Result<Selector, String> {
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
                // Evaluated as the step runs, then read as any text is (`runtime.js`'s `pattern`).
                if pattern.contains("${") {
                    return Ok(Selector::Pattern(pattern.to_string()));
                }
                return match crate::android::ui_elements::Matcher::regex(&crate::flow::whole_text_regex(pattern)) {
                    Ok(_) => Ok(Selector::Pattern(pattern.to_string())),
                    // Maestro matches a text that is no valid regex as that very text (its
                    // `toRegexSafe`); one Java reads but Rust does not (look-around,
                    // back-references, too big) is refused.
                    Err(e) if e.contains("not supported") || e.contains("size limit") => {
                        Err(at(node, &format!("text {pattern:?} is {e}")))
                    }
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
