//! Shared test helpers: a simulator process on a free port, a private adb server, the shared
//! captures folder, and a test APK. Missing `adb` or `../shared` skips locally and fails under CI.
#![allow(dead_code)]

pub mod chromium;

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Skips (prints why) or, under CI, fails.
pub fn skip_or_fail(reason: &str) {
    if under_ci() {
        panic!("CI=true and {reason}: CI must run this test");
    }
    eprintln!("SKIPPED: {reason}");
}

pub fn repo_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn profile_dir() -> PathBuf {
    repo_dir().join("fixtures/pixel-emulator")
}

/// `../shared/device-captures`, if present. Absent, it is a skip locally and a failure under
/// CI, unless the job says it has no captures (`DROIDMCP_NO_CAPTURES=1`, e.g. a fork's CI
/// without access to them): then the capture tests print what they skipped and the rest stays
/// strict.
pub fn captures_dir() -> Option<PathBuf> {
    let dir = repo_dir().join("../shared/device-captures");
    if dir.is_dir() {
        Some(dir)
    } else if std::env::var("DROIDMCP_NO_CAPTURES").is_ok_and(|v| v == "1") {
        eprintln!("SKIPPED (DROIDMCP_NO_CAPTURES=1): {} is absent", dir.display());
        None
    } else {
        skip_or_fail(&format!("{} is absent", dir.display()));
        None
    }
}

/// Every capture whose file name starts with `prefix`, sorted.
pub fn captures(prefix: &str) -> Vec<(String, PathBuf)> {
    let Some(dir) = captures_dir() else { return Vec::new() };
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .expect("read captures dir")
        .filter_map(|e| e.ok())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(name, _)| name.starts_with(prefix))
        .collect();
    found.sort();
    assert!(!found.is_empty(), "no capture named {prefix}* in {}", dir.display());
    found
}

/// A `droidmcp sim` process on a loopback port, killed on drop.
pub struct SimProcess {
    child: Child,
    pub addr: SocketAddr,
    /// Its log (info level), when started with `start_logged`.
    log: Option<Log>,
}

impl SimProcess {
    /// On a free port, logging warnings to the test's stderr.
    pub fn start(extra: &[&str]) -> SimProcess {
        Self::spawn("127.0.0.1:0", extra, false)
    }

    /// On a free port, with its info-level log kept for `log()`.
    pub fn start_logged(extra: &[&str]) -> SimProcess {
        Self::spawn("127.0.0.1:0", extra, true)
    }

    /// On this address (to play a device that restarts where it was), log kept.
    pub fn start_at(listen: &str, extra: &[&str]) -> SimProcess {
        Self::spawn(listen, extra, true)
    }

    fn spawn(listen: &str, extra: &[&str], logged: bool) -> SimProcess {
        let listen = match listen {
            "127.0.0.1:0" => format!("127.0.0.1:{}", free_port()),
            given => given.to_string(),
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
            .args(["sim", "--listen", &listen, "--profile"])
            .arg(profile_dir())
            .args(extra)
            .env("RUST_LOG", if logged { "info" } else { "warn" })
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .stderr(if logged { Stdio::piped() } else { Stdio::inherit() })
            .spawn()
            .expect("spawn droidmcp sim");
        let log = child.stderr.take().map(|stderr| {
            let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
            let sink = log.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    let mut log = sink.lock().unwrap();
                    log.push_str(&line);
                    log.push('\n');
                }
            });
            log
        });
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read sim address");
        let Some(addr) = line.trim().strip_prefix("listening on ") else {
            // The sim ended before it listened: say why (its exit status and its log).
            let status = child.wait();
            std::thread::sleep(std::time::Duration::from_millis(200));
            let said = log.map(|l| l.lock().unwrap().clone()).unwrap_or_default();
            panic!("droidmcp sim {extra:?} printed {line:?} first, then ended ({status:?}); its log:\n{said}");
        };
        let addr = addr.parse().expect("sim address");
        SimProcess { child, addr, log }
    }

    pub fn serial(&self) -> String {
        self.addr.to_string()
    }

    /// What the simulator logged so far (needs `start_logged` or `start_at`).
    pub fn log(&self) -> String {
        self.log
            .as_ref()
            .expect("started with its log kept")
            .lock()
            .unwrap()
            .clone()
    }

    /// A handle on its log that another thread can watch.
    pub fn log_handle(&self) -> Log {
        self.log.clone().expect("started with its log kept")
    }

    /// Waits up to 5 s for a log line containing `needle`; true if it came.
    pub fn wait_for_log(&self, needle: &str) -> bool {
        for _ in 0..100 {
            if self.log().contains(needle) {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        false
    }

    /// Kills the process now, as a crashed or rebooted device would vanish.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for SimProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Copies a folder tree (a profile to change in a test).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    // Below the kernel's ephemeral range (32768-60999 by default): an outgoing connection (an adb
    // server reaching a device) never takes a port a device restarting where it was, or a new adb
    // server, needs. Each port goes out once per test process, from an offset per process.
    const FIRST: u32 = 20_000;
    const COUNT: u32 = 12_000;
    static NEXT: AtomicU32 = AtomicU32::new(u32::MAX);
    let _ = NEXT.compare_exchange(
        u32::MAX,
        std::process::id().wrapping_mul(7919) % COUNT,
        Ordering::SeqCst,
        Ordering::SeqCst,
    );
    for _ in 0..COUNT {
        let port = (FIRST + NEXT.fetch_add(1, Ordering::SeqCst) % COUNT) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port in {FIRST}..{}", FIRST + COUNT)
}

/// A private adb server (its own port and HOME, so its own key), killed on drop.
pub struct AdbServer {
    pub port: u16,
    pub home: tempfile::TempDir,
}

impl AdbServer {
    /// `None` when `adb` is not installed (a skip locally, a failure under CI).
    pub fn start() -> Option<AdbServer> {
        if Command::new("adb").arg("version").output().is_err() {
            skip_or_fail("the adb program is not installed (apt-get install -y adb)");
            return None;
        }
        // The suites run side by side in one process: another one may take the free port before
        // adb binds it (adb then meets a stranger: "protocol fault"). A fresh port, then.
        let mut failures = Vec::new();
        for _ in 0..3 {
            let server = AdbServer {
                port: free_port(),
                home: tempfile::tempdir().expect("tempdir"),
            };
            let out = server.run(&["start-server"]);
            if out.status.success() {
                return Some(server);
            }
            failures.push(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        panic!("adb start-server failed on three ports: {failures:?}")
    }

    pub fn command(&self) -> Command {
        let mut cmd = Command::new("adb");
        cmd.arg("-P").arg(self.port.to_string()).env("HOME", self.home.path());
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().expect("run adb")
    }

    /// `adb connect` then `wait-for-device`, so the transport is up before the test goes on.
    pub fn connect(&self, sim: &SimProcess) -> String {
        let serial = sim.serial();
        let out = self.run(&["connect", &serial]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("connected to"), "adb connect: {text}");
        assert!(self.run(&["-s", &serial, "wait-for-device"]).status.success());
        serial
    }

    /// `adb -s SERIAL shell ARGS`: stdout, stderr and the exit code.
    pub fn shell(&self, serial: &str, args: &[&str]) -> (String, String, i32) {
        let mut all = vec!["-s", serial, "shell"];
        all.extend_from_slice(args);
        let out = self.run(&all);
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            out.status.code().unwrap_or(-1),
        )
    }

    /// `adb connect` without waiting for the device (an unauthorized one never comes online).
    pub fn connect_only(&self, serial: &str) -> String {
        String::from_utf8_lossy(&self.run(&["connect", serial]).stdout).into_owned()
    }

    /// Forgets the device and connects it again until it is online (three tries): what a user
    /// does after a device came back. The server drops a transport after `disconnect` answers: a
    /// `connect` before it went is told "already connected" and then loses the device with it
    /// (seen under load), so each try waits for the old transport to go first.
    pub fn reconnect(&self, serial: &str) -> bool {
        for _ in 0..3 {
            self.run(&["disconnect", serial]);
            for _ in 0..100 {
                if !self.lists(serial) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            self.connect_only(serial);
            if self.wait_for_secs(serial, 5) {
                return true;
            }
        }
        false
    }

    /// Whether `adb devices` has a row for `serial`, in any state.
    pub fn lists(&self, serial: &str) -> bool {
        String::from_utf8_lossy(&self.run(&["devices"]).stdout)
            .lines()
            .any(|l| l.split_whitespace().next() == Some(serial))
    }

    /// `wait-for-device`, giving up after 10 s.
    pub fn wait_for(&self, serial: &str) -> bool {
        self.wait_for_secs(serial, 10)
    }

    fn wait_for_secs(&self, serial: &str, secs: u32) -> bool {
        Command::new("timeout")
            .args([
                &secs.to_string(),
                "adb",
                "-P",
                &self.port.to_string(),
                "-s",
                serial,
                "wait-for-device",
            ])
            .env("HOME", self.home.path())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// SIGKILLs the server process, as a crash or an OOM kill would.
    /// Returns once its port refuses connections: a signal is delivered when the process is next
    /// scheduled, which under load can be after the test's next call.
    pub fn kill_hard(&self) {
        let pattern = format!("adb -L tcp:{} fork-server", self.port);
        let _ = Command::new("pkill").args(["-9", "-f", &pattern]).status();
        let started = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(10),
                "the adb server on port {} still answers 10 s after SIGKILL",
                self.port
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    pub fn restart(&self) -> bool {
        self.run(&["start-server"]).status.success()
    }

    pub fn public_key_path(&self) -> PathBuf {
        self.home.path().join(".android/adbkey.pub")
    }
}

impl Drop for AdbServer {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// A private adb server connected to a fresh simulator started with `extra` flags, and its serial.
/// `None` when `adb` is missing (a skip locally, a failure under CI).
pub fn connected_sim(extra: &[&str]) -> Option<(AdbServer, SimProcess, String)> {
    let adb = AdbServer::start()?;
    let sim = SimProcess::start(extra);
    let serial = adb.connect(&sim);
    Some((adb, sim, serial))
}

/// A minimal APK the simulator can install: a zip with a text manifest.
pub fn build_test_apk(dir: &Path, package: &str, version_code: u32) -> PathBuf {
    let path = dir.join(format!("{package}.apk"));
    let manifest = format!(
        r#"<?xml version="1.0" encoding="utf-8"?>
<manifest xmlns:android="http://schemas.android.com/apk/res/android" package="{package}" android:versionCode="{version_code}" android:versionName="1.{version_code}">
  <uses-sdk android:minSdkVersion="24" android:targetSdkVersion="34"/>
  <uses-permission android:name="android.permission.INTERNET"/>
  <application android:label="Test App">
    <activity android:name=".MainActivity" android:exported="true">
      <intent-filter><action android:name="android.intent.action.MAIN"/><category android:name="android.intent.category.LAUNCHER"/></intent-filter>
    </activity>
  </application>
</manifest>"#
    );
    let file = std::fs::File::create(&path).expect("create apk");
    let mut zip = zip::ZipWriter::new(file);
    let opts = zip::write::SimpleFileOptions::default();
    zip.start_file("AndroidManifest.xml", opts).expect("zip entry");
    zip.write_all(manifest.as_bytes()).expect("write manifest");
    zip.start_file("classes.dex", opts).expect("zip entry");
    zip.write_all(b"dex\n035\0").expect("write dex");
    zip.finish().expect("finish apk");
    path
}

/// The center of the first node whose attribute `attr` equals `value` in a uiautomator dump.
pub fn center_of(xml: &str, attr: &str, value: &str) -> (i32, i32) {
    let tree = droidmcp::android::uiautomator::parse_ui_dump(xml).expect("parse dump");
    let node = tree
        .nodes
        .iter()
        .find(|n| n.attr(attr) == Some(value))
        .unwrap_or_else(|| panic!("no node with {attr}={value:?} on this screen"));
    node.bounds().expect("bounds").center()
}

/// A droidmcp server process spoken to with rmcp's own client over stdio.
pub type McpClient = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// Starts `droidmcp ARGS` (serve mode) with a private HOME, so it never touches the user's adb key.
pub async fn mcp_server(args: &[&str], envs: &[(&str, &str)], home: &Path) -> McpClient {
    mcp_server_with((), args, envs, home).await
}

/// The same, with a client handler of the test's own (e.g. one that records progress).
pub async fn mcp_server_with<H: rmcp::ClientHandler>(
    handler: H,
    args: &[&str],
    envs: &[(&str, &str)],
    home: &Path,
) -> rmcp::service::RunningService<rmcp::RoleClient, H> {
    mcp_server_in(lifecycle(), handler, args, envs, home).await
}

/// The same, in the protocol mode given (a test of an older protocol version asks for the
/// legacy handshake whatever `DROIDMCP_TEST_PROTOCOL` says).
pub async fn mcp_server_in<H: rmcp::ClientHandler>(
    lifecycle: rmcp::ClientLifecycleMode,
    handler: H,
    args: &[&str],
    envs: &[(&str, &str)],
    home: &Path,
) -> rmcp::service::RunningService<rmcp::RoleClient, H> {
    use rmcp::ClientServiceExt;
    if over_http() {
        let server = HttpServer::start(args, envs, home).await;
        let client = handler
            .serve_with_lifecycle(server.transport(None), lifecycle)
            .await
            .expect("MCP initialize (or server/discover) over HTTP");
        server.keep();
        return client;
    }
    handler
        .serve_with_lifecycle(mcp_transport(args, envs, home), lifecycle)
        .await
        .expect("MCP initialize (or server/discover)")
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

/// `droidmcp serve --http 127.0.0.1:0 ARGS` as a child process, and where it listens.
pub struct HttpServer {
    pub url: String,
    pub child: tokio::process::Child,
    pub log: Log,
}

impl HttpServer {
    pub async fn start(args: &[&str], envs: &[(&str, &str)], home: &Path) -> HttpServer {
        use tokio::io::AsyncBufReadExt;
        // Through a shell that sends SIGTERM once its stdin closes: when this handle is
        // dropped, or when the test process ends however it ends.
        let script = r#""$@" & pid=$!; read -r _; kill -TERM $pid; wait $pid"#;
        let bin = env!("CARGO_BIN_EXE_droidmcp");
        let mut all = vec!["-c", script, "sh", bin, "serve", "--http", "127.0.0.1:0"];
        all.extend_from_slice(args);
        // A server without a token must be told so (it refuses to start otherwise).
        let tokens = args.contains(&"--token") || args.contains(&"--tokens-file");
        if !tokens && !envs.iter().any(|(k, _)| *k == "DROIDMCP_TOKEN") {
            all.push("--no-auth");
        }
        // HTTP sessions install only from install folders: the tests' APKs are in temp folders.
        let temp = std::fs::canonicalize(std::env::temp_dir()).unwrap();
        let temp = temp.to_string_lossy().into_owned();
        all.extend(["--install-dir", temp.as_str()]);
        let mut child = mcp_command_of("sh", &all, envs, home)
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

    /// A client transport to this server, with a bearer token or none.
    pub fn transport(&self, token: Option<&str>) -> rmcp::transport::StreamableHttpClientTransport<reqwest::Client> {
        let mut config =
            rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(self.url.as_str());
        if let Some(token) = token {
            config = config.auth_header(token.to_string());
        }
        rmcp::transport::StreamableHttpClientTransport::from_config(config)
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

/// `mcp_server`, and the server's process id (to watch its memory).
pub async fn mcp_server_with_pid(args: &[&str], home: &Path) -> (McpClient, u32) {
    use rmcp::ServiceExt;
    let transport = mcp_transport(args, &[], home);
    let pid = transport.id().expect("pid");
    (().serve(transport).await.expect("MCP initialize"), pid)
}

/// What a process wrote to stderr so far, kept by a reader task.
pub type Log = std::sync::Arc<std::sync::Mutex<String>>;

/// `mcp_server`, with the server's stderr kept (to look for panics and warnings).
pub async fn mcp_server_logged(args: &[&str], envs: &[(&str, &str)], home: &Path) -> (McpClient, Log) {
    use rmcp::ServiceExt;
    use tokio::io::AsyncBufReadExt;
    let (transport, stderr) = rmcp::transport::TokioChildProcess::builder(mcp_command(args, envs, home))
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn droidmcp");
    let log = Log::default();
    let sink = log.clone();
    let stderr = stderr.expect("piped stderr");
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let mut log = sink.lock().unwrap();
            log.push_str(&line);
            log.push('\n');
        }
    });
    (().serve(transport).await.expect("MCP initialize"), log)
}

/// `droidmcp ARGS` as a child process, with none of the caller's adb settings.
pub fn mcp_transport(args: &[&str], envs: &[(&str, &str)], home: &Path) -> rmcp::transport::TokioChildProcess {
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(mcp_command(args, envs, home))
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn droidmcp");
    transport
}

fn mcp_command(args: &[&str], envs: &[(&str, &str)], home: &Path) -> tokio::process::Command {
    mcp_command_of(env!("CARGO_BIN_EXE_droidmcp"), args, envs, home)
}

fn mcp_command_of(program: &str, args: &[&str], envs: &[(&str, &str)], home: &Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .env("RUST_LOG", "warn")
        .env("HOME", home)
        .env_remove("ANDROID_SERIAL")
        .env_remove("ANDROID_ADB_SERVER_PORT")
        .env_remove("ADB_SERVER_SOCKET")
        .env_remove("ANDROID_USER_HOME")
        .env_remove("ANDROID_EMULATOR_HOME");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd
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
