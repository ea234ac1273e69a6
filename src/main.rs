//! The `droidmcp` command line.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};
use droidmcp::sim::{self, AuthPolicy, Faults, Simulator};

#[derive(Parser)]
#[command(
    name = "droidmcp",
    version,
    about = "MCP server for Android devices, with a simulated device"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start a simulated Android device that `adb connect` can reach.
    Sim(SimArgs),
}

#[derive(clap::Args)]
struct SimArgs {
    /// Address to listen on; port 0 picks a free port (printed on stdout).
    #[arg(long, default_value = "127.0.0.1:5555")]
    listen: SocketAddr,
    /// Profile folder (see fixtures/README.md).
    #[arg(long, default_value = "fixtures/pixel-emulator")]
    profile: PathBuf,
    /// Overrides the profile's ro.serialno.
    #[arg(long)]
    serial: Option<String>,
    /// Exchange AUTH and accept any key (default: no AUTH, like an emulator image).
    #[arg(long, conflicts_with = "auth_keys")]
    auth_any: bool,
    /// Require a signature from one of the keys in this adb_keys file (e.g. ~/.android/adbkey.pub).
    #[arg(long)]
    auth_keys: Option<PathBuf>,
    /// Fault: added latency before every message, in milliseconds.
    #[arg(long)]
    latency_ms: Option<u64>,
    /// Fault: commands (by program name) that never answer; repeatable.
    #[arg(long)]
    stall_on: Vec<String>,
    /// Fault: close each connection after it sent this many bytes.
    #[arg(long)]
    drop_after_bytes: Option<u64>,
    /// Fault: send 24 garbage bytes once a connection sent this many bytes.
    #[arg(long)]
    garbage_after_bytes: Option<u64>,
}

impl SimArgs {
    /// Fault flags, if any was given; otherwise the profile's own `[faults]` apply.
    fn faults(&self) -> Option<Faults> {
        let any = self.latency_ms.is_some()
            || !self.stall_on.is_empty()
            || self.drop_after_bytes.is_some()
            || self.garbage_after_bytes.is_some();
        any.then(|| Faults {
            latency: Duration::from_millis(self.latency_ms.unwrap_or(0)),
            stall_on: self.stall_on.clone(),
            drop_after_bytes: self.drop_after_bytes,
            garbage_after_bytes: self.garbage_after_bytes,
        })
    }

    fn auth(&self) -> anyhow::Result<AuthPolicy> {
        Ok(match (&self.auth_keys, self.auth_any) {
            (Some(path), _) => {
                let text =
                    std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
                AuthPolicy::Keys(sim::auth::load_adb_keys(&text)?)
            }
            (None, true) => AuthPolicy::AcceptAny,
            (None, false) => AuthPolicy::None,
        })
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    match Cli::parse().command {
        Command::Sim(args) => run_sim(args).await,
    }
}

async fn run_sim(args: SimArgs) -> anyhow::Result<()> {
    let simulator = Simulator::load(&args.profile, args.faults(), args.auth()?)?;
    if let Some(serial) = &args.serial {
        simulator.with_device(|d| d.props.insert("ro.serialno".into(), serial.clone()));
    }
    let handle = sim::start(simulator, args.listen).await?;
    // The one line on stdout, so scripts and tests can find a port picked with :0.
    println!("listening on {}", handle.addr);
    tracing::info!("simulated device ready: adb connect {}", handle.addr);
    tokio::signal::ctrl_c().await?;
    tracing::info!("stopping");
    handle.stop();
    Ok(())
}
