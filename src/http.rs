//! `droidmcp serve --http ADDR`: MCP over streamable HTTP at `/mcp`, rmcp's own transport
//! (sessions by `Mcp-Session-Id`, SSE, DELETE to end one), for clients on other machines.
//! Each session gets its own `State::session()`: the devices are shared, the default device,
//! the cache and the script runs are not. rmcp checks `Host` (loopback names on a loopback
//! bind) and `Origin` (none allowed but `--allow-origin`; a client that sends none, as
//! non-browser clients do, passes); a bearer token guards every request (its scheme in any case,
//! its value compared in constant time, length included). Serving without one takes an explicit
//! `--no-auth`, on loopback only. `--max-sessions` bounds the sessions (503 past it).

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

use crate::server::DroidMcp;
use crate::tools::State;

/// The MCP endpoint's path.
pub const PATH: &str = "/mcp";

#[derive(Clone)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// Required of every request as `Authorization: Bearer <token>` when set.
    pub token: Option<String>,
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
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("allowed_origins", &self.allowed_origins)
            .field("no_auth", &self.no_auth)
            .field("max_sessions", &self.max_sessions)
            .finish()
    }
}

/// Why a configuration is refused before anything listens.
pub fn check(options: &HttpOptions) -> Result<(), String> {
    if let Some(token) = &options.token
        && token.trim().len() < 16
    {
        return Err("the token is shorter than 16 chars; use a long random one, e.g. `openssl rand -hex 32`".into());
    }
    if !options.addr.ip().is_loopback() && options.token.is_none() {
        return Err(format!(
            "{} is not a loopback address: serving devices beyond this machine needs a token (--token or DROIDMCP_TOKEN), and TLS from a reverse proxy in front",
            options.addr
        ));
    }
    if options.token.is_none() && !options.no_auth {
        return Err(
            "serving over HTTP needs a token (--token or DROIDMCP_TOKEN, e.g. `openssl rand -hex 32`): without one, any process on this machine (or a proxy in front of it) drives the devices. To serve without a token on loopback anyway, say --no-auth"
                .into(),
        );
    }
    if options.token.is_some() && options.no_auth {
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
    let service = StreamableHttpService::new(
        move || {
            tracing::info!("new MCP session");
            Ok(DroidMcp::new(Arc::new(base.session())))
        },
        sessions.clone(),
        config,
    );
    let token = options.token.as_deref().map(digest).map(Arc::new);
    let max_sessions = options.max_sessions;
    let router = axum::Router::new()
        .nest_service(PATH, service)
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            let sessions = sessions.clone();
            async move { bound_sessions(&sessions, max_sessions, request, next).await }
        }))
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            let token = token.clone();
            async move { authorize(token.as_deref().map(Vec::as_slice), request, next).await }
        }));
    let _ = bound.send(addr);
    tracing::info!(%addr, path = PATH, token = options.token.is_some(), "serving MCP over streamable HTTP");
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await?;
    Ok(())
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

/// Lets a request through when no token is set or it carries the token; else 401.
async fn authorize(token: Option<&[u8]>, request: Request, next: Next) -> Response {
    let Some(token) = token else {
        return next.run(request).await;
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer)
        .unwrap_or_default();
    if bool::from(digest(given).as_slice().ct_eq(token)) {
        return next.run(request).await;
    }
    tracing::warn!("refused a request without the right bearer token");
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        "Unauthorized: send Authorization: Bearer <token> (droidmcp serve --token)\n",
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

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
            token: token.map(str::to_string),
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
}
