//! `cache`: the drill-down behind every `cacheId`. `get` pages a stored entry (keys, items or
//! lines) with a filter, and each page fits the budget by itself; `list`, `stats`, `clear`.

use std::time::SystemTime;

use rmcp::model::{CallToolResult, JsonObject};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{State, error, parse_args};
use crate::context::budget::{Budgeted, chars, cut_to_fit, resource_uri, respond};
use crate::context::cache::{Entry, Stats};
use crate::context::page::{Query, page, unit};
use crate::context::{Data, Kind};

pub const DEFAULT_LIMIT: u64 = 50;
pub const MAX_LIMIT: u64 = 1000;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CacheArgs {
    pub operation: CacheOperation,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub offset: Option<u64>,
    /// get: 1-1000, default 50.
    #[serde(default)]
    pub limit: Option<u64>,
    /// get: substring, any case.
    #[serde(default)]
    pub filter: Option<String>,
    /// get: key prefix, e.g. ro.build.
    #[serde(default)]
    pub prefix: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CacheOperation {
    Get,
    List,
    Stats,
    Clear,
}

#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CacheOutput {
    pub operation: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub about: Option<String>,
    /// map, list or text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matching: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// A map page is an object; a list page an array; a text page `[{n, text}]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<EntryInfo>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<Stats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cleared: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Budgeted for CacheOutput {
    const KEY_FIELDS: &'static [&'static str] = &[
        "operation",
        "id",
        "total",
        "matching",
        "offset",
        "count",
        "hasMore",
        "nextOffset",
        "stats",
        "cleared",
    ];
    const BULK_FIELDS: &'static [&'static str] = &["entries", "items"];
    const KIND: Kind = Kind::Output;
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntryInfo {
    pub id: String,
    pub about: String,
    pub shape: String,
    /// Keys, items or lines.
    pub size: usize,
    pub bytes: usize,
    pub expires_in_s: u64,
}

pub fn run(state: &State, args: JsonObject) -> CallToolResult {
    let args: CacheArgs = match parse_args("cache", args) {
        Ok(a) => a,
        Err(e) => return error(e),
    };
    let output = match args.operation {
        CacheOperation::Get => return get(state, &args),
        CacheOperation::List => CacheOutput {
            operation: "list".into(),
            entries: Some(state.cache.entries().iter().map(|e| entry_info(e)).collect()),
            ..Default::default()
        },
        CacheOperation::Stats => CacheOutput {
            operation: "stats".into(),
            stats: Some(state.cache.stats()),
            ..Default::default()
        },
        CacheOperation::Clear => CacheOutput {
            operation: "clear".into(),
            cleared: Some(state.cache.clear()),
            ..Default::default()
        },
    };
    respond(&output, state.budget, &state.cache, "cache listing")
}

fn entry_info(e: &Entry) -> EntryInfo {
    EntryInfo {
        id: e.id.clone(),
        about: e.about.clone(),
        shape: e.data.shape().into(),
        size: e.data.len(),
        bytes: e.bytes,
        expires_in_s: e
            .expires()
            .duration_since(SystemTime::now())
            .map(|d| d.as_secs())
            .unwrap_or(0),
    }
}

fn get(state: &State, args: &CacheArgs) -> CallToolResult {
    let Some(id) = args.id.as_deref() else {
        return error("cache get needs `id`: a cacheId from an earlier answer (cache list shows them)");
    };
    let entry = if id.contains('/') {
        match run_result(state, id) {
            Ok(e) => e,
            Err(e) => return error(e),
        }
    } else {
        match state.cache.get(id) {
            Ok(e) => e,
            Err(e) => return error(e.to_string()),
        }
    };
    // Text pages fill the budget unless asked for fewer lines: one string, so a page costs
    // little more than its text.
    let default_limit = match entry.data {
        Data::Text(_) => MAX_LIMIT,
        _ => DEFAULT_LIMIT,
    };
    let limit = args.limit.unwrap_or(default_limit);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return error(format!("limit must be between 1 and {MAX_LIMIT}; got {limit}"));
    }
    let offset = args.offset.unwrap_or(0);
    let Ok(offset) = usize::try_from(offset) else {
        return error(format!("offset {offset} is too large"));
    };
    let mut query = Query {
        offset,
        limit: limit as usize,
        filter: args.filter.clone().filter(|f| !f.is_empty()),
        prefix: args.prefix.clone().filter(|p| !p.is_empty()),
    };
    // Shrink the page until it fits the budget; say so when it had to.
    let requested = query.limit;
    loop {
        let p = match page(&entry.data, &query) {
            Ok(p) => p,
            Err(message) => return error(format!("{message} (entry {id})")),
        };
        // What the entry is, said on its first page only.
        let first = p.offset == 0;
        let mut output = CacheOutput {
            operation: "get".into(),
            id: Some(entry.id.clone()),
            about: first.then(|| entry.about.clone()),
            shape: first.then(|| p.shape.into()),
            total: Some(p.total),
            matching: Some(p.matching),
            offset: Some(p.offset),
            count: Some(p.count),
            has_more: Some(p.has_more),
            next_offset: p.next_offset,
            items: Some(p.items),
            hint: p
                .next_offset
                .map(|next| format!("next page: offset {next}, same id and filter")),
            ..Default::default()
        };
        if p.count < requested && p.count > 0 && p.has_more && args.limit.is_some() {
            output.hint = output
                .hint
                .map(|h| format!("page cut to {} {} to fit the budget; {h}", p.count, unit(&entry.data)));
        }
        let size = chars(&serde_json::to_string(&output).unwrap_or_default());
        if size <= state.budget {
            return respond(&output, state.budget, &state.cache, "cache page");
        }
        if p.count <= 1 {
            // One key, item or line longer than the budget: its head, and where it is whole.
            output.hint = Some(format!(
                "this {} is longer than the {}-char budget and was cut; resources/read {} returns the entry whole",
                unit(&entry.data).trim_end_matches('s'),
                state.budget,
                resource_uri(&entry.id)
            ));
            let mut value = serde_json::to_value(&output).unwrap_or_default();
            cut_to_fit(&mut value, state.budget);
            return CallToolResult::structured(value);
        }
        query.limit = (p.count * state.budget / size).clamp(1, p.count - 1);
    }
}

/// A script run's saved tool answer (`RUNID/results/NNN-ns-op.json`), as a cache entry of its
/// pretty-printed lines; the entry made by the first read serves the pages after it.
fn run_result(state: &State, reference: &str) -> Result<std::sync::Arc<Entry>, String> {
    let about = format!("script result {reference}");
    if let Some(entry) = state.cache.entries().into_iter().find(|e| e.about == about) {
        return Ok(entry);
    }
    let text = state.runs.read_result(reference)?;
    let pretty = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or(text);
    Ok(state.cache.put(Kind::Output, about, Data::Text(pretty)))
}
