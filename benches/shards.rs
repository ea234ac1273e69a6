//! `droidmcp replay DIR --shard-split 4` against the same 100 flows on one device: the wall-time
//! ratio of a workspace's run on four simulated devices to its run on one (goal ≥ 3.5×). Each
//! flow launches Settings and asserts a row (two screen readings). The devices are simulators
//! in this process, reached on their direct routes (`--adb tcp:…`).
//!
//! `cargo bench --bench shards` (FLOWS=N for another count).

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use droidmcp::sim::{self, AuthPolicy, Simulator};

fn replay(dir: &Path, home: &Path, args: &[String]) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
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
    let profile = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pixel-emulator");
    let mut sims = Vec::new();
    for _ in 0..4 {
        let simulator = Simulator::load(&profile, None, AuthPolicy::None)?;
        sims.push(sim::start(simulator, SocketAddr::from(([127, 0, 0, 1], 0))).await?);
    }
    let sources: Vec<String> = sims
        .iter()
        .enumerate()
        .flat_map(|(i, s)| ["--adb".to_string(), format!("d{i}=tcp:{}", s.addr)])
        .collect();
    let home = tempfile::tempdir()?;
    let ws = tempfile::tempdir()?;
    for i in 0..flows {
        std::fs::write(
            ws.path().join(format!("flow{i:03}.yaml")),
            "appId: com.android.settings\n---\n- launchApp\n- assertVisible: \"Network & internet\"\n",
        )?;
    }
    // Warm-up (the adb key made, the binary in the page cache) on one flow.
    let warm = tempfile::tempdir()?;
    std::fs::copy(ws.path().join("flow000.yaml"), warm.path().join("flow000.yaml"))?;
    replay(warm.path(), home.path(), &sources[..2])?;

    let one = replay(ws.path(), home.path(), &sources[..2])?;
    let mut four_args = sources.clone();
    four_args.extend(["--shard-split".to_string(), "4".to_string()]);
    let four = replay(ws.path(), home.path(), &four_args)?;
    println!(
        "shards: {flows} flows: 1 device {:.1} s, 4 devices {:.1} s: {:.2}x faster (goal >= 3.5x; {} cores here)",
        one.as_secs_f64(),
        four.as_secs_f64(),
        one.as_secs_f64() / four.as_secs_f64(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    Ok(())
}
