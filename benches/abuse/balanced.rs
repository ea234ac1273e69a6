//! The team's lab through the balancer (issue 45): Debian's haproxy in front of 1, then 2
//! `serve --http` instances sharing one redis-server (`--state`) and one simulated phone. Bob's
//! clients (`CLIENTS` at once, MCP 2026-07-28, each request on its own, so plain round robin)
//! make a fixed mix of calls: tools/list, `adb-device properties` (a cacheId written to Redis),
//! `cache get` of one (read from Redis by whichever instance answers) and `adb-shell echo`. Each
//! configuration is measured quiet, then while Alice plays the abuse cases through the same
//! balancer (`super::alice`). Prints calls/s, p50 and p99 for each.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::{ALICE, BOB, alice, client, post, report};

/// Bob's clients at once, and his calls in each phase.
const CLIENTS: usize = 8;
const CALLS: usize = 400;

/// A `serve --http` instance and where it serves.
pub struct Instance {
    pub child: tokio::process::Child,
    pub url: String,
}

/// Starts `bin serve --http 127.0.0.1:0 ARGS` with both tokens, and waits for its address.
pub async fn serve(bin: &str, home: &std::path::Path, args: &[&str]) -> Instance {
    let mut child = tokio::process::Command::new(bin)
        .args(["serve", "--http", "127.0.0.1:0", "--token"])
        .arg(format!("alice={ALICE}"))
        .arg("--token")
        .arg(format!("bob={BOB}"))
        .args(args)
        .env("HOME", home)
        .env("RUST_LOG", "error")
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("droidmcp");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("the server says where it listens");
        if let Some(url) = line.split("MCP at ").nth(1) {
            break url.trim().to_string();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Instance { child, url }
}

/// A 2026-07-28 `tools/call` (or tools/list) on its own: the message's result.
async fn request(http: &reqwest::Client, url: &str, method: &str, params: Value) -> Result<Value, String> {
    let mut params = params;
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}});
    let name = params["name"].as_str().unwrap_or_default().to_string();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut headers = vec![("mcp-protocol-version", "2026-07-28"), ("mcp-method", method)];
    if !name.is_empty() {
        headers.push(("mcp-name", &name));
    }
    let (status, _, text) = post(http, url, BOB, &headers, body.to_string().into_bytes()).await?;
    let json = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|l| l.starts_with('{'))
        .unwrap_or(text.as_str());
    let message: Value = serde_json::from_str(json).map_err(|e| format!("{status} {e}: {text:.200}"))?;
    match (&message["result"], message["result"]["isError"] == true) {
        (Value::Null, _) | (_, true) => Err(format!("{method} {status}: {message:.300}")),
        (result, false) => Ok(result.clone()),
    }
}

/// Call `i` of the mix: its time, or what went wrong.
async fn mixed(http: &reqwest::Client, url: &str, cache_id: &str, i: usize) -> Result<Duration, String> {
    let t = Instant::now();
    let tool = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
    match i % 4 {
        0 => request(http, url, "tools/list", json!({})).await?,
        1 => {
            request(
                http,
                url,
                "tools/call",
                tool("adb-device", json!({"operation": "properties"})),
            )
            .await?
        }
        2 => {
            let get = json!({"operation": "get", "id": cache_id, "prefix": "ro.build.version"});
            request(http, url, "tools/call", tool("cache", get)).await?
        }
        _ => {
            let shell = json!({"operation": "run", "command": format!("echo bob-{i}")});
            request(http, url, "tools/call", tool("adb-shell", shell)).await?
        }
    };
    Ok(t.elapsed())
}

/// Bob's `CALLS` calls from `CLIENTS` clients at once: the times sorted, and the failures.
async fn bob(url: &str, cache_id: &str) -> (Vec<Duration>, Vec<String>) {
    let workers = (0..CLIENTS).map(|c| {
        let (url, cache_id) = (url.to_string(), cache_id.to_string());
        tokio::spawn(async move {
            let http = client();
            let mut results = Vec::new();
            for i in (c..CALLS).step_by(CLIENTS) {
                results.push(mixed(&http, &url, &cache_id, i).await);
            }
            results
        })
    });
    let (mut times, mut failures) = (Vec::new(), Vec::new());
    for worker in futures::future::join_all(workers).await {
        for result in worker.expect("a client ran") {
            match result {
                Ok(t) => times.push(t),
                Err(e) => failures.push(e),
            }
        }
    }
    times.sort();
    (times, failures)
}

/// The lab with 1, then 2 instances: each quiet and under Alice's abuse.
pub async fn run(bin: &str) {
    let Some(redis) = testkit::redis_server() else { return };
    let home = tempfile::tempdir().unwrap();
    let mut sim = tokio::process::Command::new(bin)
        .args(["sim", "--listen", "127.0.0.1:0"])
        .env("HOME", home.path())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("droidmcp sim");
    let first = BufReader::new(sim.stdout.take().unwrap())
        .lines()
        .next_line()
        .await
        .unwrap()
        .expect("the simulator says where it listens");
    let device = format!("tcp:{}", first.trim_start_matches("listening on ").trim());
    for count in [1, 2] {
        let state = redis.url(count);
        let mut instances = Vec::new();
        for _ in 0..count {
            instances.push(serve(bin, home.path(), &["--adb", &device, "--state", &state]).await);
        }
        let authorities: Vec<String> = instances
            .iter()
            .map(|i| i.url.trim_start_matches("http://").trim_end_matches("/mcp").to_string())
            .collect();
        // The docs' stickiness, which Alice's legacy sessions use.
        let sticky = "    stick-table type string len 64 size 100k expire 30m\n    stick match req.hdr(mcp-session-id)\n    stick store-response res.hdr(mcp-session-id)\n";
        let Some(lb) = testkit::haproxy(&authorities, sticky) else {
            return;
        };
        let props = request(
            &client(),
            &lb.url,
            "tools/call",
            json!({"name": "adb-device", "arguments": {"operation": "properties"}}),
        )
        .await
        .expect("a first call through the balancer");
        let cache_id = props["structuredContent"]["cacheId"]
            .as_str()
            .expect("a cacheId")
            .to_string();
        let label = format!("haproxy + {count} instance{}", if count == 1 { "" } else { "s" });

        let t = Instant::now();
        let quiet = bob(&lb.url, &cache_id).await;
        report(&format!("{label}, {CLIENTS} clients, quiet"), &quiet, t.elapsed());

        let stop = tokio_util::sync::CancellationToken::new();
        let addr = lb
            .url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_string();
        let abuse = tokio::spawn(alice(client(), lb.url.clone(), addr, stop.clone()));
        tokio::time::sleep(Duration::from_secs(2)).await;
        let t = Instant::now();
        let loaded = bob(&lb.url, &cache_id).await;
        report(
            &format!("{label}, {CLIENTS} clients, under abuse"),
            &loaded,
            t.elapsed(),
        );
        stop.cancel();
        println!("  alice sent: {}", abuse.await.unwrap());
        drop(lb);
        for mut instance in instances {
            let _ = instance.child.kill().await;
        }
    }
    let _ = sim.kill().await;
}
