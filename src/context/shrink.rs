//! Cutting a JSON answer down to a number of chars and saying what was cut: the one mechanism
//! behind "no answer outgrows the budget", whatever a tool put in it (a key field that grew, a
//! long error, a list nobody capped).
//!
//! Each step cuts the biggest thing that can give: a long string loses its tail (ending in `…`),
//! a list loses its last items. Short strings (ids, names), numbers and the fields named in
//! `keep` are never cut, so the answer keeps its shape and its ids; what was cut is returned as
//! notes (`/crashes: 12 of 200 items`).

use serde_json::Value;

use super::budget::{chars, escaped_chars};

/// Strings at most this long are never cut: ids, names, serials, timestamps.
const SHORT: usize = 48;

/// One cut: where (a JSON pointer), and how much of how much was kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub path: String,
    pub kept: usize,
    pub total: usize,
    pub unit: &'static str,
}

impl Cut {
    pub fn describe(&self) -> String {
        format!("{}: {} of {} {}", self.path, self.kept, self.total, self.unit)
    }
}

/// The compact JSON length of `value` in chars, without building the string.
pub fn json_chars(value: &Value) -> usize {
    match value {
        Value::String(s) => escaped_chars(s) + 2,
        Value::Array(items) => 2 + items.iter().map(json_chars).sum::<usize>() + items.len().saturating_sub(1),
        Value::Object(map) => {
            2 + map
                .iter()
                .map(|(k, v)| escaped_chars(k) + 3 + json_chars(v))
                .sum::<usize>()
                + map.len().saturating_sub(1)
        }
        other => chars(&other.to_string()),
    }
}

/// Cuts `value` until its compact JSON takes at most `limit` chars (or nothing cuttable is
/// left). Top-level fields named in `keep` are left whole.
pub fn shrink(value: &mut Value, limit: usize, keep: &[&str]) -> Vec<Cut> {
    let mut cuts: Vec<Cut> = Vec::new();
    // Each step shortens something or empties a list, so this ends long before the bound.
    for _ in 0..100_000 {
        let size = json_chars(value);
        if size <= limit {
            break;
        }
        let Some(path) = biggest(value, keep) else { break };
        let Some(node) = value.pointer_mut(&path) else { break };
        let Some((kept, total, unit)) = cut_node(node, size - limit) else {
            break;
        };
        match cuts.iter_mut().find(|c| c.path == path) {
            Some(earlier) => earlier.kept = kept,
            None => cuts.push(Cut {
                path,
                kept,
                total,
                unit,
            }),
        }
    }
    // A cut inside a list item that a later cut dropped no longer says anything.
    cuts.retain(|c| value.pointer(&c.path).is_some());
    cuts
}

/// The notes for `cuts`, at most `max` of them, the rest counted.
pub fn describe(cuts: &[Cut], max: usize) -> Vec<String> {
    let mut notes: Vec<String> = cuts.iter().take(max).map(Cut::describe).collect();
    if cuts.len() > max {
        notes.push(format!("and {} more cuts", cuts.len() - max));
    }
    notes
}

/// Shortens one node by at least `excess` chars where it can. `None` when it cannot give.
fn cut_node(node: &mut Value, excess: usize) -> Option<(usize, usize, &'static str)> {
    match node {
        Value::String(s) => {
            let total = chars(s);
            if total <= SHORT {
                return None;
            }
            let keep = total.saturating_sub(excess + 1).max(SHORT / 2).min(total - 1);
            let mut cut: String = s.chars().take(keep).collect();
            cut.push('…');
            *s = cut;
            Some((keep, total, "chars"))
        }
        Value::Array(items) if !items.is_empty() => {
            let total = items.len();
            // Keep the first item while others can go: the head of a list is its most useful part.
            let floor = usize::from(total > 1);
            let mut freed = 0;
            while items.len() > floor && freed < excess {
                freed += items.pop().map_or(0, |item| json_chars(&item) + 1);
            }
            Some((items.len(), total, "items"))
        }
        _ => None,
    }
}

/// The pointer of the node to cut next: the biggest long string or list of two or more; failing
/// that, the biggest list of one.
fn biggest(value: &Value, keep: &[&str]) -> Option<String> {
    let mut best: Option<(usize, String)> = None;
    let mut single: Option<(usize, String)> = None;
    let mut path = String::new();
    walk(value, &mut path, keep, true, &mut best, &mut single);
    best.or(single).map(|(_, p)| p)
}

fn walk(
    value: &Value,
    path: &mut String,
    keep: &[&str],
    top: bool,
    best: &mut Option<(usize, String)>,
    single: &mut Option<(usize, String)>,
) {
    let offer = |slot: &mut Option<(usize, String)>, size: usize, path: &str| {
        if slot.as_ref().is_none_or(|(s, _)| size > *s) {
            *slot = Some((size, path.to_string()));
        }
    };
    match value {
        Value::String(s) if chars(s) > SHORT => offer(best, json_chars(value), path),
        Value::Array(items) => {
            match items.len() {
                0 => {}
                1 => offer(single, json_chars(value), path),
                _ => offer(best, json_chars(value), path),
            }
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                walk(item, path, keep, false, best, single);
                path.truncate(len);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                if top && keep.contains(&key.as_str()) {
                    continue;
                }
                let len = path.len();
                path.push('/');
                path.push_str(&key.replace('~', "~0").replace('/', "~1"));
                walk(item, path, keep, false, best, single);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn json_chars_is_the_compact_length() {
        let v = json!({"a": [1, "two", {"é/x": null, "q\"": true}], "b": "line\nbreak\u{1}", "c": 2.5});
        assert_eq!(json_chars(&v), chars(&v.to_string()));
    }

    #[test]
    fn a_long_list_loses_its_tail_and_says_so() {
        let items: Vec<Value> = (0..200).map(|i| json!({"what": format!("crash number {i}")})).collect();
        let mut v = json!({"operation": "read", "crashCount": 200, "crashes": items});
        let cuts = shrink(&mut v, 1000, &["operation"]);
        assert!(json_chars(&v) <= 1000);
        assert_eq!(v["crashCount"], 200);
        assert_eq!(v["crashes"][0]["what"], "crash number 0");
        let kept = v["crashes"].as_array().unwrap().len();
        assert_eq!(
            cuts,
            [Cut {
                path: "/crashes".into(),
                kept,
                total: 200,
                unit: "items"
            }]
        );
        assert_eq!(cuts[0].describe(), format!("/crashes: {kept} of 200 items"));
    }

    #[test]
    fn kept_fields_and_short_strings_are_never_cut() {
        let mut v = json!({"operation": "x".repeat(300), "id": "a".repeat(40), "log": "y".repeat(5000)});
        shrink(&mut v, 600, &["operation"]);
        assert_eq!(v["operation"].as_str().unwrap().len(), 300);
        assert_eq!(v["id"].as_str().unwrap().len(), 40);
        assert!(v["log"].as_str().unwrap().ends_with('…'));
        assert!(json_chars(&v) <= 600);
    }

    /// Any JSON value: nested objects and lists of long and short strings, numbers, odd keys.
    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            ".{0,300}".prop_map(Value::String),
            "[a-z\"\\\\\n/~é😀]{0,2000}".prop_map(Value::String),
        ];
        leaf.prop_recursive(5, 400, 30, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..30).prop_map(Value::Array),
                prop::collection::btree_map("[a-z/~é]{1,12}", inner, 0..12)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Whatever the value, the result fits unless only short scalars are left, keeps its
        /// shape (an object stays an object with the same keys) and names every cut.
        #[test]
        fn any_value_fits_or_only_short_scalars_remain(value in any_json(), limit in 200usize..5000) {
            let mut cut = value.clone();
            let cuts = shrink(&mut cut, limit, &[]);
            if json_chars(&cut) > limit {
                prop_assert!(biggest(&cut, &[]).is_none(), "stopped with something left to cut");
            }
            if let (Value::Object(a), Value::Object(b)) = (&value, &cut) {
                prop_assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
            }
            for c in &cuts {
                prop_assert!(c.kept < c.total, "{:?}", c);
                prop_assert!(cut.pointer(&c.path).is_some());
            }
            prop_assert_eq!(cuts.is_empty(), cut == value);
        }
    }
}
