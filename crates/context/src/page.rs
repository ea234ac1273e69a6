//! Pages of a cache entry: a window of keys, items or lines, after an optional filter. Pure.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::cache::Data;

#[derive(Debug, Clone, Default)]
pub struct Query {
    pub offset: usize,
    pub limit: usize,
    /// Case-insensitive substring: on key or value (maps), on the item's text (lists), on the line (text).
    pub filter: Option<String>,
    /// Maps only: keys that start with this, e.g. `ro.build.`.
    pub prefix: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Page {
    pub shape: &'static str,
    /// Keys, items or lines in the whole entry.
    pub total: usize,
    /// Those that pass the filter and prefix.
    pub matching: usize,
    pub offset: usize,
    pub count: usize,
    pub has_more: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// A map page is an object; a list page an array; a text page one string of its lines
    /// (filtered: each line led by its 1-based number and `:`, as `grep -n` prints them). One
    /// string costs a model barely more than the text itself.
    pub items: Value,
}

/// An error that says what to pass instead.
pub fn page(data: &Data, query: &Query) -> Result<Page, String> {
    if query.prefix.is_some() && !matches!(data, Data::Map(_)) {
        return Err(format!(
            "`prefix` works on map entries (properties); this entry is a {}. Use `filter` instead",
            data.shape()
        ));
    }
    let needle = query.filter.as_deref().map(str::to_lowercase);
    let passes = |text: &str| needle.as_deref().is_none_or(|n| text.to_lowercase().contains(n));

    // One pass: count what matches, and build values only for the window (a 5 MB text is
    // 700,000 lines; only the page's few become JSON).
    let mut matching = 0usize;
    let mut window: Vec<Value> = Vec::new();
    let mut take = |passed: bool, make: &mut dyn FnMut() -> Value| {
        if !passed {
            return;
        }
        if matching >= query.offset && window.len() < query.limit {
            window.push(make());
        }
        matching += 1;
    };
    let total = match data {
        Data::Map(map) => {
            for (k, v) in map {
                let passed = query.prefix.as_deref().is_none_or(|p| k.starts_with(p)) && (passes(k) || passes(v));
                take(passed, &mut || json!([k, v]));
            }
            map.len()
        }
        Data::List(items) => {
            for item in items {
                let passed = match item {
                    Value::String(s) => passes(s),
                    other => passes(&other.to_string()),
                };
                take(passed, &mut || item.clone());
            }
            items.len()
        }
        Data::Text(text) => {
            let numbered = needle.is_some();
            let mut lines = 0;
            for (i, line) in text.lines().enumerate() {
                take(passes(line), &mut || match numbered {
                    true => Value::String(format!("{}:{line}", i + 1)),
                    false => Value::String(line.to_string()),
                });
                lines += 1;
            }
            lines
        }
    };
    if query.offset > 0 && query.offset >= matching {
        return Err(format!(
            "offset {} is past the end: {matching} {} match. Use an offset below {matching}",
            query.offset,
            unit(data)
        ));
    }
    let count = window.len();
    let end = query.offset + count;
    let items = match data {
        Data::Map(_) => Value::Object(
            window
                .into_iter()
                .filter_map(|pair| match pair {
                    Value::Array(mut kv) if kv.len() == 2 => {
                        let v = kv.pop()?;
                        let k = kv.pop()?.as_str()?.to_string();
                        Some((k, v))
                    }
                    _ => None,
                })
                .collect::<Map<String, Value>>(),
        ),
        Data::Text(_) => {
            let lines: Vec<&str> = window.iter().filter_map(Value::as_str).collect();
            Value::String(lines.join("\n"))
        }
        Data::List(_) => Value::Array(window),
    };
    Ok(Page {
        shape: data.shape(),
        total,
        matching,
        offset: query.offset,
        count,
        has_more: end < matching,
        next_offset: (end < matching).then_some(end),
        items,
    })
}

pub fn unit(data: &Data) -> &'static str {
    match data {
        Data::Map(_) => "keys",
        Data::List(_) => "items",
        Data::Text(_) => "lines",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props() -> Data {
        Data::Map(
            [
                ("ro.build.id", "AP1A"),
                ("ro.build.type", "user"),
                ("ro.product.model", "Pixel 7"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        )
    }

    #[test]
    fn map_pages_by_prefix_and_substring() {
        let q = Query {
            limit: 10,
            prefix: Some("ro.build.".into()),
            ..Default::default()
        };
        let p = page(&props(), &q).unwrap();
        assert_eq!((p.total, p.matching, p.count, p.has_more), (3, 2, 2, false));
        assert_eq!(p.items["ro.build.type"], "user");
        let q = Query {
            limit: 10,
            filter: Some("PIXEL".into()),
            ..Default::default()
        };
        assert_eq!(
            page(&props(), &q).unwrap().items,
            json!({"ro.product.model": "Pixel 7"})
        );
    }

    #[test]
    fn text_pages_by_line_as_one_string_numbered_when_filtered_and_says_where_the_next_page_starts() {
        let data = Data::Text("a\nerror one\nb\nerror two\nc".into());
        let q = Query {
            limit: 1,
            filter: Some("error".into()),
            ..Default::default()
        };
        let p = page(&data, &q).unwrap();
        assert_eq!(p.items, json!("2:error one"));
        assert_eq!((p.matching, p.next_offset), (2, Some(1)));
        let last = page(&data, &Query { offset: 1, ..q.clone() }).unwrap();
        assert_eq!(last.items, json!("4:error two"));
        assert!(!last.has_more);
        let past = page(&data, &Query { offset: 2, ..q }).unwrap_err();
        assert!(past.contains("past the end"), "{past}");
    }

    #[test]
    fn prefix_on_a_list_is_refused() {
        let q = Query {
            limit: 5,
            prefix: Some("x".into()),
            ..Default::default()
        };
        assert!(
            page(&Data::List(vec![json!("a")]), &q)
                .unwrap_err()
                .contains("map entries")
        );
    }
}
