//! Abuse: one `serve --http` server, two tokens. Bob makes 200 calls (a 2026-07-28 stateless
//! tools/list and an `adb-shell` call in a legacy session, in turn, 4 at once), first on a quiet
//! server, then while Alice opens 70 sessions she never ends, sends 4 MiB `[[],[],…]` bodies 24
//! at a time, and holds 20 idle connections and 5 that drip their header. Prints Bob's failures,
//! p50 and p99 in each phase, and the server's peak memory. (tests/it/http_abuse.rs asserts the
//! correctness of each case; this measures what they cost Bob.)
//!
//! Then the same through the balancer, with one instance and with two (`abuse/balanced.rs`).
//!
//! `cargo bench --bench abuse` (`-- single` or `-- balanced` runs one part;
//! `DROIDMCP_BIN=path/to/droidmcp` measures another build).

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

#[path = "abuse/balanced.rs"]
mod balanced;

const ALICE: &str = "alice-token-0123456789abcdef";
const BOB: &str = "bob-token-0123456789abcdef0";
const CALLS: usize = 200;

fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().unwrap()
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Result<(u16, Option<String>, String), String> {
    let mut request = http
        .post(url)
        .header("authorization", format!("Bearer {token}"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    for (n, v) in headers {
        request = request.header(*n, *v);
    }
    let response = request.body(body).send().await.map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let text = response.text().await.map_err(|e| e.to_string())?;
    Ok((status, session, text))
}

fn initialize() -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    .to_string()
    .into_bytes()
}

async fn session(http: &reqwest::Client, url: &str, token: &str) -> Result<String, String> {
    let legacy = [("mcp-protocol-version", "2025-06-18")];
    let (status, session, text) = post(http, url, token, &legacy, initialize()).await?;
    let session = session.ok_or(format!("initialize: {status} {text}"))?;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        .to_string()
        .into_bytes();
    post(http, url, token, &[legacy[0], ("mcp-session-id", &session)], note).await?;
    Ok(session)
}

/// One of Bob's calls: its time, or what went wrong.
async fn bob_call(http: &reqwest::Client, url: &str, session: &str, i: usize) -> Result<Duration, String> {
    let t = Instant::now();
    let (status, text) = if i.is_multiple_of(2) {
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}});
        let body = json!({"jsonrpc": "2.0", "id": i, "method": "tools/list", "params": {"_meta": meta}});
        let headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")];
        let (s, _, t) = post(http, url, BOB, &headers, body.to_string().into_bytes()).await?;
        (s, t)
    } else {
        let body = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "adb-shell",
            "arguments": {"operation": "run", "command": format!("echo bob-{i}")}}});
        let headers = [("mcp-protocol-version", "2025-06-18"), ("mcp-session-id", session)];
        let (s, _, t) = post(http, url, BOB, &headers, body.to_string().into_bytes()).await?;
        (s, t)
    };
    if status != 200 || !(text.contains("adb-shell") || text.contains(&format!("bob-{i}"))) {
        return Err(format!("{status} {}", &text[..text.len().min(200)]));
    }
    Ok(t.elapsed())
}

/// Bob's calls, 4 at once: the times sorted, and the failures.
async fn bob(http: &reqwest::Client, url: &str) -> (Vec<Duration>, Vec<String>) {
    let mut times = Vec::new();
    let mut failures = Vec::new();
    // A session refused: its calls fail below, with the reason first.
    let session = session(http, url, BOB).await.unwrap_or_else(|e| {
        failures.push(format!("bob's session: {e}"));
        "none".into()
    });
    for chunk in (0..CALLS).collect::<Vec<_>>().chunks(4) {
        let calls = chunk.iter().map(|i| bob_call(http, url, &session, *i));
        for result in futures::future::join_all(calls).await {
            match result {
                Ok(t) => times.push(t),
                Err(e) => failures.push(e),
            }
        }
    }
    times.sort();
    (times, failures)
}

fn report(phase: &str, (times, failures): &(Vec<Duration>, Vec<String>), wall: Duration) {
    let at = |q: f64| {
        times
            .get(((times.len() as f64 * q) as usize).min(times.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    println!(
        "{phase}: {} calls in {:.1} s ({:.0}/s), {} failed, p50 {:?}, p99 {:?}, max {:?}",
        times.len() + failures.len(),
        wall.as_secs_f64(),
        times.len() as f64 / wall.as_secs_f64(),
        failures.len(),
        at(0.50),
        at(0.99),
        times.last().copied().unwrap_or_default()
    );
    for f in failures.iter().take(3) {
        println!("  failed: {f}");
    }
}

fn peak_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("VmHWM:")
                    .map(|v| v.trim().trim_end_matches(" kB").parse().unwrap_or(0))
            })
        })
        .unwrap_or(0)
}

/// Alice, until `stop`: sessions never ended, floods of cheap values, idle and dripping
/// connections. Returns how many of each she sent.
async fn alice(http: reqwest::Client, url: String, addr: String, stop: tokio_util::sync::CancellationToken) -> Value {
    let mut flood = String::with_capacity(4 << 20);
    flood.push('[');
    while flood.len() < (4 << 20) - 8 {
        flood.push_str("[],");
    }
    flood.push_str("[]]");
    let mut sessions = 0;
    let mut floods = 0;
    let mut held = Vec::new();
    for _ in 0..20 {
        held.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    for _ in 0..5 {
        let mut s = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let _ = s.write_all(b"POST /mcp HTTP/1.1\r\nX-Drip: ").await;
        held.push(s);
    }
    while !stop.is_cancelled() {
        for _ in 0..70 {
            if session(&http, &url, ALICE).await.is_ok() {
                sessions += 1;
            }
        }
        let wave = (0..24).map(|_| {
            post(
                &http,
                &url,
                ALICE,
                &[("mcp-protocol-version", "2025-06-18")],
                flood.clone().into_bytes(),
            )
        });
        floods += futures::future::join_all(wave)
            .await
            .iter()
            .filter(|r| matches!(r, Ok((400, ..))))
            .count();
        for s in held.iter_mut() {
            let _ = s.write_all(b"a").await;
        }
    }
    json!({"sessions": sessions, "floodsRefused": floods, "idleOrDripping": held.len()})
}

#[tokio::main]
async fn main() {
    // DROIDMCP_BIN: another build to compare (main's, say).
    let bin = std::env::var("DROIDMCP_BIN").unwrap_or(env!("CARGO_BIN_EXE_droidmcp").to_string());
    let part = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    if part.as_deref() != Some("balanced") {
        single(&bin).await;
    }
    if part.as_deref() != Some("single") {
        balanced::run(&bin).await;
    }
}

/// One instance, Bob quiet and under Alice's abuse.
async fn single(bin: &str) {
    let home = tempfile::tempdir().unwrap();
    let balanced::Instance { mut child, url } = balanced::serve(bin, home.path(), &["--sim"]).await;
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let pid = child.id().unwrap();
    let http = client();

    let t = Instant::now();
    let quiet = bob(&http, &url).await;
    report("quiet", &quiet, t.elapsed());
    let before = peak_kib(pid);

    let stop = tokio_util::sync::CancellationToken::new();
    let abuse = tokio::spawn(alice(client(), url.clone(), addr, stop.clone()));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let t = Instant::now();
    let loaded = bob(&http, &url).await;
    report("under abuse", &loaded, t.elapsed());
    stop.cancel();
    let sent = abuse.await.unwrap();
    println!(
        "alice sent: {sent}; server peak RSS {} MiB before the abuse, {} MiB after",
        before / 1024,
        peak_kib(pid) / 1024
    );
    let _ = child.kill().await;
}
