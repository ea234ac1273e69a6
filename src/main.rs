//! The `droidmcp` command line.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use std::sync::Arc;

use clap::{Parser, Subcommand};

mod call;
mod run_sim;
use droidmcp::adb::{Adb, Route, parse_sources};
use droidmcp::context::cache::Limits;
use droidmcp::context::workspace::Workspace;
use droidmcp::context::{Cache, DEFAULT_BUDGET};
use droidmcp::script::runs::{RunLimits, Runs};
use droidmcp::server::DroidMcp;
use droidmcp::sim::{self, AuthPolicy, SimHandle};
use droidmcp::tools::State;
use rmcp::ServiceExt;
use tracing::Level;
use tracing_subscriber::{filter::Targets, layer::SubscriberExt, util::SubscriberInitExt};

#[derive(Parser)]
#[command(
    name = "droidmcp",
    version,
    about = "MCP server for Android devices, with a simulated device"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: ServeArgs,
    #[command(flatten)]
    http: HttpArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP over stdio (the default when no command is given), or over HTTP with --http.
    Serve(ServeCommand),
    /// Run one tool call and print its result as JSON, e.g. `call adb-device '{"operation":"list"}'`.
    Call(CallArgs),
    /// Start a simulated Android device that `adb connect` can reach.
    Sim(run_sim::SimArgs),
    /// Replay a recorded flow (.js, or a Maestro .yaml) on a device: a line per step, exit 1
    /// when one fails, --junit for CI.
    Replay(ReplayArgs),
}

#[derive(clap::Args)]
struct ReplayArgs {
    #[command(flatten)]
    options: droidmcp::replay::Options,
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(clap::Args, Clone)]
struct ServeArgs {
    /// Whether scripts' `http` reaches the network: set by `replay --allow-network` only.
    #[arg(skip)]
    script_network: bool,
    /// Default device serial (as `adb devices` shows it). `--udid` too, as Maestro takes it.
    #[arg(long, alias = "udid", env = "ANDROID_SERIAL")]
    device: Option<String>,
    /// Where devices are: tcp:HOST:PORT for one device's adbd, server:HOST:PORT for an adb server.
    /// Repeat it for several (a device farm), each optionally named: lab1=server:HOST:PORT.
    /// Default: the adb server from ADB_SERVER_SOCKET or ANDROID_ADB_SERVER_PORT, else 127.0.0.1:5037.
    #[arg(long, conflicts_with = "sim", value_name = "[NAME=]SOURCE")]
    adb: Vec<String>,
    /// Start a simulated device in-process and use it: the built-in profile, or this profile folder.
    /// DROIDMCP_SIM=true does the same with the built-in profile.
    #[arg(long, num_args = 0..=1, default_missing_value = "", value_name = "PROFILE")]
    sim: Option<String>,
    /// Response budget in chars: a larger answer is summarised, the rest kept behind a cacheId.
    #[arg(long, default_value_t = DEFAULT_BUDGET as u64, value_parser = clap::value_parser!(u64).range(500..=1_000_000))]
    budget: u64,
    /// The emulator console of a device not named emulator-NNNN (or listening elsewhere):
    /// SERIAL=HOST:PORT, or HOST:PORT for any device; repeatable.
    #[arg(long = "emulator-console", value_name = "[SERIAL=]HOST:PORT")]
    emulator_console: Vec<String>,
    /// Let adb-device emulator send commands that stop or reset the emulator (kill, avd
    /// stop|pause, avd snapshot, redir, screenrecord).
    #[arg(long)]
    allow_emulator_admin: bool,
    /// An environment variable `adb-device unlock {pinEnv}` may read a PIN from (repeatable, or
    /// DROIDMCP_PIN_ENV=NAME,NAME): a call naming any other variable is refused.
    #[arg(long = "pin-env", value_name = "NAME", env = "DROIDMCP_PIN_ENV", value_delimiter = ',', value_parser = parse_pin_env)]
    pin_env: Vec<String>,
    /// Byte bound of the cache, in MiB (each HTTP session's).
    #[arg(long, default_value_t = 64)]
    cache_mib: usize,
    /// Byte bound of all HTTP sessions' caches together, in MiB.
    #[arg(long, default_value_t = 256)]
    sessions_cache_mib: usize,
    /// Also write every cached entry bigger than the budget to this folder, named by its cacheId.
    #[arg(long, value_name = "DIR", env = "DROIDMCP_WORKSPACE")]
    workspace: Option<PathBuf>,
    /// Quota of the workspace folder in MiB; the oldest files go first.
    #[arg(long, default_value_t = 256)]
    workspace_mib: u64,
    /// How long a script run's folder lives, in seconds (WORKSPACE/runs/RUNID on stdio, WORKSPACE/principals/NAME/runs/RUNID over HTTP).
    #[arg(long, default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..))]
    script_ttl_secs: u64,
    /// Quota of one script run's folder, in MiB.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=4096))]
    script_run_mib: u64,
    /// Run folders kept at most; the oldest finished ones go first.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    script_max_runs: u64,
    /// A folder a script or an HTTP client may install APKs from (repeat for more); with
    /// --workspace, that folder too. A stdio session installs from anywhere.
    #[arg(long = "install-dir", value_name = "DIR")]
    install_dirs: Vec<PathBuf>,
    /// Script runs at once on the server (each on a thread of its own, up to 64 MiB).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=64))]
    script_slots: u64,
    /// What all script runs' folders may hold together, in MiB.
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    script_runs_mib: u64,
    /// Saved skills at most.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    skills_max: u64,
    /// Saved skills' bytes in all, in MiB.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=4096))]
    skills_mib: u64,
    /// Tool calls one script run may make.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    script_max_calls: u64,
    /// Script runs at once in one session (of the server's --script-slots).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=64))]
    script_session_slots: u64,
    /// What one call keeps of each output stream, in MiB; past it, the head and the last 64 KiB
    /// are kept and a marker says how much was dropped between them.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..=1024))]
    max_output_mib: u64,
    /// Timeout of one device call, in milliseconds.
    #[arg(long, default_value_t = 20_000)]
    timeout_ms: u64,
    /// Keep state several instances share (device leases, cache entries) in Redis,
    /// redis://HOST:PORT[/DB], instead of this process (docs/http.md, "A team").
    #[arg(long, value_name = "redis://HOST:PORT[/DB]", env = "DROIDMCP_STATE", value_parser = parse_state)]
    state: Option<String>,
    /// A command adb-shell refuses, as leading words of a command segment; repeatable; `none`
    /// for no rule. A guard against slips, not a sandbox.
    #[arg(long = "shell-deny", value_name = "RULE", default_values_t = droidmcp::tools::shell::DenyList::DEFAULT.map(String::from))]
    shell_deny: Vec<String>,
}

#[derive(clap::Args)]
struct ServeCommand {
    #[command(flatten)]
    serve: ServeArgs,
    #[command(flatten)]
    http: HttpArgs,
}

#[derive(clap::Args, Clone)]
struct HttpArgs {
    /// Serve MCP over streamable HTTP at http://ADDR/mcp instead of stdio, e.g. 127.0.0.1:8765.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// A bearer token HTTP requests carry, NAME=SECRET (one principal each; repeatable) or a bare
    /// SECRET (the principal `default`); required when ADDR is not loopback.
    /// (No `requires = "http"`: a DROIDMCP_TOKEN in the environment must not break stdio.)
    #[arg(long, env = "DROIDMCP_TOKEN", hide_env_values = true, value_name = "[NAME=]SECRET")]
    token: Vec<String>,
    /// A file of NAME=SECRET lines, one principal each (kept out of the process list).
    #[arg(long, value_name = "FILE", requires = "http")]
    tokens_file: Option<PathBuf>,
    /// A browser origin allowed to call over HTTP (scheme://host[:port]); repeatable; none by default.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    allow_origin: Vec<String>,
    /// Close an HTTP session idle this many seconds (its cache and script runs go with it).
    #[arg(long, default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..))]
    session_idle_secs: u64,
    /// Serve HTTP without a token (loopback only): any local process can then drive the devices.
    #[arg(long, requires = "http")]
    no_auth: bool,
    /// Legacy HTTP sessions at once per token; past it, the token's least recently used idle one
    /// is closed (503 when all are busy).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    max_sessions: u64,
    /// Take OAuth access tokens from this authorization server (its `iss`; repeatable), beside
    /// the static tokens: JWTs checked against its keys, opaque ones introspected (docs/http.md).
    #[arg(long = "oauth-issuer", value_name = "URL", requires = "http")]
    oauth_issuer: Vec<String>,
    /// The URL clients reach this server's /mcp at, which tokens must be issued for (their
    /// `aud`); default http://ADDR/mcp on loopback.
    #[arg(long = "oauth-resource", value_name = "URL", requires = "http")]
    oauth_resource: Option<String>,
    /// An `aud` a token may carry instead of the resource (e.g. Entra's App ID URI); repeatable.
    #[arg(long = "oauth-audience", value_name = "URI", requires = "http")]
    oauth_audience: Vec<String>,
    /// OAuth settings in a TOML (or .json) file: issuers, scopes' prefix, the principal's
    /// claim, introspection's client, static tokens' scopes (docs/http.md).
    #[arg(long = "oauth-config", value_name = "FILE", requires = "http")]
    oauth_config: Option<PathBuf>,
}

#[derive(clap::Args)]
struct CallArgs {
    /// Tool name, e.g. adb-device.
    tool: String,
    /// Arguments as a JSON object.
    #[arg(default_value = "{}")]
    arguments: String,
    /// Print the whole MCP result (content blocks, structuredContent, isError), pretty.
    #[arg(long)]
    raw: bool,
    #[command(flatten)]
    serve: ServeArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // A person running `call` or `sim` wants the answer, not the server's progress.
    let default_filter = match cli.command {
        Some(Command::Call(_) | Command::Sim(_) | Command::Replay(_)) => "warn",
        // The in-process simulator's info lines are the device's command log, which would carry
        // what the server keeps out of its own (a PIN typed by adb-device unlock).
        _ => "info,rmcp=warn,droidmcp::sim=warn",
    };
    // rmcp logs each request whole at debug (a typed password too): at most info, whatever RUST_LOG.
    let rmcp_at_most_info = Targets::new()
        .with_default(Level::TRACE)
        .with_target("rmcp", Level::INFO);
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| default_filter.into()),
        )
        .finish()
        .with(rmcp_at_most_info)
        .init();
    match cli.command {
        None => serve(cli.serve, cli.http).await,
        Some(Command::Serve(args)) => serve(args.serve, args.http).await,
        Some(Command::Call(args)) => call(args).await,
        Some(Command::Sim(args)) => run_sim::run(args).await,
        Some(Command::Replay(args)) => replay(args).await,
    }
}

/// The shared state of a server, and the simulator it runs when asked to.
async fn build_state(args: &ServeArgs) -> anyhow::Result<(Arc<State>, Option<SimHandle>)> {
    use droidmcp::adb::{env_setting, is_set};
    let sim_wanted = args.sim.clone().or_else(|| {
        let flag = env_setting("DROIDMCP_SIM").unwrap_or_default().to_ascii_lowercase();
        matches!(flag.as_str(), "1" | "true" | "yes").then(String::new)
    });
    let device = args.device.clone().filter(|d| is_set(d));
    let workspace = args.workspace.clone().filter(|w| is_set(&w.to_string_lossy()));
    let specs: Vec<String> = args.adb.iter().filter(|s| is_set(s)).cloned().collect();
    let mut consoles = parse_consoles(&args.emulator_console)?;
    let (sources, sim, device) = match &sim_wanted {
        Some(profile) => {
            let profile = Some(PathBuf::from(profile)).filter(|p| !p.as_os_str().is_empty());
            let simulator = run_sim::load_simulator(profile.as_deref(), None, AuthPolicy::None)?;
            let mut handle = sim::start(simulator, SocketAddr::from(([127, 0, 0, 1], 0))).await?;
            tracing::info!(addr = %handle.addr, ?profile, "simulated device started");
            match handle.serve_console(SocketAddr::from(([127, 0, 0, 1], 0))).await {
                Ok(console) => consoles.push((Some(handle.addr.to_string()), console)),
                Err(e) => tracing::warn!("the simulated device has no emulator console: {e}"),
            }
            (
                vec![("sim".to_string(), Route::Direct(handle.addr))],
                Some(handle),
                None,
            )
        }
        None if specs.is_empty() => {
            let route = Route::server_from_env().map_err(anyhow::Error::msg)?;
            (vec![("local".to_string(), route)], None, device)
        }
        None => (parse_sources(&specs).map_err(anyhow::Error::msg)?, None, device),
    };
    tracing::info!(?sources, "devices");
    if sim.is_none() && sources.iter().any(|(_, route)| matches!(route, Route::Direct(_))) {
        // Made once per machine, before any call's timeout starts (it takes a while).
        droidmcp::adb::adbkey::host_key_async().await?;
    }
    let adb = Adb::with_sources(sources, Duration::from_millis(args.timeout_ms))
        .with_max_output(args.max_output_mib as usize * 1024 * 1024)
        .with_consoles(consoles);
    let mut cache = Cache::new(Limits {
        max_bytes: args.cache_mib * 1024 * 1024,
        ..Limits::default()
    })
    .with_sessions_bound(args.sessions_cache_mib * 1024 * 1024);
    if let Some(dir) = &workspace {
        let workspace = Arc::new(
            Workspace::open(dir, args.workspace_mib * 1024 * 1024)
                .map_err(|e| anyhow::anyhow!("cannot use {} as the workspace: {e}", dir.display()))?,
        );
        tracing::info!(dir = %workspace.dir().display(), "large responses are also written to the workspace");
        let sweeper = workspace.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs(300));
            loop {
                every.tick().await;
                sweeper.sweep();
            }
        });
        cache = cache.with_workspace(workspace, args.budget as usize);
    }
    if args.state.is_some() {
        cache = cache.shared();
    }
    let mut state = State::new(adb, cache, args.budget as usize, device);
    state.runs = script_runs(args, workspace.as_deref());
    let mut install_dirs = Vec::new();
    for dir in args.install_dirs.iter().chain(workspace.as_ref()) {
        let real = std::fs::canonicalize(dir)
            .map_err(|e| anyhow::anyhow!("cannot use {} as an install folder: {e}", dir.display()))?;
        install_dirs.push(real);
    }
    state.install_dirs = Arc::new(install_dirs);
    let rules: Vec<&String> = args.shell_deny.iter().filter(|r| r.as_str() != "none").collect();
    state.shell_deny = droidmcp::tools::shell::DenyList::new(&rules);
    state.emulator_admin = args.allow_emulator_admin;
    state.pin_envs = Arc::new(args.pin_env.clone());
    if let Some(url) = &args.state {
        let store = droidmcp::state::Redis::connect(url, "droidmcp", Arc::new(droidmcp::state::SystemClock))
            .await
            .map_err(anyhow::Error::msg)?;
        tracing::info!(%url, "state shared through Redis");
        state.leases = Arc::new(store.clone());
        state.handles = Some(Arc::new(store));
    }
    Ok((Arc::new(state), sim))
}

/// `--state URL`: a Redis address (the only shared store there is).
fn parse_state(url: &str) -> Result<String, String> {
    match url.strip_prefix("redis://") {
        Some(rest) if !rest.is_empty() => Ok(url.to_string()),
        _ => Err(format!(
            "{url:?} is not a Redis address: give redis://HOST:PORT or redis://HOST:PORT/DB (the only shared store droidmcp has)"
        )),
    }
}

/// `--pin-env NAME`: an environment variable's name (letters, digits and _, not starting with a
/// digit).
fn parse_pin_env(name: &str) -> Result<String, String> {
    let mut chars = name.chars();
    let first = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if first && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(name.to_string())
    } else {
        Err(format!(
            "{name:?} is not an environment variable's name (letters, digits and _, not starting with a digit), e.g. PHONE_PIN"
        ))
    }
}

/// `--emulator-console [SERIAL=]HOST:PORT` values.
fn parse_consoles(given: &[String]) -> anyhow::Result<Vec<(Option<String>, SocketAddr)>> {
    use std::net::ToSocketAddrs;
    given
        .iter()
        .map(|spec| {
            let (serial, at) = match spec.split_once('=') {
                Some((serial, at)) => (Some(serial.trim().to_string()), at.trim()),
                None => (None, spec.trim()),
            };
            let addr = at.to_socket_addrs().ok().and_then(|mut a| a.next()).ok_or_else(|| {
                anyhow::anyhow!("--emulator-console {spec}: `{at}` is not HOST:PORT (e.g. 127.0.0.1:5554)")
            })?;
            Ok((serial.filter(|s| !s.is_empty()), addr))
        })
        .collect()
}

/// Script runs' folders under the workspace (else a private temp folder made on first use):
/// expired ones go now, then on a timer as they expire.
fn script_runs(args: &ServeArgs, workspace: Option<&Path>) -> Arc<Runs> {
    let ttl = Duration::from_secs(args.script_ttl_secs);
    let runs = Arc::new(Runs::new(
        workspace.map(Path::to_path_buf),
        RunLimits {
            ttl,
            quota_bytes: args.script_run_mib << 20,
            max_runs: args.script_max_runs as usize,
            slots: args.script_slots as usize,
            session_slots: args.script_session_slots as usize,
            max_skills: args.skills_max as usize,
            skills_bytes: args.skills_mib << 20,
            total_bytes: args.script_runs_mib << 20,
            max_calls: args.script_max_calls as usize,
            network: args.script_network,
        },
    ));
    runs.sweep();
    runs.sweep_on_a_timer();
    runs
}

async fn serve(args: ServeArgs, http: HttpArgs) -> anyhow::Result<()> {
    if let Some(addr) = http.http {
        return serve_http(args, http, addr).await;
    }
    let (state, _sim) = build_state(&args).await?;
    let (pipes, written) = droidmcp::stdio::transport(tokio::io::stdin(), tokio::io::stdout());
    let service = DroidMcp::new(state.clone()).serve(pipes).await?;
    tracing::info!("serving MCP on stdio");
    service.waiting().await?;
    // Every answer out before the process ends.
    let _ = written.await;
    state.runs.shutdown();
    Ok(())
}

async fn serve_http(args: ServeArgs, http: HttpArgs, addr: SocketAddr) -> anyhow::Result<()> {
    let options = droidmcp::http::HttpOptions {
        addr,
        tokens: {
            let file = match &http.tokens_file {
                Some(path) => Some(
                    std::fs::read_to_string(path)
                        .map_err(|e| anyhow::anyhow!("--tokens-file {}: {e}", path.display()))?,
                ),
                None => None,
            };
            let given: Vec<String> = http
                .token
                .iter()
                .filter(|t| droidmcp::adb::is_set(t))
                .cloned()
                .collect();
            droidmcp::http::parse_tokens(&given, file.as_deref()).map_err(anyhow::Error::msg)?
        },
        allowed_origins: http.allow_origin,
        session_idle: Duration::from_secs(http.session_idle_secs),
        no_auth: http.no_auth,
        max_sessions: http.max_sessions as usize,
        oauth: {
            let config_file = match &http.oauth_config {
                Some(path) => Some((
                    path.display().to_string(),
                    std::fs::read_to_string(path)
                        .map_err(|e| anyhow::anyhow!("--oauth-config {}: {e}", path.display()))?,
                )),
                None => None,
            };
            let flags = droidmcp::http::oauth::OAuthFlags {
                config_file,
                issuers: http.oauth_issuer,
                resource: http.oauth_resource,
                audiences: http.oauth_audience,
            };
            droidmcp::http::oauth::settings(&flags).map_err(anyhow::Error::msg)?
        },
    };
    // Refused before a simulator starts or a device is asked anything.
    droidmcp::http::check(&options).map_err(anyhow::Error::msg)?;
    if options.no_auth {
        eprintln!(
            "droidmcp: WARNING: --no-auth: no token guards {addr}; every process on this machine can drive these devices"
        );
    }
    let (state, _sim) = build_state(&args).await?;
    let shutdown = tokio_util::sync::CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        stopped().await;
        stop.cancel();
    });
    let (bound, at) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        if let Ok(addr) = at.await {
            // The one line a script starting the server waits for (port 0 picks a port).
            eprintln!("droidmcp: MCP at http://{addr}{}", droidmcp::http::PATH);
        }
    });
    droidmcp::http::serve(state, options, shutdown, bound).await
}

/// Ctrl-C, or SIGTERM (as systemd and containers stop a service).
async fn stopped() {
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(term) => term,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

async fn call(args: CallArgs) -> anyhow::Result<()> {
    let arguments: serde_json::Value = serde_json::from_str(&args.arguments).map_err(|e| {
        anyhow::anyhow!("the arguments are not JSON ({e}); pass an object such as '{{\"operation\":\"list\"}}'")
    })?;
    let serde_json::Value::Object(arguments) = arguments else {
        anyhow::bail!("the arguments must be a JSON object, e.g. '{{\"operation\":\"list\"}}'");
    };
    let (state, _sim) = build_state(&args.serve).await?;
    let result = droidmcp::server::call_once(DroidMcp::new(state.clone()), &args.tool, arguments).await;
    state.runs.shutdown();
    let result = result?;
    let failed = result.is_error == Some(true);
    if args.raw {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        println!("{}", call::summary(&result, &args.tool)?);
    }
    if failed {
        std::process::exit(1);
    }
    Ok(())
}

async fn replay(args: ReplayArgs) -> anyhow::Result<()> {
    // The lint step: no device, no server.
    if args.options.check {
        if !droidmcp::replay::check(&args.options) {
            std::process::exit(1);
        }
        return Ok(());
    }
    let mut serve = args.serve;
    // A flow of many steps is one script run: its calls are bounded by the run's time instead.
    serve.script_max_calls = serve.script_max_calls.max(1_000_000);
    serve.script_network = args.options.allow_network;
    // One flow at a time on each device, each shard's device at once.
    serve.script_slots = serve.script_slots.max(args.options.shards() as u64);
    // `--device A,B`: the devices the flows run on (as Maestro's), chosen by the replay.
    let given = serve
        .device
        .take()
        .filter(|d| droidmcp::adb::is_set(d) && serve.sim.is_none());
    let named = droidmcp::replay::named_devices(given.as_deref());
    let (state, _sim) = build_state(&serve).await?;
    let report = droidmcp::replay::run(state.clone(), &args.options, &named).await;
    state.runs.shutdown();
    if !report?.iter().all(|r| r.passed()) {
        std::process::exit(1);
    }
    Ok(())
}
