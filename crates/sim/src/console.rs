//! The emulator console, as the Android emulator serves it on the port before adbd's: a
//! greeting that asks for the token in `~/.emulator_console_auth_token` (made if missing, as the
//! emulator does; an empty file turns auth off), then one command per line, each answered with
//! its lines and `OK`, or `KO: why`. `emulator.rs` answers the commands.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use super::Simulator;
use adb::console::TOKEN_FILE;

/// A line longer than this ends the connection.
const MAX_LINE: usize = 4096;

/// A running console: its address, and the task that accepts connections (aborted on drop).
pub struct ConsoleHandle {
    pub addr: SocketAddr,
    accept_task: JoinHandle<()>,
}

impl Drop for ConsoleHandle {
    fn drop(&mut self) {
        self.accept_task.abort();
    }
}

/// The token the console asks for: the token file's line, made with a random token if missing.
/// `None` when the file is empty (auth off) or there is no home folder.
pub fn token() -> anyhow::Result<Option<(PathBuf, String)>> {
    let paths = adb::console::token_paths(None);
    let path = match paths.iter().find(|p| p.exists()) {
        Some(found) => found.clone(),
        None => {
            let Some(home) = paths.last() else { return Ok(None) };
            use rand::Rng;
            let token: String = rand::rng()
                .sample_iter(rand::distr::Alphanumeric)
                .take(16)
                .map(char::from)
                .collect();
            std::fs::write(home, &token).map_err(|e| anyhow::anyhow!("writing {}: {e}", home.display()))?;
            home.clone()
        }
    };
    let token = std::fs::read_to_string(&path)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?
        .trim()
        .to_string();
    Ok((!token.is_empty()).then_some((path, token)))
}

/// Serves the console of `sim` on `listen`, asking for `token` when there is one.
pub async fn start(
    sim: Arc<Simulator>,
    listen: SocketAddr,
    token: Option<(PathBuf, String)>,
) -> anyhow::Result<ConsoleHandle> {
    let listener = TcpListener::bind(listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen for the console on {listen}: {e}"))?;
    let addr = listener.local_addr()?;
    let token = Arc::new(token);
    let accept_task = tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(serve(sim.clone(), socket, token.clone()));
        }
    });
    Ok(ConsoleHandle { addr, accept_task })
}

async fn serve(sim: Arc<Simulator>, socket: TcpStream, token: Arc<Option<(PathBuf, String)>>) {
    let (read, mut write) = socket.into_split();
    let mut lines = BufReader::new(read);
    let mut authenticated = token.is_none();
    let greeting = match token.as_ref() {
        Some((path, _)) => format!(
            "Android Console: Authentication required\r\nAndroid Console: type 'auth <auth_token>' to authenticate\r\nAndroid Console: you can find your <auth_token> in \r\n'{}'\r\nOK\r\n",
            path.display()
        ),
        None => "Android Console: type 'help' for a list of commands\r\nOK\r\n".to_string(),
    };
    if write.write_all(greeting.as_bytes()).await.is_err() {
        return;
    }
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut lines)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => return,
            Ok(_) if line.len() > MAX_LINE => {
                let _ = write.write_all(b"KO: command line too long\r\n").await;
                return;
            }
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line).trim().to_string();
        if text.is_empty() {
            continue;
        }
        let reply = match text.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["quit" | "exit"] => return,
            ["auth", given] => match token.as_ref() {
                Some((_, expected)) if given == expected => {
                    authenticated = true;
                    Ok("Android Console: type 'help' for a list of commands".to_string())
                }
                Some(_) => Err(format!("authentication token does not match ~/{TOKEN_FILE}")),
                None => Ok(String::new()),
            },
            ["auth", ..] => Err("Usage: \"auth <auth_token>\"".to_string()),
            _ if !authenticated => Err("unknown command, try 'help'".to_string()),
            _ => sim.with_device(|d| super::emulator::answer(d, &text)),
        };
        let out = match reply {
            Ok(lines) if lines.is_empty() => "OK\r\n".to_string(),
            Ok(lines) => format!("{}\r\nOK\r\n", lines.replace('\n', "\r\n")),
            Err(why) => format!("KO: {why}\r\n"),
        };
        if write.write_all(out.as_bytes()).await.is_err() {
            return;
        }
    }
}
