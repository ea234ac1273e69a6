//! `droidmcp serve --http ADDR`: MCP over streamable HTTP at `/mcp`, rmcp's own transport: MCP
//! 2026-07-28 requests each on their own (no session), and legacy sessions by `Mcp-Session-Id`
//! (SSE, DELETE to end one). State belongs to the principal a request's token names
//! (`principals.rs`), so handles (cacheId, ref, runId) work from one request to the next
//! whatever the protocol. A bearer token guards every request (its scheme in any case, compared
//! in constant time as digests); serving without one takes an explicit `--no-auth`, on loopback
//! only. No token can slow, lock out, read or end another's work; each request passes, in order:
//! - hyper's header timeout (`accept`): a connection idle or dripping its head is closed;
//! - `edge.rs`: a repeated `Host`, `Origin`, token or session header, or an absolute target of
//!   another authority, 400; rmcp's Host and Origin check (403) before any cap; a declared
//!   body past the bound, 413;
//! - the token (`authorize`): a static one, else (with `--oauth-*`) an OAuth access token
//!   (`oauth/`), 401 with the challenge pointing to the protected resource metadata;
//! - the token's scopes (`oauth::metadata::step_up`), 403 `insufficient_scope`, once the body is read;
//! - `sessions.rs`: a session is its maker's (another token's id answers as an unknown one),
//!   `--max-sessions` per principal, the least recently used idle one closed first, and a
//!   call's events kept 60 s after it ends for a resume;
//! - `body.rs`: the body within a time, a byte bound and a reading slot, scanned for too many
//!   values, too deep a nesting and repeated keys before rmcp builds it.

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
use crate::tools::registry::Grant;

mod body;
mod edge;
pub mod oauth;
mod sessions;

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
    /// Legacy sessions at once per principal: past it its least recently used idle one is
    /// closed, and a new one gets 503 when all are busy.
    pub max_sessions: usize,
    /// OAuth access tokens too (`--oauth-*`), beside the static ones.
    pub oauth: Option<oauth::Settings>,
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
            .field(
                "oauth",
                &self
                    .oauth
                    .as_ref()
                    .map(|o| o.issuers.iter().map(|i| &i.url).collect::<Vec<_>>()),
            )
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
        // A base64 token's padding is not a name's `=`.
        let named = spec
            .split_once('=')
            .filter(|(_, secret)| !secret.bytes().all(|b| b == b'='));
        // A NAME that is not one is refused, not read as part of a bare secret: `alice@idp=…`
        // would otherwise become `default`, its name in the secret.
        if let Some((name, _)) = named
            && !((1..=32).contains(&name.len())
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b)))
        {
            // Not echoed: a malformed spec may be all secret.
            return Err(format!(
                "a token's NAME (before its first `=`, {} chars) is not one: a NAME is 1 to 32 letters, digits, `_`, `.` or `-` (an OAuth principal's `@` is never a static token's); give NAME=SECRET, or the SECRET alone",
                name.chars().count()
            ));
        }
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
    let no_token = options.tokens.is_empty() && options.oauth.is_none();
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
    if let Some(oauth) = &options.oauth
        && oauth.resource.is_none()
        && !options.addr.ip().is_loopback()
    {
        return Err(format!(
            "{} is not loopback: say the URL clients reach this server's /mcp at (--oauth-resource https://…/mcp), which tokens must be issued for",
            options.addr
        ));
    }
    if !no_token && options.no_auth {
        return Err("--no-auth and a token (or --oauth-*) contradict each other: drop one".into());
    }
    Ok(())
}

/// The MCP service rmcp builds, on these sessions.
pub(crate) type Service = StreamableHttpService<DroidMcp, sessions::Sessions>;

/// A connection sending nothing, or dripping its header, is closed after this (hyper's header
/// timeout, which runs from the connection's start and between its requests).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

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
    let oauth = match &options.oauth {
        Some(settings) => Some(Arc::new(
            oauth::OAuth::new(settings.clone(), addr).map_err(anyhow::Error::msg)?,
        )),
        None => None,
    };

    let mut config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(body::MAX_BODY)
        .with_cancellation_token(shutdown.child_token())
        .with_allowed_origins(options.allowed_origins.clone())
        .enforce_origin_validation();
    if !addr.ip().is_loopback() {
        // Reached by names this process cannot know; the token is the guard there.
        config = config.disable_allowed_hosts();
    }
    let mut local = LocalSessionManager::default();
    local.session_config.keep_alive = Some(options.session_idle);
    let sessions = Arc::new(sessions::Sessions::new(local, options.max_sessions));
    let principals = Arc::new(principals::Principals::new(base, options.session_idle));
    let sweeper = principals.clone();
    let every = (options.session_idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(60));
    let sweeping = tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            sweeper.sweep();
        }
    });
    let service: Service = StreamableHttpService::new(
        move || Ok(DroidMcp::for_principals(principals.clone())),
        sessions.clone(),
        config,
    );
    let tokens = Arc::new(Tokens {
        statics: options
            .tokens
            .iter()
            .map(|(name, secret)| {
                let grant = oauth.as_ref().map(|o| o.static_grant(name));
                (Principal(name.as_str().into()), digest(secret), grant)
            })
            .collect(),
        oauth: oauth.clone(),
    });
    let bodies = Arc::new(body::Bodies::default());
    let edge = service.clone();
    let stepping = oauth.clone();
    // The last layer runs first: the head, the token, the session, the body, the token's
    // scopes, then rmcp.
    let mut router = axum::Router::new()
        .nest_service(PATH, service)
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            let stepping = stepping.clone();
            async move {
                match &stepping {
                    Some(oauth) => oauth::metadata::step_up(oauth, request, next).await,
                    None => next.run(request).await,
                }
            }
        }))
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            let bodies = bodies.clone();
            async move { body::read(&bodies, request, next).await }
        }))
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            let sessions = sessions.clone();
            async move { sessions::bind(&sessions, request, next).await }
        }))
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            let tokens = tokens.clone();
            async move { authorize(&tokens, request, next).await }
        }));
    if let Some(oauth) = &oauth {
        // The metadata is for anyone: it comes before a token.
        for path in oauth::metadata::paths(oauth) {
            let oauth = oauth.clone();
            router = router.route(
                &path,
                axum::routing::get(move || async move { oauth::metadata::serve(&oauth) }),
            );
        }
    }
    let router = router.layer(middleware::from_fn(move |request: Request, next: Next| {
        let edge = edge.clone();
        async move { edge::head(&edge, request, next).await }
    }));
    let _ = bound.send(addr);
    tracing::info!(%addr, path = PATH, principals = options.tokens.len(), "serving MCP over streamable HTTP");
    let served = accept(listener, router, shutdown).await;
    sweeping.abort();
    served
}

/// Serves each connection with hyper's HTTP/1 and its header timeout (axum::serve sets no
/// timer, so it has none), until `shutdown`; then lets open connections finish for up to 10 s.
async fn accept(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors, say: the open connections go on; try again shortly.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = shutdown.cancelled() => break,
        };
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let connection = http.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "connection ended");
            }
        });
    }
    let _ = tokio::time::timeout(Duration::from_secs(10), graceful.shutdown()).await;
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

/// The tokens a request may carry: static ones (each a principal, its digest and, with OAuth
/// configured, its grant), and OAuth access tokens.
struct Tokens {
    statics: Vec<(Principal, Vec<u8>, Option<Grant>)>,
    oauth: Option<Arc<oauth::OAuth>>,
}

/// The one door where a request's principal is decided: it goes on as the principal whose
/// static token it carries (every one compared, so the time taken does not tell which matched),
/// or whose OAuth access token verifies (`oauth::OAuth::verify`), with that token's grant;
/// `local` when the server takes no token; else 401 (with OAuth, the challenge naming the
/// metadata).
async fn authorize(tokens: &Tokens, mut request: Request, next: Next) -> Response {
    if tokens.statics.is_empty() && tokens.oauth.is_none() {
        request.extensions_mut().insert(Principal(principals::LOCAL.into()));
        return next.run(request).await;
    }
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer)
        .unwrap_or_default()
        .to_string();
    let digested = digest(&given);
    let mut found = None;
    for (principal, token, grant) in &tokens.statics {
        if bool::from(digested.as_slice().ct_eq(token)) {
            found = Some((principal.clone(), grant.clone()));
        }
    }
    if found.is_none()
        && let Some(oauth) = &tokens.oauth
    {
        if given.is_empty() {
            return oauth::metadata::unauthorized(oauth, None);
        }
        match oauth.verify(&given).await {
            Ok(verified) => found = Some((verified.principal, Some(verified.grant))),
            Err(refused) => {
                tracing::warn!(why = %refused.why, "refused an access token");
                return oauth::metadata::unauthorized(oauth, Some(&refused));
            }
        }
    }
    if let Some((principal, grant)) = found {
        request.extensions_mut().insert(principal);
        if let Some(grant) = grant {
            request.extensions_mut().insert(grant);
        }
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
            oauth: None,
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
        // A NAME that is not one is refused, never read as a bare secret of `default`.
        for spec in [
            "alice@http://idp=0123456789abcdef",
            "a b=0123456789abcdef",
            "=0123456789abcdef",
        ] {
            let said = parse_tokens(&[spec.to_string()], None).unwrap_err();
            assert!(
                said.contains("is not one") && !said.contains("0123456789abcdef"),
                "{said}"
            );
        }
        let padded = parse_tokens(&["c2VjcmV0LXNlY3JldC1zZWNyZXQ=".to_string()], None).unwrap();
        assert_eq!(padded[0].0, "default");
    }
}
