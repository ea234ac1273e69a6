//! A request's head, checked before a token, a cap or a body is looked at: a header the checks
//! read one of (`Host`, `Origin`, the token, the session, …) sent twice, or an absolute request
//! target whose authority is not the `Host`, is refused with 400 (which one counts would be
//! ambiguous); then rmcp's own Host and Origin check, asked with the head alone, so a forbidden
//! one gets its 403 before any cap answers; then a declared `Content-Length` past the bound gets
//! 413 before a byte of the body is read.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::Service;
use super::body::MAX_BODY;

/// The headers a request carries once at most: the checks below and rmcp read the first.
const ONCE: [&str; 6] = [
    "Host",
    "Origin",
    "Authorization",
    "Mcp-Session-Id",
    "Last-Event-ID",
    "MCP-Protocol-Version",
];

fn bad_request(why: String) -> Response {
    (StatusCode::BAD_REQUEST, [(header::CONNECTION, "close")], why).into_response()
}

/// The checks above, in that order.
pub async fn head(service: &Service, request: Request, next: Next) -> Response {
    let headers = request.headers();
    for name in ONCE {
        let count = headers.get_all(name).iter().count();
        if count > 1 {
            tracing::warn!(header = name, count, "refused a repeated header");
            return bad_request(format!(
                "Bad Request: {count} `{name}` headers; send one (which of them counts is ambiguous)\n"
            ));
        }
    }
    if let Some(authority) = request.uri().authority() {
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
        if let Some(host) = host
            && !authority.as_str().eq_ignore_ascii_case(host)
        {
            tracing::warn!(%authority, host, "refused an absolute target naming another authority");
            return bad_request(format!(
                "Bad Request: the request target names `{}` and the Host header `{}`; send one authority (the target as a path, {})\n",
                crate::android::text::echoed(authority.as_str()),
                crate::android::text::echoed(host),
                super::PATH
            ));
        }
    }
    // rmcp answers 405 to an OPTIONS that passes its Host and Origin check.
    let mut probe = Request::new(Body::empty());
    *probe.method_mut() = Method::OPTIONS;
    *probe.uri_mut() = request.uri().clone();
    *probe.headers_mut() = request.headers().clone();
    let checked = service.handle(probe).await;
    if matches!(checked.status(), StatusCode::FORBIDDEN | StatusCode::BAD_REQUEST) {
        return checked.map(Body::new);
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(declared) = declared.filter(|n| *n > MAX_BODY as u64) {
        tracing::warn!(declared, "refused a body longer than the bound, before reading it");
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            [(header::CONNECTION, "close")],
            format!(
                "Payload Too Large: a request body is at most {MAX_BODY} bytes and this one declares {declared}; send less per request\n"
            ),
        )
            .into_response();
    }
    next.run(request).await
}
