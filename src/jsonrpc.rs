//! The JSON-RPC errors both transports give for what rmcp cannot read: -32700 for what is not
//! JSON, -32600 for JSON that is not a message this server reads (with the request's own id where
//! it has one). rmcp drops such a line on stdio and answers HTTP with a plain-text 415.

use serde_json::{Value, json};

/// A JSON-RPC error object.
pub fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The error for a body or line the server could not read as a message (`why`: the reason).
pub fn unreadable(body: &[u8], why: &str) -> Value {
    match serde_json::from_slice::<Value>(body) {
        Err(e) => error(
            Value::Null,
            -32700,
            &format!("Parse error: not UTF-8 JSON ({e}); send one JSON-RPC message"),
        ),
        Ok(value) => invalid_request(&value, why),
    }
}

/// -32600 for JSON that is not a message this server reads, with its id when it has a usable one.
pub fn invalid_request(message: &Value, why: &str) -> Value {
    let id = message
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
        .unwrap_or_default();
    error(
        id,
        -32600,
        &format!(
            "Invalid Request: not a message this server reads ({}): a JSON-RPC 2.0 object with \"jsonrpc\": \"2.0\", a known method and its params",
            crate::android::text::echoed(why)
        ),
    )
}

/// Whether a message that rmcp could not read still gets no answer: a notification (a method, no
/// id) or a response (no method, a result or an error). JSON-RPC never answers either.
pub fn unanswered(message: &Value) -> bool {
    let Some(object) = message.as_object() else {
        return false;
    };
    let notification = object.get("method").is_some_and(Value::is_string) && !object.contains_key("id");
    let response = !object.contains_key("method") && (object.contains_key("result") || object.contains_key("error"));
    notification || response
}
