//! The response budget, one mechanism for every tool. A tool hands over its typed output; if the
//! serialized JSON is within the budget it goes out whole. If not, the model gets the tool's
//! declared key fields, a preview of its bulk field, a `cacheId` that leads to the whole data (the
//! tool's own when it stored its full result, else a new entry holding the bulk field), a hint on
//! how to page on, and a resource link.

use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam, ProgressToken, Resource};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::cache::{Cache, Data, Entry, Kind};
use super::shrink::{describe, shrink};

pub const DEFAULT_BUDGET: usize = 4000;

/// What a tool's output tells the budget about itself.
pub trait Budgeted: Serialize + schemars::JsonSchema + 'static {
    /// Always kept, whatever is dropped (operation, success, exit code, counts, totals).
    const KEY_FIELDS: &'static [&'static str];
    /// The fields that may be long; the first present one is previewed and stored whole.
    const BULK_FIELDS: &'static [&'static str];
    /// How a stored copy is kept and refreshed.
    const KIND: Kind;
}

tokio::task_local! {
    /// Set while a script's host call runs a tool: the script gets the tool's full data, and
    /// only what the script prints meets the budget.
    static UNBUDGETED: ();
}

/// Runs `work` (a tool call made by a script) with every answer it makes left whole.
pub async fn unbudgeted<F: std::future::Future>(work: F) -> F::Output {
    UNBUDGETED.scope((), work).await
}

/// Whether the running task is a script's tool call (the `unbudgeted` scope).
pub fn in_script_call() -> bool {
    UNBUDGETED.try_with(|_| ()).is_ok()
}

/// Characters, as a model's context counts them, not bytes.
pub fn chars(text: &str) -> usize {
    text.chars().count()
}

/// Characters `text` takes inside a JSON string (escapes counted, quotes not), without building
/// the escaped copy: outputs can be tens of MB.
pub fn escaped_chars(text: &str) -> usize {
    text.chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if (c as u32) < 0x20 => 6,
            _ => 1,
        })
        .sum()
}

pub fn resource_uri(id: &str) -> String {
    format!("droidmcp://cache/{id}")
}

/// A link to an entry, with the size and MIME type `resources/read` will serve.
pub fn resource_link(entry: &Entry) -> ContentBlock {
    ContentBlock::resource_link(
        Resource::new(resource_uri(&entry.id), entry.id.clone())
            .with_description(entry.about.clone())
            .with_mime_type(entry.data.mime())
            .with_size(entry.served_bytes as u64),
    )
}

/// Sizes one tool response. `about` names what the output is, for the cache listing.
pub fn respond<T: Budgeted>(output: &T, limit: usize, cache: &Cache, about: &str) -> CallToolResult {
    let value = serde_json::to_value(output).unwrap_or_else(|e| json!({"error": e.to_string()}));
    respond_value::<T>(value, limit, cache, about)
}

pub fn respond_value<T: Budgeted>(mut value: Value, limit: usize, cache: &Cache, about: &str) -> CallToolResult {
    if in_script_call() {
        return CallToolResult::structured(value);
    }
    name_files(&mut value, cache);
    let text = value.to_string();
    if chars(&text) <= limit {
        return CallToolResult::structured(value);
    }
    let Value::Object(object) = value else {
        return CallToolResult::structured(value);
    };
    let full_chars = chars(&text);
    let bulk = T::BULK_FIELDS.iter().find(|f| object.contains_key(**f)).copied();
    // One rule: the id in an answer leads to the whole data. A tool that stored its full result
    // (the matching log lines, every package, every element) keeps its own id, and the preview
    // comes from its bulk field; only a tool that stored nothing gets an entry made here.
    let own = object
        .get("cacheId")
        .and_then(Value::as_str)
        .and_then(|id| cache.peek(id));
    let entry = match own {
        Some(entry) => entry,
        None => {
            let stored = match bulk.and_then(|f| object.get(f)) {
                Some(Value::Array(items)) => Data::List(items.clone()),
                Some(Value::String(s)) => Data::Text(s.clone()),
                Some(Value::Object(map)) if map.values().all(Value::is_string) => Data::Map(
                    map.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                        .collect(),
                ),
                _ => Data::Text(serde_json::to_string_pretty(&object).unwrap_or_default()),
            };
            cache.put(T::KIND, about, stored)
        }
    };
    let total = entry.data.len();

    let mut reduced = Map::new();
    for key in T::KEY_FIELDS {
        if let Some(v) = object.get(*key) {
            reduced.insert(key.to_string(), v.clone());
        }
    }
    reduced.insert("cacheId".into(), json!(entry.id));
    let unit = super::page::unit(&entry.data);
    let mut note = json!({
        "truncated": true,
        "fullChars": full_chars,
        "total": total,
        "shown": 0,
        "hint": format!(
            "over the {limit}-char budget: the whole output is behind cacheId; cache get {{id: \"{}\", offset, limit, filter}} pages its {total} {unit}",
            entry.id
        ),
    });
    // Key fields are kept, but never past the budget: a key list that grew (crashes, refs) is cut
    // here like anything else, and the note says where.
    let mut keys = Value::Object(reduced);
    let room_for_keys = limit.saturating_sub(chars(&note.to_string()) + CUT_NOTE_ROOM);
    let cuts = shrink(&mut keys, room_for_keys, KEEP);
    if !cuts.is_empty() {
        note["cut"] = json!(describe(&cuts, 4));
    }
    let Value::Object(mut reduced) = keys else {
        unreachable!("shrink keeps an object an object")
    };
    // Fill the preview with as much of the bulk field as still fits.
    if let Some(field) = bulk {
        let room =
            limit.saturating_sub(chars(&Value::Object(reduced.clone()).to_string()) + chars(&note.to_string()) + 40);
        let (preview, shown) = preview(&object[field], room);
        if shown > 0 {
            reduced.insert(field.to_string(), preview);
            note["shown"] = json!(shown);
        }
    }
    if let Some(file) = &entry.file {
        note["file"] = json!(file.display().to_string());
    }
    reduced.insert("budget".into(), note);
    let mut result = CallToolResult::structured(Value::Object(reduced));
    result.content.push(resource_link(&entry));
    result
}

/// Fields never cut: what the answer is, and where its whole data is.
const KEEP: &[&str] = &["operation", "cacheId", "budget"];
/// Room kept for the `cut` notes themselves.
const CUT_NOTE_ROOM: usize = 400;

/// The last word on every answer (`server.rs` calls it on each result): its text blocks take at
/// most `limit` chars. A structured answer over it is cut inside its value (long strings, long
/// lists; ids and short fields stay) and its text twin made again from the cut value, so the
/// twin is always valid JSON equal to `structuredContent`; `budget.cut` says what was cut. A
/// plain text over it keeps its head and says how long it was. Tools size their answers with
/// `respond`, so this only acts on what slipped past that (an error quoting a long argument, a
/// failed script's output).
pub fn enforce(mut result: CallToolResult, limit: usize) -> CallToolResult {
    let text_chars: usize = result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| chars(&t.text))
        .sum();
    if text_chars <= limit {
        return result;
    }
    if let Some(value) = result.structured_content.as_mut() {
        cut_to_fit(value, limit);
        let twin = value.to_string();
        let mut twinned = false;
        result.content.retain_mut(|c| match c.as_text() {
            Some(_) if !twinned => {
                twinned = true;
                *c = ContentBlock::text(twin.clone());
                true
            }
            Some(_) => false,
            None => true,
        });
        return result;
    }
    let mut room = limit;
    for block in &mut result.content {
        let Some(text) = block.as_text() else { continue };
        let fitted = fit_text(&text.text, room);
        room = room.saturating_sub(chars(&fitted));
        if fitted != text.text {
            *block = ContentBlock::text(fitted);
        }
    }
    result
}

/// Cuts a structured answer to `limit` chars of compact JSON (`context/shrink.rs`: long strings,
/// keys and lists, then entries; `operation`, `cacheId` and the `budget` note stay while they
/// can) and says in `budget.cut` what was cut. `enforce` and `cache get`'s page of one item
/// longer than the budget use it.
pub fn cut_to_fit(value: &mut Value, limit: usize) {
    let cuts = shrink(value, limit.saturating_sub(CUT_NOTE_ROOM), KEEP);
    if let Value::Object(object) = value {
        let note = object.entry("budget").or_insert_with(|| json!({}));
        if let Value::Object(note) = note {
            note.insert("truncated".into(), json!(true));
            note.insert("cut".into(), json!(describe(&cuts, 4)));
        }
    }
    // The notes took their room: if anything still does not fit, it goes too.
    shrink(value, limit, &[]);
}

/// `text` within `room` chars, counted as a JSON string holds them (escapes included, so the
/// text fits whether a client counts it raw or on the wire): whole, or its head and how long it
/// was. Plain-text answers, progress messages and resource errors are cut here.
pub fn fit_text(text: &str, room: usize) -> String {
    if escaped_chars(text) <= room {
        return text.to_string();
    }
    let tail = format!("… [cut: {} chars, the first shown]", chars(text));
    let tail = if escaped_chars(&tail) <= room {
        tail
    } else {
        String::new()
    };
    let mut used = escaped_chars(&tail);
    let head: String = text
        .chars()
        .take_while(|c| {
            used += escaped_chars(c.encode_utf8(&mut [0; 4]));
            used <= room
        })
        .collect();
    format!("{head}{tail}")
}

/// A progress notification whose message, however long what it quotes (a query, a device's
/// error, a script's operation), keeps the notification within `limit` chars.
pub fn progress(
    token: ProgressToken,
    done: f64,
    total: Option<f64>,
    message: &str,
    limit: usize,
) -> ProgressNotificationParam {
    // The token (a number or a client's string) and the numbers around the message.
    let around = 100 + serde_json::to_string(&token).map_or(0, |t| chars(&t));
    let note =
        ProgressNotificationParam::new(token, done).with_message(fit_text(message, limit.saturating_sub(around)));
    match total {
        Some(total) => note.with_total(total),
        None => note,
    }
}

/// One page of `items` for a list request (`resources/list`): from the offset `cursor` names, as
/// many items as fit `limit` chars of JSON with `room` taken by the rest of the answer, and the
/// cursor of the next page. A page holds at least one item; a bad cursor is told what to do.
pub fn page_of<T: Serialize + Clone>(
    items: &[T],
    cursor: Option<&str>,
    limit: usize,
    room: usize,
) -> Result<(Vec<T>, Option<String>), String> {
    let start = match cursor {
        None => 0,
        Some(c) => match c.parse::<usize>() {
            Ok(n) if n < items.len() => n,
            _ => {
                return Err(format!(
                    "cursor {:?} is not one this list gave (the list has {} items now); list again without a cursor",
                    android::text::echoed(c),
                    items.len()
                ));
            }
        },
    };
    let mut used = room;
    let mut end = start;
    for item in &items[start..] {
        let size = serde_json::to_string(item).map_or(0, |t| chars(&t)) + 1;
        if end > start && used + size > limit {
            break;
        }
        used += size;
        end += 1;
    }
    let next = (end < items.len()).then(|| end.to_string());
    Ok((items[start..end].to_vec(), next))
}

/// With `--workspace`, each `…cacheId` field whose entry was written to a file gets a `…file`
/// sibling naming it (`cacheId` → `file`, `stdoutCacheId` → `stdoutFile`), and one that was not
/// written gets a `…fileNote` saying why.
fn name_files(value: &mut Value, cache: &Cache) {
    let Value::Object(object) = value else { return };
    let files: Vec<(String, String)> = object
        .iter()
        .filter_map(|(key, id)| {
            let stem = key.strip_suffix("cacheId").or_else(|| key.strip_suffix("CacheId"))?;
            let entry = cache.peek(id.as_str()?)?;
            let name = if stem.is_empty() {
                "file".to_string()
            } else {
                format!("{stem}File")
            };
            match (&entry.file, &entry.file_note) {
                (Some(file), _) => Some((name, file.display().to_string())),
                (None, Some(note)) => Some((format!("{name}Note"), note.clone())),
                (None, None) => None,
            }
        })
        .collect();
    for (name, file) in files {
        object.insert(name, Value::String(file));
    }
}

/// The head of a long value that fits in `room` chars, and how many items (or lines) it holds.
fn preview(value: &Value, room: usize) -> (Value, usize) {
    match value {
        Value::Array(items) => {
            let mut used = 2;
            let mut kept = Vec::new();
            for item in items {
                let size = chars(&item.to_string()) + 1;
                if used + size > room {
                    break;
                }
                used += size;
                kept.push(item.clone());
            }
            let n = kept.len();
            (Value::Array(kept), n)
        }
        Value::String(text) => {
            let mut used = 0;
            let mut lines = 0;
            let mut end = 0;
            for line in text.split_inclusive('\n') {
                let size = chars(&serde_json::to_string(line).unwrap_or_default()) - 2;
                if used + size > room {
                    break;
                }
                used += size;
                end += line.len();
                lines += 1;
            }
            (Value::String(text[..end].to_string()), lines)
        }
        Value::Object(map) => {
            let mut used = 2;
            let mut kept = Map::new();
            for (k, v) in map {
                let size = chars(k) + chars(&v.to_string()) + 4;
                if used + size > room {
                    break;
                }
                used += size;
                kept.insert(k.clone(), v.clone());
            }
            let n = kept.len();
            (Value::Object(kept), n)
        }
        _ => (Value::Null, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Limits;

    #[derive(Serialize, schemars::JsonSchema)]
    struct Listing {
        operation: String,
        total: usize,
        extra: String,
        lines: Vec<String>,
    }

    impl Budgeted for Listing {
        const KEY_FIELDS: &'static [&'static str] = &["operation", "total"];
        const BULK_FIELDS: &'static [&'static str] = &["lines"];
        const KIND: Kind = Kind::Output;
    }

    #[test]
    fn escaped_chars_match_serde_json() {
        for text in ["plain", "a \"quoted\" \\ line\n", "tab\tbell\u{7}é€😀\r\n"] {
            assert_eq!(
                escaped_chars(text) + 2,
                chars(&serde_json::to_string(text).unwrap()),
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_small_output_goes_out_whole_and_a_big_one_keeps_key_fields_preview_and_id() {
        let cache = Cache::new(Limits::default());
        let small = Listing {
            operation: "read".into(),
            total: 2,
            extra: "x".into(),
            lines: vec!["a".into(), "b".into()],
        };
        let r = respond(&small, 4000, &cache, "small");
        assert_eq!(r.structured_content.unwrap()["lines"], json!(["a", "b"]));
        assert_eq!(cache.stats().entries, 0);

        let lines: Vec<String> = (0..2000).map(|i| format!("line {i} of a long output")).collect();
        let big = Listing {
            operation: "read".into(),
            total: 2000,
            extra: "dropped".into(),
            lines: lines.clone(),
        };
        let r = respond(&big, 4000, &cache, "big");
        let v = r.structured_content.clone().unwrap();
        assert!(chars(&v.to_string()) <= 4000, "{}", chars(&v.to_string()));
        assert_eq!(
            (v["operation"].as_str(), v["total"].as_u64()),
            (Some("read"), Some(2000))
        );
        assert!(v.get("extra").is_none());
        let shown = v["budget"]["shown"].as_u64().unwrap() as usize;
        assert!(shown > 50, "the preview uses the room it has: {shown}");
        assert_eq!(v["lines"].as_array().unwrap().len(), shown);
        let entry = cache.get(v["cacheId"].as_str().unwrap()).unwrap();
        assert_eq!(entry.data, Data::List(lines.into_iter().map(Value::String).collect()));
        assert!(r.content.iter().any(|c| c.as_resource_link().is_some()));
    }

    #[test]
    fn fit_text_keeps_a_text_within_its_room_escapes_counted_and_says_how_long_it_was() {
        assert_eq!(fit_text("short", 10), "short");
        let quotes = "\"".repeat(5000);
        let cut = fit_text(&quotes, 300);
        assert!(escaped_chars(&cut) <= 300, "{}", escaped_chars(&cut));
        assert!(cut.ends_with("[cut: 5000 chars, the first shown]"), "{cut}");
        assert!(escaped_chars(&fit_text(&quotes, 10)) <= 10);
    }

    #[test]
    fn pages_of_a_list_fit_their_limit_cover_every_item_and_a_bad_cursor_is_refused() {
        let items: Vec<String> = (0..100).map(|i| format!("{i:03} {}", "x".repeat(46))).collect();
        let (mut cursor, mut seen) = (None, Vec::new());
        loop {
            let (page, next) = page_of(&items, cursor.as_deref(), 1000, 100).unwrap();
            assert!(chars(&serde_json::to_string(&page).unwrap()) + 100 <= 1000);
            seen.extend(page);
            match next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!(seen, items);
        for bad in ["x", "100", "-1"] {
            let message = page_of(&items, Some(bad), 1000, 100).unwrap_err();
            assert!(message.contains("list again without a cursor"), "{message}");
        }
        assert_eq!(page_of::<String>(&[], None, 1000, 100).unwrap(), (vec![], None));
    }

    /// `enforce` over generated answers (keys of thousands of chars, thousands of keys, nesting
    /// over a hundred deep, lists of thousands, with an image or without) and over plain texts: the
    /// text a model reads and the structured value are within the limit, the twin equals the
    /// value, an image stays, and a cut answer says it was cut.
    #[test]
    fn enforce_keeps_any_generated_answer_within_the_budget() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let mut runner = TestRunner::new(Config::with_cases(256));
        let cases = std::cell::Cell::new(0);
        let strategy = (crate::shrink::tests::hostile_json(), 100usize..6000, any::<bool>());
        runner
            .run(&strategy, |(value, limit, with_image)| {
                cases.set(cases.get() + 1);
                let mut result = CallToolResult::structured(value.clone());
                if with_image {
                    result.content.push(ContentBlock::image("AAAA", "image/jpeg"));
                }
                let out = enforce(result, limit);
                let texts: Vec<&str> = out
                    .content
                    .iter()
                    .filter_map(|c| c.as_text())
                    .map(|t| t.text.as_str())
                    .collect();
                let size: usize = texts.iter().map(|t| chars(t)).sum();
                prop_assert!(size <= limit, "{} chars of text over {}", size, limit);
                let structured = out.structured_content.clone().expect("structured");
                prop_assert!(chars(&structured.to_string()) <= limit);
                prop_assert_eq!(&serde_json::from_str::<Value>(texts[0]).unwrap(), &structured);
                prop_assert_eq!(out.content.iter().any(|c| c.as_image().is_some()), with_image);
                let over = chars(&value.to_string()) > limit;
                if over && limit >= 1500 {
                    prop_assert_eq!(&structured["budget"]["truncated"], &json!(true));
                    prop_assert!(structured["budget"]["cut"].as_array().is_some_and(|c| !c.is_empty()));
                }
                if !over {
                    prop_assert_eq!(&structured, &value, "an answer within the budget goes out whole");
                }
                let plain = enforce(
                    CallToolResult::error(vec![ContentBlock::text(value.to_string())]),
                    limit,
                );
                let size: usize = plain
                    .content
                    .iter()
                    .filter_map(|c| c.as_text())
                    .map(|t| chars(&t.text))
                    .sum();
                prop_assert!(size <= limit, "a plain text of {} chars over {}", size, limit);
                Ok(())
            })
            .unwrap();
        eprintln!("enforce: {} cases", cases.get());
    }
}
