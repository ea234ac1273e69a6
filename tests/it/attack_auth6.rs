//! An outsider's traps for the resource server's key handling (verify.rs `keys()`, one fetch at
//! a time under `fetching`, and introspection's metadata under the same lock): what a token whose
//! keys cannot be had does to the tokens queued behind it, to other issuers, to static tokens and
//! to introspected tokens (issue 45: no token can slow, lock out, read or end another's work).
//! Orderings are asserted (answered while another call is pending; fetches counted), never times.

use std::time::Duration;

use serde_json::{Value, json};

use crate::attack_lab::{Fake, Reply, STATIC, bearer, jwks, raw, token_of};
use crate::common::*;
use crate::oauth::{INTROSPECTION, Provider, now, provider};

/// A server taking these issuers (`[[issuers]]` TOML lines), plus bob's static token.
async fn serving(home: &std::path::Path, toml: &str) -> HttpServer {
    let config = home.join("oauth.toml");
    std::fs::write(&config, toml).unwrap();
    let bob = format!("bob={STATIC}");
    HttpServer::start(
        &["--sim", "--oauth-config", config.to_str().unwrap(), "--token", &bob],
        &[],
        home,
    )
    .await
}

/// `raw` in a task of its own, to be answered while the test goes on.
fn pending(server: &HttpServer, token: String) -> tokio::task::JoinHandle<(u16, String)> {
    let url = server.url.clone();
    tokio::spawn(async move { raw(&url, "", &bearer(&token)).await })
}

/// The three discovery URLs the server tries for `issuer` (`ORIGIN/PATH`), by path.
fn discovery(path: &str) -> [String; 3] {
    [
        format!("/.well-known/oauth-authorization-server{path}"),
        format!("{path}/.well-known/openid-configuration"),
        format!("/.well-known/openid-configuration{path}"),
    ]
}

/// Was a trap, fixed (a fetch that ended while a call waited is its answer: `Keys::keys_tried`).
/// The issuer's keys were never had (the server just started) and its JWKS hangs: three of its
/// users' tokens arrive at once. They queue on the one fetch; when it gives up, each waiter finds
/// no set and fetches again, one after another, so the n-th waits n fetch timeouts (100 tokens:
/// 1,000 s, past every client's timeout) and the authorization server is asked once per token.
/// Expected: the waiters share the fetch they waited for (as a rotation's waiters share its
/// success), one JWKS request in all. Bob's static token is answered meanwhile (a guard).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_queued_behind_a_first_jwks_fetch_that_hangs_share_it_not_fetch_again_each() {
    let Some(provider) = provider().await else { return };
    let fake = Fake::start().await;
    fake.route("/first/jwks", Reply::Hang);
    let home = tempfile::tempdir().unwrap();
    let issuer = format!("{}/first", fake.url);
    let server = serving(
        home.path(),
        &format!("[[issuers]]\nurl = \"{issuer}\"\njwks_uri = \"{issuer}/jwks\"\n"),
    )
    .await;
    let calls: Vec<_> = (0..3)
        .map(|i| pending(&server, token_of(&provider, &issuer, &server.url, &format!("user{i}"))))
        .collect();
    while fake.asked("/first/jwks") == 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (got, challenge) = raw(&server.url, "", &bearer(STATIC)).await;
    assert_eq!(got, 200, "bob's static token while the JWKS hangs: {challenge}");
    assert!(
        calls.iter().any(|c| !c.is_finished()),
        "bob was answered only after the fetch"
    );
    let mut answers = Vec::new();
    for call in calls {
        answers.push(call.await.unwrap());
    }
    let fetches = fake.asked("/first/jwks");
    println!(
        "3 tokens at once, first JWKS fetch hangs: {:?}; JWKS asked {fetches} times",
        answers.iter().map(|a| a.0).collect::<Vec<_>>()
    );
    assert!(answers.iter().all(|(got, _)| *got == 503), "{answers:?}");
    assert_eq!(
        fetches, 1,
        "each token queued behind the hung fetch fetched again, one after another"
    );
    server.terminate().await;
}

/// Was a trap, fixed (`Keys::metadata_tried`, read before a call waits).
/// The same through discovery (no `jwks_uri` configured) and introspection: an issuer whose
/// first discovery URL hangs (the others 404), two JWTs and an opaque token at once. Each queued
/// call walks the three discovery URLs again under the lock, 10 s each, serially (the third
/// call is answered after 30 s; a flood of N, after N × 10 s). Expected: one walk, its failure
/// shared by the calls that waited for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_queued_behind_a_discovery_that_hangs_share_it_not_walk_it_again_each() {
    let Some(provider) = provider().await else { return };
    let fake = Fake::start().await;
    let home = tempfile::tempdir().unwrap();
    let issuer = format!("{}/idp", fake.url);
    // The first discovery URL hangs (the window in which all three calls arrive); the others 404.
    fake.route(&discovery("/idp")[0], Reply::Hang);
    let server = serving(
        home.path(),
        &format!("[[issuers]]\nurl = \"{issuer}\"\n{INTROSPECTION}"),
    )
    .await;
    let mut calls: Vec<_> = (0..2)
        .map(|i| pending(&server, token_of(&provider, &issuer, &server.url, &format!("user{i}"))))
        .collect();
    calls.extend((0..1).map(|i| pending(&server, format!("opaque-token-{i}-0123456789"))));
    let mut answers = Vec::new();
    for call in calls {
        answers.push(call.await.unwrap().0);
    }
    let walks: Vec<usize> = discovery("/idp").iter().map(|p| fake.asked(p)).collect();
    println!("2 JWTs and an opaque token at once, discovery hangs: {answers:?}; discovery URLs asked {walks:?}");
    assert!(answers.iter().all(|got| *got == 503), "{answers:?}");
    assert_eq!(walks, vec![1, 1, 1], "each queued call walked discovery again");
    server.terminate().await;
}

/// Two issuers: one whose discovery hangs (no `jwks_uri`), and the real provider whose keys are
/// not fetched yet. While the first's token waits, the provider's token (its own first fetch,
/// through its own discovery) and bob's static token are answered. A guard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_issuer_whose_discovery_hangs_holds_no_other_issuers_first_fetch() {
    let Some(provider) = provider().await else { return };
    let fake = Fake::start().await;
    for path in discovery("/slow") {
        fake.route(&path, Reply::Hang);
    }
    let home = tempfile::tempdir().unwrap();
    let slow = format!("{}/slow", fake.url);
    let server = serving(
        home.path(),
        &format!(
            "[[issuers]]\nurl = \"{slow}\"\n[[issuers]]\nurl = \"{}\"\n",
            provider.issuer
        ),
    )
    .await;
    let waiting = pending(&server, token_of(&provider, &slow, &server.url, "stuck"));
    while fake.asked(&discovery("/slow")[0]) == 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let alice = token_of(&provider, &provider.issuer, &server.url, "alice");
    for (who, token) in [
        ("alice (the provider's, first fetch)", alice.as_str()),
        ("bob (static)", STATIC),
    ] {
        let (got, challenge) = raw(&server.url, "", &bearer(token)).await;
        assert_eq!(got, 200, "{who} while another issuer's discovery hangs: {challenge}");
    }
    assert!(
        !waiting.is_finished(),
        "the others were answered only once discovery gave up"
    );
    let (got, challenge) = waiting.await.unwrap();
    println!("the hung issuer's token: {got} {challenge}");
    assert_eq!(got, 503, "{challenge}");
    server.terminate().await;
}

/// One issuer, found by discovery, whose JWKS hangs on the first fetch; introspection takes its
/// endpoint from the same metadata. An opaque token is answered while the JWT's fetch hangs (the
/// metadata is had; only the keys are awaited). A guard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opaque_token_is_introspected_while_a_jwt_of_its_issuer_waits_for_keys() {
    let Some(provider) = provider().await else { return };
    let fake = Fake::start().await;
    let opaque = "opaque-ivy-0123456789abcdef";
    fake.route(
        "/.well-known/oauth-authorization-server",
        Reply::Json(json!({
            "issuer": fake.url,
            "jwks_uri": format!("{}/jwks", fake.url),
            "introspection_endpoint": format!("{}/introspect", fake.url),
        })),
    );
    fake.route("/jwks", Reply::Hang);
    let home = tempfile::tempdir().unwrap();
    let server = serving(
        home.path(),
        &format!("[[issuers]]\nurl = \"{}\"\n{INTROSPECTION}", fake.url),
    )
    .await;
    let ours = server.url.clone();
    fake.route(
        "/introspect",
        Reply::Introspect(
            [(
                opaque.to_string(),
                Reply::Json(json!({"active": true, "sub": "ivy", "aud": ours, "iss": fake.url, "scope": "droidmcp:read", "exp": now() + 300})),
            )]
            .into(),
        ),
    );
    let waiting = pending(&server, token_of(&provider, &fake.url, &server.url, "jay"));
    while fake.asked("/jwks") == 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (got, challenge) = raw(&server.url, "", &bearer(opaque)).await;
    assert_eq!(
        got, 200,
        "the opaque token while the JWT's keys are fetched: {challenge}"
    );
    assert!(
        !waiting.is_finished(),
        "the opaque token was answered only once the fetch gave up"
    );
    let (got, challenge) = waiting.await.unwrap();
    println!("the JWT whose first JWKS fetch hung: {got} {challenge}");
    assert_eq!(got, 503, "{challenge}");
    server.terminate().await;
}

/// A token with no `kid` (the set has one key), signed by the provider's key.
fn without_kid(provider: &Provider, claims: &Value) -> String {
    let header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    jsonwebtoken::encode(
        &header,
        claims,
        &jsonwebtoken::EncodingKey::from_rsa_der(&provider.signing),
    )
    .unwrap()
}

/// Keys held (one, kid "old"); once the set may be fetched again, 40 made-up kids arrive at once
/// and the JWKS hangs. Meanwhile a token under the held kid and one with no `kid` (the set's one
/// key) are answered; the flood makes one fetch, not one each (40 × 10 s), and every made-up kid
/// is refused once it gives up. A guard.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_made_up_kids_while_the_jwks_hangs_makes_one_fetch_and_holds_no_held_key() {
    let Some(provider) = provider().await else { return };
    let fake = Fake::start().await;
    let mut key = jwks(&provider).await["keys"][0].clone();
    key["kid"] = json!("old");
    fake.route("/rot/jwks", Reply::Json(json!({ "keys": [key] })));
    let home = tempfile::tempdir().unwrap();
    let issuer = format!("{}/rot", fake.url);
    let server = serving(
        home.path(),
        &format!("[[issuers]]\nurl = \"{issuer}\"\njwks_uri = \"{issuer}/jwks\"\n"),
    )
    .await;
    let claims = |sub: &str| json!({"iss": issuer, "aud": server.url, "sub": sub, "exp": now() + 300, "iat": now()});
    let (got, challenge) = raw(
        &server.url,
        "",
        &bearer(&provider.forged(&provider.signing, "old", &claims("alice"))),
    )
    .await;
    assert_eq!(got, 200, "{challenge}");

    fake.route("/rot/jwks", Reply::Hang);
    tokio::time::sleep(droidmcp::http::oauth::verify::REFRESH_EVERY + Duration::from_secs(1)).await;
    let flood: Vec<_> = (0..40)
        .map(|i| {
            pending(
                &server,
                provider.forged(&provider.signing, &format!("made-up-{i}"), &claims("mallory")),
            )
        })
        .collect();
    while fake.asked("/rot/jwks") < 2 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for (who, token) in [
        (
            "the held kid",
            provider.forged(&provider.signing, "old", &claims("alice")),
        ),
        ("no kid", without_kid(&provider, &claims("nokid"))),
    ] {
        let (got, challenge) = raw(&server.url, "", &bearer(&token)).await;
        assert_eq!(got, 200, "{who} during the flood: {challenge}");
    }
    assert!(
        flood.iter().any(|c| !c.is_finished()),
        "held keys were answered only after the fetch"
    );
    let mut answers = Vec::new();
    for call in flood {
        answers.push(call.await.unwrap().0);
    }
    let fetches = fake.asked("/rot/jwks");
    println!("40 made-up kids at once, the refetch hung: {answers:?}; JWKS asked {fetches} times in all");
    assert!(answers.iter().all(|got| *got == 401), "{answers:?}");
    assert_eq!(fetches, 2, "the flood fetched more than once");
    server.terminate().await;
}
