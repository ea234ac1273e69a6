//! The adb server's smart-socket protocol (port 5037): a request is 4 hex digits of length and the
//! service; the answer is `OKAY`, or `FAIL` plus a hex length and a message.
//!
//! adb_client covers this too, but through it a shell returns no exit code, each listing first
//! spawns `adb start-server`, each shell asks for the host features again, and a dropped
//! connection makes it spin. These few requests are the hot path, so they are ours, async, and
//! every one of them can be cancelled by dropping it.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::capture::Capture;
use super::capture::Timing;
use super::{AdbError, ShellOutput, shell_v2};

pub async fn connect(server: SocketAddr) -> Result<TcpStream, AdbError> {
    let stream = TcpStream::connect(server)
        .await
        .map_err(|source| AdbError::ServerUnreachable { addr: server, source })?;
    stream.set_nodelay(true).ok();
    Ok(stream)
}

/// Sends one request and waits for OKAY. A FAIL becomes an error carrying the server's message.
pub async fn request(stream: &mut TcpStream, service: &str) -> Result<(), AdbError> {
    let framed = format!("{:04x}{service}", service.len());
    stream.write_all(framed.as_bytes()).await?;
    let mut status = [0u8; 4];
    stream.read_exact(&mut status).await?;
    match &status {
        b"OKAY" => Ok(()),
        b"FAIL" => Err(AdbError::Refused(read_hex_block(stream).await?)),
        other => Err(AdbError::Protocol(format!(
            "the adb server answered {:?} to {service:?}",
            String::from_utf8_lossy(other)
        ))),
    }
}

async fn read_hex_block(stream: &mut TcpStream) -> Result<String, AdbError> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len).await?;
    let len = std::str::from_utf8(&len)
        .ok()
        .and_then(|s| usize::from_str_radix(s, 16).ok())
        .ok_or_else(|| AdbError::Protocol("the adb server sent a bad length".into()))?;
    let mut body = vec![0u8; len];
    stream.read_exact(&mut body).await?;
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// A `host:` query whose answer is one length-prefixed block, e.g. `host:devices-l`.
pub async fn query(server: SocketAddr, service: &str) -> Result<String, AdbError> {
    let mut stream = connect(server).await?;
    request(&mut stream, service).await?;
    read_hex_block(&mut stream).await
}

/// Switches the socket to `serial`'s transport and opens `service` there. A FAIL of `closed` means
/// the server lost the device between the two.
pub(super) async fn open_service(server: SocketAddr, serial: &str, service: &str) -> Result<TcpStream, AdbError> {
    let mut stream = connect(server).await?;
    request(&mut stream, &format!("host:transport:{serial}")).await?;
    match request(&mut stream, service).await {
        Err(AdbError::Refused(why)) if why == "closed" => Err(AdbError::TransportLost(serial.to_string())),
        other => other.map(|()| stream),
    }
}

/// Runs a shell service (`shell:…` when `v1_marker` is given, the exit marker its command line
/// ends with; else `shell,v2,raw:…`) on `serial` and collects its output within `cap` bytes a
/// stream. Shell v2 stdin is closed at once. The caller bounds it
/// with a timeout; dropping the future closes the socket, and the device then ends the command.
pub async fn shell(
    server: SocketAddr,
    serial: &str,
    service: &str,
    v1_marker: Option<&super::source::ExitMarker>,
    cap: usize,
) -> Result<ShellOutput, AdbError> {
    let mut stream = open_service(server, serial, service).await?;
    let mut buf = vec![0u8; 64 * 1024];
    if let Some(marker) = v1_marker {
        let mut capture = Capture::new(cap);
        loop {
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                let (stdout, dropped) = capture.finish();
                let (stdout, exit_code) = super::source::split_exit_marker(stdout, marker);
                return Ok(ShellOutput {
                    stdout,
                    exit_code,
                    dropped,
                    ..Default::default()
                });
            }
            capture.push(&buf[..n]);
        }
    }
    stream.write_all(&shell_v2::close_stdin_packet()).await?;
    let mut decoder = shell_v2::Decoder::new(cap);
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Err(AdbError::server_dropped(
                "the shell ended before its exit code came (the device went away, or the server dropped its transport)",
            ));
        }
        if decoder.feed(&buf[..n]).map_err(AdbError::bad_data)? {
            return Ok(decoder.finish());
        }
    }
}

/// Runs `exec:COMMAND` (raw: no pty, no shell v2 framing), streams `input` to its stdin in
/// chunks, and reads its output to the end within `cap` bytes. `sent` is told the bytes written
/// so far, for progress. Also says how the output arrived (`link`).
pub async fn exec(
    server: SocketAddr,
    serial: &str,
    command: &str,
    input: Option<tokio::fs::File>,
    cap: usize,
    sent: &(dyn Fn(u64) + Send + Sync),
) -> Result<(Vec<u8>, Timing), AdbError> {
    let mut stream = open_service(server, serial, &format!("exec:{command}")).await?;
    let (mut reader, mut writer) = stream.split();
    // Read while writing: a device that answers early (a refusal) must not deadlock the upload.
    let write = async {
        let Some(mut file) = input else { return Ok(()) };
        let mut chunk = vec![0u8; 64 * 1024];
        let mut written = 0u64;
        loop {
            let n = file.read(&mut chunk).await?;
            if n == 0 {
                return Ok::<_, std::io::Error>(());
            }
            writer.write_all(&chunk[..n]).await?;
            written += n as u64;
            sent(written);
        }
    };
    let read = async {
        let mut capture = Capture::new(cap);
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = reader.read(&mut buf).await?;
            if n == 0 {
                let timing = capture.timing;
                return Ok::<_, std::io::Error>((capture.finish().0, timing));
            }
            capture.push(&buf[..n]);
        }
    };
    let (written, read) = tokio::join!(write, read);
    if let Err(e) = written {
        // The device closed its end early; its output says why.
        tracing::debug!(target: "droidmcp::adb::host", "exec input cut short: {e}");
    }
    Ok(read?)
}
