//! The device side of the tests: a `droidmcp sim` process on a free port, and a private adb
//! server (its own port and HOME) that can connect to it.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use super::{Log, free_port, profile_dir, skip_or_fail};

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

    /// On a free port, playing the profile in `folder` (a `Profile` a test changed).
    pub fn start_profile(folder: &Path, extra: &[&str]) -> SimProcess {
        Self::spawn_profile(folder, "127.0.0.1:0", extra, false)
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
        Self::spawn_profile(&profile_dir(), listen, extra, logged)
    }

    fn spawn_profile(profile: &Path, listen: &str, extra: &[&str], logged: bool) -> SimProcess {
        let listen = match listen {
            "127.0.0.1:0" => format!("127.0.0.1:{}", free_port()),
            given => given.to_string(),
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_droidmcp"))
            .args(["sim", "--listen", &listen, "--profile"])
            .arg(profile)
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

    /// The text of the node with content-desc `desc`, as the device's own window dump shows it
    /// (`uiautomator dump`): droidmcp hides a field named as a password even revealed, so a test
    /// reads what a replay typed back here. Empty when no node has it.
    pub fn text_of(&self, serial: &str, desc: &str) -> String {
        let (dump, err, code) = self.shell(serial, &["uiautomator", "dump", "/dev/tty"]);
        assert_eq!(code, 0, "uiautomator dump: {err}");
        let tree = droidmcp::android::uiautomator::parse_ui_dump(&dump).expect("the device's dump parses");
        tree.nodes
            .iter()
            .find(|n| n.content_desc() == desc)
            .map(|n| n.text().to_string())
            .unwrap_or_default()
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

/// A simulated phone (a `droidmcp sim` process playing `profile`), an MCP server that drives it
/// over `--adb tcp:` with its stderr kept, and the test's own route to the phone beside the
/// server's (a private adb server): reading `sim-state costs`, or acting behind the server's back,
/// without an MCP call the server would count as acting. `None` without `adb` (CI fails).
pub struct PhoneRig {
    pub client: super::McpClient,
    pub log: Log,
    pub adb: AdbServer,
    pub serial: String,
    _sim: SimProcess,
    _home: tempfile::TempDir,
}

impl PhoneRig {
    pub async fn start(profile: &Path, envs: &[(&str, &str)]) -> Option<PhoneRig> {
        let adb = AdbServer::start()?;
        let sim = SimProcess::start_profile(profile, &[]);
        let serial = adb.connect(&sim);
        let home = tempfile::tempdir().unwrap();
        let target = format!("tcp:{}", sim.addr);
        let (client, log) = super::mcp_server_logged(&["--adb", &target], envs, home.path()).await;
        Some(PhoneRig {
            client,
            log,
            adb,
            serial,
            _sim: sim,
            _home: home,
        })
    }

    /// A shell line on the phone by the test's own route: its stdout (a failure panics).
    pub fn sh(&self, line: &str) -> String {
        let (out, err, code) = self.adb.shell(&self.serial, &[line]);
        assert_eq!(code, 0, "adb shell {line}: {err}");
        out
    }

    /// (device ms, programs) the simulated phone has spent so far (`sim-state costs`).
    pub fn spent(&self) -> (f64, u64) {
        let text = self.sh("sim-state costs");
        let number = |key: &str| -> f64 {
            let at = text.find(key).unwrap_or_else(|| panic!("no {key} in {text}")) + key.len();
            text[at..]
                .split(|c: char| !c.is_ascii_digit() && c != '.')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        (number("device_ms="), number("programs=") as u64)
    }
}
