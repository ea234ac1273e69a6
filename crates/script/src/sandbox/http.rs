//! `http` in a script, as Maestro's scripts call it: `http.get/post/put/delete(url, {headers,
//! body})` and `http.request(url, {method, …})`, synchronous, answering `{ok, status, body,
//! headers}`. The host decides whether a run may reach the network (`Host::http`: only
//! `droidmcp replay --allow-network` lets it); each request is http or https (rustls with ring,
//! the certificate checked against the system's roots, `SSL_CERT_FILE` honoured, never an
//! option to skip it), bounded by what is left of the run's time and by `MAX_BODY_BYTES`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rquickjs::function::Func;
use serde_json::{Value, json};

use super::Host;

/// The largest response body a script is handed.
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// The script's `http`, over the hidden `__http` (taken into the prelude's `hidden`).
pub(super) const PRELUDE: &str = r#"
  const request = (method, url, options) => {
    const o = options === undefined || options === null ? {} : options;
    const body = o.body === undefined || o.body === null ? null : String(o.body);
    const answer = parse(hidden.__http(stringify({ method: String(method).toUpperCase(), url: String(url), headers: o.headers || {}, body })));
    if (answer.error !== undefined) throw new Error(answer.error);
    return answer.ok;
  };
  define("http", Object.freeze({
    get: (url, o) => request("GET", url, o),
    post: (url, o) => request("POST", url, o),
    put: (url, o) => request("PUT", url, o),
    delete: (url, o) => request("DELETE", url, o),
    request: (url, o) => request((o && o.method) || "GET", url, o),
  }));
"#;

/// `__http(request)`: the host's answer, the script's thread waiting for it (the script is
/// synchronous, as Maestro's is), at most until the run's deadline.
pub(super) fn install(
    ctx: &rquickjs::Ctx<'_>,
    host: Arc<dyn Host>,
    main: tokio::runtime::Handle,
    deadline: Instant,
) -> rquickjs::Result<()> {
    let http = move |request: String| -> String {
        let left = deadline.saturating_duration_since(Instant::now());
        let request: Value = serde_json::from_str(&request).unwrap_or_default();
        let asked = host.http(request, left);
        let task = main.spawn(async move { tokio::time::timeout(left, asked).await });
        let answer = match futures::executor::block_on(task) {
            Ok(Ok(Ok(value))) => json!({ "ok": value }),
            Ok(Ok(Err(thrown))) => thrown.answer(),
            Ok(Err(_)) => {
                json!({ "error": format!("the request ran past the run's time limit ({} ms were left)", left.as_millis()) })
            }
            Err(e) => json!({ "error": format!("the request was stopped ({e})") }),
        };
        answer.to_string()
    };
    ctx.globals().set("__http", Func::from(http))
}

/// One request (`{method, url, headers, body}`): `{ok, status, body, headers}`, or why not.
pub async fn fetch(request: Value, timeout: Duration) -> Result<Value, String> {
    let url = request["url"].as_str().unwrap_or_default();
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("http: {:?} is not a URL ({e})", url))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("http: {url:?} is not an http or https URL"));
    }
    let method = request["method"].as_str().unwrap_or("GET");
    let method =
        reqwest::Method::from_bytes(method.as_bytes()).map_err(|_| format!("http: {method:?} is not a method"))?;
    let tls = match (tls_config(), parsed.scheme()) {
        (Ok(config), _) => config,
        // Plain http needs no roots (a machine without them still reaches it); an https
        // redirect from it is then refused by the certificate check.
        (Err(_), "http") => rustls_config()
            .map_err(|e| format!("http: {url}: {e}"))?
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth(),
        (Err(e), _) => return Err(format!("http: {url}: {e}")),
    };
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .tls_backend_preconfigured(tls)
        .build()
        .map_err(|e| format!("http: {e}"))?;
    let mut asked = client.request(method.clone(), parsed);
    for (name, value) in request["headers"].as_object().into_iter().flatten() {
        let value = value.as_str().map_or_else(|| value.to_string(), str::to_string);
        asked = asked.header(name.as_str(), value);
    }
    if let Some(body) = request["body"].as_str() {
        asked = asked.body(body.to_string());
    }
    let mut response = asked.send().await.map_err(|e| match e.is_timeout() {
        true => format!(
            "http: {method} {url} got no answer within the {} ms left of the run's time limit",
            timeout.as_millis()
        ),
        false => failure(&method, url, &e),
    })?;
    let status = response.status().as_u16();
    let headers: serde_json::Map<String, Value> = response
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                Value::String(String::from_utf8_lossy(v.as_bytes()).into_owned()),
            )
        })
        .collect();
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("http: reading the response: {e}"))?
    {
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(format!(
                "http: {method} {} answered more than {} KiB, the most a script is handed",
                url,
                MAX_BODY_BYTES >> 10
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(json!({
        "ok": (200..300).contains(&status),
        "status": status,
        "body": String::from_utf8_lossy(&body),
        "headers": headers,
    }))
}

/// rustls with ring handed to this client (no process-wide provider), the server's certificate
/// checked by the platform verifier: on Linux the system's roots (Debian's /etc/ssl/certs), or
/// `SSL_CERT_FILE` / `SSL_CERT_DIR` when set. HTTP/1 only, as the client speaks.
pub fn tls_config() -> Result<rustls::ClientConfig, String> {
    use rustls_platform_verifier::BuilderVerifierExt;
    // A file that cannot be read would be skipped quietly when SSL_CERT_DIR is set too.
    if let Some(file) = std::env::var_os("SSL_CERT_FILE") {
        std::fs::File::open(&file).map_err(|e| {
            format!("SSL_CERT_FILE names {file:?}, which cannot be read ({e}): name a PEM bundle of CA certificates, or unset it")
        })?;
    }
    let mut config = rustls_config()?
        .with_platform_verifier()
        .map_err(|e| {
            format!("no CA certificates could be read ({e}): install the system's (Debian's ca-certificates) or name a PEM bundle in SSL_CERT_FILE")
        })?
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// rustls with ring, before its certificate check is chosen.
fn rustls_config() -> Result<rustls::ConfigBuilder<rustls::ClientConfig, rustls::WantsVerifier>, String> {
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup: {e}"))
}

/// Why a request failed: reqwest's own words name only the URL, so the causes below it (a
/// refused connection, the certificate problem rustls found) are added, and for a certificate
/// what droidmcp trusts.
fn failure(method: &reqwest::Method, url: &str, error: &reqwest::Error) -> String {
    let mut causes = Vec::new();
    let mut certificate = false;
    let mut next: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(error);
    while let Some(cause) = next {
        // io::Error hides the error it wraps from `source` (rustls' is in two): look inside.
        let mut shown = cause;
        while let Some(inner) = shown.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref()) {
            shown = inner;
        }
        if let Some(rustls::Error::InvalidCertificate(_)) = shown.downcast_ref::<rustls::Error>() {
            certificate = true;
        }
        let text = shown.to_string();
        if !causes.iter().any(|c: &String| c.contains(&text)) {
            causes.push(text);
        }
        next = shown.source();
    }
    if causes.is_empty() {
        causes.push(error.to_string());
    }
    let mut message = format!("http: {method} {url} failed: {}", causes.join(": "));
    if certificate {
        message.push_str(
            " (the server's certificate was refused: droidmcp trusts the system's certificate roots, or the PEM bundle SSL_CERT_FILE names; add the server's CA there)",
        );
    }
    message
}
