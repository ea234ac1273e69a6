//! `droidmcp replay DIR --shard-split 4` against the same 100 flows on one device: the wall-time
//! ratio of a workspace's run on four simulated devices to its run on one (goal ≥ 3.5×). Each
//! flow launches Settings and asserts a row (two screen readings). The devices are simulators
//! in this process, reached on their direct routes (`--adb tcp:…`): once answering at once
//! (the host's CPU is then all the time there is, and both processes share its cores), once
//! answering each message after LATENCY_MS (default 50), as a device does, whose time the
//! shards overlap.
//!
//! `cargo bench --bench shards` (FLOWS=N, LATENCY_MS=N; DROIDMCP=PATH measures another build's
//! binary, e.g. main's, against the same simulators).

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use droidmcp::sim::{self, AuthPolicy, Faults, Simulator};

fn replay(dir: &Path, home: &Path, args: &[String]) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let binary = std::env::var_os("DROIDMCP").unwrap_or_else(|| env!("CARGO_BIN_EXE_droidmcp").into());
    let out = Command::new(binary)
        .arg("replay")
        .arg(dir)
        .args(args)
        .env("HOME", home)
        .env_remove("ANDROID_SERIAL")
        .output()?;
    let took = started.elapsed();
    if !out.status.success() {
        anyhow::bail!(
            "replay {args:?} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(took)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let flows: usize = std::env::var("FLOWS").ok().and_then(|n| n.parse().ok()).unwrap_or(100);
    let latency: u64 = std::env::var("LATENCY_MS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(50);
    let ws = tempfile::tempdir()?;
    for i in 0..flows {
        std::fs::write(
            ws.path().join(format!("flow{i:03}.yaml")),
            "appId: com.android.settings\n---\n- launchApp\n- assertVisible: \"Network & internet\"\n",
        )?;
    }
    for ms in [0, latency] {
        let (one, four) = measure(ws.path(), Duration::from_millis(ms)).await?;
        println!(
            "shards: {flows} flows, devices answering after {ms} ms: 1 device {:.1} s, 4 devices {:.1} s: {:.2}x faster (goal >= 3.5x; {} cores here)",
            one.as_secs_f64(),
            four.as_secs_f64(),
            one.as_secs_f64() / four.as_secs_f64(),
            std::thread::available_parallelism().map_or(1, |n| n.get())
        );
    }
    Ok(())
}

/// The workspace's wall time on one device and on four, each device answering after `latency`.
async fn measure(ws: &Path, latency: Duration) -> anyhow::Result<(Duration, Duration)> {
    let profile = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pixel-emulator");
    let mut sims = Vec::new();
    for _ in 0..4 {
        let faults = Faults {
            latency,
            ..Faults::default()
        };
        let simulator = Simulator::load(&profile, Some(faults), AuthPolicy::None)?;
        sims.push(sim::start(simulator, SocketAddr::from(([127, 0, 0, 1], 0))).await?);
    }
    let sources: Vec<String> = sims
        .iter()
        .enumerate()
        .flat_map(|(i, s)| ["--adb".to_string(), format!("d{i}=tcp:{}", s.addr)])
        .collect();
    let home = tempfile::tempdir()?;
    // Warm-up (the adb key made, the binary in the page cache) on one flow.
    let warm = tempfile::tempdir()?;
    std::fs::copy(ws.join("flow000.yaml"), warm.path().join("flow000.yaml"))?;
    replay(warm.path(), home.path(), &sources[..2])?;
    let one = replay(ws, home.path(), &sources[..2])?;
    let mut four_args = sources.clone();
    four_args.extend(["--shard-split".to_string(), "4".to_string()]);
    let four = replay(ws, home.path(), &four_args)?;
    Ok((one, four))
}
