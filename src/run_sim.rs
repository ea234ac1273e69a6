//! `droidmcp sim`: its flags, and the simulated device it serves until stopped.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use droidmcp::sim::{self, AuthPolicy, Faults, Simulator};

#[derive(clap::Args)]
pub struct SimArgs {
    /// Address to listen on; port 0 picks a free port (printed on stdout).
    #[arg(long, default_value = "127.0.0.1:5555")]
    listen: SocketAddr,
    /// Profile folder (see fixtures/README.md); default: the built-in Pixel-like emulator.
    #[arg(long)]
    profile: Option<PathBuf>,
    /// Overrides the profile's ro.serialno.
    #[arg(long)]
    serial: Option<String>,
    /// Exchange AUTH and accept any key (default: no AUTH, like an emulator image).
    #[arg(long, conflicts_with = "auth_keys")]
    auth_any: bool,
    /// Require a signature from one of the keys in this adb_keys file (e.g. ~/.android/adbkey.pub).
    #[arg(long)]
    auth_keys: Option<PathBuf>,
    /// With --auth-keys: a host offering another key is allowed after this many milliseconds, as
    /// if the user tapped "Allow" on the prompt (default: nobody answers it).
    #[arg(long, requires = "auth_keys")]
    allow_after_ms: Option<u64>,
    /// Announce no shell v2, as Android 6 and older do: hosts then use shell v1.
    #[arg(long)]
    no_shell_v2: bool,
    /// Also serve the emulator console here (e.g. 127.0.0.1:5554), with the token in
    /// ~/.emulator_console_auth_token (made if missing; an empty file turns auth off).
    #[arg(long, value_name = "ADDR")]
    console: Option<SocketAddr>,
    /// The DevTools server (HOST:PORT, e.g. a headless Chromium's --remote-debugging-port) that
    /// the WebView of the app showing one (com.netflix.mediaclient in the built-in profile)
    /// leads to: its process then lists @webview_devtools_remote_<pid>. Without it the WebView
    /// is not debuggable.
    #[arg(long, value_name = "ADDR")]
    webview_devtools: Option<SocketAddr>,
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
                AuthPolicy::Keys {
                    keys: sim::auth::load_adb_keys(&text)?,
                    allow_after: self.allow_after_ms.map(Duration::from_millis),
                }
            }
            (None, true) => AuthPolicy::AcceptAny,
            (None, false) => AuthPolicy::None,
        })
    }
}

/// A simulator from a profile folder, or from the profile built into the binary.
pub fn load_simulator(profile: Option<&Path>, faults: Option<Faults>, auth: AuthPolicy) -> anyhow::Result<Simulator> {
    match profile {
        Some(dir) => Simulator::load(dir, faults, auth),
        None => Simulator::builtin(faults, auth),
    }
}

/// Serves the simulated device until Ctrl-C.
pub async fn run(args: SimArgs) -> anyhow::Result<()> {
    let mut simulator = load_simulator(args.profile.as_deref(), args.faults(), args.auth()?)?;
    if args.no_shell_v2 {
        simulator.features.retain(|f| f != "shell_v2");
    }
    if let Some(serial) = &args.serial {
        simulator.with_device(|d| d.props.insert("ro.serialno".into(), serial.clone()));
    }
    simulator.with_device(|d| d.webview_devtools = args.webview_devtools);
    let mut handle = sim::start(simulator, args.listen).await?;
    let console = match args.console {
        Some(listen) => Some(handle.serve_console(listen).await?),
        None => None,
    };
    // The first line on stdout, so scripts and tests can find a port picked with :0.
    println!("listening on {}", handle.addr);
    if let Some(console) = console {
        println!("console on {console}");
    }
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprintln!("simulated device ready: adb connect {} (Ctrl-C stops it)", handle.addr);
    }
    tokio::signal::ctrl_c().await?;
    tracing::info!("stopping");
    handle.stop();
    Ok(())
}
