//! Cutting a JSON answer down to a number of chars and saying what was cut: the one mechanism
//! behind "no answer outgrows the budget", whatever a tool put in it (a key field that grew, a
//! long error, a list nobody capped, a property named with 5,000 chars, a map of thousands of
//! keys, nesting hundreds deep).
//!
//! Each step cuts the biggest thing that can give: a long string loses its tail (ending in `…`),
//! a list its last items, a long key its tail, an object its last entries. Short strings (ids,
//! names), numbers and the top-level fields named in `keep` are never cut, so the answer keeps
//! its shape and its ids; what was cut is returned as notes (`/crashes: 12 of 200 items`,
//! `/props: 9 of 3000 keys`).

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::budget::{chars, escaped_chars};

/// Strings and keys at most this long are never cut: ids, names, serials, timestamps.
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
    /// The note for this cut; a path is named by its head, since it may hold keys of any length.
    pub fn describe(&self) -> String {
        let path = android::text::cut(&self.path, SHORT);
        format!("{path}: {} of {} {}", self.kept, self.total, self.unit)
    }
}

/// The compact JSON length of `value` in chars, without building the string.
pub fn json_chars(value: &Value) -> usize {
    match value {
        Value::String(s) => escaped_chars(s) + 2,
        Value::Array(items) => 2 + items.iter().map(json_chars).sum::<usize>() + items.len().saturating_sub(1),
        Value::Object(map) => {
            2 + map.iter().map(|(k, v)| entry_chars(k, v)).sum::<usize>() + map.len().saturating_sub(1)
        }
        other => chars(&other.to_string()),
    }
}

/// What one `"key":value` takes, without the comma.
fn entry_chars(key: &str, value: &Value) -> usize {
    escaped_chars(key) + 3 + json_chars(value)
}

/// Cuts `value` until its compact JSON takes at most `limit` chars (or nothing cuttable is
/// left). Top-level fields named in `keep` are left whole.
pub fn shrink(value: &mut Value, limit: usize, keep: &[&str]) -> Vec<Cut> {
    let mut cuts: Vec<Cut> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    // Each round gathers what can give and cuts it, biggest first, until the value fits. A cut
    // pays the whole excess or takes its node to its floor, so rounds are few; a round that
    // leaves the value no smaller ends it (every cut makes it smaller, so this ends).
    let mut last = usize::MAX;
    loop {
        let size = json_chars(value);
        if size <= limit || size >= last {
            break;
        }
        last = size;
        let mut excess = size - limit;
        let mut found = Vec::new();
        gather(value, &mut String::new(), keep, &mut found);
        // Lists and objects of one are cut only when nothing bigger can give.
        let Some(tier) = found.iter().map(|c| c.tier).min() else {
            break;
        };
        found.retain(|c| c.tier == tier);
        found.sort_by_key(|c| std::cmp::Reverse(c.size));
        for candidate in found {
            // An earlier cut of this round may have taken the node (a dropped item, a renamed key).
            let Some(node) = value.pointer_mut(&candidate.path) else {
                continue;
            };
            let before = json_chars(node);
            let keep_here = if candidate.path.is_empty() { keep } else { &[] };
            let made = give(node, candidate.give, excess, keep_here);
            excess = excess.saturating_sub(before.saturating_sub(json_chars(node)));
            for (suffix, kept, total, unit) in made {
                let path = format!("{}{suffix}", candidate.path);
                match at.get(&path) {
                    // A second cut of one node: the first said how much there was.
                    Some(&i) => cuts[i].kept = kept,
                    None => {
                        at.insert(path.clone(), cuts.len());
                        cuts.push(Cut {
                            path,
                            kept,
                            total,
                            unit,
                        });
                    }
                }
            }
            if excess == 0 {
                break;
            }
        }
    }
    // A cut inside something a later cut dropped (or renamed) no longer says anything.
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

/// How a node can give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Give {
    /// A long string loses its tail.
    Text,
    /// A list loses its last items.
    Items,
    /// An object's long keys lose their tails.
    Keys,
    /// An object loses its last entries.
    Entries,
}

/// A node that can give: where, how, and how big it counts for "biggest first".
#[derive(Debug)]
struct Candidate {
    /// 0: long strings and keys, lists and objects of two or more; 1: lists and objects of one.
    tier: u8,
    size: usize,
    path: String,
    give: Give,
}

/// Every node of `value` that can give. Top-level fields in `keep` and what is inside them are
/// left out.
fn gather(value: &Value, path: &mut String, keep: &[&str], out: &mut Vec<Candidate>) {
    let mut offer = |tier: u8, size: usize, give: Give, path: &str| {
        out.push(Candidate {
            tier,
            size,
            path: path.to_string(),
            give,
        })
    };
    match value {
        Value::String(s) if chars(s) > SHORT => offer(0, json_chars(value), Give::Text, path),
        Value::Array(items) => {
            match items.len() {
                0 => {}
                1 => offer(1, json_chars(value), Give::Items, path),
                _ => offer(0, json_chars(value), Give::Items, path),
            }
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                gather(item, path, keep, out);
                path.truncate(len);
            }
        }
        Value::Object(map) => {
            let keep_here = if path.is_empty() { keep } else { &[] };
            let open: Vec<(&String, &Value)> = map.iter().filter(|(k, _)| !keep_here.contains(&k.as_str())).collect();
            let long_keys: usize = open
                .iter()
                .filter(|(k, _)| chars(k) > SHORT)
                .map(|(k, _)| escaped_chars(k))
                .sum();
            if long_keys > 0 {
                offer(0, long_keys, Give::Keys, path);
            }
            // An object counts as big as its small entries (numbers, short strings): its long
            // values are cut where they are first, and a map of thousands of small entries
            // loses its last ones. A key field (a count, an exit code) goes last.
            let small: usize = open
                .iter()
                .filter(|(_, v)| !can_give(v))
                .map(|(k, v)| entry_chars(k, v) + 1)
                .sum();
            match open.len() {
                0 => {}
                1 => offer(1, json_chars(value), Give::Entries, path),
                _ => offer(0, small, Give::Entries, path),
            }
            for (key, item) in open {
                let len = path.len();
                path.push('/');
                path.push_str(&key.replace('~', "~0").replace('/', "~1"));
                gather(item, path, keep, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// Whether a value can give by itself: a long string, a list or object with something in it.
fn can_give(value: &Value) -> bool {
    match value {
        Value::String(s) => chars(s) > SHORT,
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
        _ => false,
    }
}

/// Shortens one node by at least `excess` chars where it can, down to its floor; the cuts it
/// made, each with the pointer suffix of what it cut (empty: the node itself).
fn give(node: &mut Value, how: Give, excess: usize, keep: &[&str]) -> Vec<(String, usize, usize, &'static str)> {
    match (how, node) {
        (Give::Text, Value::String(s)) => {
            let total = chars(s);
            if total <= SHORT {
                return Vec::new();
            }
            let keep = total.saturating_sub(excess + 1).max(SHORT / 2).min(total - 1);
            *s = android::text::cut(s, keep);
            vec![(String::new(), keep, total, "chars")]
        }
        (Give::Items, Value::Array(items)) if !items.is_empty() => {
            let total = items.len();
            // Keep the first item while others can go: the head of a list is its most useful part.
            let floor = usize::from(total > 1);
            let mut freed = 0;
            while items.len() > floor && freed < excess {
                freed += items.pop().map_or(0, |item| json_chars(&item) + 1);
            }
            vec![(String::new(), items.len(), total, "items")]
        }
        (Give::Keys, Value::Object(map)) => cut_keys(map, keep),
        (Give::Entries, Value::Object(map)) => {
            let open: Vec<(String, usize)> = map
                .iter()
                .filter(|(k, _)| !keep.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), entry_chars(k, v) + 1))
                .collect();
            let total = open.len();
            if total == 0 {
                return Vec::new();
            }
            // Like a list: the last entries go, the first stays while others can go.
            let floor = usize::from(total > 1);
            let (mut kept, mut freed) = (total, 0);
            while kept > floor && freed < excess {
                kept -= 1;
                freed += open[kept].1;
            }
            let gone: HashSet<&str> = open[kept..].iter().map(|(k, _)| k.as_str()).collect();
            map.retain(|k, _| !gone.contains(k.as_str()));
            vec![(String::new(), kept, total, "keys")]
        }
        _ => Vec::new(),
    }
}

/// Cuts every long key of `map` (but those in `keep`) to its head, in place and in order; a head
/// another key already has gets a number.
fn cut_keys(map: &mut Map<String, Value>, keep: &[&str]) -> Vec<(String, usize, usize, &'static str)> {
    let long = |k: &str| chars(k) > SHORT && !keep.contains(&k);
    let mut taken: HashSet<String> = map.keys().filter(|k| !long(k)).cloned().collect();
    let mut made = Vec::new();
    for (key, value) in std::mem::take(map) {
        if !long(&key) {
            map.insert(key, value);
            continue;
        }
        let head = android::text::cut(&key, SHORT - 8);
        let mut name = head.clone();
        let mut n = 1;
        while taken.contains(&name) {
            n += 1;
            name = format!("{head}{n}");
        }
        taken.insert(name.clone());
        made.push((
            format!("/{}", name.replace('~', "~0").replace('/', "~1")),
            chars(&name),
            chars(&key),
            "chars of a key",
        ));
        map.insert(name, value);
    }
    made
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
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

    #[test]
    fn a_5000_char_key_is_cut_to_its_head_and_said() {
        let name = format!("vendor.{}", "n".repeat(5000));
        let mut v = json!({"operation": "get", "items": {name.clone(): "a value"}});
        let cuts = shrink(&mut v, 400, &["operation"]);
        assert!(json_chars(&v) <= 400, "{}", json_chars(&v));
        let keys: Vec<&String> = v["items"].as_object().unwrap().keys().collect();
        assert!(keys[0].starts_with("vendor.nnn") && keys[0].ends_with('…'), "{keys:?}");
        assert_eq!(v["items"][keys[0].as_str()], "a value", "the value stays");
        assert_eq!(cuts.len(), 1, "{cuts:?}");
        assert_eq!((cuts[0].total, cuts[0].unit), (5007, "chars of a key"));
        assert!(cuts[0].describe().chars().count() < 200, "{}", cuts[0].describe());
    }

    #[test]
    fn a_map_of_thousands_of_keys_loses_its_last_entries_and_says_how_many() {
        let map: Map<String, Value> = (0..5000).map(|i| (format!("key.{i:05}"), json!(i))).collect();
        let mut v = json!({"operation": "get", "total": 5000, "items": map});
        let cuts = shrink(&mut v, 1000, &["operation"]);
        assert!(json_chars(&v) <= 1000);
        assert_eq!(v["total"], 5000, "a small key field stays");
        let kept = v["items"].as_object().unwrap().len();
        assert!(kept > 10 && v["items"]["key.00000"] == 0, "the head stays: {kept}");
        assert_eq!(cuts[0].describe(), format!("/items: {kept} of 5000 keys"));
    }

    #[test]
    fn two_long_keys_with_one_head_stay_two_entries() {
        let (a, b) = (format!("{}a", "k".repeat(100)), format!("{}b", "k".repeat(100)));
        let mut v = json!({a: "x".repeat(100), b: 2});
        let cuts = shrink(&mut v, 250, &[]);
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 2, "{v}");
        assert_ne!(keys[0], keys[1]);
        assert_eq!(cuts.len(), 2, "{cuts:?}");
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

    /// What a hostile device or caller makes: keys of up to 6,000 chars, objects of thousands of
    /// keys, nesting over a hundred deep, lists of thousands of items; put inside an answer with an
    /// `operation`.
    pub(crate) fn hostile_json() -> impl Strategy<Value = Value> {
        let key = prop_oneof![
            3 => "[a-z./~é]{1,12}",
            1 => (49usize..6000, "[a-z/~\"é😀]").prop_map(|(n, c)| c.repeat(n)),
        ];
        let huge_keys = prop::collection::vec((key, any_json()), 1..6)
            .prop_map(|entries| Value::Object(entries.into_iter().collect()));
        let many_keys = (1usize..4000, 0usize..80).prop_map(|(n, len)| {
            Value::Object(
                (0..n)
                    .map(|i| (format!("ro.{}.{i}", "p".repeat(len % 40)), json!("v".repeat(len))))
                    .collect(),
            )
        });
        // Up to 120 levels: serde_json, and so rmcp's client, reads no deeper than 128.
        let deep = (1usize..120, "[a-z~/]{1,60}").prop_map(|(depth, key)| {
            (0..depth).fold(json!("leaf"), |inner, i| match i % 2 {
                0 => json!({ key.clone(): inner }),
                _ => json!([inner]),
            })
        });
        let huge_list = (1usize..6000).prop_map(|n| Value::Array((0..n).map(|i| json!(format!("item {i}"))).collect()));
        let body = prop_oneof![any_json(), huge_keys, many_keys, deep, huge_list];
        (prop::collection::vec(body, 1..4), any::<bool>()).prop_map(|(bodies, with_operation)| {
            let mut answer = Map::new();
            if with_operation {
                answer.insert("operation".into(), json!("get"));
            }
            for (i, body) in bodies.into_iter().enumerate() {
                answer.insert(format!("field{i}"), body);
            }
            Value::Object(answer)
        })
    }

    /// Whatever the value, the result fits unless only what `keep` protects is left, keeps its
    /// kind (an object stays an object) and its kept fields, and names every cut.
    #[test]
    fn any_value_fits_keeps_its_kept_fields_and_names_every_cut() {
        let mut runner = TestRunner::new(Config::with_cases(256));
        let cases = std::cell::Cell::new(0);
        let strategy = (prop_oneof![any_json(), hostile_json()], 2usize..5000, any::<bool>());
        runner
            .run(&strategy, |(value, limit, keep_operation)| {
                cases.set(cases.get() + 1);
                let keep: &[&str] = if keep_operation { &["operation"] } else { &[] };
                let mut cut = value.clone();
                let cuts = shrink(&mut cut, limit, keep);
                if json_chars(&cut) > limit {
                    let mut left = Vec::new();
                    gather(&cut, &mut String::new(), keep, &mut left);
                    prop_assert!(left.is_empty(), "stopped with something left to cut: {:?}", &left[..1]);
                    prop_assert!(
                        !keep.is_empty() || !cut.is_object(),
                        "an unprotected object always fits"
                    );
                }
                prop_assert_eq!(value.is_object(), cut.is_object());
                for key in keep {
                    prop_assert_eq!(value.get(key), cut.get(key));
                }
                for c in &cuts {
                    prop_assert!(c.kept < c.total, "{:?}", c);
                    prop_assert!(cut.pointer(&c.path).is_some(), "{:?}", c);
                }
                prop_assert_eq!(cuts.is_empty(), cut == value);
                Ok(())
            })
            .unwrap();
        eprintln!("shrink: {} cases", cases.get());
    }
}
