//! The one skip rule every test follows, unit and integration alike: a missing tool or capture
//! prints `SKIPPED: why` and the test passes locally; under `CI=true` it fails instead, so CI
//! can never pass by running nothing. `DROIDMCP_NO_CAPTURES=1` (a CI job without access to the
//! captures, e.g. a fork's) turns only the captures' absence back into a skip.

use std::path::PathBuf;

/// Whether this is a CI run (`CI` set to anything but empty, `false` or `0`).
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

/// The repository's root (this crate sits in `crates/testkit`).
pub fn repo_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `../shared/device-captures` beside the repository, if present. Absent, it is a skip locally
/// and a failure under CI, unless `DROIDMCP_NO_CAPTURES=1` says this run has none.
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

/// A `redis-server` of the test's own on a free loopback port, stopped when dropped.
pub struct RedisServer {
    child: std::process::Child,
    pub port: u16,
}

impl RedisServer {
    /// `redis://127.0.0.1:PORT/DB`.
    pub fn url(&self, db: u8) -> String {
        format!("redis://127.0.0.1:{}/{db}", self.port)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts Debian's `redis-server` (no disk, loopback only) and waits until it answers PING.
/// Absent, it is the skip rule's (a failure under CI).
pub fn redis_server() -> Option<RedisServer> {
    use std::io::{Read, Write};
    for _ in 0..5 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let child = std::process::Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        let child = match child {
            Ok(child) => child,
            Err(e) => {
                skip_or_fail(&format!(
                    "redis-server could not start ({e}); apt-get install redis-server"
                ));
                return None;
            }
        };
        let mut server = RedisServer { child, port };
        for _ in 0..200 {
            if let Ok(Some(_)) = server.child.try_wait() {
                break; // the port was taken meanwhile: another
            }
            if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
                let mut answer = [0u8; 7];
                if s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut answer).is_ok() && &answer == b"+PONG\r\n" {
                    return Some(server);
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        drop(server);
    }
    panic!("redis-server started five times without answering PING");
}

/// Debian's haproxy in the foreground, stopped when dropped.
pub struct Haproxy {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// haproxy on a free loopback port, round robin over `servers` (`host:port` each): health-checked
/// every 200 ms (two misses in a row mark one down: a busy host's one late check does not), and a request whose connection is refused is re-sent to another (`retries`,
/// `option redispatch`). `backend` is added to the backend's lines (stickiness, say). Absent, it
/// is the skip rule's (a failure under CI).
pub fn haproxy(servers: &[String], backend: &str) -> Option<Haproxy> {
    if std::process::Command::new("haproxy").arg("-v").output().is_err() {
        skip_or_fail("haproxy is not installed (apt-get install haproxy)");
        return None;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let servers: String = servers
        .iter()
        .enumerate()
        .map(|(i, s)| format!("    server d{i} {s} check inter 200ms fall 2 rise 1\n"))
        .collect();
    let config = format!(
        "global\n    maxconn 256\ndefaults\n    mode http\n    timeout connect 2s\n    timeout client 60s\n    timeout server 60s\n    timeout check 1s\n    retries 3\n    option redispatch 1\nfrontend mcp\n    bind 127.0.0.1:{port}\n    default_backend droidmcp\nbackend droidmcp\n    balance roundrobin\n{backend}{servers}"
    );
    // The config on its stdin: a test helper writes no file.
    let mut child = std::process::Command::new("haproxy")
        .args(["-db", "-f", "/dev/stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("haproxy starts");
    let mut stdin = child.stdin.take().expect("haproxy's stdin");
    std::io::Write::write_all(&mut stdin, config.as_bytes()).expect("haproxy reads its config");
    drop(stdin);
    let balancer = Haproxy {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some(balancer);
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    panic!("haproxy did not listen on {port}: {config}");
}
