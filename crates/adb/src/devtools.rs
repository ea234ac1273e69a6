//! Chrome DevTools Protocol over a device socket (`Adb::local_abstract`): the HTTP `/json/list`
//! that names the pages, and a page's WebSocket (tokio-tungstenite over the same kind of stream),
//! one request at a time. Events that arrive meanwhile are kept for the caller (console errors,
//! failed requests).
//!
//! Our scripts never run in the page's own JavaScript world: a page can replace whatever its
//! scripts see (`getBoundingClientRect`, `querySelector`, `innerText`, …) and make a reading list
//! Delete account as Cancel. `Session::evaluate`, the one way to run one, runs it in an isolated
//! world of the main frame (`Page.createIsolatedWorld`): the same DOM, the browser's own
//! built-ins. A same-origin frame's document, reached from there, is in that world too.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

use super::{AdbError, Pipe};

/// The most a `/json/list` answer or one CDP message may be (a 2,000-node accessibility tree is
/// a few MiB).
pub const MAX_MESSAGE: usize = 64 * 1024 * 1024;
/// Events kept between two reads of them; older ones are counted, not kept.
const MAX_EVENTS: usize = 2_000;
/// Our isolated world's name: Chromium gives a frame one world per name, so each session finds
/// the same one again.
const WORLD: &str = "droidmcp";

/// One debuggable target, as `/json/list` lists it.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub url: String,
    /// Absent while another client (a DevTools window) holds the page.
    #[serde(default)]
    pub web_socket_debugger_url: Option<String>,
    /// WebViews describe themselves: `{"attached":true,"visible":true,"screenX":…,"width":…}`.
    #[serde(default)]
    pub description: String,
}

fn failed(what: &str, detail: impl std::fmt::Display) -> AdbError {
    AdbError::DevTools(format!(
        "DevTools {what} failed: {detail}. The page may have closed or the app stopped; ui dump lists what is reachable now"
    ))
}

/// `GET path` over `socket`, one request, the body as text (the answer must say its length, as
/// Chromium's DevTools server does, or close the connection).
pub async fn http_get(mut socket: Pipe, path: &str) -> Result<String, AdbError> {
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    socket
        .write_all(request.as_bytes())
        .await
        .map_err(|e| failed("GET", e))?;
    let mut got = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = socket.read(&mut buf).await.map_err(|e| failed("GET", e))?;
        got.extend_from_slice(&buf[..n]);
        if got.len() > MAX_MESSAGE {
            return Err(failed("GET", format!("its answer is over {MAX_MESSAGE} bytes")));
        }
        let head_end = got.windows(4).position(|w| w == b"\r\n\r\n");
        if let Some(end) = head_end {
            let head = String::from_utf8_lossy(&got[..end]).to_string();
            let status = head.lines().next().unwrap_or_default().to_string();
            if status.split_whitespace().nth(1) != Some("200") {
                return Err(failed("GET", format!("{path} answered `{status}`")));
            }
            let length = head.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse::<usize>().ok())?
            });
            let body = &got[end + 4..];
            if length.is_some_and(|len| body.len() >= len) || (n == 0 && length.is_none()) {
                let body = &body[..length.unwrap_or(body.len()).min(body.len())];
                return Ok(String::from_utf8_lossy(body).into_owned());
            }
        }
        if n == 0 {
            return Err(failed("GET", "the socket closed before the whole answer came"));
        }
    }
}

/// The pages (and iframes, workers) a DevTools socket serves, within `limit`.
pub async fn targets(socket: Pipe, limit: Duration) -> Result<Vec<Target>, AdbError> {
    let body = tokio::time::timeout(limit, http_get(socket, "/json/list"))
        .await
        .map_err(|_| failed("GET /json/list", format!("no answer within {} ms", limit.as_millis())))??;
    serde_json::from_str(&body).map_err(|e| failed("/json/list", format!("not a list of targets ({e})")))
}

/// One page's DevTools session.
pub struct Session {
    ws: WebSocketStream<Pipe>,
    next_id: u64,
    /// Events read while waiting for answers, oldest first.
    pub events: Vec<Value>,
    /// Events dropped because `events` was full.
    pub events_dropped: usize,
    limit: Duration,
}

impl Session {
    /// Opens the page's WebSocket (`ws_url` from `/json/list`) over `socket`; `limit` bounds
    /// each call.
    pub async fn open(socket: Pipe, ws_url: &str, limit: Duration) -> Result<Session, AdbError> {
        let path = ws_url
            .strip_prefix("ws://")
            .and_then(|rest| rest.find('/').map(|at| &rest[at..]))
            .ok_or_else(|| failed("connect", format!("`{ws_url}` is not a ws:// address")))?;
        // Chromium accepts a Host of localhost or an IP only, and no Origin header at all.
        let url = format!("ws://localhost{path}");
        let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE))
            .max_frame_size(Some(MAX_MESSAGE));
        let handshake = tokio_tungstenite::client_async_with_config(url.as_str(), socket, Some(config));
        let (ws, _) = tokio::time::timeout(limit, handshake)
            .await
            .map_err(|_| {
                failed(
                    "connect",
                    format!("no WebSocket handshake within {} ms", limit.as_millis()),
                )
            })?
            .map_err(|e| failed("connect", e))?;
        Ok(Session {
            ws,
            next_id: 1,
            events: Vec::new(),
            events_dropped: 0,
            limit,
        })
    }

    /// Sends `method` and waits for its answer's `result`; an `error` answer is an error that
    /// names the method.
    pub async fn call(&mut self, method: &str, params: Value) -> Result<Value, AdbError> {
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({"id": id, "method": method, "params": params}).to_string();
        let limit = self.limit;
        tokio::time::timeout(limit, async {
            self.ws
                .send(Message::text(request))
                .await
                .map_err(|e| failed(method, e))?;
            loop {
                let Some(message) = self.ws.next().await else {
                    return Err(failed(method, "the page closed its DevTools connection"));
                };
                let text = match message.map_err(|e| failed(method, e))? {
                    Message::Text(text) => text,
                    Message::Close(_) => return Err(failed(method, "the page closed its DevTools connection")),
                    _ => continue,
                };
                let value: Value = serde_json::from_str(&text).map_err(|e| failed(method, e))?;
                if value["id"].as_u64() == Some(id) {
                    if let Some(error) = value.get("error") {
                        return Err(failed(method, error["message"].as_str().unwrap_or("error")));
                    }
                    return Ok(value["result"].clone());
                }
                if value.get("method").is_some() {
                    self.keep(value);
                }
            }
        })
        .await
        .map_err(|_| failed(method, format!("no answer within {} ms", limit.as_millis())))?
    }

    /// Reads events for `wait` (those already sent, and what comes meanwhile).
    pub async fn drain_events(&mut self, wait: Duration) {
        let deadline = tokio::time::Instant::now() + wait;
        while let Ok(Some(Ok(Message::Text(text)))) = tokio::time::timeout_at(deadline, self.ws.next()).await {
            if let Ok(value) = serde_json::from_str::<Value>(&text)
                && value.get("method").is_some()
            {
                self.keep(value);
            }
        }
    }

    fn keep(&mut self, event: Value) {
        if self.events.len() >= MAX_EVENTS {
            self.events_dropped += 1;
        } else {
            self.events.push(event);
        }
    }

    /// Evaluates `expression` in our isolated world of the page's main frame, never in the page's
    /// own, and returns its value (by value, awaiting a promise); an exception is an error
    /// carrying its text.
    pub async fn evaluate(&mut self, expression: &str) -> Result<Value, AdbError> {
        // A navigation (a page still loading, a form sent) replaces the frame's document and our
        // world with it, between asking for the world and running in it: ask again.
        let mut tries = 0;
        let result = loop {
            tries += 1;
            let context = self.isolated_world().await?;
            let params =
                json!({"expression": expression, "contextId": context, "returnByValue": true, "awaitPromise": true});
            match self.call("Runtime.evaluate", params).await {
                Err(AdbError::DevTools(e)) if tries < 3 && e.contains("context") => {
                    tracing::debug!("evaluating again in the new document: {e}");
                }
                answer => break answer?,
            }
        };
        if let Some(exception) = result.get("exceptionDetails") {
            let text = exception["exception"]["description"]
                .as_str()
                .or(exception["text"].as_str())
                .unwrap_or("an exception");
            return Err(failed("Runtime.evaluate", text));
        }
        Ok(result["result"]["value"].clone())
    }

    /// The execution context of our world in the main frame as it is now (made on first use,
    /// the same one after; a navigation makes a new one, so it is asked for each time).
    async fn isolated_world(&mut self) -> Result<u64, AdbError> {
        let tree = self.call("Page.getFrameTree", json!({})).await?;
        let frame = tree["frameTree"]["frame"]["id"]
            .as_str()
            .ok_or_else(|| failed("Page.getFrameTree", "the page has no main frame"))?
            .to_string();
        let world = self
            .call(
                "Page.createIsolatedWorld",
                json!({"frameId": frame, "worldName": WORLD}),
            )
            .await?;
        world["executionContextId"]
            .as_u64()
            .ok_or_else(|| failed("Page.createIsolatedWorld", "no execution context in its answer"))
    }
}
