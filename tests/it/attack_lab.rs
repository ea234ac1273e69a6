//! An outsider's traps for the team features over HTTP: tokens forged or smuggled past the
//! OAuth resource server, authorization servers that hang, fail or flood, principals whose names
//! would meet on disk or in memory, and leases reached through another spelling of the device.
//! Each case says what the spec (cited) or a user expects. Real parts: npm's oidc-provider
//! (`crate::oauth::provider`), Debian's adb and the simulator; the misbehaving authorization
//! server is a few lines of raw HTTP below, since no real one hangs on purpose.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use rmcp::ClientServiceExt;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::*;
use crate::oauth::{Provider, call as rpc, initialize, now, post, provider, session};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// What the fake authorization server answers at a path.
#[derive(Clone)]
pub(crate) enum Reply {
    Json(Value),
    Status(u16),
    /// Accepts and never answers.
    Hang,
    /// A 200 JSON body of this many bytes (a JWKS padded to it).
    Huge(usize),
    /// RFC 7662: the answer for each token in the form body (`token=…`), else inactive.
    Introspect(HashMap<String, Reply>),
}

/// An authorization server that misbehaves as told: `routes` by path, what it was asked in `hits`.
pub(crate) struct Fake {
    pub(crate) url: String,
    routes: Arc<Mutex<HashMap<String, Reply>>>,
    hits: Arc<Mutex<Vec<String>>>,
}

impl Fake {
    pub(crate) async fn start() -> Fake {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let routes: Arc<Mutex<HashMap<String, Reply>>> = Arc::default();
        let hits: Arc<Mutex<Vec<String>>> = Arc::default();
        let (r, h) = (routes.clone(), hits.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (r, h) = (r.clone(), h.clone());
                tokio::spawn(async move {
                    let _ = Fake::answer(stream, r, h).await;
                });
            }
        });
        Fake { url, routes, hits }
    }

    pub(crate) fn route(&self, path: &str, reply: Reply) {
        self.routes.lock().unwrap().insert(path.to_string(), reply);
    }

    pub(crate) fn asked(&self, path: &str) -> usize {
        self.hits.lock().unwrap().iter().filter(|p| *p == path).count()
    }

    async fn answer(
        mut stream: tokio::net::TcpStream,
        routes: Arc<Mutex<HashMap<String, Reply>>>,
        hits: Arc<Mutex<Vec<String>>>,
    ) -> std::io::Result<()> {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let head_end = loop {
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
        let path = head
            .split_whitespace()
            .nth(1)
            .unwrap_or("/")
            .split('?')
            .next()
            .unwrap()
            .to_string();
        let length: usize = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().parse().unwrap_or(0))
            })
            .unwrap_or(0);
        while buf.len() < head_end + length {
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        let body = String::from_utf8_lossy(&buf[head_end..]).to_string();
        hits.lock().unwrap().push(path.clone());
        let mut reply = routes.lock().unwrap().get(&path).cloned().unwrap_or(Reply::Status(404));
        if let Reply::Introspect(answers) = &reply {
            let token = body
                .split('&')
                .find_map(|kv| kv.strip_prefix("token="))
                .unwrap_or_default()
                .to_string();
            reply = answers
                .get(&token)
                .cloned()
                .unwrap_or(Reply::Json(json!({"active": false})));
        }
        match reply {
            Reply::Json(value) => {
                let body = value.to_string();
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                stream.write_all(head.as_bytes()).await?;
                stream.write_all(body.as_bytes()).await?;
            }
            Reply::Status(code) => {
                let head = format!("HTTP/1.1 {code} Boom\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{{}}");
                stream.write_all(head.as_bytes()).await?;
            }
            Reply::Hang => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            Reply::Huge(size) => {
                let start = br#"{"keys":[],"pad":""#;
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {size}\r\nconnection: close\r\n\r\n"
                );
                stream.write_all(head.as_bytes()).await?;
                stream.write_all(start).await?;
                let pad = vec![b'A'; 64 * 1024];
                let mut left = size - start.len() - 2;
                while left > 0 {
                    let n = left.min(pad.len());
                    stream.write_all(&pad[..n]).await?;
                    left -= n;
                }
                stream.write_all(b"\"}").await?;
            }
            Reply::Introspect(_) => unreachable!("resolved above"),
        }
        stream.shutdown().await
    }
}

/// The provider's JWKS, as it publishes it.
pub(crate) async fn jwks(provider: &Provider) -> Value {
    let text = http_client()
        .get(format!("{}/jwks", provider.issuer))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// `header.payload.` signed with nothing (`alg: none`), or HMAC-SHA256 with `secret`.
fn unsigned(header: &Value, claims: &Value) -> String {
    format!("{}.{}.", B64.encode(header.to_string()), B64.encode(claims.to_string()))
}

fn hs256(kid: &str, secret: &[u8], claims: &Value) -> String {
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    header.kid = Some(kid.to_string());
    jsonwebtoken::encode(&header, claims, &jsonwebtoken::EncodingKey::from_secret(secret)).unwrap()
}

/// The signing key's public half as PEM (`-pubout` SPKI, or PKCS#1), what an attacker
/// downloads and uses as an HMAC secret.
fn public_pem(private_der: &[u8], pkcs1: bool) -> Vec<u8> {
    use std::io::Write;
    let mut args = vec!["rsa", "-inform", "DER"];
    args.push(if pkcs1 { "-RSAPublicKey_out" } else { "-pubout" });
    let mut child = std::process::Command::new("openssl")
        .args(&args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("openssl");
    child.stdin.take().unwrap().write_all(private_der).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    out.stdout
}

/// A request to `/mcp` (or `/mcp?QUERY`) with exactly these headers: its status and challenge.
pub(crate) async fn raw(mcp: &str, query: &str, headers: &[(&str, String)]) -> (u16, String) {
    let url = format!("{mcp}{query}");
    let mut request = http_client()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18");
    for (name, value) in headers {
        request = request.header(*name, value.as_str());
    }
    let response = request
        .timeout(Duration::from_secs(120))
        .body(initialize().to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    (status, challenge)
}

pub(crate) fn bearer(token: &str) -> Vec<(&'static str, String)> {
    vec![("authorization", format!("Bearer {token}"))]
}

/// What a tools/call with `token` answers: the HTTP status and challenge, after a session.
async fn scoped_call(server: &HttpServer, token: &str, tool: &str, args: Value) -> (u16, String, String) {
    let (status, _, _, text) = post(server, Some(token), None, &initialize()).await;
    if status != 200 {
        return (status, String::new(), text);
    }
    let theirs = session(server, token).await;
    let (status, challenge, _, text) = post(server, Some(token), Some(&theirs), &rpc(tool, args)).await;
    (status, challenge, text)
}

pub(crate) const STATIC: &str = "static-bob-0123456789abcdef";

/// A request's case: its name, query, headers, the status and challenge `error` expected, the spec.
type Case = (
    String,
    String,
    Vec<(&'static str, String)>,
    u16,
    &'static str,
    &'static str,
);

/// JWTs an attacker forges, and tokens smuggled where RFC 6750 and the MCP authorization spec
/// say no token goes: each gets the status (and `error`) the specs name, and the good token in
/// every odd but lawful spelling passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_and_smuggled_tokens_get_the_status_the_specs_name() {
    let Some(provider) = provider().await else { return };
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("oauth.toml");
    std::fs::write(
        &config,
        format!(
            "[[issuers]]\nurl = \"{}\"\n{}",
            provider.issuer,
            crate::oauth::INTROSPECTION
        ),
    )
    .unwrap();
    let bob = format!("bob={STATIC}");
    let server = HttpServer::start(
        &["--sim", "--oauth-config", config.to_str().unwrap(), "--token", &bob],
        &[],
        home.path(),
    )
    .await;
    let ours = server.url.clone();
    let iss = provider.issuer.clone();
    let claims = |patch: Value| {
        let mut c = json!({"iss": iss, "aud": ours, "sub": "mallory", "exp": now() + 300, "iat": now(), "scope": "droidmcp:read droidmcp:act"});
        for (k, v) in patch.as_object().unwrap() {
            match v {
                Value::Null => {
                    c.as_object_mut().unwrap().remove(k);
                }
                v => c[k] = v.clone(),
            }
        }
        c
    };
    let signed = |patch: Value| provider.forged(&provider.signing, &provider.kid, &claims(patch));
    let good = signed(json!({}));
    let keys = jwks(&provider).await;
    let jwk_text = keys["keys"][0].to_string();

    let mut cases: Vec<Case> = Vec::new();
    let mut add = |case: &str, token: String, status: u16, error: &'static str, spec: &'static str| {
        cases.push((case.to_string(), String::new(), bearer(&token), status, error, spec));
    };
    add("the good token", good.clone(), 200, "", "control");
    add(
        "alg none",
        unsigned(
            &json!({"alg": "none", "kid": provider.kid, "typ": "JWT"}),
            &claims(json!({})),
        ),
        401,
        "invalid_token",
        "RFC 8725 §3.1, RFC 9068 §4",
    );
    add(
        "alg none, no kid",
        unsigned(&json!({"alg": "none"}), &claims(json!({}))),
        401,
        "invalid_token",
        "RFC 8725 §3.1",
    );
    for (what, secret) in [
        ("SPKI PEM", public_pem(&provider.signing, false)),
        ("PKCS#1 PEM", public_pem(&provider.signing, true)),
        ("the JWK's JSON", jwk_text.clone().into_bytes()),
        (
            "the modulus",
            B64.decode(keys["keys"][0]["n"].as_str().unwrap()).unwrap(),
        ),
    ] {
        add(
            &format!("HS256 keyed with the public key ({what})"),
            hs256(&provider.kid, &secret, &claims(json!({}))),
            401,
            "invalid_token",
            "RFC 8725 §2.1, §3.1 (algorithm confusion)",
        );
    }
    for kid in [
        "../../../../../etc/passwd".to_string(),
        format!("{}/../{}", provider.kid, provider.kid),
        "%2e%2e%2fjwks".to_string(),
        "x".repeat(6000),
    ] {
        add(
            &format!("kid {}", &kid[..kid.len().min(30)]),
            provider.forged(&provider.signing, &kid, &claims(json!({}))),
            401,
            "invalid_token",
            "RFC 7515 §4.1.4: the kid names no key of the issuer's",
        );
    }
    add(
        "aud an array with ours and another",
        signed(json!({"aud": ["https://other.example/api", ours]})),
        200,
        "",
        "RFC 7519 §4.1.3: ours is among them",
    );
    for (what, aud) in [
        ("ours + 2", format!("{ours}2")),
        ("ours + /", format!("{ours}/")),
        ("ours minus its last char", ours[..ours.len() - 1].to_string()),
        ("ours upper-cased scheme", ours.replacen("http", "HTTP", 1)),
        ("ours with a query", format!("{ours}?x=1")),
        ("an empty array", String::new()),
    ] {
        let patch = match what {
            "an empty array" => json!({"aud": []}),
            _ => json!({"aud": aud}),
        };
        add(
            &format!("aud {what}"),
            signed(patch),
            401,
            "invalid_token",
            "RFC 7519 §2 (StringOrURI compared as case-sensitive strings, no canonicalization), §4.1.3",
        );
    }
    add(
        "aud missing",
        signed(json!({"aud": null})),
        401,
        "invalid_token",
        "RFC 9068 §2.2 (aud REQUIRED), MCP authorization: audience validated",
    );
    add(
        "iss with a trailing slash",
        signed(json!({"iss": format!("{}/", provider.issuer)})),
        401,
        "invalid_token",
        "RFC 7519 §2, RFC 9068 §4: iss exactly the issuer's",
    );
    add(
        "iss missing",
        signed(json!({"iss": null})),
        401,
        "invalid_token",
        "RFC 9068 §2.2 (iss REQUIRED)",
    );
    add(
        "exp a string",
        signed(json!({"exp": (now() + 300).to_string()})),
        401,
        "invalid_token",
        "RFC 7519 §2: NumericDate is a JSON number",
    );
    add(
        "exp missing",
        signed(json!({"exp": null})),
        401,
        "invalid_token",
        "RFC 9068 §2.2 (exp REQUIRED)",
    );
    add(
        "exp a float",
        signed(json!({"exp": now() as f64 + 300.5})),
        200,
        "",
        "RFC 7519 §2: a NumericDate may be non-integer",
    );
    add(
        "exp negative",
        signed(json!({"exp": -1})),
        401,
        "invalid_token",
        "RFC 7519 §4.1.4",
    );
    add(
        "nbf far in the future",
        signed(json!({"nbf": 32_503_680_000u64})),
        401,
        "invalid_token",
        "RFC 7519 §4.1.5",
    );
    add(
        "nbf a string",
        signed(json!({"nbf": "0"})),
        401,
        "invalid_token",
        "RFC 7519 §2: NumericDate is a JSON number",
    );
    add(
        "sub missing",
        signed(json!({"sub": null})),
        401,
        "invalid_token",
        "RFC 9068 §2.2 (sub REQUIRED): no principal to name",
    );
    add(
        "sub a number",
        signed(json!({"sub": 42})),
        401,
        "invalid_token",
        "RFC 7519 §4.1.2: sub is a StringOrURI",
    );
    add(
        "sub empty",
        signed(json!({"sub": ""})),
        401,
        "invalid_token",
        "RFC 7519 §4.1.2: no principal to name",
    );

    // Where RFC 6750 allows other methods, this resource declared only the header (RFC 9728
    // bearer_methods_supported), and the MCP authorization spec forbids the query string.
    cases.push((
        "the token in the query string".into(),
        format!("?access_token={good}"),
        vec![],
        401,
        "",
        "MCP authorization (Token Requirements): MUST NOT be in the query string",
    ));
    cases.push((
        "the token in a cookie".into(),
        String::new(),
        vec![("cookie", format!("access_token={good}"))],
        401,
        "",
        "RFC 9728 bearer_methods_supported [\"header\"]",
    ));
    cases.push((
        "two Authorization headers, both good".into(),
        String::new(),
        vec![
            ("authorization", format!("Bearer {good}")),
            ("authorization", format!("Bearer {good}")),
        ],
        400,
        "",
        "RFC 9110 §5.3: not a list field; docs/http.md: repeated, 400",
    ));
    cases.push((
        "two Authorization headers, a forged one first".into(),
        String::new(),
        vec![
            ("authorization", "Bearer forged-0123456789abcdef".into()),
            ("authorization", format!("Bearer {good}")),
        ],
        400,
        "",
        "RFC 9110 §5.3",
    ));
    cases.push((
        "one Authorization header with two tokens".into(),
        String::new(),
        vec![("authorization", format!("Bearer {good}, Bearer {STATIC}"))],
        401,
        "invalid_token",
        "RFC 6750 §2.1: one b64token",
    ));
    for (what, value, status) in [
        ("bearer", format!("bearer {good}"), 200),
        ("BeArEr", format!("BeArEr {good}"), 200),
        ("two spaces", format!("Bearer  {good}"), 200),
        ("trailing space", format!("Bearer {good} "), 200),
        ("no space", format!("Bearer{good}"), 401),
        ("scheme alone", "Bearer".to_string(), 401),
        ("Basic", format!("Basic {good}"), 401),
        ("static in lower-case scheme", format!("bearer {STATIC}"), 200),
    ] {
        cases.push((
            format!("Authorization {what}"),
            String::new(),
            vec![("authorization", value)],
            status,
            "",
            "RFC 9110 §11.1 (scheme case-insensitive), RFC 6750 §2.1 (\"Bearer\" 1*SP b64token), RFC 9110 §5.5 (OWS)",
        ));
    }

    let mut failed = Vec::new();
    for (case, query, headers, status, error, spec) in &cases {
        let (got, challenge) = raw(&server.url, query, headers).await;
        println!("{case}: {got} {challenge}");
        let mut wrong = got != *status;
        if *status == 401 {
            wrong |= !challenge.starts_with("Bearer ");
            wrong |= !error.is_empty() && !challenge.contains(&format!("error=\"{error}\""));
        }
        if wrong {
            failed.push(format!(
                "{case} ({spec}): expected {status} {error}, got {got} {challenge}"
            ));
        }
    }

    // Scopes: space-delimited, case-sensitive tokens (RFC 6749 §3.3); `scp` as Entra and Okta
    // send it; nothing that only looks like a scope grants it.
    let list = json!({"operation": "list"});
    let shell = json!({"operation": "run", "command": "echo scoped"});
    let scope_cases: Vec<(&str, Value, &str, Value, u16)> = vec![
        (
            "act2 is not act",
            json!({"scope": "droidmcp:read droidmcp:act2"}),
            "ui",
            json!({"operation": "key", "name": "HOME"}),
            403,
        ),
        (
            "shell2 is not shell",
            json!({"scope": "droidmcp:read droidmcp:shell2"}),
            "adb-shell",
            shell.clone(),
            403,
        ),
        (
            "upper case is another scope",
            json!({"scope": "droidmcp:read DROIDMCP:SHELL"}),
            "adb-shell",
            shell.clone(),
            403,
        ),
        (
            "a prefix glued on",
            json!({"scope": "droidmcp:readdroidmcp:shell"}),
            "adb-shell",
            shell.clone(),
            403,
        ),
        (
            "the bare word",
            json!({"scope": "droidmcp:read shell"}),
            "adb-shell",
            shell.clone(),
            403,
        ),
        (
            "commas are no separator",
            json!({"scope": "droidmcp:read,droidmcp:shell"}),
            "adb-shell",
            shell.clone(),
            403,
        ),
        (
            "extra spaces and duplicates",
            json!({"scope": "  droidmcp:read   droidmcp:read  "}),
            "adb-device",
            list.clone(),
            200,
        ),
        (
            "scp as a list",
            json!({"scope": null, "scp": ["droidmcp:read"]}),
            "adb-device",
            list.clone(),
            200,
        ),
        (
            "scp as a string",
            json!({"scope": null, "scp": "droidmcp:read droidmcp:act"}),
            "adb-device",
            list.clone(),
            200,
        ),
        (
            "no scope at all",
            json!({"scope": null}),
            "adb-device",
            list.clone(),
            403,
        ),
        ("scope a number", json!({"scope": 7}), "adb-device", list.clone(), 403),
    ];
    for (case, patch, tool, args, status) in &scope_cases {
        let token = signed(patch.clone());
        let (got, challenge, text) = scoped_call(&server, &token, tool, args.clone()).await;
        println!("scope, {case}: {got} {challenge}");
        let refused_right = *status != 403
            || (challenge.contains("error=\"insufficient_scope\"") || got == 401)
            || text.contains("droidmcp:");
        if got != *status || !refused_right {
            failed.push(format!(
                "scope, {case} (RFC 6749 §3.3, RFC 6750 §3.1): expected {status}, got {got} {challenge} {}",
                &text[..text.len().min(300)]
            ));
        }
    }
    // Every call above was answered, and the static token still works.
    let (status, _) = raw(&server.url, "", &bearer(STATIC)).await;
    assert_eq!(status, 200);
    println!(
        "{} token cases and {} scope cases; {} wrong",
        cases.len(),
        scope_cases.len(),
        failed.len()
    );
    assert!(failed.is_empty(), "\n{}", failed.join("\n"));
    server.terminate().await;
}

/// A token of `iss` for `aud`, signed with the provider's key under its kid.
pub(crate) fn token_of(provider: &Provider, iss: &str, aud: &str, sub: &str) -> String {
    provider.forged(
        &provider.signing,
        &provider.kid,
        &json!({"iss": iss, "aud": aud, "sub": sub, "exp": now() + 300, "iat": now(), "scope": "droidmcp:read droidmcp:act"}),
    )
}

/// Issuers whose keys cannot be had (a JWKS that hangs, fails, floods 50 MB) refuse their own
/// tokens and nobody else's calls; a JWKS with a kid twice (RFC 7517 §4.5 says SHOULD NOT, a
/// rotation does it) still checks the signature against the key that made it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jwks_that_hangs_fails_or_floods_refuses_its_own_tokens_and_blocks_nobody_else() {
    let Some(provider) = provider().await else { return };
    let fake = Fake::start().await;
    let mut published = jwks(&provider).await;
    let real = published["keys"][0].clone();
    let mut wrong = real.clone();
    let n = wrong["n"].as_str().unwrap().to_string();
    let flipped = if &n[20..21] == "A" { "B" } else { "A" };
    wrong["n"] = json!(format!("{}{flipped}{}", &n[..20], &n[21..]));
    published["keys"] = json!([wrong, real]);
    fake.route("/dup/jwks", Reply::Json(published));
    fake.route("/hang/jwks", Reply::Hang);
    fake.route("/boom/jwks", Reply::Status(500));
    fake.route("/huge/jwks", Reply::Huge(50 << 20));
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("oauth.toml");
    let mut toml = format!("[[issuers]]\nurl = \"{}\"\n", provider.issuer);
    for name in ["dup", "hang", "boom", "huge"] {
        toml.push_str(&format!(
            "[[issuers]]\nurl = \"{0}/{name}\"\njwks_uri = \"{0}/{name}/jwks\"\n",
            fake.url
        ));
    }
    std::fs::write(&config, toml).unwrap();
    let bob = format!("bob={STATIC}");
    let server = HttpServer::start(
        &["--sim", "--oauth-config", config.to_str().unwrap(), "--token", &bob],
        &[],
        home.path(),
    )
    .await;
    let ours = server.url.clone();
    let alice = token_of(&provider, &provider.issuer, &ours, "alice");
    let mut failed = Vec::new();

    // Duplicate kids: the token the second key signed passes; a stranger's under that kid not.
    let (got, challenge) = raw(
        &server.url,
        "",
        &bearer(&token_of(&provider, &format!("{}/dup", fake.url), &ours, "d")),
    )
    .await;
    println!("dup kid, the second key's token: {got} {challenge}");
    if got != 200 {
        failed.push(format!(
            "a JWKS with the kid twice refused the token its second key signed: {got} {challenge}"
        ));
    }
    let stranger = provider.forged(
        &provider.stranger,
        &provider.kid,
        &json!({"iss": format!("{}/dup", fake.url), "aud": ours, "sub": "s", "exp": now() + 300}),
    );
    let (got, challenge) = raw(&server.url, "", &bearer(&stranger)).await;
    println!("dup kid, a stranger's token: {got} {challenge}");
    assert_eq!(got, 401, "a stranger's key under a duplicated kid: {challenge}");

    for name in ["hang", "boom", "huge"] {
        let token = token_of(&provider, &format!("{}/{name}", fake.url), &ours, name);
        let server_url = server.url.clone();
        let pending = tokio::spawn(async move { raw(&server_url, "", &bearer(&token)).await });
        // While that token's keys are being fetched: the other principals are answered.
        while fake.asked(&format!("/{name}/jwks")) == 0 && !pending.is_finished() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for (who, token) in [("bob (static)", STATIC), ("alice (the provider's)", alice.as_str())] {
            let answered = tokio::time::timeout(Duration::from_secs(30), raw(&server.url, "", &bearer(token))).await;
            match answered {
                Ok((200, _)) => {}
                other => failed.push(format!("while {name}'s JWKS is fetched, {who} got {other:?}")),
            }
        }
        let (got, challenge) = pending.await.unwrap();
        println!("{name}: {got} {challenge}");
        if !(got == 401 && challenge.contains("invalid_token") || got == 503) {
            failed.push(format!("a token whose issuer's JWKS {name}s: {got} {challenge}"));
        }
    }
    println!("4 JWKS faults, {} wrong", failed.len());
    assert!(failed.is_empty(), "\n{}", failed.join("\n"));
    server.terminate().await;
}

/// A made-up kid, sent once the set may be fetched again (`REFRESH_EVERY`), makes the server
/// fetch the issuer's JWKS, and that JWKS hangs (an authorization server having a bad minute):
/// another principal's token of the same issuer, signed by a key the server holds, is answered
/// meanwhile, not after the fetch gives up (10 s, every 30 s, for anyone who can make a JWT).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_made_up_kid_whose_fetch_hangs_holds_no_other_token_of_its_issuer() {
    let Some(provider) = provider().await else { return };
    let fake = Fake::start().await;
    fake.route("/rot/jwks", Reply::Json(jwks(&provider).await));
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("oauth.toml");
    let issuer = format!("{}/rot", fake.url);
    std::fs::write(
        &config,
        format!("[[issuers]]\nurl = \"{issuer}\"\njwks_uri = \"{issuer}/jwks\"\n"),
    )
    .unwrap();
    let server = HttpServer::start(&["--sim", "--oauth-config", config.to_str().unwrap()], &[], home.path()).await;
    let alice = token_of(&provider, &issuer, &server.url, "alice");
    let (got, challenge) = raw(&server.url, "", &bearer(&alice)).await;
    assert_eq!(got, 200, "alice with the keys fetched: {challenge}");
    assert_eq!(fake.asked("/rot/jwks"), 1);

    fake.route("/rot/jwks", Reply::Hang);
    // The set may be fetched again for an unknown kid once this has passed since the last fetch.
    tokio::time::sleep(droidmcp::http::oauth::verify::REFRESH_EVERY + Duration::from_secs(1)).await;
    let claims = json!({"iss": issuer, "aud": server.url, "sub": "mallory", "exp": now() + 300, "iat": now()});
    let made_up = provider.forged(&provider.signing, "made-up-kid", &claims);
    let server_url = server.url.clone();
    let pending = tokio::spawn(async move { raw(&server_url, "", &bearer(&made_up)).await });
    while fake.asked("/rot/jwks") < 2 {
        assert!(!pending.is_finished(), "the made-up kid was answered without a fetch");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (got, challenge) = raw(&server.url, "", &bearer(&alice)).await;
    let fetch_still_hangs = !pending.is_finished();
    assert_eq!(got, 200, "alice while the made-up kid's fetch hangs: {challenge}");
    assert!(
        fetch_still_hangs,
        "alice was answered only once the made-up kid's fetch gave up: {:?}",
        pending.await
    );
    let (got, challenge) = pending.await.unwrap();
    println!("the made-up kid, its fetch hung: {got} {challenge}");
    assert_eq!(got, 401, "{challenge}");
    server.terminate().await;
}

/// The issuer rotates its key: tokens under the new kid arrive at once, once the set may be
/// fetched again. One fetch is made, and every one of them waits for it and passes (none is
/// refused because another's fetch was under way).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_under_a_rotated_kid_arriving_at_once_make_one_fetch_and_all_pass() {
    let Some(provider) = provider().await else { return };
    let fake = Fake::start().await;
    let published = jwks(&provider).await;
    let with_kids = |kids: &[&str]| {
        let key = published["keys"][0].clone();
        let keys: Vec<Value> = kids
            .iter()
            .map(|kid| {
                let mut k = key.clone();
                k["kid"] = json!(kid);
                k
            })
            .collect();
        Reply::Json(json!({ "keys": keys }))
    };
    fake.route("/rot/jwks", with_kids(&["old"]));
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("oauth.toml");
    let issuer = format!("{}/rot", fake.url);
    std::fs::write(
        &config,
        format!("[[issuers]]\nurl = \"{issuer}\"\njwks_uri = \"{issuer}/jwks\"\n"),
    )
    .unwrap();
    let server = HttpServer::start(&["--sim", "--oauth-config", config.to_str().unwrap()], &[], home.path()).await;
    let under = |kid: &str, sub: &str| {
        let claims = json!({"iss": issuer, "aud": server.url, "sub": sub, "exp": now() + 300, "iat": now(), "scope": "droidmcp:read"});
        provider.forged(&provider.signing, kid, &claims)
    };
    let (got, challenge) = raw(&server.url, "", &bearer(&under("old", "first"))).await;
    assert_eq!(got, 200, "{challenge}");

    fake.route("/rot/jwks", with_kids(&["old", "new"]));
    tokio::time::sleep(droidmcp::http::oauth::verify::REFRESH_EVERY + Duration::from_secs(1)).await;
    let at_once: Vec<_> = (0..8)
        .map(|i| {
            let (url, token) = (server.url.clone(), under("new", &format!("user{i}")));
            tokio::spawn(async move { raw(&url, "", &bearer(&token)).await })
        })
        .collect();
    let mut answers = Vec::new();
    for call in at_once {
        answers.push(call.await.unwrap());
    }
    println!(
        "8 tokens under the rotated kid at once: {:?}; JWKS fetched {} times in all",
        answers.iter().map(|a| a.0).collect::<Vec<_>>(),
        fake.asked("/rot/jwks")
    );
    assert!(answers.iter().all(|(got, _)| *got == 200), "{answers:?}");
    assert_eq!(fake.asked("/rot/jwks"), 2, "one fetch for the rotation");
    server.terminate().await;
}

/// RFC 7662 answers an attacker would like read generously: inactive, for another audience,
/// expired, `active` as a string, no subject; and an introspection endpoint that fails or hangs
/// blocks nobody else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn introspection_answers_are_read_as_rfc_7662_says_and_a_hung_one_blocks_nobody() {
    let fake = Fake::start().await;
    fake.route(
        "/.well-known/oauth-authorization-server",
        Reply::Json(json!({
            "issuer": fake.url,
            "jwks_uri": format!("{}/jwks", fake.url),
            "introspection_endpoint": format!("{}/introspect", fake.url),
            "token_endpoint": format!("{}/token", fake.url),
        })),
    );
    fake.route("/.well-known/openid-configuration", Reply::Status(404));
    fake.route("/jwks", Reply::Json(json!({"keys": []})));
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("oauth.toml");
    std::fs::write(
        &config,
        format!("[[issuers]]\nurl = \"{}\"\n{}", fake.url, crate::oauth::INTROSPECTION),
    )
    .unwrap();
    let bob = format!("bob={STATIC}");
    let server = HttpServer::start(
        &["--sim", "--oauth-config", config.to_str().unwrap(), "--token", &bob],
        &[],
        home.path(),
    )
    .await;
    let ours = server.url.clone();
    let fine = |patch: Value| {
        let mut a = json!({"active": true, "sub": "ivy", "aud": ours, "iss": fake.url, "scope": "droidmcp:read", "exp": now() + 300, "token_type": "Bearer"});
        for (k, v) in patch.as_object().unwrap() {
            match v {
                Value::Null => {
                    a.as_object_mut().unwrap().remove(k);
                }
                v => a[k] = v.clone(),
            }
        }
        Reply::Json(a)
    };
    let cases: Vec<(&str, Reply, &[u16], &str)> = vec![
        ("control", fine(json!({})), &[200], "control"),
        (
            "no exp",
            fine(json!({"exp": null})),
            &[200],
            "RFC 7662 §2.2: exp OPTIONAL",
        ),
        (
            "aud a list with ours",
            fine(json!({"aud": ["other", ours]})),
            &[200],
            "RFC 7662 §2.2, RFC 7519 §4.1.3",
        ),
        (
            "inactive",
            Reply::Json(json!({"active": false})),
            &[401],
            "RFC 7662 §2.2",
        ),
        (
            "inactive but with claims",
            fine(json!({"active": false})),
            &[401],
            "RFC 7662 §2.2",
        ),
        (
            "active the string true",
            fine(json!({"active": "true"})),
            &[401],
            "RFC 7662 §2.2: active is a boolean",
        ),
        (
            "another audience",
            fine(json!({"aud": "http://127.0.0.1:9/mcp"})),
            &[401],
            "RFC 7662 §4, RFC 8707 §2: the token is not for us",
        ),
        (
            "our audience + /",
            fine(json!({"aud": format!("{ours}/")})),
            &[401],
            "RFC 7519 §2",
        ),
        ("expired", fine(json!({"exp": now() - 3600})), &[401], "RFC 7662 §2.2"),
        (
            "not yet valid",
            fine(json!({"nbf": now() + 3600})),
            &[401],
            "RFC 7662 §2.2",
        ),
        (
            "another issuer",
            fine(json!({"iss": "http://127.0.0.1:9"})),
            &[401],
            "RFC 7662 §2.2, RFC 9068 §4",
        ),
        (
            "no subject, no client",
            fine(json!({"sub": null})),
            &[401],
            "no principal to name",
        ),
        ("a 500", Reply::Status(500), &[401, 503], "RFC 6750 §3.1"),
        ("not JSON", Reply::Huge(100), &[401, 503], "RFC 7662 §2.2"),
    ];
    let mut answers = HashMap::new();
    for (i, (_, reply, ..)) in cases.iter().enumerate() {
        answers.insert(format!("opaque-{i}-0123456789abcdef"), reply.clone());
    }
    answers.insert("opaque-hang-0123456789abcdef".into(), Reply::Hang);
    fake.route("/introspect", Reply::Introspect(answers));
    let mut failed = Vec::new();
    for (i, (case, _, statuses, spec)) in cases.iter().enumerate() {
        let (got, challenge) = raw(&server.url, "", &bearer(&format!("opaque-{i}-0123456789abcdef"))).await;
        println!("introspected, {case}: {got} {challenge}");
        if !statuses.contains(&got) || (got == 401 && !challenge.contains("invalid_token")) {
            failed.push(format!("{case} ({spec}): expected {statuses:?}, got {got} {challenge}"));
        }
    }
    // A hung introspection: Bob is answered meanwhile, and so, in the end, is the hung token.
    let server_url = server.url.clone();
    let pending = tokio::spawn(async move { raw(&server_url, "", &bearer("opaque-hang-0123456789abcdef")).await });
    let before = fake.asked("/introspect");
    while fake.asked("/introspect") == before && !pending.is_finished() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    match tokio::time::timeout(Duration::from_secs(30), raw(&server.url, "", &bearer(STATIC))).await {
        Ok((200, _)) => {}
        other => failed.push(format!("while an introspection hangs, bob got {other:?}")),
    }
    let (got, challenge) = pending.await.unwrap();
    println!("introspected, hung: {got} {challenge}");
    if ![401, 503].contains(&got) {
        failed.push(format!("a hung introspection: {got}"));
    }
    println!("{} introspection cases, {} wrong", cases.len() + 1, failed.len());
    assert!(failed.is_empty(), "\n{}", failed.join("\n"));
    server.terminate().await;
}

type Client<H> = rmcp::service::RunningService<rmcp::RoleClient, H>;

async fn client_of(server: &HttpServer, token: &str) -> Client<()> {
    ().serve_with_lifecycle(server.transport(Some(token)), lifecycle())
        .await
        .unwrap()
}

/// What `droidmcp serve --http … ARGS` said as it refused to start (`None`: still serving
/// after 30 s, so it started).
async fn refusal(args: &[&str], home: &std::path::Path) -> Option<String> {
    let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(args)
        .env("HOME", home)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(30), run).await.ok()?.unwrap();
    Some(String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Principals an outsider names: the same `sub` from two issuers, subjects with `/`, `..`, `@`,
/// NUL, 4 KB, case and Unicode folds of each other, and a static token named as an OAuth
/// principal renders. Each is its own: its skill (on disk, under `--workspace`) runs its own
/// code, and the others cannot read its cacheId or its run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn principals_from_hostile_names_and_two_issuers_never_meet() {
    let Some(first) = provider().await else { return };
    let Some(second) = provider().await else { return };
    let home = tempfile::tempdir().unwrap();
    let workspace = home.path().join("ws");
    std::fs::create_dir(&workspace).unwrap();
    // A static token named as the first issuer's alice renders is refused at start (it was
    // read as a bare secret of `default`), not echoing the secret.
    let rendering = format!("alice@{}", first.issuer);
    let named = format!("{rendering}=static-alice-0123456789abcdef");
    let oauth = ["--oauth-issuer", &first.issuer, "--oauth-issuer", &second.issuer];
    let mut args = vec!["--sim", "--workspace", workspace.to_str().unwrap()];
    args.extend(oauth);
    let mut with_named = args.clone();
    with_named.extend(["--token", named.as_str()]);
    let said = refusal(&with_named, home.path()).await;
    println!("a static token named {rendering}: {said:?}");
    assert!(
        said.as_ref()
            .is_some_and(|s| s.contains("NAME") && !s.contains("static-alice")),
        "refused, saying why, not the secret: {said:?}"
    );
    let bob = format!("bob={STATIC}");
    args.extend(["--token", bob.as_str()]);
    let server = HttpServer::start(&args, &[], home.path()).await;
    // Two issuers that differ only by scheme and a trailing slash would name one principal.
    let alike = refusal(
        &[
            "--sim",
            "--oauth-issuer",
            "http://127.0.0.1:9/realm",
            "--oauth-issuer",
            "https://127.0.0.1:9/realm/",
        ],
        home.path(),
    )
    .await;
    assert!(
        alike
            .as_ref()
            .is_some_and(|said| said.contains("would name their principals alike")),
        "{alike:?}"
    );
    let ours = server.url.clone();
    let scope = "droidmcp:read droidmcp:act";
    let mut who: Vec<(String, String)> = vec![
        (
            "alice of the first issuer".into(),
            first.token("alice", &ours, scope).await,
        ),
        (
            "alice of the second issuer".into(),
            second.token("alice", &ours, scope).await,
        ),
    ];
    who.push(("bob (static)".into(), STATIC.into()));
    let long = "A".repeat(4096);
    let long_b = format!("{}B", "A".repeat(4095));
    // A 4 KB subject is refused, saying so (a principal names folders), not as if it had none.
    for sub in [&long, &long_b] {
        let claims =
            json!({"iss": first.issuer, "aud": ours, "sub": sub, "exp": now() + 300, "iat": now(), "scope": scope});
        let (got, challenge) = raw(&ours, "", &bearer(&first.forged(&first.signing, &first.kid, &claims))).await;
        println!("a {}-byte sub: {got} {challenge}", sub.len());
        assert!(
            got == 401 && challenge.contains("4096 bytes; a principal's name is at most 256"),
            "{challenge}"
        );
    }
    for sub in [
        "a/b",
        "a%2Fb",
        "..",
        "../../etc",
        "x@y",
        "x@y@z",
        "nul\0x",
        "nul",
        &"A".repeat(256),
        &format!("{}B", "A".repeat(255)),
        "Alice",
        "alice",
        "\u{212A}elvin",
        "kelvin",
        "stra\u{df}e",
        "strasse",
        "e\u{301}",
        "\u{e9}",
        "%41lice",
    ] {
        let claims =
            json!({"iss": first.issuer, "aud": ours, "sub": sub, "exp": now() + 300, "iat": now(), "scope": scope});
        let shown: String = sub.chars().take(24).collect::<String>().escape_debug().to_string();
        who.push((
            format!("sub {shown} ({} bytes)", sub.len()),
            first.forged(&first.signing, &first.kid, &claims),
        ));
    }
    let mut failed = Vec::new();
    let mut clients = Vec::new();
    for (name, token) in &who {
        let client = client_of(&server, token).await;
        let saved = call(
            &client,
            "script",
            json!({"operation": "run", "code": format!("await skills.save('mine', 'console.log(\"I am {}\")', 'who I am'); console.log('saved')", clients.len())}),
        )
        .await;
        if saved.is_error == Some(true) || !ok(&saved)["output"].as_str().unwrap_or_default().contains("saved") {
            failed.push(format!("{name} could not save a skill: {:?}", saved.content));
        }
        clients.push(client);
    }
    // Each runs its own skill, and keeps a cacheId and a run of its own.
    let mut handles = Vec::new();
    for (i, (name, _)) in who.iter().enumerate() {
        let ran = call(&clients[i], "script", json!({"operation": "run", "skill": "mine"})).await;
        let output = if ran.is_error == Some(true) {
            err(&ran)
        } else {
            ok(&ran)["output"].to_string()
        };
        if !output.contains(&format!("I am {i}\\n")) && !output.contains(&format!("I am {i}\n")) {
            failed.push(format!("{name} ran a skill not its own: {output}"));
        }
        let props = ok(&call(&clients[i], "adb-device", json!({"operation": "properties"})).await);
        let run = ok(&call(
            &clients[i],
            "script",
            json!({"operation": "run", "code": "await device.list({})"}),
        )
        .await);
        handles.push((
            props["cacheId"].as_str().unwrap_or_default().to_string(),
            run["runId"].as_str().unwrap_or_default().to_string(),
        ));
    }
    let made_up = err(&call(&clients[0], "cache", json!({"operation": "get", "id": "c-made-up-1"})).await);
    for (i, (cache_id, run_id)) in handles.iter().enumerate() {
        let j = (i + 1) % who.len();
        for id in [cache_id.clone(), format!("{run_id}/results/001-device-list.json")] {
            let theirs = call(&clients[j], "cache", json!({"operation": "get", "id": id})).await;
            if theirs.is_error != Some(true) {
                failed.push(format!("{} read {}'s {id}", who[j].0, who[i].0));
            }
        }
        let _ = made_up.len();
    }
    // On disk: one skill file per principal, every one under the workspace.
    let mut skills = 0;
    let mut stack = vec![workspace.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            } else if entry.file_name() == "mine.js" {
                skills += 1;
            }
        }
    }
    if skills != who.len() {
        failed.push(format!(
            "{} principals saved a skill, {skills} skill files on disk",
            who.len()
        ));
    }
    println!(
        "{} principals (two issuers' alice, {} hostile subjects), {} wrong",
        who.len(),
        who.len() - 2,
        failed.len()
    );
    assert!(failed.is_empty(), "\n{}", failed.join("\n"));
    server.terminate().await;
}

const ALICE: &str = "alice-0123456789abcdef";
const LEASED: &str = "is leased to alice until";

fn tap(device: &str) -> Value {
    json!({"operation": "tap", "x": 540, "y": 1200, "device": device})
}

/// The lease `adb-device list` shows on `device` (Null when none).
async fn listed_lease<H: rmcp::ClientHandler>(client: &Client<H>, device: &str) -> Value {
    let list = ok(&call(client, "adb-device", json!({"operation": "list"})).await);
    list["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["serial"] == device)
        .and_then(|d| d.get("lease").cloned())
        .unwrap_or(Value::Null)
}

/// Whether `answer` is the refusal of a non-holder (names alice's lease).
fn refused(answer: &rmcp::model::CallToolResult) -> bool {
    answer.is_error == Some(true) && err(answer).contains(LEASED)
}

/// Leases as an outsider tries them: one phone reached by another spelling (bare vs
/// `source/serial`, an adb server's serial vs the same phone's own adbd), from a script too; two
/// principals racing for the one match; the holder's session gone; a reading that must not
/// renew (docs/tools.md: acting calls renew); bad `ttlSecs`; releasing what nobody holds; a phone
/// that leaves and comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_hold_whatever_the_device_is_called_and_whoever_races() {
    let Some(adb) = AdbServer::start() else { return };
    let home = tempfile::tempdir().unwrap();
    let sims = [
        SimProcess::start(&[]),
        SimProcess::start(&[]),
        SimProcess::start_profile(&repo_dir().join("fixtures/android6-emulator"), &[]),
    ];
    adb.connect(&sims[0]);
    let only = adb.connect(&sims[1]);
    let sources = [
        format!("labA=server:127.0.0.1:{}", adb.port),
        format!("old=tcp:{}", sims[2].addr),
    ];
    let (a, b) = (format!("alice={ALICE}"), format!("bob={STATIC}"));
    let mut args = vec!["--token", &a, "--token", &b];
    for source in &sources {
        args.extend(["--adb", source.as_str()]);
    }
    let server = HttpServer::start(&args, &[], home.path()).await;
    let alice = client_of(&server, ALICE).await;
    let bob = client_of(&server, STATIC).await;
    let mut failed = Vec::new();
    let list = ok(&call(&bob, "adb-device", json!({"operation": "list"})).await);
    println!("devices: {}", list["devices"]);

    // Releasing what nobody holds, and a device nobody has.
    let free = call(&bob, "adb-device", json!({"operation": "release", "device": only})).await;
    let text = if free.is_error == Some(true) {
        err(&free)
    } else {
        ok(&free).to_string()
    };
    if !text.contains("nothing to release") {
        failed.push(format!("release of a device nobody holds: {text}"));
    }
    let none = call(
        &bob,
        "adb-device",
        json!({"operation": "release", "device": "no-such-phone"}),
    )
    .await;
    if none.is_error != Some(true) || !err(&none).contains("no-such-phone") {
        failed.push(format!("release of no-such-phone: {:?}", none.content));
    }
    // A serial only one source sees: bare and qualified are one device, in a script too.
    let qualified = format!("labA/{only}");
    ok(&call(&alice, "adb-device", json!({"operation": "lease", "device": only})).await);
    for (how, answer) in [
        ("ui tap by source/serial", call(&bob, "ui", tap(&qualified)).await),
        (
            "release by source/serial",
            call(&bob, "adb-device", json!({"operation": "release", "device": qualified})).await,
        ),
    ] {
        if !refused(&answer) {
            failed.push(format!(
                "alice leased {only}; bob's {how} was not refused: {:?}",
                answer.content
            ));
        }
    }
    let script = ok(&call(
        &bob,
        "script",
        json!({"operation": "run", "code": format!("try {{ await ui.key({{name: 'HOME', device: '{qualified}'}}); console.log('acted') }} catch (e) {{ console.log(String(e)) }}")}),
    )
    .await);
    if !script["output"].as_str().unwrap_or_default().contains(LEASED) {
        failed.push(format!("bob's script acted on {qualified}: {script}"));
    }

    // Reading does not renew (docs/tools.md: each acting call by the holder renews it).
    let until = listed_lease(&alice, only.as_str()).await["until"].clone();
    ok(&call(&alice, "adb-device", json!({"operation": "properties", "device": only})).await);
    ok(&call(&alice, "ui", json!({"operation": "dump", "device": only, "limit": 2})).await);
    ok(&call(&bob, "ui", json!({"operation": "dump", "device": only, "limit": 2})).await);
    let after = listed_lease(&alice, only.as_str()).await["until"].clone();
    if after != until || until.is_null() {
        failed.push(format!("readings moved the lease's until: {until} → {after}"));
    }

    // A phone that leaves and comes back keeps its lease.
    assert!(adb.reconnect(&only), "{only} came back");
    let back = call(&bob, "ui", tap(&only)).await;
    if !refused(&back) || listed_lease(&bob, only.as_str()).await["holder"] != "alice" {
        failed.push(format!("{only} came back without alice's lease: {:?}", back.content));
    }

    // Two principals race for the one device of sdk 23: exactly one wins each round.
    let mut rounds = 0;
    for _ in 0..10 {
        let by_match = json!({"operation": "lease", "match": {"sdk": 23}});
        let (x, y) = tokio::join!(
            call(&alice, "adb-device", by_match.clone()),
            call(&bob, "adb-device", by_match.clone())
        );
        let won = [x.is_error != Some(true), y.is_error != Some(true)];
        if won.iter().filter(|w| **w).count() != 1 {
            failed.push(format!("a race for sdk 23: alice {:?}, bob {:?}", x.content, y.content));
            break;
        }
        let winner = if won[0] { &alice } else { &bob };
        ok(&call(
            winner,
            "adb-device",
            json!({"operation": "release", "device": sims[2].serial()}),
        )
        .await);
        rounds += 1;
    }

    // The holder's session ends: the lease stays until its ttl.
    let gone = client_of(&server, ALICE).await;
    ok(&call(
        &gone,
        "adb-device",
        json!({"operation": "lease", "device": sims[2].serial(), "ttlSecs": 600}),
    )
    .await);
    gone.cancel().await.unwrap();
    if !refused(&call(&bob, "ui", tap(&sims[2].serial())).await) {
        failed.push("alice's session ended and her lease with it".into());
    }

    // ttlSecs as a float, a string, huge, a boolean: refused, naming it; never rounded or
    // clamped (DESIGN: no silent truncation).
    let mut bad = 0;
    for ttl in [
        json!(2.5),
        json!("600"),
        json!(1e30),
        json!(18_446_744_073_709_551_615u64),
        json!(true),
        json!(-0.5),
    ] {
        bad += 1;
        let answer = call(
            &bob,
            "adb-device",
            json!({"operation": "lease", "device": only, "ttlSecs": ttl}),
        )
        .await;
        if answer.is_error != Some(true) || !err(&answer).contains("ttlSecs") {
            failed.push(format!("ttlSecs {ttl}: {:?}", answer.content));
        }
    }
    println!(
        "lease traps: a spelling, a script, a reading, a return, {rounds} races, a session's end, {bad} bad ttlSecs, 2 releases; {} wrong",
        failed.len()
    );
    assert!(failed.is_empty(), "\n{}", failed.join("\n"));
    server.terminate().await;
}

/// One phone reached two ways (the adb server's `labA/SERIAL` and its own adbd `own/SERIAL`):
/// a lease through one name holds through the other, since leases are keyed by the phone
/// (`Adb::identity`), not by the route.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_holds_through_another_route_to_the_same_phone() {
    let Some(adb) = AdbServer::start() else { return };
    let home = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(&[]);
    let both = adb.connect(&sim);
    let sources = [
        format!("labA=server:127.0.0.1:{}", adb.port),
        format!("own=tcp:{}", sim.addr),
    ];
    let (a, b) = (format!("alice={ALICE}"), format!("bob={STATIC}"));
    let server = HttpServer::start(
        &["--token", &a, "--token", &b, "--adb", &sources[0], "--adb", &sources[1]],
        &[],
        home.path(),
    )
    .await;
    let alice = client_of(&server, ALICE).await;
    let bob = client_of(&server, STATIC).await;
    let mut failed = Vec::new();
    // One phone, two routes: the adb server's serial and its own adbd (`labA/…`, `own/…`).
    let via_server = format!("labA/{both}");
    let via_own = format!("own/{both}");
    ok(&call(
        &alice,
        "adb-device",
        json!({"operation": "lease", "device": via_server, "ttlSecs": 600}),
    )
    .await);
    for (how, answer) in [
        ("ui tap through its own adbd", call(&bob, "ui", tap(&via_own)).await),
        (
            "adb-shell through its own adbd",
            shell_on(&bob, Some(&via_own), "touch /data/local/tmp/bob").await,
        ),
        (
            "a lease through its own adbd",
            call(&bob, "adb-device", json!({"operation": "lease", "device": via_own})).await,
        ),
    ] {
        if !refused(&answer) {
            failed.push(format!(
                "alice leased {via_server}; bob's {how} was not refused: {:?}",
                answer.content
            ));
        }
    }
    assert!(failed.is_empty(), "\n{}", failed.join("\n"));
    server.terminate().await;
}
