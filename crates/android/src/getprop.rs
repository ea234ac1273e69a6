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
        // Every CR at a line's end goes (a pty's `\r\n`, some devices' `\r\r\n`), so what
        // `format_getprop` writes reads back the same.
        let line = line.trim_end_matches('\r');
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

/// The eight properties a model needs to know which device it drives.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PropertySummary {
    pub model: Option<String>,
    pub manufacturer: Option<String>,
    pub sdk_version: Option<u32>,
    pub android_version: Option<String>,
    pub device: Option<String>,
    pub product: Option<String>,
    pub hardware: Option<String>,
    pub abi_list: Vec<String>,
}

/// Picks the summary out of a full property map. Each field falls back through the names
/// vendors and Android versions use (`ro.product.vendor.*` on Treble devices, `ro.product.cpu.abi`
/// before Lollipop's abilist).
pub fn summarize(props: &BTreeMap<String, String>) -> PropertySummary {
    let first = |keys: &[&str]| {
        keys.iter()
            .filter_map(|k| props.get(*k))
            .map(|v| v.trim())
            .find(|v| !v.is_empty())
            .map(str::to_string)
    };
    let abi = first(&[
        "ro.product.cpu.abilist",
        "ro.vendor.product.cpu.abilist",
        "ro.product.cpu.abi",
    ]);
    PropertySummary {
        model: first(&["ro.product.model", "ro.product.vendor.model", "ro.product.system.model"]),
        manufacturer: first(&[
            "ro.product.manufacturer",
            "ro.product.vendor.manufacturer",
            "ro.product.system.manufacturer",
        ]),
        sdk_version: first(&["ro.build.version.sdk"]).and_then(|v| v.parse().ok()),
        android_version: first(&["ro.build.version.release_or_codename", "ro.build.version.release"]),
        device: first(&["ro.product.device", "ro.product.vendor.device", "ro.build.product"]),
        product: first(&["ro.product.name", "ro.product.vendor.name", "ro.product.system.name"]),
        hardware: first(&["ro.hardware", "ro.boot.hardware", "ro.board.platform"]),
        abi_list: abi
            .map(|a| {
                a.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
    }
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

    /// Found by the fuzzer: an unclosed value whose line ends in several CRs lost one CR per
    /// parse, so a value written back did not read back the same.
    #[test]
    fn line_end_carriage_returns_all_go_so_a_value_reads_back_the_same() {
        let text = "[k]: [131072]\r\r\r\r\n[ro.product.64\n[b]: [2]\r\r\n";
        let props = parse_getprop(text);
        assert_eq!(
            props["k"], "131072",
            "the CRs end the line; the stray line after is not a property"
        );
        assert_eq!(props["b"], "2");
        assert_eq!(parse_getprop(&format_getprop(&props)), props);
    }
}
