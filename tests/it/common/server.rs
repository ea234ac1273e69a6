//! The MCP server a test talks to, started one way: `Server`, a builder for `droidmcp serve`
//! (stdio or HTTP, the protocol era, arguments such as a profile, environment), always with a
//! private HOME and none of the caller's adb settings. Then the calls: `call`, `ok`, `err`,
//! `shell`, progress.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use super::Log;

/// A droidmcp server process spoken to with rmcp's own client.
pub type McpClient = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// How the test reaches the server.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Transport {
    Stdio,
    Http,
}

/// The one way to start `droidmcp serve` in a test. Unless told, the transport follows
/// `DROIDMCP_TEST_TRANSPORT` and the protocol era `DROIDMCP_TEST_PROTOCOL`, so the MCP suites
/// run again over HTTP and in the stateless protocol without an edit.
pub struct Server {
    home: PathBuf,
    args: Vec<String>,
    envs: Vec<(String, String)>,
    transport: Transport,
    era: rmcp::ClientLifecycleMode,
}

/// A started server with its client, its stderr so far, and on stdio its process id (over
/// HTTP, `Server::http` gives the server's `HttpServer::pid`).
pub struct Running<H: rmcp::ClientHandler> {
    pub client: rmcp::service::RunningService<rmcp::RoleClient, H>,
    pub pid: Option<u32>,
    pub log: Log,
}

impl Server {
    /// `droidmcp serve` with HOME at `home` (so it never touches the user's adb key).
    pub fn new(home: &Path) -> Server {
        Server {
            home: home.to_path_buf(),
            args: Vec::new(),
            envs: Vec::new(),
            transport: if over_http() { Transport::Http } else { Transport::Stdio },
            era: lifecycle(),
        }
    }

    /// More arguments (`--sim`, `--adb tcp:…`, `--workspace DIR`, `--token NAME=T`…).
    pub fn args(mut self, args: &[&str]) -> Server {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    /// `--sim PROFILE`: the simulator built into the server, on a profile of the test's.
    pub fn profile(self, profile: &super::Profile) -> Server {
        self.args(&["--sim", profile.arg()])
    }

    /// More environment variables.
    pub fn envs(mut self, envs: &[(&str, &str)]) -> Server {
        self.envs
            .extend(envs.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        self
    }

    /// This transport, whatever `DROIDMCP_TEST_TRANSPORT` says (a test of one transport).
    pub fn transport(mut self, transport: Transport) -> Server {
        self.transport = transport;
        self
    }

    /// This protocol era (`modern()`, or `Initialize` for a test of an older version).
    pub fn era(mut self, era: rmcp::ClientLifecycleMode) -> Server {
        self.era = era;
        self
    }

    /// Starts the server and connects a client with `()` as its handler.
    pub async fn client(self) -> McpClient {
        self.serve_with(()).await.client
    }

    /// Starts the server and connects a client with `handler` (e.g. one that records progress).
    pub async fn serve_with<H: rmcp::ClientHandler>(self, handler: H) -> Running<H> {
        use rmcp::ClientServiceExt;
        let era = self.era.clone();
        if self.transport == Transport::Http {
            let server = self.http().await;
            let client = handler
                .serve_with_lifecycle(server.transport(None), era)
                .await
                .expect("MCP initialize (or server/discover) over HTTP");
            let log = server.log.clone();
            server.keep();
            return Running { client, pid: None, log };
        }
        let (transport, stderr) =
            rmcp::transport::TokioChildProcess::builder(self.command(env!("CARGO_BIN_EXE_droidmcp"), &self.args))
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn droidmcp");
        let pid = transport.id();
        let log = keep_log(stderr.expect("piped stderr"));
        let client = handler
            .serve_with_lifecycle(transport, era)
            .await
            .expect("MCP initialize (or server/discover)");
        Running { client, pid, log }
    }

    /// Starts `droidmcp serve --http 127.0.0.1:0` without a client (for raw requests, tokens,
    /// many sessions). Without `--token` or `--tokens-file` it adds `--no-auth`, and the temp
    /// folder as an install folder (the tests' APKs are there).
    pub async fn http(self) -> HttpServer {
        use tokio::io::AsyncBufReadExt;
        let tokens = self
            .args
            .iter()
            .any(|a| ["--token", "--tokens-file", "--oauth-issuer", "--oauth-config"].contains(&a.as_str()));
        let mut extra = vec!["serve".to_string(), "--http".into(), "127.0.0.1:0".into()];
        extra.extend(self.args.iter().cloned());
        if !tokens && !self.envs.iter().any(|(k, _)| k == "DROIDMCP_TOKEN") {
            extra.push("--no-auth".into());
        }
        let temp = std::fs::canonicalize(std::env::temp_dir()).unwrap();
        extra.extend(["--install-dir".into(), temp.to_string_lossy().into_owned()]);
        // Through a shell that sends SIGTERM once its stdin closes: when the handle is dropped,
        // or when the test process ends however it ends.
        let script = r#""$@" & pid=$!; read -r _; kill -TERM $pid; wait $pid"#;
        let mut shell = vec![
            "-c".to_string(),
            script.into(),
            "sh".into(),
            env!("CARGO_BIN_EXE_droidmcp").into(),
        ];
        shell.extend(extra);
        let mut child = self
            .command("sh", &shell)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn droidmcp serve --http");
        let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let log = Log::default();
        let url = loop {
            let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                .await
                .expect("droidmcp serve --http printed its address")
                .unwrap()
                .unwrap_or_else(|| panic!("droidmcp serve --http ended: {}", log.lock().unwrap()));
            log.lock().unwrap().push_str(&format!("{line}\n"));
            if let Some(url) = line.strip_prefix("droidmcp: MCP at ") {
                break url.trim().to_string();
            }
        };
        let sink = log.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("{line}");
                sink.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        HttpServer { url, child, log }
    }

    /// Starts `droidmcp serve` on stdio with both pipes left to the test (raw JSON-RPC lines).
    pub fn raw_stdio(self) -> tokio::process::Child {
        self.command(env!("CARGO_BIN_EXE_droidmcp"), &self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn droidmcp")
    }

    /// `PROGRAM ARGS` with HOME, the test's variables, and none of the caller's adb settings.
    fn command(&self, program: &str, args: &[String]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args)
            .env("RUST_LOG", "warn")
            .env("HOME", &self.home)
            .env_remove("ANDROID_SERIAL")
            .env_remove("ANDROID_ADB_SERVER_PORT")
            .env_remove("ADB_SERVER_SOCKET")
            .env_remove("ANDROID_USER_HOME")
            .env_remove("ANDROID_EMULATOR_HOME");
        for (k, v) in &self.envs {
            cmd.env(k, v);
        }
        cmd
    }
}

/// Keeps a child's stderr in a `Log` (and passes it on to the test's stderr, shown when a test
/// fails).
fn keep_log(stderr: tokio::process::ChildStderr) -> Log {
    use tokio::io::AsyncBufReadExt;
    let log = Log::default();
    let sink = log.clone();
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            eprintln!("{line}");
            let mut log = sink.lock().unwrap();
            log.push_str(&line);
            log.push('\n');
        }
    });
    log
}

/// `Server::new(home).args(args).envs(envs).client()`: the short name most suites call.
pub async fn mcp_server(args: &[&str], envs: &[(&str, &str)], home: &Path) -> McpClient {
    Server::new(home).args(args).envs(envs).client().await
}

/// `mcp_server` with a client handler of the test's own (e.g. one that records progress).
pub async fn mcp_server_with<H: rmcp::ClientHandler>(
    handler: H,
    args: &[&str],
    envs: &[(&str, &str)],
    home: &Path,
) -> rmcp::service::RunningService<rmcp::RoleClient, H> {
    Server::new(home).args(args).envs(envs).serve_with(handler).await.client
}

/// Today's other short names, one line each over `Server` (suites written beside this change
/// still call them); new tests call `Server` itself.
pub async fn mcp_server_in<H: rmcp::ClientHandler>(
    era: rmcp::ClientLifecycleMode,
    handler: H,
    args: &[&str],
    envs: &[(&str, &str)],
    home: &Path,
) -> rmcp::service::RunningService<rmcp::RoleClient, H> {
    Server::new(home)
        .args(args)
        .envs(envs)
        .era(era)
        .serve_with(handler)
        .await
        .client
}

/// `mcp_server` on stdio, with the server's stderr kept (to look for panics and warnings).
pub async fn mcp_server_logged(args: &[&str], envs: &[(&str, &str)], home: &Path) -> (McpClient, Log) {
    let running = Server::new(home)
        .args(args)
        .envs(envs)
        .transport(Transport::Stdio)
        .serve_with(())
        .await;
    (running.client, running.log)
}

/// `mcp_server` on stdio, and the server's process id (to watch its memory).
pub async fn mcp_server_with_pid(args: &[&str], home: &Path) -> (McpClient, u32) {
    let running = Server::new(home)
        .args(args)
        .transport(Transport::Stdio)
        .serve_with(())
        .await;
    (running.client, running.pid.expect("a stdio server's pid"))
}

/// `DROIDMCP_TEST_PROTOCOL=2026-07-28`: the client speaks MCP 2026-07-28 (`server/discover`, no
/// `initialize`, no session: each request on its own); otherwise the legacy handshake.
pub fn lifecycle() -> rmcp::ClientLifecycleMode {
    match std::env::var("DROIDMCP_TEST_PROTOCOL").as_deref() {
        Ok("2026-07-28") => modern(),
        _ => rmcp::ClientLifecycleMode::Initialize,
    }
}

/// MCP 2026-07-28 only, through `server/discover`.
pub fn modern() -> rmcp::ClientLifecycleMode {
    rmcp::ClientLifecycleMode::Discover {
        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
    }
}

/// `DROIDMCP_TEST_TRANSPORT=http`: the MCP suites run against `droidmcp serve --http` with
/// rmcp's streamable HTTP client instead of stdio.
pub fn over_http() -> bool {
    std::env::var("DROIDMCP_TEST_TRANSPORT").is_ok_and(|t| t == "http")
}

/// `droidmcp serve --http 127.0.0.1:0 ARGS` as a child process (`Server::http`), and where it
/// listens.
pub struct HttpServer {
    pub url: String,
    pub child: tokio::process::Child,
    pub log: Log,
}

impl HttpServer {
    /// `Server::new(home).args(args).envs(envs).http()`: the short name the HTTP suites call.
    pub async fn start(args: &[&str], envs: &[(&str, &str)], home: &Path) -> HttpServer {
        Server::new(home).args(args).envs(envs).http().await
    }

    /// A client transport to this server, with a bearer token or none.
    pub fn transport(&self, token: Option<&str>) -> rmcp::transport::StreamableHttpClientTransport<reqwest::Client> {
        tls_provider();
        let mut config =
            rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(self.url.as_str());
        if let Some(token) = token {
            config = config.auth_header(token.to_string());
        }
        rmcp::transport::StreamableHttpClientTransport::from_config(config)
    }

    /// The droidmcp process's id (the child is the shell that stops it).
    pub fn pid(&self) -> u32 {
        let sh = self.child.id().expect("the wrapper runs");
        let children = std::fs::read_to_string(format!("/proc/{sh}/task/{sh}/children")).unwrap();
        children
            .split_whitespace()
            .next()
            .expect("droidmcp under sh")
            .parse()
            .unwrap()
    }

    /// Keeps the server until this test process ends (its stdin pipe closing then stops it).
    pub fn keep(self) {
        static KEPT: std::sync::Mutex<Vec<HttpServer>> = std::sync::Mutex::new(Vec::new());
        KEPT.lock().unwrap_or_else(|p| p.into_inner()).push(self);
    }

    /// Stops the server (SIGTERM, as a service manager would) and waits for it to end.
    pub async fn terminate(mut self) {
        drop(self.child.stdin.take());
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
    }
}

/// Calls a tool with JSON arguments.
pub async fn call<H: rmcp::ClientHandler>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, H>,
    tool: &str,
    args: serde_json::Value,
) -> rmcp::model::CallToolResult {
    let serde_json::Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(rmcp::model::CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{tool} call failed at the protocol level: {e}"))
}

/// The structured content of a successful call, with its text twin checked against it.
pub fn ok(result: &rmcp::model::CallToolResult) -> serde_json::Value {
    assert_ne!(
        result.is_error,
        Some(true),
        "expected success, got {:?}",
        result.content
    );
    let value = result.structured_content.clone().expect("structuredContent");
    let text = result.content[0].as_text().expect("a text twin").text.clone();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&text).expect("text twin is JSON"),
        value
    );
    value
}

/// The message of a tool-level error (`isError: true`).
pub fn err(result: &rmcp::model::CallToolResult) -> String {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected isError, got {:?}",
        result.structured_content
    );
    result.content[0].as_text().expect("error text").text.clone()
}

/// `adb-shell run COMMAND` on the selected device.
pub async fn shell<H: rmcp::ClientHandler>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, H>,
    command: &str,
) -> rmcp::model::CallToolResult {
    shell_on(client, None, command).await
}

/// The arguments of `adb-shell run COMMAND` (for a call made another way, e.g. the panel's).
pub fn shell_run(command: &str) -> serde_json::Value {
    serde_json::json!({"operation": "run", "command": command})
}

/// `adb-shell run COMMAND` on `device` (or the selected one): the one shell wrapper.
pub async fn shell_on<H: rmcp::ClientHandler>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, H>,
    device: Option<&str>,
    command: &str,
) -> rmcp::model::CallToolResult {
    let mut args = shell_run(command);
    if let Some(device) = device {
        args["device"] = device.into();
    }
    call(client, "adb-shell", args).await
}

/// `adb-shell run COMMAND` on the simulator through `droidmcp call`, as a user runs the binary
/// beside a replay: its stdout.
pub fn shell_by_call(sim: &super::SimProcess, command: &str) -> String {
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_droidmcp"))
        .args(["call", "adb-shell", &shell_run(command).to_string()])
        .args(["--adb", &format!("tcp:{}", sim.addr)])
        .env("HOME", home.path())
        .env_remove("ANDROID_SERIAL")
        .output()
        .expect("droidmcp call runs");
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    answer["stdout"].as_str().unwrap_or_default().to_string()
}

/// Chars of the JSON a model reads for this result (the structured content, which the text
/// twin repeats).
pub fn response_chars(result: &rmcp::model::CallToolResult) -> usize {
    result
        .structured_content
        .as_ref()
        .map(|v| v.to_string().chars().count())
        .unwrap_or_else(|| {
            result
                .content
                .iter()
                .filter_map(|c| c.as_text())
                .map(|t| t.text.chars().count())
                .sum()
        })
}

/// Records the progress notifications a server sends.
#[derive(Clone, Default)]
pub struct ProgressRecorder(pub std::sync::Arc<std::sync::Mutex<Vec<rmcp::model::ProgressNotificationParam>>>);

impl rmcp::ClientHandler for ProgressRecorder {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.lock().unwrap().push(params);
    }
}

/// Calls a tool with a progress token (rmcp assigns one to a cancellable request) and waits.
pub async fn call_with_progress<H: rmcp::ClientHandler>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, H>,
    tool: &str,
    args: serde_json::Value,
) -> rmcp::model::CallToolResult {
    let mut params = rmcp::model::CallToolRequestParams::new(tool.to_string());
    params.arguments = args.as_object().cloned();
    let request = rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
    let handle = client
        .peer()
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .expect("send");
    match handle.await_response().await.expect("response") {
        rmcp::model::ServerResult::CallToolResult(result) => result,
        other => panic!("unexpected answer {other:?}"),
    }
}

/// The process's TLS provider for reqwest (the crate builds it with rustls and no provider of its
/// own: ring, as crates/script/src/sandbox/http.rs hands its clients), installed once before a test's
/// first client; rmcp's HTTP client transport builds a default reqwest client too.
pub fn tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A plain reqwest client for a test's own HTTP requests (the one way to make one).
pub fn http_client() -> reqwest::Client {
    tls_provider();
    reqwest::Client::new()
}
