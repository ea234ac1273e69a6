//! One-line shell round trip (`echo hi`) through droidmcp's device layer, against the `adb`
//! program on the same simulator in the same run. The goal is ≥ 10× faster than the program.
//! Then streams: 10 one-line calls at once on the direct route's one connection against the
//! same 10 one after another, and one-line calls beside a running `sleep 2` against idle ones.
//!
//! `cargo bench --bench shell_latency` (needs `adb` on PATH; prints a reason and exits otherwise).

use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

use droidmcp::adb::{Adb, Route};
use droidmcp::sim::{self, AuthPolicy, Simulator};

const RUNS: usize = 60;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    if Command::new("adb").arg("version").output().is_err() {
        println!("shell_latency: skipped, the adb program is not installed (apt-get install -y adb)");
        return Ok(());
    }
    let profile = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pixel-emulator");
    let simulator = Simulator::load(&profile, None, AuthPolicy::None)?;
    let handle = sim::start(simulator, SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let serial = handle.addr.to_string();

    // A private adb server: its own port and HOME.
    let home = tempfile::tempdir()?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let adb = |args: &[&str]| {
        Command::new("adb")
            .arg("-P")
            .arg(port.to_string())
            .args(args)
            .env("HOME", home.path())
            .output()
    };
    adb(&["start-server"])?;
    adb(&["connect", &serial])?;
    adb(&["-s", &serial, "wait-for-device"])?;

    let server = Adb::new(
        Route::Server(SocketAddr::from(([127, 0, 0, 1], port))),
        Duration::from_secs(10),
    );
    let direct = Adb::new(Route::Direct(handle.addr), Duration::from_secs(10));
    // The simulator runs without AUTH here, so the direct route needs no adb key.

    // Warm up each path, and check they all answer the same.
    let out = adb(&["-s", &serial, "shell", "echo hi"])?;
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "hi");
    assert_eq!(server.shell(&serial, "echo hi").await?.stdout, b"hi\n");
    assert_eq!(direct.shell(&serial, "echo hi").await?.stdout, b"hi\n");

    let mut program = Vec::with_capacity(RUNS);
    let mut via_server = Vec::with_capacity(RUNS);
    let mut via_direct = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        adb(&["-s", &serial, "shell", "echo hi"])?;
        program.push(t.elapsed());
        let t = Instant::now();
        server.shell(&serial, "echo hi").await?;
        via_server.push(t.elapsed());
        let t = Instant::now();
        direct.shell(&serial, "echo hi").await?;
        via_direct.push(t.elapsed());
    }
    let (p, s, d) = (median(program), median(via_server), median(via_direct));
    println!("shell `echo hi`, median of {RUNS}, same simulator, same run:");
    println!("  adb program (baseline)      {:8.3} ms", ms(p));
    println!(
        "  device layer, adb server    {:8.3} ms  {:5.1}x faster",
        ms(s),
        p.as_secs_f64() / s.as_secs_f64()
    );
    println!(
        "  device layer, direct TCP    {:8.3} ms  {:5.1}x faster",
        ms(d),
        p.as_secs_f64() / d.as_secs_f64()
    );
    let _ = adb(&["kill-server"]);

    // Streams: many calls share the direct route's one connection.
    let direct = std::sync::Arc::new(direct);
    let (mut sequential, mut concurrent) = (Vec::new(), Vec::new());
    for _ in 0..RUNS / 3 {
        let t = Instant::now();
        for _ in 0..10 {
            direct.shell(&serial, "echo hi").await?;
        }
        sequential.push(t.elapsed());
        let t = Instant::now();
        let mut calls = tokio::task::JoinSet::new();
        for _ in 0..10 {
            let (direct, serial) = (direct.clone(), serial.clone());
            calls.spawn(async move { direct.shell(&serial, "echo hi").await });
        }
        while let Some(done) = calls.join_next().await {
            done??;
        }
        concurrent.push(t.elapsed());
    }
    let (seq10, con10) = (median(sequential), median(concurrent));
    println!("10 one-line calls on the direct route, median of {}:", RUNS / 3);
    println!("  one after another (baseline) {:8.3} ms", ms(seq10));
    println!(
        "  all at once, one connection  {:8.3} ms  {:5.1}x faster",
        ms(con10),
        seq10.as_secs_f64() / con10.as_secs_f64()
    );

    let slow = {
        let (direct, serial) = (direct.clone(), serial.clone());
        tokio::spawn(async move { direct.shell(&serial, "sleep 2").await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut beside = Vec::new();
    while !slow.is_finished() && beside.len() < RUNS {
        let t = Instant::now();
        direct.shell(&serial, "echo hi").await?;
        beside.push(t.elapsed());
    }
    slow.await??;
    let beside = median(beside);
    println!(
        "  one call beside a running `sleep 2` {:8.3} ms  ({:4.2}x the idle {:.3} ms)",
        ms(beside),
        beside.as_secs_f64() / d.as_secs_f64(),
        ms(d)
    );
    Ok(())
}
