//! Tool schemas sized for context: a model pays for every tool definition on every turn, so the
//! schemas schemars generates are made compact without saying anything untrue.
//! - `$ref`s are inlined and `$defs`, `$schema`, `title`, `format` and `default: null` dropped;
//! - `["string", "null"]` becomes `"string"`: optional fields are left out, never sent as null;
//! - output schemas name the key fields (what the budget always keeps) with their types, and say
//!   only `object` / `array` below that, since the data's shape is in the tool description and
//!   the answers themselves; a field that may be null says so.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::{Map, Value, json};

use super::budget::Budgeted;

pub fn input_schema<T: schemars::JsonSchema + std::any::Any>() -> Arc<JsonObject> {
    let schema = rmcp::handler::server::common::schema_for_input::<T>().unwrap_or_else(|e| panic!("input schema: {e}"));
    let defs = schema.get("$defs").cloned().unwrap_or(Value::Null);
    let mut out = (*schema).clone();
    compact(&mut out, &defs, Mode::Input, 0);
    Arc::new(out)
}

/// A tool's outputSchema: the key fields the budget always keeps (counts, totals, exit code,
/// the crash list, ids), each with its type, plus `cacheId` and the `budget` note; only key
/// fields may be required, since a budgeted response drops the rest. The operation-specific
/// rest is allowed (JSON Schema's default) and documented in README, not spelled out here: a
/// model pays for tools/list on every turn.
pub fn output_schema<T: Budgeted>() -> Arc<JsonObject> {
    let schema = rmcp::handler::server::common::schema_for_output::<T>();
    let defs = schema.get("$defs").cloned().unwrap_or(Value::Null);
    let mut out = (*schema).clone();
    compact(&mut out, &defs, Mode::Output, 0);
    if let Some(Value::Object(props)) = out.get_mut("properties") {
        props.retain(|name, _| T::KEY_FIELDS.contains(&name.as_str()));
        props.insert("cacheId".into(), json!({"type": "string"}));
        props.insert("budget".into(), json!({"type": "object"}));
    }
    if let Some(Value::Array(required)) = out.get_mut("required") {
        required.retain(|r| r.as_str().is_some_and(|r| T::KEY_FIELDS.contains(&r)));
    }
    Arc::new(out)
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Input,
    Output,
}

fn compact(node: &mut Map<String, Value>, defs: &Value, mode: Mode, depth: usize) {
    if let Some(Value::String(reference)) = node.remove("$ref")
        && let Some(Value::Object(target)) = reference.strip_prefix("#/$defs/").and_then(|name| defs.get(name))
    {
        for (k, v) in target {
            node.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    for key in ["$defs", "$schema", "title", "format"] {
        node.remove(key);
    }
    if node.get("default").is_some_and(Value::is_null) {
        node.remove("default");
    }
    if mode == Mode::Output || node.get("minimum") == Some(&json!(0)) {
        // An unsigned type's minimum of 0 says little; the tool checks ranges and says so.
        node.remove("minimum");
    }
    if mode == Mode::Output {
        node.remove("description");
    }
    // anyOf [X, null] → X
    if let Some(Value::Array(options)) = node.get("anyOf") {
        let non_null: Vec<Value> = options
            .iter()
            .filter(|o| o.get("type") != Some(&Value::String("null".into())))
            .cloned()
            .collect();
        if non_null.len() == 1
            && let Value::Object(only) = &non_null[0]
        {
            node.remove("anyOf");
            for (k, v) in only.clone() {
                node.entry(k).or_insert(v);
            }
            // An answer may carry it as null: its schema must say so.
            if mode == Mode::Output
                && let Some(Value::String(t)) = node.get("type").cloned()
            {
                node.insert("type".into(), json!([t, "null"]));
            }
            return compact(node, defs, mode, depth);
        }
    }
    if mode == Mode::Input
        && let Some(Value::Array(types)) = node.get("type")
    {
        let kept: Vec<Value> = types.iter().filter(|t| t.as_str() != Some("null")).cloned().collect();
        let replacement = if kept.len() == 1 {
            kept[0].clone()
        } else {
            Value::Array(kept)
        };
        node.insert("type".into(), replacement);
    }
    if mode == Mode::Output && depth >= 1 {
        // A top-level field of the output: the kind of value only.
        node.retain(|k, _| k == "type" || k == "enum");
        return;
    }
    if let Some(Value::Object(props)) = node.get_mut("properties") {
        for value in props.values_mut() {
            if let Value::Object(inner) = value {
                compact(inner, defs, mode, depth + 1);
            }
        }
    }
    if let Some(Value::Object(items)) = node.get_mut("items") {
        compact(items, defs, mode, depth + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Kind;
    use serde::{Deserialize, Serialize};

    #[derive(Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        op: Op,
        /// How many.
        limit: Option<u64>,
    }

    #[derive(Deserialize, schemars::JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Op {
        Get,
        List,
    }

    #[derive(Serialize, schemars::JsonSchema)]
    struct Out {
        operation: String,
        inner: Option<Inner>,
        dropped: String,
    }

    #[derive(Serialize, schemars::JsonSchema)]
    struct Inner {
        a: u32,
    }

    impl Budgeted for Out {
        const KEY_FIELDS: &'static [&'static str] = &["operation", "inner"];
        const BULK_FIELDS: &'static [&'static str] = &[];
        const KIND: Kind = Kind::Output;
    }

    #[test]
    fn input_inlines_enums_and_drops_null_types() {
        let s = Value::Object((*input_schema::<Args>()).clone());
        assert_eq!(
            s["properties"]["op"],
            json!({"type": "string", "enum": ["get", "list"]})
        );
        assert_eq!(
            s["properties"]["limit"],
            json!({"description": "How many.", "type": "integer"})
        );
        assert!(s.get("$defs").is_none());
    }

    #[test]
    fn output_names_the_key_fields_with_their_types_and_requires_only_key_fields() {
        let s = Value::Object((*output_schema::<Out>()).clone());
        assert_eq!(s["properties"]["operation"], json!({"type": "string"}));
        let inner = s["properties"]["inner"]["type"].to_string();
        assert!(inner.contains("object"), "{inner}");
        assert_eq!(s["properties"]["cacheId"], json!({"type": "string"}));
        assert_eq!(s["properties"]["budget"], json!({"type": "object"}));
        assert!(s["properties"].get("dropped").is_none(), "not a key field");
        assert_eq!(s["required"], json!(["operation", "inner"]));
    }
}
