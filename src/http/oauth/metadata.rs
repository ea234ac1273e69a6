//! What a client learns before it holds a token: the protected resource metadata (RFC 9728),
//! served at `/.well-known/oauth-protected-resource` and at the path-suffixed form for the MCP
//! endpoint; the 401 challenge pointing to it (RFC 6750 §3, `invalid_token` when a token was
//! sent); and the 403 `insufficient_scope` a call beyond its token's scopes gets before it
//! reaches rmcp, naming the scopes to ask for (the MCP spec's step-up).

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::OAuth;
use super::verify::Refused;
use crate::tools::registry::{self, Grant, Scope};

pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The scopes a client is told to ask for first: reading and acting (an admin scope is asked
/// for when a call needs it, by the 403).
const FIRST: [Scope; 2] = [Scope::Read, Scope::Act];

/// The metadata document (RFC 9728 §2).
pub fn document(oauth: &OAuth) -> Value {
    json!({
        "resource": oauth.resource,
        "authorization_servers": oauth.settings.issuers.iter().map(|i| i.url.clone()).collect::<Vec<_>>(),
        "scopes_supported": oauth.scopes_supported(),
        "bearer_methods_supported": ["header"],
        "resource_name": "droidmcp",
        "resource_documentation": "https://github.com/droidmcp/droidmcp/blob/main/docs/http.md",
    })
}

/// Where the metadata is: the resource's origin, the well-known path, then the resource's path
/// (RFC 9728 §3.1).
pub fn url(oauth: &OAuth) -> String {
    match reqwest::Url::parse(&oauth.resource) {
        Ok(parsed) => format!(
            "{}{WELL_KNOWN}{}",
            parsed.origin().ascii_serialization(),
            parsed.path().trim_end_matches('/')
        ),
        Err(_) => WELL_KNOWN.to_string(),
    }
}

/// The paths the metadata is served at: the bare one and the resource's suffixed one.
pub fn paths(oauth: &OAuth) -> Vec<String> {
    let suffix = reqwest::Url::parse(&oauth.resource)
        .map(|u| u.path().trim_end_matches('/').to_string())
        .unwrap_or_default();
    let mut paths = vec![WELL_KNOWN.to_string(), format!("{WELL_KNOWN}{}", crate::http::PATH)];
    if !suffix.is_empty() {
        paths.push(format!("{WELL_KNOWN}{suffix}"));
    }
    paths.dedup();
    paths
}

pub fn serve(oauth: &OAuth) -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "max-age=300"),
        ],
        document(oauth).to_string(),
    )
        .into_response()
}

/// `Bearer` and its parameters, each a quoted string.
fn challenge(params: &[(&str, String)]) -> HeaderValue {
    let said: Vec<String> = params
        .iter()
        .map(|(name, value)| {
            let value: String = value
                .chars()
                .filter(|c| (' '..='~').contains(c) && *c != '"' && *c != '\\')
                .collect();
            format!("{name}=\"{value}\"")
        })
        .collect();
    HeaderValue::from_str(&format!("Bearer {}", said.join(", "))).unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
}

fn scopes(oauth: &OAuth, scopes: &[Scope]) -> String {
    scopes.iter().map(|s| oauth.wire(*s)).collect::<Vec<_>>().join(" ")
}

/// 401: no token (no error code, RFC 6750 §3.1), or one refused (`invalid_token`); 503 when the
/// authorization server could not be asked.
pub fn unauthorized(oauth: &OAuth, refused: Option<&Refused>) -> Response {
    let mut params = vec![("resource_metadata", url(oauth)), ("scope", scopes(oauth, &FIRST))];
    let body = match refused {
        Some(refused) if refused.unavailable => {
            format!("Service Unavailable: the authorization server could not be asked: {}; retry later\n", refused.why)
        }
        None => "Unauthorized: send Authorization: Bearer <token>, an access token from the authorization server this server's metadata names\n".to_string(),
        Some(refused) => {
            params.insert(0, ("error", "invalid_token".into()));
            params.insert(1, ("error_description", format!("the token is refused: {}", refused.why)));
            format!("Unauthorized: the token is refused: {}\n", refused.why)
        }
    };
    let status = match refused {
        Some(r) if r.unavailable => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::UNAUTHORIZED,
    };
    let mut response = (status, body).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, challenge(&params));
    }
    response
}

/// 403 `insufficient_scope` for a call needing `needed`, asking for it with what the token holds.
pub fn insufficient(oauth: &OAuth, grant: &Grant, tool: &str, needed: Scope) -> Response {
    let mut asked = grant.scopes.clone();
    asked.push(needed);
    asked.sort();
    asked.dedup();
    let params = [
        ("error", "insufficient_scope".to_string()),
        ("scope", scopes(oauth, &asked)),
        ("resource_metadata", url(oauth)),
        (
            "error_description",
            format!("{tool} here needs the scope {}", oauth.wire(needed)),
        ),
    ];
    let why = Grant::refusal(Some(grant), tool, needed).unwrap_or_default();
    let mut response = (StatusCode::FORBIDDEN, format!("Forbidden: {why}\n")).into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, challenge(&params));
    response
}

/// A POST's tools/call (or a batch's) whose token lacks the scope it needs gets the 403 here,
/// where a client can step up; the same check refuses it in `Built::run` for any other way in
/// (a script's calls).
pub async fn step_up(oauth: &OAuth, request: Request, next: Next) -> Response {
    let Some(grant) = request.extensions().get::<Grant>().cloned() else {
        return next.run(request).await;
    };
    if request.method() != axum::http::Method::POST || Scope::ALL.iter().all(|s| grant.allows(*s)) {
        return next.run(request).await;
    }
    // The body as `body::read` read it (bounded, scanned).
    let Some(crate::http::body::Read(bytes)) = request.extensions().get().cloned() else {
        return next.run(request).await;
    };
    let message: Value = serde_json::from_slice(&bytes).unwrap_or_default();
    let calls = match &message {
        Value::Array(batch) => batch.iter().collect(),
        one => vec![one],
    };
    for call in calls.into_iter().filter(|m| m["method"] == "tools/call") {
        let name = call["params"]["name"].as_str().unwrap_or_default();
        let Some(tool) = registry::find(name) else { continue };
        let args = call["params"]["arguments"].as_object().cloned().unwrap_or_default();
        // A call that cannot be built gets rmcp's answer saying why.
        let Ok(built) = (tool.build)(args) else { continue };
        let needed = built.scope(tool);
        if !grant.allows(needed) {
            tracing::warn!(
                tool = name,
                scope = needed.name(),
                "refused a call beyond its token's scopes"
            );
            return insufficient(oauth, &grant, tool.name, needed);
        }
    }
    next.run(request).await
}
