//! The services a host can OPEN: `shell:` (v1), `shell,v2,…:` (framed stdout/stderr/exit),
//! `exec:` (raw) and `sync:`. Anything else is refused with CLSE by the transport.

use std::sync::Arc;

use super::Simulator;
use super::shell::{Output, run_script, run_script_after, stdin_wanted};
use super::sync;
use super::transport::StreamIo;

const SHELL_STDIN: u8 = 0;
const SHELL_STDOUT: u8 = 1;
const SHELL_STDERR: u8 = 2;
const SHELL_EXIT: u8 = 3;
const SHELL_CLOSE_STDIN: u8 = 4;

/// Whether this device serves `name`; `shell,v2…` only when it announces `shell_v2`, as an
/// Android 6 adbd knows only `shell:`.
pub fn is_known(sim: &Simulator, name: &str) -> bool {
    let v2 = sim.features.iter().any(|f| f == "shell_v2");
    if name.starts_with("localabstract:") {
        return sim.with_device(|d| super::webview::target(d, name).is_some());
    }
    name == "sync:" || name.starts_with("shell:") || (v2 && name.starts_with("shell,")) || name.starts_with("exec:")
}

/// How a shell stream frames its bytes.
struct ShellMode {
    /// Shell protocol v2: framed packets and an exit code.
    v2: bool,
    /// A pseudo-terminal: `\n` becomes `\r\n` and stderr joins stdout.
    pty: bool,
}

pub async fn run(sim: Arc<Simulator>, name: String, mut io: StreamIo) {
    if let Some(to) = sim.with_device(|d| super::webview::target(d, &name)) {
        super::webview::forward(io, to).await;
        return;
    }
    if name == "sync:" {
        sync::serve(&sim, &mut io).await;
        return;
    }
    if let Some(command) = name.strip_prefix("exec:") {
        let stdin = collect_raw_stdin(&mut io, stdin_wanted(command)).await;
        let Some(out) = run_until_closed(&sim, &mut io, command, stdin).await else {
            return;
        };
        let mut bytes = out.stdout;
        bytes.extend_from_slice(&out.stderr);
        if io.write(&bytes).await.is_ok() && out.keeps_running {
            io.closed().await;
        }
        return;
    }
    let (args, command) = name.split_once(':').unwrap_or((&name, ""));
    let args: Vec<&str> = args.split(',').skip(1).collect();
    // adbd's defaults: a pty for an interactive shell, raw for a command; `pty`/`raw` override.
    let pty = args.contains(&"pty") || (command.is_empty() && !args.contains(&"raw"));
    let mode = ShellMode {
        v2: args.contains(&"v2"),
        pty,
    };
    if command.is_empty() {
        interactive(&sim, &mut io, &mode).await;
        return;
    }
    let stdin = match (mode.v2, stdin_wanted(command)) {
        (true, Some(want)) => collect_v2_stdin(&mut io, want).await,
        (false, want) => collect_raw_stdin(&mut io, want.filter(|&n| n != usize::MAX)).await,
        (true, None) => Vec::new(),
    };
    let Some(out) = run_until_closed(&sim, &mut io, command, stdin).await else {
        return;
    };
    let keeps_running = out.keeps_running;
    if io.write(&frame_output(&mode, out, true)).await.is_ok() && keeps_running {
        io.closed().await;
    }
}

/// Runs the script unless the host closes the stream first (a timeout, or a stalled command).
async fn run_until_closed(sim: &Arc<Simulator>, io: &mut StreamIo, script: &str, stdin: Vec<u8>) -> Option<Output> {
    tokio::select! {
        out = run_script(sim, script, stdin) => Some(out),
        _ = io.closed() => {
            // At info: the reliability tests read this to see a cancel reach the device.
            tracing::info!(target: "droidmcp::sim::services", script, "host closed the stream before the command ended");
            None
        }
    }
}

/// Raw stdin: exactly `want` bytes when the command says how many, else none.
async fn collect_raw_stdin(io: &mut StreamIo, want: Option<usize>) -> Vec<u8> {
    match want {
        Some(usize::MAX) => {
            let mut data = Vec::new();
            while let Some(chunk) = io.read().await {
                data.extend_from_slice(&chunk);
            }
            data
        }
        Some(n) => io.read_exact(n).await.unwrap_or_default(),
        None => Vec::new(),
    }
}

/// Shell v2 stdin packets until close-stdin, or until `want` bytes arrived.
async fn collect_v2_stdin(io: &mut StreamIo, want: usize) -> Vec<u8> {
    let mut data = Vec::new();
    while data.len() < want {
        let Some((id, payload)) = read_packet(io).await else {
            break;
        };
        match id {
            SHELL_STDIN => data.extend_from_slice(&payload),
            SHELL_CLOSE_STDIN => break,
            _ => {} // window-size changes mean nothing here
        }
    }
    data
}

async fn read_packet(io: &mut StreamIo) -> Option<(u8, Vec<u8>)> {
    let header = io.read_exact(5).await?;
    let len = u32::from_le_bytes(header[1..5].try_into().ok()?) as usize;
    Some((header[0], io.read_exact(len).await?))
}

fn packet(id: u8, data: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(5 + data.len());
    p.push(id);
    p.extend_from_slice(&(data.len() as u32).to_le_bytes());
    p.extend_from_slice(data);
    p
}

fn to_crlf(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + data.len() / 16);
    for &b in data {
        if b == b'\n' {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

fn frame_output(mode: &ShellMode, out: Output, with_exit: bool) -> Vec<u8> {
    let (mut stdout, mut stderr) = (out.stdout, out.stderr);
    if mode.pty {
        stdout.extend_from_slice(&stderr);
        stdout = to_crlf(&stdout);
        stderr = Vec::new();
    }
    if !mode.v2 {
        stdout.extend_from_slice(&stderr);
        return stdout;
    }
    let mut bytes = Vec::new();
    if !stdout.is_empty() {
        bytes.extend(packet(SHELL_STDOUT, &stdout));
    }
    if !stderr.is_empty() {
        bytes.extend(packet(SHELL_STDERR, &stderr));
    }
    if with_exit {
        bytes.extend(packet(SHELL_EXIT, &[(out.code & 0xff) as u8]));
    }
    bytes
}

/// An interactive shell: a prompt, then one command line per line of input, until `exit`.
async fn interactive(sim: &Arc<Simulator>, io: &mut StreamIo, mode: &ShellMode) {
    let prompt = format!(
        "{}:/ $ ",
        sim.with_device(|d| d.prop("ro.product.device").unwrap_or_default())
    );
    let mut line = Vec::new();
    let mut last_code = 0;
    if io
        .write(&frame_output(mode, Output::ok(prompt.clone()), false))
        .await
        .is_err()
    {
        return;
    }
    loop {
        let input = if mode.v2 {
            match read_packet(io).await {
                Some((SHELL_STDIN, data)) => data,
                Some((SHELL_CLOSE_STDIN, _)) | None => break,
                Some(_) => continue,
            }
        } else {
            match io.read().await {
                Some(data) => data,
                None => return,
            }
        };
        for b in input {
            if b != b'\n' && b != b'\r' {
                line.push(b);
                continue;
            }
            let script = String::from_utf8_lossy(&std::mem::take(&mut line)).into_owned();
            if script.trim() == "exit" {
                let _ = io
                    .write(&frame_output(
                        mode,
                        Output {
                            code: last_code,
                            ..Output::default()
                        },
                        true,
                    ))
                    .await;
                return;
            }
            let out = run_script_after(sim, &script, Vec::new(), last_code).await;
            last_code = out.code;
            let mut shown = out.clone();
            if !out.exits {
                shown.stdout.extend_from_slice(prompt.as_bytes());
            }
            let failed = io.write(&frame_output(mode, shown, out.exits)).await.is_err();
            if failed || out.exits {
                return;
            }
        }
    }
    let _ = io
        .write(&frame_output(
            mode,
            Output {
                code: last_code,
                ..Output::default()
            },
            true,
        ))
        .await;
}
