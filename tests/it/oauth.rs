//! `serve --http` as an OAuth resource server against a real authorization server: npm's
//! oidc-provider (tests/fixtures/oidc, installed by .ci/run), started here, issuing JWT access
//! tokens for a resource indicator. The official MCP Python SDK's OAuth client signs in as
//! Claude's connectors do (tests/clients/python_oauth.py); each refused token gets the status
//! and `WWW-Authenticate` RFC 6750 and the MCP authorization spec name.

use std::process::Stdio;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use crate::common::*;

/// The authorization server, and the keys its issuer line printed (PKCS#1 DER): its own signing
/// key, and a stranger's, for the tokens forged below.
pub(crate) struct Provider {
    pub(crate) issuer: String,
    pub(crate) kid: String,
    pub(crate) signing: Vec<u8>,
    pub(crate) stranger: Vec<u8>,
    _child: tokio::process::Child,
}

/// oidc-provider started, or `None` (skipped; under CI=true a failure) when Node or the
/// fixture's packages are missing.
pub(crate) async fn provider() -> Option<Provider> {
    let dir = testkit::repo_dir().join("tests/fixtures/oidc");
    if !dir.join("node_modules/oidc-provider").is_dir() {
        skip_or_fail("tests/fixtures/oidc has no node_modules (npm ci --prefix tests/fixtures/oidc, as .ci/run does)");
        return None;
    }
    let mut child = tokio::process::Command::new("node")
        .arg("provider.mjs")
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .ok()
        .or_else(|| {
            skip_or_fail("node is not installed");
            None
        })?;
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(std::time::Duration::from_secs(60), lines.next_line())
        .await
        .expect("oidc-provider prints its issuer")
        .unwrap()
        .expect("a line");
    // Read on, or Node dies of a closed pipe at its next line.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let said: Value = serde_json::from_str(&line).unwrap();
    let der = |k: &str| {
        base64::engine::general_purpose::STANDARD
            .decode(said[k].as_str().unwrap())
            .unwrap()
    };
    Some(Provider {
        issuer: said["issuer"].as_str().unwrap().to_string(),
        kid: said["kid"].as_str().unwrap().to_string(),
        signing: der("signing"),
        stranger: der("stranger"),
        _child: child,
    })
}

impl Provider {
    /// A real token: client credentials of `client` for `resource`, asking `scope`.
    pub(crate) async fn token(&self, client: &str, resource: &str, scope: &str) -> String {
        let answer: Value = http_client()
            .post(format!("{}/token", self.issuer))
            .basic_auth(client, Some(format!("{client}-secret-0123456789abcdef")))
            .form(&[
                ("grant_type", "client_credentials"),
                ("resource", resource),
                ("scope", scope),
            ])
            .send()
            .await
            .unwrap()
            .text()
            .await
            .map(|t| serde_json::from_str(&t).unwrap())
            .unwrap();
        answer["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("{answer}"))
            .to_string()
    }

    /// A token signed here with `key` under `kid`, carrying `claims`.
    pub(crate) fn forged(&self, key: &[u8], kid: &str, claims: &Value) -> String {
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
        header.kid = Some(kid.to_string());
        jsonwebtoken::encode(&header, claims, &jsonwebtoken::EncodingKey::from_rsa_der(key)).unwrap()
    }
}

pub(crate) fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

pub(crate) const INTROSPECTION: &str =
    "[introspection]\nclient_id = \"droidmcp\"\nclient_secret = \"droidmcp-secret-0123456789abcdef\"\n";

pub(crate) async fn droidmcp(provider: &Provider, home: &std::path::Path) -> HttpServer {
    let config = home.join("oauth.toml");
    std::fs::write(&config, INTROSPECTION).unwrap();
    HttpServer::start(
        &[
            "--sim",
            "--oauth-issuer",
            &provider.issuer,
            "--oauth-config",
            config.to_str().unwrap(),
        ],
        &[],
        home,
    )
    .await
}

/// A raw POST: its status, its `WWW-Authenticate`, its session id, its body.
pub(crate) async fn post(
    server: &HttpServer,
    token: Option<&str>,
    session: Option<&str>,
    message: &Value,
) -> (u16, String, Option<String>, String) {
    let mut request = http_client()
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.body(message.to_string()).send().await.unwrap();
    let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_string());
    let (status, challenge, session) = (
        response.status().as_u16(),
        header("www-authenticate").unwrap_or_default(),
        header("mcp-session-id"),
    );
    (status, challenge, session, response.text().await.unwrap())
}

pub(crate) fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
}

pub(crate) fn call(tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
}

/// A legacy session of `token`, initialized.
pub(crate) async fn session(server: &HttpServer, token: &str) -> String {
    let (status, _, session, text) = post(server, Some(token), None, &initialize()).await;
    assert_eq!(status, 200, "initialize: {text}");
    let session = session.expect("Mcp-Session-Id");
    let (status, ..) = post(
        server,
        Some(token),
        Some(&session),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(status, 202);
    session
}

/// Claude's connector flow, end to end, with a client we did not write: the 401, the
/// metadata, the authorization server's metadata, registration, the login and consent pages,
/// the code with PKCE and the resource, the token, then tools/list and a tool call.
#[tokio::test]
async fn the_python_sdks_oauth_client_signs_in_and_calls_a_tool() {
    let has_sdk = std::process::Command::new("python3")
        .args([
            "-c",
            "import mcp, httpx2; from mcp.client.auth import OAuthClientProvider",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_sdk {
        skip_or_fail("the MCP Python SDK 2.x is not installed (pip install 'mcp>=2,<3')");
        return;
    }
    let Some(provider) = provider().await else { return };
    let home = tempfile::tempdir().unwrap();
    let server = droidmcp(&provider, home.path()).await;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/python_oauth.py");
    let out = tokio::process::Command::new("python3")
        .args([script, &server.url, "carol"])
        .env("HOME", home.path())
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let seen: Value = serde_json::from_str(stdout.trim()).unwrap();
    let token = seen["token"].as_str().unwrap().to_string();
    let mut shown = seen.clone();
    shown["token"] = json!("…");
    println!("the Python SDK's OAuth client saw: {shown}");
    assert_eq!(seen["pages"], json!(["login", "consent"]));
    assert_eq!(
        seen["authorizeParams"]["resource"],
        json!(server.url),
        "RFC 8707: the resource is this server"
    );
    assert_eq!(seen["authorizeParams"]["code_challenge_method"], "S256");
    assert_eq!(seen["registered"], true, "dynamic client registration");
    assert_eq!(seen["grantedScope"], "droidmcp:read droidmcp:act");
    assert_eq!(seen["listError"], false);
    assert_eq!(seen["devices"].as_array().unwrap().len(), 1, "{seen}");
    // tools/list shows what the token may call: no adb-shell without droidmcp:shell.
    let tools: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(tools.contains(&"ui") && !tools.contains(&"adb-shell"), "{tools:?}");
    // The token the SDK got is a JWT for this resource, from that issuer, naming carol.
    let claims: Value = jsonwebtoken::dangerous::insecure_decode_claims(&token).unwrap();
    assert_eq!(
        (claims["aud"].as_str(), claims["iss"].as_str(), claims["sub"].as_str()),
        (Some(server.url.as_str()), Some(provider.issuer.as_str()), Some("carol"))
    );
    server.terminate().await;
}

/// Every refused token, with the status and header the spec names: 401 with `resource_metadata`
/// and `scope` (and `error="invalid_token"` when a token was sent), 403 `insufficient_scope`
/// naming the scope; a forged token that should pass does, so each refusal is the check's.
#[tokio::test]
async fn each_refused_token_gets_the_status_and_challenge_the_spec_names() {
    let Some(provider) = provider().await else { return };
    let home = tempfile::tempdir().unwrap();
    let server = droidmcp(&provider, home.path()).await;
    let metadata_url = server.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");
    // The metadata, for anyone (RFC 9728), at the suffixed path and the bare one.
    for url in [metadata_url.clone(), metadata_url.trim_end_matches("/mcp").to_string()] {
        let metadata: Value =
            serde_json::from_str(&http_client().get(&url).send().await.unwrap().text().await.unwrap()).unwrap();
        assert_eq!(metadata["resource"], json!(server.url), "{url}");
        assert_eq!(metadata["authorization_servers"], json!([provider.issuer]));
        assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
        assert!(
            metadata["scopes_supported"]
                .as_array()
                .unwrap()
                .contains(&json!("droidmcp:shell"))
        );
    }
    let claims = |iss: &str, aud: &str, exp: u64| json!({"iss": iss, "aud": aud, "sub": "mallory", "exp": exp, "iat": now(), "scope": "droidmcp:read droidmcp:act"});
    let good = claims(&provider.issuer, &server.url, now() + 300);
    let mut future = good.clone();
    future["nbf"] = json!(now() + 3600);
    let cases: Vec<(&str, Option<String>, u16, &str)> = vec![
        ("no token", None, 401, ""),
        (
            "wrong audience",
            Some(
                provider
                    .token("alice", "http://127.0.0.1:9/other", "droidmcp:read")
                    .await,
            ),
            401,
            "invalid_token",
        ),
        (
            "wrong issuer",
            Some(provider.forged(
                &provider.signing,
                &provider.kid,
                &claims("http://127.0.0.1:9", &server.url, now() + 300),
            )),
            401,
            "invalid_token",
        ),
        (
            "expired",
            Some(provider.forged(
                &provider.signing,
                &provider.kid,
                &claims(&provider.issuer, &server.url, now() - 3600),
            )),
            401,
            "invalid_token",
        ),
        (
            "not yet valid",
            Some(provider.forged(&provider.signing, &provider.kid, &future)),
            401,
            "invalid_token",
        ),
        (
            "bad signature",
            Some(provider.forged(&provider.stranger, &provider.kid, &good)),
            401,
            "invalid_token",
        ),
        (
            "unknown kid",
            Some(provider.forged(&provider.stranger, "rotated-away", &good)),
            401,
            "invalid_token",
        ),
        (
            "garbage",
            Some("not-a-token-at-all-0123456789".into()),
            401,
            "invalid_token",
        ),
        (
            "missing scope",
            Some(provider.token("reader", &server.url, "droidmcp:read").await),
            403,
            "insufficient_scope",
        ),
        (
            "forged right",
            Some(provider.forged(&provider.signing, &provider.kid, &good)),
            200,
            "",
        ),
    ];
    for (case, token, status, error) in &cases {
        // adb-device list needs droidmcp:read; the missing-scope case asks adb-shell (shell).
        let message = match *case {
            "missing scope" => call("adb-shell", json!({"operation": "run", "command": "echo no"})),
            _ => call("adb-device", json!({"operation": "list"})),
        };
        let (got, challenge, _, text) = post(&server, token.as_deref(), None, &initialize()).await;
        let (got, challenge, text) = match (*case, got) {
            ("missing scope" | "forged right", 200) => {
                let token = token.as_deref().unwrap();
                let theirs = session(&server, token).await;
                let (got, challenge, _, text) = post(&server, Some(token), Some(&theirs), &message).await;
                (got, challenge, text)
            }
            _ => (got, challenge, text),
        };
        println!("{case}: {got} {challenge}");
        assert_eq!(got, *status, "{case}: {text}");
        if *status == 200 {
            continue;
        }
        assert!(challenge.starts_with("Bearer "), "{case}: {challenge}");
        assert!(
            challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
            "{case}: {challenge}"
        );
        assert!(challenge.contains("scope=\""), "{case}: {challenge}");
        if error.is_empty() {
            assert!(
                !challenge.contains("error="),
                "{case}: no token, no error code (RFC 6750 §3.1): {challenge}"
            );
        } else {
            assert!(challenge.contains(&format!("error=\"{error}\"")), "{case}: {challenge}");
        }
        if *case == "missing scope" {
            assert!(
                challenge.contains("droidmcp:shell"),
                "the scope needed is named: {challenge}"
            );
            assert!(text.contains("droidmcp:shell"), "{text}");
        }
    }
    println!("{} token cases against oidc-provider", cases.len());
    server.terminate().await;
}

/// Two principals (two `sub`s): one cannot reach the other's session, and each sees the tools
/// its scopes allow; an opaque token is introspected (RFC 7662) and names its principal too.
#[tokio::test]
async fn a_second_principal_cannot_reach_the_first_ones_session() {
    let Some(provider) = provider().await else { return };
    let home = tempfile::tempdir().unwrap();
    let server = droidmcp(&provider, home.path()).await;
    let all = "droidmcp:read droidmcp:act droidmcp:shell";
    let alice = provider.token("alice", &server.url, all).await;
    let bob = provider.token("bob", &server.url, all).await;
    let theirs = session(&server, &alice).await;
    let (status, _, _, text) = post(
        &server,
        Some(&alice),
        Some(&theirs),
        &call("adb-shell", json!({"operation": "run", "command": "echo alice-here"})),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("alice-here"), "{text}");
    // Bob with Alice's session gets what a made-up session gets.
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let (with_hers, _, _, hers_text) = post(&server, Some(&bob), Some(&theirs), &list).await;
    let (made_up, _, _, made_up_text) = post(&server, Some(&bob), Some("made-up-session-id"), &list).await;
    assert_eq!(with_hers, made_up, "{hers_text} / {made_up_text}");
    assert_ne!(with_hers, 200, "{hers_text}");
    // Each principal's tools/list: the reader sees no adb-shell, Alice does.
    let reader = provider.token("reader", &server.url, "droidmcp:read").await;
    for (who, token, shell) in [("reader", &reader, false), ("alice", &alice, true)] {
        let mine = session(&server, token).await;
        let (status, _, _, text) = post(&server, Some(token), Some(&mine), &list).await;
        assert_eq!(status, 200, "{text}");
        assert_eq!(text.contains("\"adb-shell\""), shell, "{who}: {text}");
        assert!(text.contains("\"adb-device\""), "{who}: {text}");
    }
    // An opaque token, introspected: it works, as its own principal.
    let opaque = provider.token("opaque", &server.url, all).await;
    assert!(jsonwebtoken::decode_header(&opaque).is_err(), "opaque: {opaque}");
    let (status, _, _, text) = post(&server, Some(&opaque), None, &initialize()).await;
    assert_eq!(status, 200, "introspected: {text}");
    let (status, challenge, _, _) = post(
        &server,
        Some("opaque-but-made-up-0123456789abcdef"),
        None,
        &initialize(),
    )
    .await;
    assert_eq!(status, 401);
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    server.terminate().await;
}
