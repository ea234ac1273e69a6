//! `getprop` output: lines of `[key]: [value]`, where a value may span several lines.

use std::collections::BTreeMap;

/// Parses the whole output of `getprop` into a sorted map.
///
/// A value runs from `[` after `]: ` to the `]` that ends a line; a line that does not start a
/// new `[key]: [` entry continues the previous value (e.g. `persist.sys.boot.reason.history`).
/// Lines that fit neither shape are ignored rather than failing the whole dump.
pub fn parse_getprop(text: &str) -> BTreeMap<String, String> {
    let mut props = BTreeMap::new();
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some((key, rest)) = split_entry(line) {
            if let Some((k, v)) = open.take() {
                props.insert(k, v);
            }
            match rest.strip_suffix(']') {
                Some(value) => {
                    props.insert(key.to_string(), value.to_string());
                }
                None => open = Some((key.to_string(), rest.to_string())),
            }
        } else if let Some((key, mut value)) = open.take() {
            value.push('\n');
            match line.strip_suffix(']') {
                Some(last) => {
                    value.push_str(last);
                    props.insert(key, value);
                }
                None => {
                    value.push_str(line);
                    open = Some((key, value));
                }
            }
        }
    }
    if let Some((k, v)) = open {
        props.insert(k, v);
    }
    props
}

/// Splits `[key]: [rest` into `(key, rest)`; `rest` still carries the closing `]` if any.
fn split_entry(line: &str) -> Option<(&str, &str)> {
    let inner = line.strip_prefix('[')?;
    let (key, rest) = inner.split_once("]: [")?;
    if key.is_empty() || key.contains(char::is_whitespace) {
        return None;
    }
    Some((key, rest))
}

/// Formats properties exactly as `getprop` prints them.
pub fn format_getprop(props: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    for (k, v) in props {
        out.push_str(&format!("[{k}]: [{v}]\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_line_value_is_joined_with_newlines() {
        let text = "[a]: [1]\n[h]: [reboot,1\nreboot,2\nreboot,3]\n[z]: []\n";
        let props = parse_getprop(text);
        assert_eq!(props["a"], "1");
        assert_eq!(props["h"], "reboot,1\nreboot,2\nreboot,3");
        assert_eq!(props["z"], "");
        assert_eq!(parse_getprop(&format_getprop(&props)), props);
    }
}
