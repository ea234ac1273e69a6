//! Load: 50 droidmcp server processes (stdio, as 50 clients would start them) × 20 mixed calls
//! against one simulator through one adb server; then one server with 100 concurrent calls on
//! the direct route; then 20 clients × 4 simulated devices (one adb server), once as 20 stdio
//! server processes and once as 20 sessions of one `serve --http` server, with the memory each
//! client costs; then the 20 sessions again with the 4 devices behind 3 sources (two adb
//! servers and one direct endpoint, serials qualified where they collide). Prints the failures, throughput and p50/p90/p99 of the call times.
//!
//! `cargo bench --bench load` (needs `adb` on PATH; prints a reason and exits otherwise).

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use droidmcp::sim::{self, AuthPolicy, Simulator};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

const PROCESSES: usize = 50;
const CALLS_EACH: usize = 20;
const CONCURRENT: usize = 100;
const CLIENTS: usize = 20;
const DEVICES: usize = 4;

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// The calls an assistant makes most, in turn.
fn mixed(i: usize) -> (&'static str, Value) {
    match i % 8 {
        0 => ("adb-device", json!({"operation": "properties"})),
        1 => ("adb-app", json!({"operation": "list", "limit": 10})),
        2 => ("ui", json!({"operation": "dump"})),
        3 => ("adb-logcat", json!({"operation": "read", "lines": 10})),
        4 => (
            "adb-shell",
            json!({"operation": "run", "command": format!("echo call-{i}")}),
        ),
        5 => ("ui", json!({"operation": "find", "text": "Settings"})),
        6 => ("adb-device", json!({"operation": "health"})),
        _ => ("ui", json!({"operation": "screenshot"})),
    }
}

async fn serve(args: &[&str], envs: &[(&str, &str)], home: &std::path::Path) -> anyhow::Result<Client> {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_droidmcp"));
    cmd.args(args).env("RUST_LOG", "error").env("HOME", home);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()?;
    Ok(().serve(transport).await?)
}

/// One call: its time, or what went wrong.
async fn timed(client: &Client, (tool, args): (&'static str, Value)) -> Result<Duration, String> {
    let t = Instant::now();
    let params = CallToolRequestParams::new(tool).with_arguments(args.as_object().cloned().unwrap_or_default());
    match client.call_tool(params).await {
        Ok(r) if r.is_error != Some(true) => Ok(t.elapsed()),
        Ok(r) => Err(format!(
            "{tool}: {:?}",
            r.content.first().and_then(|c| c.as_text()).map(|t| &t.text)
        )),
        Err(e) => Err(format!("{tool}: protocol error {e}")),
    }
}

fn report(what: &str, results: Vec<Result<Duration, String>>, took: Duration) {
    let mut times: Vec<Duration> = results.iter().filter_map(|r| r.as_ref().ok().copied()).collect();
    let failures: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    times.sort();
    let at = |q: f64| {
        times
            .get(((times.len() as f64 * q) as usize).min(times.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    println!(
        "{what}: {} calls in {:.1} s, {} failed; p50 {:.0} ms, p90 {:.0} ms, p99 {:.0} ms",
        results.len(),
        took.as_secs_f64(),
        failures.len(),
        at(0.5),
        at(0.9),
        at(0.99)
    );
    for f in failures.iter().take(5) {
        println!("  failed: {f}");
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    if Command::new("adb").arg("version").output().is_err() {
        println!("load: skipped, the adb program is not installed (apt-get install -y adb)");
        return Ok(());
    }
    let profile = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pixel-emulator");
    let handle = sim::start(
        Simulator::load(&profile, None, AuthPolicy::None)?,
        SocketAddr::from(([127, 0, 0, 1], 0)),
    )
    .await?;
    let serial = handle.addr.to_string();

    let home = tempfile::tempdir()?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port()
        .to_string();
    let adb = |args: &[&str]| {
        Command::new("adb")
            .args(["-P", &port])
            .args(args)
            .env("HOME", home.path())
            .output()
    };
    adb(&["start-server"])?;
    adb(&["connect", &serial])?;
    adb(&["-s", &serial, "wait-for-device"])?;

    // 50 processes, 20 calls each, all at once.
    let started = Instant::now();
    let mut clients = Vec::new();
    for _ in 0..PROCESSES {
        let (home, port, serial) = (home.path().to_path_buf(), port.clone(), serial.clone());
        clients.push(tokio::spawn(async move {
            let client = serve(&["--device", &serial], &[("ANDROID_ADB_SERVER_PORT", &port)], &home).await?;
            let mut results = Vec::new();
            for i in 0..CALLS_EACH {
                results.push(timed(&client, mixed(i)).await);
            }
            let _ = client.cancel().await;
            anyhow::Ok(results)
        }));
    }
    let mut results = Vec::new();
    for c in clients {
        match c.await? {
            Ok(r) => results.extend(r),
            Err(e) => results.push(Err(format!("a server did not start: {e}"))),
        }
    }
    report(
        &format!("{PROCESSES} servers × {CALLS_EACH} mixed calls, one adb server"),
        results,
        started.elapsed(),
    );

    // One server, 100 calls at once, on the direct route.
    let client = Arc::new(serve(&["--adb", &format!("tcp:{serial}")], &[], home.path()).await?);
    timed(&client, mixed(4)).await.map_err(anyhow::Error::msg)?;
    let started = Instant::now();
    let mut calls = Vec::new();
    for i in 0..CONCURRENT {
        let client = client.clone();
        calls.push(tokio::spawn(async move { timed(&client, mixed(i)).await }));
    }
    let mut results = Vec::new();
    for c in calls {
        results.push(c.await?);
    }
    report(
        &format!("one server, {CONCURRENT} concurrent mixed calls, direct route"),
        results,
        started.elapsed(),
    );
    // 20 clients × 4 devices: stdio processes, then sessions of one HTTP server.
    let mut serials = vec![serial.clone()];
    let mut sims = Vec::new();
    for _ in 1..DEVICES {
        let more = sim::start(
            Simulator::load(&profile, None, AuthPolicy::None)?,
            SocketAddr::from(([127, 0, 0, 1], 0)),
        )
        .await?;
        let serial = more.addr.to_string();
        adb(&["connect", &serial])?;
        adb(&["-s", &serial, "wait-for-device"])?;
        serials.push(serial);
        sims.push(more);
    }
    clients_by_transport(&serials, &port, home.path()).await?;

    // The same 4 devices behind 3 sources: the first adb server (all 4), a second one (the last
    // 2) and device 1 direct. Sessions name them as the list does: bare where one source sees
    // the serial, `label/serial` where several do.
    let port_b = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port()
        .to_string();
    let adb_b = |args: &[&str]| {
        Command::new("adb")
            .args(["-P", &port_b])
            .args(args)
            .env("HOME", home.path())
            .output()
    };
    adb_b(&["start-server"])?;
    for serial in &serials[2..] {
        adb_b(&["connect", serial])?;
        adb_b(&["-s", serial, "wait-for-device"])?;
    }
    let sources = [
        format!("a=server:127.0.0.1:{port}"),
        format!("b=server:127.0.0.1:{port_b}"),
        format!("direct=tcp:{}", serials[1]),
    ];
    let targets = [
        serials[0].clone(),
        format!("direct/{}", serials[1]),
        format!("b/{}", serials[2]),
        format!("b/{}", serials[3]),
    ];
    let mut args = vec!["serve", "--http", "127.0.0.1:0", "--no-auth"];
    for source in &sources {
        args.extend(["--adb", source.as_str()]);
    }
    http_sessions(
        "3 sources (2 adb servers + 1 direct)",
        &args,
        &[],
        home.path(),
        &targets,
        0,
    )
    .await?;
    adb_b(&["kill-server"])?;
    adb(&["kill-server"])?;
    Ok(())
}

/// A process's resident memory, in MiB (Linux; 0 elsewhere).
fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

/// `mixed(i)` aimed at one device.
fn on(device: &str, i: usize) -> (&'static str, Value) {
    let (tool, mut args) = mixed(i);
    args["device"] = json!(device);
    (tool, args)
}

/// CLIENTS clients, client k on device k % DEVICES, CALLS_EACH mixed calls each, all at once:
/// first each client its own stdio server process, then each a session of one HTTP server.
async fn clients_by_transport(serials: &[String], port: &str, home: &std::path::Path) -> anyhow::Result<()> {
    let env = [("ANDROID_ADB_SERVER_PORT", port)];
    let devices = serials.len();

    let started = Instant::now();
    let (mut stdio, mut pids) = (Vec::new(), Vec::new());
    for k in 0..CLIENTS {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_droidmcp"));
        cmd.env("RUST_LOG", "error").env("HOME", home).envs(env);
        let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
            .stderr(Stdio::inherit())
            .spawn()?;
        let pid = transport.id().unwrap_or(0);
        let client = ().serve(transport).await?;
        stdio.push((Arc::new(client), serials[k % devices].clone()));
        pids.push(pid);
    }
    let results = run_clients(&stdio).await;
    let took = started.elapsed();
    let memory: f64 = pids.iter().map(|pid| rss_mib(*pid)).sum();
    report(
        &format!("stdio: {CLIENTS} server processes × {CALLS_EACH} mixed calls, {devices} devices"),
        results,
        took,
    );
    println!(
        "stdio: {:.0} calls/s (with process start); {:.1} MiB resident per client ({memory:.0} MiB in all)",
        (CLIENTS * CALLS_EACH) as f64 / took.as_secs_f64(),
        memory / CLIENTS as f64
    );
    drop(stdio);

    http_sessions(
        "one adb server",
        &["serve", "--http", "127.0.0.1:0", "--no-auth"],
        &env,
        home,
        serials,
        0,
    )
    .await?;
    // The same clients speaking MCP 2026-07-28: no session, every request on its own.
    http_sessions(
        "one adb server, MCP 2026-07-28 clients (stateless)",
        &["serve", "--http", "127.0.0.1:0", "--no-auth"],
        &env,
        home,
        serials,
        0,
    )
    .await?;
    // The same while two more sessions each run a script that never yields: scripts have
    // threads of their own, so the others' p99 should stay within 1.5× of the run above.
    http_sessions(
        "one adb server, 2 more sessions running busy scripts",
        &["serve", "--http", "127.0.0.1:0", "--no-auth"],
        &env,
        home,
        serials,
        2,
    )
    .await
}

/// One HTTP server started with `args`, CLIENTS sessions, session k on `targets[k % len]`.
async fn http_sessions(
    what: &str,
    args: &[&str],
    env: &[(&str, &str)],
    home: &std::path::Path,
    targets: &[String],
    busy_scripts: usize,
) -> anyhow::Result<()> {
    let devices = targets.len();
    // Its address is the line it prints on stderr.
    let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .args(args)
        .env("RUST_LOG", "error")
        .env("HOME", home)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let pid = server.id().unwrap_or(0);
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(server.stderr.take().unwrap()));
    let url = loop {
        let line = lines
            .next_line()
            .await?
            .ok_or_else(|| anyhow::anyhow!("serve --http ended"))?;
        if let Some(url) = line.strip_prefix("droidmcp: MCP at ") {
            break url.to_string();
        }
    };
    let idle = rss_mib(pid);
    let mut spinning = Vec::new();
    for _ in 0..busy_scripts {
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.as_str());
        let client = Arc::new(().serve(transport).await?);
        let busy = client.clone();
        spinning.push(tokio::spawn(async move {
            let args = json!({"operation": "run", "code": "for (;;) {}", "timeoutMs": 120_000});
            let _ = busy
                .call_tool(
                    CallToolRequestParams::new("script").with_arguments(args.as_object().cloned().unwrap_or_default()),
                )
                .await;
        }));
        spinning.push(tokio::spawn(async move {
            let _keep = client;
            std::future::pending::<()>().await
        }));
    }
    if busy_scripts > 0 {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let started = Instant::now();
    let mut sessions = Vec::new();
    let lifecycle = if what.contains("2026-07-28") {
        rmcp::ClientLifecycleMode::Discover {
            preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
        }
    } else {
        rmcp::ClientLifecycleMode::Initialize
    };
    for k in 0..CLIENTS {
        use rmcp::ClientServiceExt;
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.as_str());
        let client = ().serve_with_lifecycle(transport, lifecycle.clone()).await?;
        sessions.push((Arc::new(client), targets[k % devices].clone()));
    }
    let results = run_clients(&sessions).await;
    let took = started.elapsed();
    let busy = rss_mib(pid);
    report(
        &format!("HTTP: one server, {CLIENTS} sessions × {CALLS_EACH} mixed calls, {devices} devices, {what}"),
        results,
        took,
    );
    println!(
        "HTTP ({what}): {:.0} calls/s (with session start); {:.1} MiB resident per session ({idle:.0} MiB idle, {busy:.0} MiB with {CLIENTS} sessions)",
        (CLIENTS * CALLS_EACH) as f64 / took.as_secs_f64(),
        (busy - idle) / CLIENTS as f64
    );
    drop(sessions);
    for task in spinning {
        task.abort();
    }
    let _ = server.kill().await;
    Ok(())
}

/// Every client makes its CALLS_EACH calls in turn, all clients at once.
async fn run_clients(clients: &[(Arc<Client>, String)]) -> Vec<Result<Duration, String>> {
    let mut runs = Vec::new();
    for (client, device) in clients {
        let (client, device) = (client.clone(), device.clone());
        runs.push(tokio::spawn(async move {
            let mut results = Vec::new();
            for i in 0..CALLS_EACH {
                results.push(timed(&client, on(&device, i)).await);
            }
            results
        }));
    }
    let mut results = Vec::new();
    for run in runs {
        results.extend(
            run.await
                .unwrap_or_else(|e| vec![Err(format!("a client task failed: {e}"))]),
        );
    }
    results
}
