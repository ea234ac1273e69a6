//! `droidmcp serve --http ADDR`: MCP over streamable HTTP at `/mcp`, rmcp's own transport: MCP
//! 2026-07-28 requests each on their own (no session), and legacy sessions by `Mcp-Session-Id`
//! (SSE, DELETE to end one). State belongs to the principal a request's token names
//! (`principals.rs`), so handles (cacheId, ref, runId) work from one request to the next
//! whatever the protocol. rmcp checks `Host` (loopback names on a loopback bind) and `Origin`
//! (none allowed but `--allow-origin`; a client that sends none, as non-browser clients do,
//! passes); a bearer token guards every request (its scheme in any case, compared in constant
//! time as digests). Serving without one takes an explicit `--no-auth`, on loopback only.
//! `--max-sessions` bounds the legacy sessions (503 past it).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use sha1::Digest;
use subtle::ConstantTimeEq;
use tokio_util::sync::CancellationToken;

use crate::principals::{self, Principal};
use crate::server::DroidMcp;
use crate::tools::State;

/// The MCP endpoint's path.
pub const PATH: &str = "/mcp";

#[derive(Clone)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// Principals' names and tokens: every request carries one as `Authorization: Bearer <token>`.
    pub tokens: Vec<(String, String)>,
    /// Browser origins allowed to call (scheme://host[:port]); none by default.
    pub allowed_origins: Vec<String>,
    /// A session idle this long is closed (its cache and runs go with it).
    pub session_idle: Duration,
    /// Serve without a token (loopback only), said explicitly.
    pub no_auth: bool,
    /// Sessions at once; a new one past this gets 503.
    pub max_sessions: usize,
}

impl std::fmt::Debug for HttpOptions {
    // The token never reaches a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("addr", &self.addr)
            .field(
                "principals",
                &self.tokens.iter().map(|(name, _)| name).collect::<Vec<_>>(),
            )
            .field("allowed_origins", &self.allowed_origins)
            .field("no_auth", &self.no_auth)
            .field("max_sessions", &self.max_sessions)
            .finish()
    }
}

/// `--token` values: `NAME=SECRET`, or a bare `SECRET` (the principal `default`); and the lines
/// of a `--tokens-file`, `NAME=SECRET` each (`#` comments and blank lines skipped).
pub fn parse_tokens(given: &[String], file: Option<&str>) -> Result<Vec<(String, String)>, String> {
    let from_file = file
        .into_iter()
        .flat_map(str::lines)
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    let mut tokens: Vec<(String, String)> = Vec::new();
    for spec in given.iter().map(|s| s.trim()).chain(from_file) {
        let named = spec.split_once('=').filter(|(name, secret)| {
            (1..=32).contains(&name.len())
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
                // A base64 token's padding is not a secret.
                && !secret.bytes().all(|b| b == b'=')
        });
        let (name, secret) = named.unwrap_or(("default", spec));
        if tokens.iter().any(|(n, _)| n == name) {
            return Err(format!(
                "two tokens are named `{name}`: name each principal once (NAME=SECRET)"
            ));
        }
        if tokens.iter().any(|(_, s)| s == secret) {
            return Err(format!(
                "the token of `{name}` is another principal's too: give each its own"
            ));
        }
        tokens.push((name.to_string(), secret.to_string()));
    }
    Ok(tokens)
}

/// Why a configuration is refused before anything listens.
pub fn check(options: &HttpOptions) -> Result<(), String> {
    if let Some((name, _)) = options.tokens.iter().find(|(_, secret)| secret.trim().len() < 16) {
        return Err(format!(
            "the token of `{name}` is shorter than 16 chars; use a long random one, e.g. `openssl rand -hex 32`"
        ));
    }
    let no_token = options.tokens.is_empty();
    if !options.addr.ip().is_loopback() && no_token {
        return Err(format!(
            "{} is not a loopback address: serving devices beyond this machine needs a token (--token or DROIDMCP_TOKEN), and TLS from a reverse proxy in front",
            options.addr
        ));
    }
    if no_token && !options.no_auth {
        return Err(
            "serving over HTTP needs a token (--token or DROIDMCP_TOKEN, e.g. `openssl rand -hex 32`): without one, any process on this machine (or a proxy in front of it) drives the devices. To serve without a token on loopback anyway, say --no-auth"
                .into(),
        );
    }
    if !no_token && options.no_auth {
        return Err("--no-auth and a token contradict each other: drop one".into());
    }
    Ok(())
}

/// Binds, then serves until `shutdown` is cancelled. Returns the bound address through
/// `bound` (port 0 picks one) before serving.
pub async fn serve(
    base: Arc<State>,
    options: HttpOptions,
    shutdown: CancellationToken,
    bound: tokio::sync::oneshot::Sender<SocketAddr>,
) -> anyhow::Result<()> {
    check(&options).map_err(anyhow::Error::msg)?;
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", options.addr))?;
    let addr = listener.local_addr()?;

    let mut config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(MAX_BODY)
        .with_cancellation_token(shutdown.child_token())
        .with_allowed_origins(options.allowed_origins.clone())
        .enforce_origin_validation();
    if !addr.ip().is_loopback() {
        // Reached by names this process cannot know; the token is the guard there.
        config = config.disable_allowed_hosts();
    }
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(options.session_idle);
    let sessions = Arc::new(sessions);
    let principals = Arc::new(principals::Principals::new(base, options.session_idle));
    let sweeper = principals.clone();
    let every = (options.session_idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(60));
    let sweeping = tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            sweeper.sweep();
        }
    });
    let service = StreamableHttpService::new(
        move || Ok(DroidMcp::for_principals(principals.clone())),
        sessions.clone(),
        config,
    );
    let tokens: Arc<Vec<(Principal, Vec<u8>)>> = Arc::new(
        options
            .tokens
            .iter()
            .map(|(name, secret)| (Principal(name.as_str().into()), digest(secret)))
            .collect(),
    );
    let max_sessions = options.max_sessions;
    let router = axum::Router::new()
        .nest_service(PATH, service)
        .layer(middleware::from_fn(json_rpc_errors))
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            let sessions = sessions.clone();
            async move { bound_sessions(&sessions, max_sessions, request, next).await }
        }))
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            let tokens = tokens.clone();
            async move { authorize(&tokens, request, next).await }
        }));
    let _ = bound.send(addr);
    tracing::info!(%addr, path = PATH, principals = options.tokens.len(), "serving MCP over streamable HTTP");
    let served = axum::serve(listener, router)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await;
    sweeping.abort();
    served?;
    Ok(())
}

/// The largest request body read (rmcp's own default, set so both agree).
const MAX_BODY: usize = 4 << 20;

/// rmcp answers a body it cannot read with 415 and plain text; a JSON-RPC client expects 400 and
/// an error object: -32700 for what is not JSON, -32600 for JSON that is not a message this
/// server reads, with the request's id where it has one. The body is kept to say which.
async fn json_rpc_errors(request: Request, next: Next) -> Response {
    if request.method() != axum::http::Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Payload Too Large: a request body is at most {MAX_BODY} bytes\n"),
        )
            .into_response();
    };
    let response = next.run(Request::from_parts(parts, bytes.clone().into())).await;
    if response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return response;
    }
    let (head, text) = response.into_parts();
    let text = axum::body::to_bytes(text, 64 << 10).await.unwrap_or_default();
    let Some(why) = std::str::from_utf8(&text)
        .ok()
        .and_then(|t| t.strip_prefix("fail to deserialize request body "))
    else {
        return Response::from_parts(head, text.into());
    };
    let error = crate::jsonrpc::unreadable(&bytes, why);
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        error.to_string(),
    )
        .into_response()
}

/// A token's digest: tokens are compared as digests, so the compare takes the same time
/// whatever the length of what a client sent.
fn digest(token: &str) -> Vec<u8> {
    sha1::Sha1::digest(token.as_bytes()).to_vec()
}

/// The token an `Authorization` header carries: the scheme `Bearer` in any case (RFC 9110).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// A request that would start a session (a POST without `Mcp-Session-Id`) when `max` are open
/// gets 503; everything else goes on.
async fn bound_sessions(sessions: &LocalSessionManager, max: usize, request: Request, next: Next) -> Response {
    let starts_one = request.method() == axum::http::Method::POST && !request.headers().contains_key("mcp-session-id");
    if starts_one {
        let open = sessions.sessions.read().await.len();
        if open >= max {
            tracing::warn!(open, max, "refused a new session: the server is at --max-sessions");
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                [(header::RETRY_AFTER, "30")],
                format!(
                    "Service Unavailable: {open} MCP sessions are open, this server's limit (--max-sessions {max}); end one (DELETE) or retry later\n"
                ),
            )
                .into_response();
        }
    }
    next.run(request).await
}

/// Lets a request through as the principal whose token it carries (`local` when the server
/// takes none); else 401. Every token is compared, so the time taken does not tell which matched.
async fn authorize(tokens: &[(Principal, Vec<u8>)], mut request: Request, next: Next) -> Response {
    let principal = if tokens.is_empty() {
        Some(Principal(principals::LOCAL.into()))
    } else {
        let given = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(bearer)
            .unwrap_or_default();
        let given = digest(given);
        let mut found = None;
        for (principal, token) in tokens {
            if bool::from(given.as_slice().ct_eq(token)) {
                found = Some(principal.clone());
            }
        }
        found
    };
    if let Some(principal) = principal {
        request.extensions_mut().insert(principal);
        return next.run(request).await;
    }
    tracing::warn!("refused a request without a known bearer token");
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        "Unauthorized: send Authorization: Bearer <token> (droidmcp serve --token)\n",
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::{Duration, HttpOptions, bearer, check, parse_tokens};

    proptest::proptest! {
        /// Whatever bytes a body holds, the answer is a JSON-RPC error: -32700 with no id for
        /// what is not JSON, -32600 with the request's own id for JSON that is no message.
        #[test]
        fn any_unreadable_body_gets_a_json_rpc_error(body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64), id in 0u32..1000) {
            let error = crate::jsonrpc::unreadable(&body, "expected value");
            proptest::prop_assert_eq!(&error["jsonrpc"], "2.0");
            let code = error["error"]["code"].as_i64().unwrap();
            proptest::prop_assert!(code == -32700 || code == -32600);
            proptest::prop_assert!(!error["error"]["message"].as_str().unwrap().is_empty());
            let with_id = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": 5}).to_string();
            let error = crate::jsonrpc::unreadable(with_id.as_bytes(), "unrecognized JSON-RPC message");
            proptest::prop_assert_eq!(error["error"]["code"].as_i64(), Some(-32600));
            proptest::prop_assert_eq!(error["id"].as_u64(), Some(u64::from(id)));
        }
    }

    #[test]
    fn the_bearer_scheme_is_read_in_any_case() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer abc"), Some("abc"));
        assert_eq!(bearer("BEARER  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearer"), None);
    }

    #[test]
    fn no_token_takes_an_explicit_no_auth_and_loopback() {
        let options = |addr: &str, token: Option<&str>, no_auth| HttpOptions {
            addr: addr.parse().unwrap(),
            tokens: token
                .map(|t| ("default".to_string(), t.to_string()))
                .into_iter()
                .collect(),
            allowed_origins: Vec::new(),
            session_idle: Duration::from_secs(60),
            no_auth,
            max_sessions: 64,
        };
        assert!(
            check(&options("127.0.0.1:1", None, false))
                .unwrap_err()
                .contains("--no-auth")
        );
        assert!(check(&options("127.0.0.1:1", None, true)).is_ok());
        assert!(
            check(&options("0.0.0.0:1", None, true))
                .unwrap_err()
                .contains("not a loopback")
        );
        assert!(check(&options("0.0.0.0:1", Some("0123456789abcdef"), false)).is_ok());
        assert!(check(&options("127.0.0.1:1", Some("0123456789abcdef"), true)).is_err());
    }

    #[test]
    fn tokens_are_named_once_each_and_a_bare_one_is_the_default() {
        let given = [
            "alice=aaaaaaaaaaaaaaaaaaaa".to_string(),
            "bbbbbbbbbbbbbbbbbbbbbb==".to_string(),
        ];
        let tokens = parse_tokens(&given, Some("# the team\n\ncarol=cccccccccccccccccccc\n")).unwrap();
        let names: Vec<&str> = tokens.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["alice", "default", "carol"]);
        assert_eq!(
            tokens[1].1, "bbbbbbbbbbbbbbbbbbbbbb==",
            "a base64 token's `=` is its own"
        );
        let twice = ["a=0123456789abcdef0".to_string(), "a=0123456789abcdef1".to_string()];
        assert!(parse_tokens(&twice, None).unwrap_err().contains("named `a`"));
        let shared = ["a=0123456789abcdef0".to_string(), "b=0123456789abcdef0".to_string()];
        assert!(parse_tokens(&shared, None).unwrap_err().contains("its own"));
    }
}
