//! The tools' own schemas, walked: every tool × operation that `tools/list` declares, and for
//! each a call the server takes, found by asking (the operation alone, then with a value for
//! each field its errors name). The budget suite calls every operation on a hostile device with
//! it; the bad-input suite mutates each field from it.

use serde_json::{Map, Value, json};

use super::{call_with_progress, err};

/// One operation of one tool, with its tool's input-schema properties.
#[derive(Clone, Debug)]
pub struct Operation {
    pub tool: String,
    pub op: String,
    pub properties: Map<String, Value>,
}

/// Every tool × operation in `tools/list` (the `operation` field's enum).
pub async fn operations<H: rmcp::ClientHandler>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, H>,
) -> Vec<Operation> {
    let tools = client.list_all_tools().await.expect("tools/list");
    let mut all = Vec::new();
    for tool in &tools {
        let name = tool.name.to_string();
        let schema = Value::Object((*tool.input_schema).clone());
        let properties = schema["properties"].as_object().expect("properties").clone();
        let ops = properties["operation"]["enum"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: operation has no enum"));
        for op in ops {
            all.push(Operation {
                tool: name.clone(),
                op: op.as_str().unwrap().to_string(),
                properties: properties.clone(),
            });
        }
    }
    all
}

/// What the calls have seen so far (ids to `cache get`, refs to tap), and the values the
/// device at hand answers to (a package it has, a text on its screen, a script to run).
pub struct Seen {
    pub ids: Vec<String>,
    pub refs: Vec<String>,
    pub package: String,
    pub text: String,
    pub code: String,
}

/// A value for `field` of `tool`, from its schema and what the device has shown. An enum gives
/// its first value; otherwise the field's name, then its type, decides.
pub fn placeholder(tool: &str, field: &str, schema: &Value, seen: &Seen) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let by_name = match (tool, field) {
        (_, "package") => Some(json!(seen.package)),
        (_, "text") => Some(json!(seen.text)),
        (_, "ref") => Some(json!(seen.refs.last().cloned().unwrap_or("e1".into()))),
        (_, "id") => Some(json!(seen.ids.last().cloned().unwrap_or("out-none".into()))),
        ("adb-device", "command") => Some(json!("power capacity 15")),
        (_, "command") => Some(json!("getprop")),
        (_, "code") => Some(json!(seen.code)),
        (_, "name") => Some(json!("HOME")),
        (_, "path") => Some(json!("/nonexistent/hostile.apk")),
        _ => None,
    };
    if let Some(value) = by_name {
        return value;
    }
    match schema["type"].as_str() {
        Some("integer" | "number") => json!(schema["minimum"].as_i64().unwrap_or(1).max(1)),
        Some("boolean") => json!(true),
        Some("array") => json!([100, 200]),
        Some("object") => json!({}),
        _ => json!("x"),
    }
}

/// A call of `op` the server takes, found by asking: the operation alone, then, while it
/// answers with an error naming a field of its schema it was not given, again with a value for
/// that field (at most four rounds). Returns the arguments and every call made on the way.
pub async fn complete<H: rmcp::ClientHandler>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, H>,
    op: &Operation,
    seen: &Seen,
) -> (Value, Vec<(Value, rmcp::model::CallToolResult)>) {
    let mut args = json!({"operation": op.op});
    let mut calls = Vec::new();
    for _ in 0..5 {
        let result = call_with_progress(client, &op.tool, args.clone()).await;
        calls.push((args.clone(), result.clone()));
        if result.is_error != Some(true) {
            break;
        }
        let message = err(&result);
        let named = message
            .split(|c: char| !c.is_ascii_alphanumeric())
            .find(|word| *word != "operation" && op.properties.contains_key(*word) && args.get(*word).is_none());
        let Some(field) = named else { break };
        args[field] = placeholder(&op.tool, field, &op.properties[field], seen);
    }
    (args, calls)
}

/// Every `ref` string anywhere in an answer.
pub fn refs_in(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                match v {
                    Value::String(r) if k == "ref" => out.push(r.clone()),
                    _ => refs_in(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| refs_in(v, out)),
        _ => {}
    }
}

/// Every `…cacheId` / `…CacheId` string anywhere in an answer.
pub fn ids_in(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                match v {
                    Value::String(id) if k.ends_with("cacheId") || k.ends_with("CacheId") => out.push(id.clone()),
                    _ => ids_in(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| ids_in(v, out)),
        _ => {}
    }
}
