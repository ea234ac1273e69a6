//! The Android emulator's console: a text protocol on the port before adbd's (5554 for
//! `emulator-5554`). Lines end in CRLF; every reply ends with a line `OK` (or `OK: …`) or
//! `KO: why`. On connect the console greets, and asks for the token in
//! `~/.emulator_console_auth_token` (`auth TOKEN`) unless that file is empty.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod reply;

pub use reply::{Reply, TOKEN_FILE, named_token_path, parse_reply};

use super::AdbError;

/// A reply longer than this is not a console's: the connection is dropped.
pub const MAX_REPLY: usize = 1 << 20;

/// Where the console's token may be, in the order the emulator looks: the file its greeting
/// names (a console on this machine), `$ANDROID_EMULATOR_HOME`, then the home folder.
pub fn token_paths(named: Option<&str>) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = named.map(PathBuf::from).into_iter().collect();
    if let Some(dir) = std::env::var_os("ANDROID_EMULATOR_HOME") {
        paths.push(PathBuf::from(dir).join(TOKEN_FILE));
    }
    if let Some(home) = std::env::var_os("HOME") {
        paths.push(PathBuf::from(home).join(TOKEN_FILE));
    }
    paths.dedup();
    paths
}

/// One authenticated console connection.
#[derive(Debug)]
pub struct Console {
    addr: SocketAddr,
    stream: TcpStream,
    read: Vec<u8>,
}

impl Console {
    /// Connects, reads the greeting, and authenticates with the token file when asked.
    pub async fn open(addr: SocketAddr) -> Result<Console, AdbError> {
        let stream = TcpStream::connect(addr).await.map_err(|e| {
            AdbError::Console(format!(
                "cannot reach the emulator console at {addr}: {e}. Is the emulator running? Its console is the port before adbd's (5554 for emulator-5554); if it listens elsewhere, start droidmcp with --emulator-console SERIAL=HOST:PORT"
            ))
        })?;
        stream.set_nodelay(true).ok();
        let mut console = Console {
            addr,
            stream,
            read: Vec::new(),
        };
        let greeting = console.reply().await?;
        if !greeting.lines.iter().any(|l| l.contains("Authentication required")) {
            return Ok(console);
        }
        let local = addr.ip().is_loopback();
        let named = named_token_path(&greeting).filter(|_| local);
        let paths = token_paths(named.as_deref());
        let Some((path, token)) = paths.iter().find_map(|p| {
            let token = std::fs::read_to_string(p).ok()?;
            Some((p, token.trim().to_string()))
        }) else {
            let tried: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            return Err(AdbError::Console(format!(
                "the emulator console at {addr} asks for its auth token, and there is no token file at {}. Copy ~/{TOKEN_FILE} there from the machine that runs the emulator",
                tried.join(" or ")
            )));
        };
        if token.contains(['\r', '\n']) || token.len() > 256 {
            return Err(AdbError::Console(format!(
                "{} does not hold one token line; the emulator writes a 16-character token there",
                path.display()
            )));
        }
        console.write_line(&format!("auth {token}")).await?;
        let answer = console.reply().await?;
        if let Some(why) = answer.refused {
            return Err(AdbError::Console(format!(
                "the emulator console at {addr} refused the token in {} ({why}). The emulator makes a new one when that file is missing: copy the current ~/{TOKEN_FILE} from the machine that runs it",
                path.display()
            )));
        }
        Ok(console)
    }

    /// Sends one command line and reads its reply, within `limit`.
    pub async fn send(&mut self, command: &str, limit: Duration) -> Result<Reply, AdbError> {
        let addr = self.addr;
        let exchange = async {
            self.write_line(command).await?;
            self.reply().await
        };
        tokio::time::timeout(limit, exchange).await.unwrap_or_else(|_| {
            Err(AdbError::Timeout {
                what: format!("console command `{}` at {addr}", android::text::echoed(command)),
                after: limit,
            })
        })
    }

    /// Whether the console closed the connection while it sat idle (the emulator restarted).
    fn closed(&mut self) -> bool {
        let mut chunk = [0u8; 1024];
        match self.stream.try_read(&mut chunk) {
            Ok(0) => true,
            Ok(n) => {
                self.read.extend_from_slice(&chunk[..n]);
                false
            }
            Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
        }
    }

    async fn write_line(&mut self, line: &str) -> Result<(), AdbError> {
        let addr = self.addr;
        self.stream
            .write_all(format!("{line}\r\n").as_bytes())
            .await
            .map_err(|e| dropped(addr, e))
    }

    async fn reply(&mut self) -> Result<Reply, AdbError> {
        loop {
            if let Some((reply, used)) = parse_reply(&self.read) {
                self.read.drain(..used);
                return Ok(reply);
            }
            if self.read.len() > MAX_REPLY {
                return Err(AdbError::Console(format!(
                    "the emulator console at {} sent over {} KiB without ending its reply; the connection was dropped",
                    self.addr,
                    MAX_REPLY / 1024
                )));
            }
            let mut chunk = [0u8; 8192];
            let n = self.stream.read(&mut chunk).await.map_err(|e| dropped(self.addr, e))?;
            if n == 0 {
                return Err(dropped(self.addr, std::io::ErrorKind::UnexpectedEof.into()));
            }
            self.read.extend_from_slice(&chunk[..n]);
        }
    }
}

/// Where each device's console is, and one connection per console, reused (authenticated once).
#[derive(Debug, Default)]
pub struct Consoles {
    /// `--emulator-console [SERIAL=]HOST:PORT`: by serial, or (`None`) for any device.
    configured: Vec<(Option<String>, SocketAddr)>,
    open: std::sync::Mutex<std::collections::HashMap<SocketAddr, std::sync::Arc<tokio::sync::Mutex<Option<Console>>>>>,
}

impl Consoles {
    pub fn new(configured: Vec<(Option<String>, SocketAddr)>) -> Consoles {
        Consoles {
            configured,
            open: Default::default(),
        }
    }

    /// The console of `serial`: one configured for it, else an emulator's by its name
    /// (`emulator-5554` → port 5554 on the machine of the adb server that sees it, `server_host`),
    /// else one configured for any device.
    pub fn address(&self, serial: &str, server_host: Option<std::net::IpAddr>) -> Option<SocketAddr> {
        let bare = serial.rsplit_once('/').map_or(serial, |(_, s)| s);
        let configured = |wanted: Option<&str>| {
            self.configured
                .iter()
                .find(|(s, _)| s.as_deref() == wanted)
                .map(|(_, addr)| *addr)
        };
        configured(Some(serial))
            .or_else(|| configured(Some(bare)))
            .or_else(|| {
                let port: u16 = bare.strip_prefix("emulator-")?.parse().ok()?;
                let host = server_host.unwrap_or(std::net::Ipv4Addr::LOCALHOST.into());
                Some(SocketAddr::new(host, port))
            })
            .or_else(|| configured(None))
    }

    /// Sends `command` to the console at `addr` on its one connection, opening (and
    /// authenticating) it first when there is none; a connection found closed before the
    /// command went out is opened again once. Connecting and the command share `limit`.
    pub async fn send(&self, addr: SocketAddr, command: &str, limit: Duration) -> Result<Reply, AdbError> {
        let slot = self
            .open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(addr)
            .or_default()
            .clone();
        let exchange = async {
            let mut held = slot.lock().await;
            for attempt in 0..2 {
                let console = match held.as_mut() {
                    Some(console) => console,
                    None => held.insert(Console::open(addr).await?),
                };
                if attempt == 0 && console.closed() {
                    *held = None;
                    continue;
                }
                let reply = console.send(command, limit).await;
                if reply.is_err() {
                    // A timed-out or broken exchange leaves the connection out of step.
                    *held = None;
                }
                return reply;
            }
            unreachable!("the second attempt returns")
        };
        tokio::time::timeout(limit, exchange).await.unwrap_or_else(|_| {
            Err(AdbError::Timeout {
                what: format!("console command `{}` at {addr}", android::text::echoed(command)),
                after: limit,
            })
        })
    }
}

fn dropped(addr: SocketAddr, e: std::io::Error) -> AdbError {
    AdbError::Console(format!(
        "the emulator console at {addr} closed the connection ({e}): the emulator stopped or restarted"
    ))
}
