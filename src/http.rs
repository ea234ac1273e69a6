//! `droidmcp serve --http ADDR`: MCP over streamable HTTP at `/mcp`, rmcp's own transport
//! (sessions by `Mcp-Session-Id`, SSE, DELETE to end one), for clients on other machines.
//! Each session gets its own `State::session()`: the devices are shared, the default device,
//! the cache and the script runs are not. rmcp checks `Host` (loopback names on a loopback
//! bind) and `Origin` (none allowed but `--allow-origin`; a client that sends none, as
//! non-browser clients do, passes); a bearer token, compared in constant time, guards every
//! request and is required on any bind that is not loopback.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
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
}

impl std::fmt::Debug for HttpOptions {
    // The token never reaches a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("addr", &self.addr)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("allowed_origins", &self.allowed_origins)
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
    let service = StreamableHttpService::new(
        move || {
            tracing::info!("new MCP session");
            Ok(DroidMcp::new(Arc::new(base.session())))
        },
        Arc::new(sessions),
        config,
    );
    let token = options.token.clone().map(Arc::new);
    let router = axum::Router::new()
        .nest_service(PATH, service)
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            let token = token.clone();
            async move { authorize(token.as_deref().map(String::as_str), request, next).await }
        }));
    let _ = bound.send(addr);
    tracing::info!(%addr, path = PATH, token = options.token.is_some(), "serving MCP over streamable HTTP");
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await?;
    Ok(())
}

/// Lets a request through when no token is set or it carries the token; else 401.
async fn authorize(token: Option<&str>, request: Request, next: Next) -> Response {
    let Some(token) = token else {
        return next.run(request).await;
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    if bool::from(given.as_bytes().ct_eq(token.as_bytes())) {
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
