//! The stdio transport, with the JSON-RPC edges rmcp leaves open answered here: a line that is
//! not UTF-8, not JSON, or longer than `MAX_LINE_BYTES` gets -32700 with `id: null` and the
//! session goes on (rmcp drops a bad line silently, and a byte that is not UTF-8 ended it), a `tools/call` with missing or malformed params
//! gets -32602 (rmcp says -32601 "tools/call"), and a method of a capability the server does not
//! declare gets -32601 (rmcp answers `prompts/list` and `completion/complete` with empty lists),
//! and JSON that is no message rmcp reads gets -32600 with its id (rmcp drops it unanswered),
//! as over HTTP (`jsonrpc.rs`). Notifications and responses it cannot read stay unanswered.
//! Every other line goes to rmcp unchanged; its output and these answers share one writer, a
//! line at a time.

use serde_json::Value;

use crate::jsonrpc::error;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// rmcp's side of the pipes (read, write), and the task that ends once all output is written.
pub fn transport(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> ((DuplexStream, DuplexStream), JoinHandle<()>) {
    let (mut to_rmcp, rmcp_reads) = tokio::io::duplex(1 << 20);
    let (rmcp_writes, from_rmcp) = tokio::io::duplex(1 << 20);
    let (answers, mut answered) = mpsc::unbounded_channel::<String>();

    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut bytes = Vec::new();
        while let Ok(Some(whole)) = read_line(&mut input, &mut bytes).await {
            let line = match (whole, std::str::from_utf8(&bytes)) {
                (false, _) => {
                    let _ = answers.send(too_long().to_string());
                    continue;
                }
                (true, Err(e)) => {
                    let _ = answers.send(not_utf8(&bytes, &e).to_string());
                    continue;
                }
                (true, Ok(line)) => line,
            };
            match edge_answer(line) {
                Some(answer) => {
                    let _ = answers.send(answer.to_string());
                }
                None => {
                    let forwarded =
                        to_rmcp.write_all(line.as_bytes()).await.is_ok() && to_rmcp.write_all(b"\n").await.is_ok();
                    if !forwarded {
                        break;
                    }
                }
            }
        }
        // EOF on stdin reaches rmcp, which then ends the session.
    });

    let writer = tokio::spawn(async move {
        let mut output = output;
        let mut from_rmcp = BufReader::new(from_rmcp).lines();
        loop {
            // Our answers first: they were queued before any later line reached rmcp.
            let line = tokio::select! {
                biased;
                Some(answer) = answered.recv() => answer,
                line = from_rmcp.next_line() => match line {
                    Ok(Some(line)) => line,
                    _ => break, // rmcp ended the session
                },
            };
            let written = output.write_all(line.as_bytes()).await.is_ok()
                && output.write_all(b"\n").await.is_ok()
                && output.flush().await.is_ok();
            if !written {
                break;
            }
        }
    });
    ((rmcp_reads, rmcp_writes), writer)
}

/// Longest line read; a longer one is skipped to its end and answered -32700, so no client can
/// make the server hold an unbounded line.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// Reads one line (its `\n` and a `\r` before it dropped) into `line`. `Some(false)` when it was
/// longer than `MAX_LINE_BYTES` (its bytes past that are dropped), `None` at the end of input.
async fn read_line(input: &mut (impl AsyncBufRead + Unpin), line: &mut Vec<u8>) -> std::io::Result<Option<bool>> {
    line.clear();
    let mut whole = true;
    let mut any = false;
    loop {
        let chunk = input.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(any.then_some(whole));
        }
        any = true;
        let newline = chunk.iter().position(|&b| b == b'\n');
        let part = &chunk[..newline.unwrap_or(chunk.len())];
        if line.len() + part.len() <= MAX_LINE_BYTES {
            line.extend_from_slice(part);
        } else {
            whole = false;
        }
        let used = newline.map_or(chunk.len(), |end| end + 1);
        input.consume(used);
        if newline.is_some() {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(Some(whole));
        }
    }
}

fn too_long() -> Value {
    error(
        Value::Null,
        -32700,
        &format!(
            "parse error: a line over {} MiB was skipped; send smaller messages",
            MAX_LINE_BYTES >> 20
        ),
    )
}

fn not_utf8(bytes: &[u8], e: &std::str::Utf8Error) -> Value {
    let at = e.valid_up_to();
    error(
        Value::Null,
        -32700,
        &format!(
            "parse error: the line is not UTF-8 (byte 0x{:02X} at offset {at}); JSON-RPC messages are UTF-8 text",
            bytes.get(at).copied().unwrap_or(0)
        ),
    )
}

/// The answer this layer gives itself, or `None` to pass the line to rmcp.
fn edge_answer(line: &str) -> Option<Value> {
    if line.trim().is_empty() {
        return None;
    }
    let message: Value = match serde_json::from_str(line) {
        Ok(m) => m,
        Err(e) => return Some(error(Value::Null, -32700, &format!("parse error: {e}"))),
    };
    if let Some(answer) = request_edge(&message) {
        return Some(answer);
    }
    // Every request gets an answer: what rmcp cannot read it would drop without one.
    match serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(message.clone()) {
        Ok(_) => None,
        Err(_) if crate::jsonrpc::unanswered(&message) => None,
        Err(e) => Some(crate::jsonrpc::invalid_request(&message, &e.to_string())),
    }
}

/// The answers for requests rmcp would read but answer wrongly.
fn request_edge(message: &Value) -> Option<Value> {
    let id = message.get("id")?.clone();
    let method = message.get("method")?.as_str()?;
    match method {
        "tools/call" => {
            let params = message.get("params");
            let name_ok = params.and_then(|p| p.get("name")).is_some_and(Value::is_string);
            let arguments_ok = params
                .and_then(|p| p.get("arguments"))
                .is_none_or(|a| a.is_object() || a.is_null());
            (!(name_ok && arguments_ok)).then(|| {
                error(
                    id,
                    -32602,
                    "invalid params: tools/call takes {name: string, arguments?: object}",
                )
            })
        }
        m if m.starts_with("prompts/") || m == "completion/complete" || m == "logging/setLevel" => Some(error(
            id,
            -32601,
            &format!("method not found: {m}; this server declares tools and resources only"),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{Value, edge_answer, not_utf8, read_line};
    use serde_json::json;

    #[test]
    fn the_edges_get_their_json_rpc_codes_and_the_rest_passes() {
        let code = |line: &str| edge_answer(line).map(|a| a["error"]["code"].as_i64().unwrap());
        assert_eq!(code("{this is not json"), Some(-32700));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call"}"#), Some(-32602));
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}"#),
            Some(-32602)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"cache","arguments":[1]}}"#),
            Some(-32602)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":4,"method":"prompts/list"}"#),
            Some(-32601)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{}}"#),
            Some(-32601)
        );
        for passes in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"cache","arguments":{"operation":"list"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "",
        ] {
            assert_eq!(edge_answer(passes), None, "{passes}");
        }
        // JSON that is no request rmcp reads gets -32600 with its id, not silence.
        for (line, id) in [
            (r#"{"jsonrpc":"2.0","id":7,"method":5}"#, json!(7)),
            (
                r#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":7}"#,
                json!("a"),
            ),
            (r#"{"id":8}"#, json!(8)),
            (r#"[{"jsonrpc":"2.0","id":9,"method":"tools/list"}]"#, Value::Null),
            ("42", Value::Null),
            (r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#, Value::Null),
        ] {
            let answer = edge_answer(line).unwrap_or_else(|| panic!("no answer for {line}"));
            assert_eq!(answer["error"]["code"], -32600, "{line}");
            assert_eq!(answer["id"], id, "{line}");
        }
        // Notifications and responses it cannot read get none (JSON-RPC never answers them).
        for unanswered in [
            r#"{"jsonrpc":"2.0","method":"notifications/whatever","params":5}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"weird":true}}"#,
        ] {
            assert_eq!(
                edge_answer(unanswered).map(|a| a["error"].clone()),
                None,
                "{unanswered}"
            );
        }
        let parse = edge_answer("{oops").unwrap();
        assert_eq!(parse["id"], Value::Null);
    }

    #[tokio::test]
    async fn lines_are_read_as_bytes_bounded_and_with_crlf_trimmed() {
        let mut input: &[u8] = b"{\"a\":1}\r\n\xff\xfe\n\nlast";
        let mut line = Vec::new();
        let mut got = Vec::new();
        while let Some(whole) = read_line(&mut input, &mut line).await.unwrap() {
            got.push((whole, line.clone()));
        }
        assert_eq!(
            got,
            [
                (true, b"{\"a\":1}".to_vec()),
                (true, vec![0xff, 0xfe]),
                (true, vec![]),
                (true, b"last".to_vec())
            ]
        );
        let e = std::str::from_utf8(&got[1].1).unwrap_err();
        let answer = not_utf8(&got[1].1, &e);
        assert_eq!(answer["error"]["code"], -32700);
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("0xFF at offset 0")
        );
    }
}
