//! `cache`: the drill-down behind every `cacheId`. `get` pages a stored entry (keys, items or
//! lines) with a filter, and each page fits the budget by itself; `list`, `stats`, `clear`.

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use std::sync::Arc;
use std::time::SystemTime;

use rmcp::model::{CallToolResult, JsonObject};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::command::{self, Command, Deadline, Range};
use super::{State, error};
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

/// One valid cache call, built from `CacheArgs` by `CacheCommand::parse`.
#[derive(Debug)]
pub enum CacheCommand {
    Get(GetPage),
    List,
    Stats,
    Clear,
}

/// What `get` pages: an entry (or a script run's saved answer), from where, how many.
#[derive(Debug)]
pub struct GetPage {
    pub id: String,
    pub offset: usize,
    /// As given (the default depends on the entry's shape).
    pub limit: Option<usize>,
    /// Not empty.
    pub filter: Option<String>,
    pub prefix: Option<String>,
}

const LIMIT: Range = Range::new("limit", 1, MAX_LIMIT);

impl Command for CacheCommand {
    fn parse(args: JsonObject) -> Result<CacheCommand, String> {
        let args = command::parse("cache", args, |a: &CacheArgs| match a.operation {
            CacheOperation::Get => &["id", "offset", "limit", "filter", "prefix"],
            _ => &[],
        })?;
        Ok(match args.operation {
            CacheOperation::Get => {
                let Some(id) = args.id else {
                    return Err(
                        "cache get needs `id`: a cacheId from an earlier answer (cache list shows them)".into(),
                    );
                };
                let limit = match args.limit {
                    Some(n) => Some(LIMIT.check_count(Some(n), 0)?),
                    None => None,
                };
                CacheCommand::Get(GetPage {
                    id,
                    offset: command::OFFSET.check_count(args.offset, 0)?,
                    limit,
                    filter: args.filter.filter(|f| !f.is_empty()),
                    prefix: args.prefix.filter(|p| !p.is_empty()),
                })
            }
            CacheOperation::List => CacheCommand::List,
            CacheOperation::Stats => CacheCommand::Stats,
            CacheOperation::Clear => CacheCommand::Clear,
        })
    }

    fn deadline(&self) -> Deadline {
        Deadline::SERVER
    }

    /// The server's own entries: no device.
    fn acts(&self) -> bool {
        false
    }

    fn device(&self) -> Option<&str> {
        None
    }

    async fn apply(self, state: Arc<State>, _ctx: RequestContext<RoleServer>) -> CallToolResult {
        if let CacheCommand::Get(page) = &self {
            if page.id.contains('/') {
                return get(&state, page, Some(super::handles::run_result(&state, &page.id).await));
            }
            if let Err(why) = super::handles::find(&state, &page.id).await {
                return super::error(why);
            }
        }
        apply(&state, self)
    }
}

pub fn apply(state: &State, command: CacheCommand) -> CallToolResult {
    let output = match command {
        CacheCommand::Get(page) => return get(state, &page, None),
        CacheCommand::List => CacheOutput {
            operation: "list".into(),
            entries: Some(state.cache.entries().iter().map(|e| entry_info(e)).collect()),
            ..Default::default()
        },
        CacheCommand::Stats => CacheOutput {
            operation: "stats".into(),
            stats: Some(state.cache.stats()),
            ..Default::default()
        },
        CacheCommand::Clear => CacheOutput {
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

/// `run_text`: a run's result as the one door (`handles::run_result`) read it, for a `RUNID/…` id.
fn get(state: &State, args: &GetPage, run_text: Option<Result<String, String>>) -> CallToolResult {
    let id = args.id.as_str();
    let entry = if id.contains('/') {
        match run_result(state, id, run_text) {
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
    let mut query = Query {
        offset: args.offset,
        limit: args.limit.unwrap_or(default_limit as usize),
        filter: args.filter.clone(),
        prefix: args.prefix.clone(),
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
fn run_result(
    state: &State,
    reference: &str,
    text: Option<Result<String, String>>,
) -> Result<std::sync::Arc<Entry>, String> {
    let about = format!("script result {reference}");
    if let Some(entry) = state.cache.entries().into_iter().find(|e| e.about == about) {
        return Ok(entry);
    }
    let text = text.unwrap_or_else(|| state.runs.read_result(reference))?;
    let pretty = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or(text);
    Ok(state.cache.put(Kind::Output, about, Data::Text(pretty)))
}
