//! The device layer: the only code that talks to devices. Two routes reach one:
//! - through an adb server (port 5037, or `ADB_SERVER_SOCKET` / `ANDROID_ADB_SERVER_PORT`), which
//!   sees every USB device, emulator and `adb connect`ed device;
//! - straight to one device's adbd over TCP (`--adb tcp:HOST:PORT`, or `--sim`).
//!
//! Every call is async, bounded by a timeout, and cancelled by dropping it. Strings from callers
//! reach a device shell only through `quote`.

pub mod adbkey;
pub mod capture;
mod devices;
pub mod direct;
mod env;
mod error;
pub mod host;
pub mod message;
pub mod quote;
pub mod shell_v2;

use std::net::SocketAddr;
use std::time::Duration;

pub use capture::ShellOutput;
pub use devices::{DeviceEntry, parse_devices_long};
pub use env::{env_setting, is_set};
pub use error::{AdbError, cut};
pub use message::hex;
pub use quote::quote;

/// Where devices are reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    Server(SocketAddr),
    Direct(SocketAddr),
}

impl Route {
    /// `tcp:HOST:PORT` (or `HOST:PORT`) is a device's adbd; `server:HOST:PORT` an adb server.
    pub fn parse_direct(spec: &str) -> Result<Route, String> {
        let (server, addr) = match spec.strip_prefix("server:") {
            Some(rest) => (true, rest),
            None => (false, spec.strip_prefix("tcp:").unwrap_or(spec)),
        };
        let addr = resolve_addr(addr).ok_or_else(|| {
            format!("`{spec}` is not an address; use tcp:HOST:PORT for a device, server:HOST:PORT for an adb server")
        })?;
        Ok(if server {
            Route::Server(addr)
        } else {
            Route::Direct(addr)
        })
    }

    /// The adb server as adb finds it: `ADB_SERVER_SOCKET=tcp:HOST:PORT`, else
    /// `ANDROID_ADB_SERVER_PORT` on localhost, else 5037.
    pub fn server_from_env() -> Result<Route, String> {
        if let Some(socket) = env_setting("ADB_SERVER_SOCKET") {
            let addr = socket
                .strip_prefix("tcp:")
                .and_then(resolve_addr)
                .ok_or_else(|| format!("ADB_SERVER_SOCKET={socket:?} is not tcp:HOST:PORT"))?;
            return Ok(Route::Server(addr));
        }
        let port = match env_setting("ANDROID_ADB_SERVER_PORT") {
            Some(p) => p
                .parse::<u16>()
                .map_err(|_| format!("ANDROID_ADB_SERVER_PORT={p:?} is not a port number"))?,
            None => 5037,
        };
        Ok(Route::Server(SocketAddr::from(([127, 0, 0, 1], port))))
    }
}

fn resolve_addr(text: &str) -> Option<SocketAddr> {
    use std::net::ToSocketAddrs;
    text.to_socket_addrs().ok()?.next()
}

/// Ends a shell v1 command line: the exit status, which v1 does not carry, printed last.
const EXIT_MARKER: &str = ":droidmcp-exit:";

/// The service that runs `command`: shell v2 (framed, exit code) when the device has it, else
/// v1 with a marker that carries the exit code (Android 6 and older).
fn shell_service(command: &str, v2: bool) -> String {
    if v2 {
        format!("shell,v2,raw:{command}")
    } else {
        // A newline, not `;`: the command may end in `&` or a comment.
        format!("shell:{command}\necho \"{EXIT_MARKER}$?\"")
    }
}

/// Splits the v1 marker off the output: the command's own output, and its exit code.
fn split_exit_marker(mut output: Vec<u8>) -> (Vec<u8>, Option<i32>) {
    let marker = EXIT_MARKER.as_bytes();
    let Some(at) = output.windows(marker.len()).rposition(|w| w == marker) else {
        return (output, None);
    };
    let rest = String::from_utf8_lossy(&output[at + marker.len()..]).trim().to_string();
    let code = rest.parse::<i32>().ok();
    output.truncate(at);
    (output, code)
}

/// A failed connection attempt fails the calls in the next moment at once, rather than each of
/// them waiting out its own connect.
const COOL_DOWN: Duration = Duration::from_millis(1000);
/// `list` and `health` probe a direct device with this much patience at most.
const PROBE_LIMIT: Duration = Duration::from_secs(3);

/// The direct route's one connection, and the last failure to make one.
#[derive(Debug, Default)]
struct DirectSlot {
    conn: Option<direct::Connection>,
    down: Option<(std::time::Instant, String)>,
}

/// The async facade over both routes.
#[derive(Debug)]
pub struct Adb {
    route: Route,
    timeout: Duration,
    max_output: usize,
    /// Held only while a connection is looked up or opened, never during a call.
    direct: tokio::sync::Mutex<DirectSlot>,
    /// The adb server route: each device's features, asked once (shell v2 or not).
    features: std::sync::Mutex<std::collections::HashMap<String, Vec<String>>>,
}

pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

impl Adb {
    pub fn new(route: Route, timeout: Duration) -> Adb {
        Adb {
            route,
            timeout,
            max_output: capture::DEFAULT_MAX_OUTPUT,
            direct: tokio::sync::Mutex::new(DirectSlot::default()),
            features: std::sync::Mutex::new(Default::default()),
        }
    }

    /// How many bytes of each output stream a call keeps (see `capture`).
    pub fn with_max_output(mut self, bytes: usize) -> Adb {
        self.max_output = bytes;
        self
    }

    pub fn route(&self) -> &Route {
        &self.route
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    pub fn max_output(&self) -> usize {
        self.max_output
    }

    async fn bounded<T>(
        &self,
        what: impl FnOnce() -> String,
        limit: Duration,
        fut: impl Future<Output = Result<T, AdbError>>,
    ) -> Result<T, AdbError> {
        match tokio::time::timeout(limit, fut).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(e.during(&what(), &self.route)),
            Err(_) => Err(AdbError::Timeout {
                what: what(),
                after: limit,
            }),
        }
    }

    /// Every device the route sees, in any state. A direct device is probed with a command.
    pub async fn devices(&self) -> Result<Vec<DeviceEntry>, AdbError> {
        match &self.route {
            Route::Server(server) => {
                let server = *server;
                self.bounded(|| "listing devices".into(), self.timeout, async move {
                    Ok(parse_devices_long(&host::query(server, "host:devices-l").await?))
                })
                .await
            }
            Route::Direct(addr) => {
                let addr = *addr;
                let limit = self.timeout.min(PROBE_LIMIT);
                let probe = self
                    .bounded(|| format!("probing {addr}"), limit, async {
                        let (conn, _) = self.direct_shell(limit, "true").await?;
                        Ok(conn.banner().model.clone())
                    })
                    .await;
                let (state, model, error) = match probe {
                    Ok(model) => ("device", model, None),
                    Err(e @ AdbError::Unauthorized(_)) => ("unauthorized", None, Some(e.to_string())),
                    Err(e) => ("offline", None, Some(e.to_string())),
                };
                Ok(vec![DeviceEntry {
                    serial: addr.to_string(),
                    state: state.to_string(),
                    model,
                    transport: "direct".to_string(),
                    error,
                }])
            }
        }
    }

    /// Picks the device a call runs on: the one asked for, else the only one online.
    pub async fn resolve(&self, requested: Option<&str>) -> Result<String, AdbError> {
        if let Route::Direct(addr) = self.route {
            // One device: name it, and say why it cannot be reached if it cannot.
            let serial = addr.to_string();
            if let Some(other) = requested.filter(|r| *r != serial) {
                return Err(AdbError::UnknownDevice {
                    serial: other.to_string(),
                    known: vec![serial],
                });
            }
            self.bounded(
                || format!("connecting to {addr}"),
                self.timeout,
                self.connection(self.timeout),
            )
            .await?;
            return Ok(serial);
        }
        let devices = self.devices().await?;
        let online: Vec<String> = devices
            .iter()
            .filter(|d| d.state == "device")
            .map(|d| d.serial.clone())
            .collect();
        let unauthorized = |serial: &str| {
            AdbError::Unauthorized(format!(
                "`{serial}` has not accepted this computer's key; accept the \"Allow USB debugging\" prompt on the device"
            ))
        };
        match requested {
            Some(serial) => match devices.iter().find(|d| d.serial == serial) {
                Some(d) if d.state == "device" => Ok(d.serial.clone()),
                Some(d) if d.state == "unauthorized" => Err(unauthorized(serial)),
                Some(d) if d.state == "offline" => Err(AdbError::Offline(d.serial.clone())),
                Some(d) => Err(AdbError::Refused(format!(
                    "device `{serial}` is in state `{}`, not `device`",
                    d.state
                ))),
                None => Err(AdbError::UnknownDevice {
                    serial: serial.to_string(),
                    known: online,
                }),
            },
            None => match online.len() {
                0 => match devices.first() {
                    Some(d) if d.state == "unauthorized" => Err(unauthorized(&d.serial)),
                    Some(d) if d.state == "offline" && devices.len() == 1 => Err(AdbError::Offline(d.serial.clone())),
                    _ => Err(AdbError::NoDevice),
                },
                1 => Ok(online[0].clone()),
                _ => Err(AdbError::SeveralDevices(online)),
            },
        }
    }

    /// Runs `command` on the device's shell. Callers quote every argument they did not write.
    pub async fn shell(&self, serial: &str, command: &str) -> Result<ShellOutput, AdbError> {
        self.shell_with_timeout(serial, command, self.timeout).await
    }

    /// The same with a timeout of its own. Stdin is closed at once, so a command that reads it
    /// sees EOF instead of waiting. Dropping the future, or the timeout, closes the stream and
    /// so ends the command on the device.
    pub async fn shell_with_timeout(
        &self,
        serial: &str,
        command: &str,
        limit: Duration,
    ) -> Result<ShellOutput, AdbError> {
        tracing::debug!(serial, command, "shell");
        let what = || format!("`{}` on {serial}", abbreviate(command));
        match &self.route {
            Route::Server(server) => {
                let call = async {
                    let v2 = self
                        .server_features(*server, serial)
                        .await?
                        .iter()
                        .any(|f| f == "shell_v2");
                    host::shell(*server, serial, &shell_service(command, v2), v2, self.max_output).await
                };
                self.bounded(what, limit, call).await
            }
            Route::Direct(_) => {
                let call = async { Ok(self.direct_shell(limit, command).await?.1) };
                self.bounded(what, limit, call).await
            }
        }
    }

    /// A stream to the direct device for the service `service` names (from the connection's
    /// features), on the shared connection; if that proves dead before the stream opened (a
    /// restarted device), nothing ran, so it is opened once more on a new connection.
    async fn direct_stream(
        &self,
        limit: Duration,
        service: impl Fn(&direct::Connection) -> String,
    ) -> Result<(direct::Connection, direct::Stream), AdbError> {
        let conn = self.connection(limit).await?;
        match conn.open_stream(&service(&conn)).await {
            Err(AdbError::Disconnected { .. }) if conn.lost().is_some() => {
                let conn = self.reconnect(&conn, limit).await?;
                let stream = conn.open_stream(&service(&conn)).await?;
                Ok((conn, stream))
            }
            other => other.map(|stream| (conn, stream)),
        }
    }

    /// Runs `command` on the direct device; also returns the connection it ran on.
    async fn direct_shell(
        &self,
        limit: Duration,
        command: &str,
    ) -> Result<(direct::Connection, ShellOutput), AdbError> {
        let (conn, mut stream) = self
            .direct_stream(limit, |conn| shell_service(command, conn.has_feature("shell_v2")))
            .await?;
        let output = self.read_shell(&conn, &mut stream).await?;
        Ok((conn, output))
    }

    async fn read_shell(
        &self,
        conn: &direct::Connection,
        stream: &mut direct::Stream,
    ) -> Result<ShellOutput, AdbError> {
        let v2 = conn.has_feature("shell_v2");
        if v2 {
            stream.write(&shell_v2::close_stdin_packet()).await?;
            let mut decoder = shell_v2::Decoder::new(self.max_output);
            while let Some(data) = stream.read().await? {
                if decoder.feed(&data).map_err(AdbError::bad_data)? {
                    return Ok(decoder.finish());
                }
            }
            Err(AdbError::disconnected(
                "it closed the shell before it sent an exit code",
            ))
        } else {
            let mut capture = capture::Capture::new(self.max_output);
            stream.read_to_end(&mut capture).await?;
            let (stdout, dropped) = capture.finish();
            let (stdout, exit_code) = split_exit_marker(stdout);
            Ok(ShellOutput {
                stdout,
                exit_code,
                dropped,
                ..Default::default()
            })
        }
    }

    /// Runs `exec:COMMAND` with the file `input` (if any) streamed to its stdin in chunks, and
    /// returns its raw output (stdout and stderr together, binary-safe, within the capture cap).
    /// `sent` hears the bytes uploaded so far. The timeout covers the whole call, so callers
    /// size it for the upload.
    pub async fn exec(
        &self,
        serial: &str,
        command: &str,
        input: Option<&std::path::Path>,
        limit: Duration,
        sent: &(dyn Fn(u64) + Send + Sync),
    ) -> Result<Vec<u8>, AdbError> {
        tracing::debug!(serial, command, input = ?input, "exec");
        let what = || format!("`{}` on {serial}", abbreviate(command));
        let file = match input {
            Some(path) => Some(
                tokio::fs::File::open(path)
                    .await
                    .map_err(|e| AdbError::Io(std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))))?,
            ),
            None => None,
        };
        match &self.route {
            Route::Server(server) => {
                self.bounded(
                    what,
                    limit,
                    host::exec(*server, serial, command, file, self.max_output, sent),
                )
                .await
            }
            Route::Direct(_) => {
                let call = async {
                    let (_, mut stream) = self.direct_stream(limit, |_| format!("exec:{command}")).await?;
                    if let Some(mut file) = file {
                        use tokio::io::AsyncReadExt;
                        let mut chunk = vec![0u8; stream.max_payload()];
                        let mut written = 0u64;
                        loop {
                            let n = file.read(&mut chunk).await?;
                            if n == 0 {
                                break;
                            }
                            if let Err(e) = stream.write(&chunk[..n]).await {
                                // The device closed early (a refusal); its output says why.
                                tracing::debug!("exec input cut short: {e}");
                                break;
                            }
                            written += n as u64;
                            sent(written);
                        }
                    }
                    let mut output = capture::Capture::new(self.max_output);
                    stream.read_to_end(&mut output).await?;
                    Ok(output.finish().0)
                };
                self.bounded(what, limit, call).await
            }
        }
    }

    /// The shared direct connection, opened if there is none or the one there was lost. `limit`
    /// is the calling call's timeout: a key prompt on the device is waited for within it.
    async fn connection(&self, limit: Duration) -> Result<direct::Connection, AdbError> {
        let Route::Direct(addr) = self.route else {
            return Err(AdbError::Protocol("not a direct route".into()));
        };
        let mut slot = self.direct.lock().await;
        if let Some(conn) = &slot.conn {
            if conn.lost().is_none() {
                return Ok(conn.clone());
            }
            slot.conn = None;
        }
        if let Some((at, why)) = &slot.down
            && at.elapsed() < COOL_DOWN
        {
            return Err(AdbError::DeviceUnreachable {
                addr,
                source: std::io::Error::other(format!(
                    "{why} ({} ms ago; not retried for {} ms)",
                    at.elapsed().as_millis(),
                    COOL_DOWN.as_millis()
                )),
            });
        }
        // The prompt wait ends before the call's own timeout, so the error names the prompt.
        match direct::Connection::open(addr, limit * 3 / 4).await {
            Ok(conn) => {
                slot.down = None;
                slot.conn = Some(conn.clone());
                Ok(conn)
            }
            Err(AdbError::DeviceUnreachable { addr, source }) => {
                slot.down = Some((std::time::Instant::now(), source.to_string()));
                Err(AdbError::DeviceUnreachable { addr, source })
            }
            Err(e) => Err(e),
        }
    }

    /// Drops `dead` (if it is still the shared one) and opens a new connection.
    async fn reconnect(&self, dead: &direct::Connection, limit: Duration) -> Result<direct::Connection, AdbError> {
        {
            let mut slot = self.direct.lock().await;
            if slot.conn.as_ref().is_some_and(|c| c.same_as(dead)) {
                slot.conn = None;
            }
        }
        tracing::info!("the direct connection was found dead; reconnecting once");
        self.connection(limit).await
    }

    /// The adb server route: a device's features, asked once per serial.
    async fn server_features(&self, server: SocketAddr, serial: &str) -> Result<Vec<String>, AdbError> {
        if let Some(known) = self.features.lock().unwrap_or_else(|p| p.into_inner()).get(serial) {
            return Ok(known.clone());
        }
        let text = host::query(server, &format!("host-serial:{serial}:features")).await?;
        let features: Vec<String> = text.trim().split(',').map(str::to_string).collect();
        self.features
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(serial.to_string(), features.clone());
        Ok(features)
    }
}

pub(crate) fn abbreviate(command: &str) -> String {
    match command.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &command[..at]),
        None => command.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake adb server that answers each request on a socket from `script` (request → reply).
    async fn fake_server(script: &'static [(&'static str, &'static str)]) -> SocketAddr {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    loop {
                        let mut len = [0u8; 4];
                        if socket.read_exact(&mut len).await.is_err() {
                            return;
                        }
                        // Anything but a request (the shell's close-stdin packet): hang up.
                        let Some(len) = std::str::from_utf8(&len)
                            .ok()
                            .and_then(|l| usize::from_str_radix(l, 16).ok())
                        else {
                            return;
                        };
                        let mut request = vec![0u8; len];
                        socket.read_exact(&mut request).await.unwrap();
                        let request = String::from_utf8(request).unwrap();
                        let reply = script
                            .iter()
                            .find(|(prefix, _)| request.starts_with(prefix))
                            .map_or("FAIL0007unknown", |(_, reply)| reply);
                        socket.write_all(reply.as_bytes()).await.unwrap();
                    }
                });
            }
        });
        addr
    }

    #[tokio::test]
    async fn the_only_device_being_offline_is_said_as_offline() {
        let addr = fake_server(&[("host:devices-l", "OKAY0016emulator-5554\toffline\n")]).await;
        let adb = Adb::new(Route::Server(addr), Duration::from_secs(2));
        let e = adb.resolve(None).await.unwrap_err().to_string();
        assert!(e.contains("`emulator-5554` is offline"), "{e}");
    }

    #[tokio::test]
    async fn a_transport_closed_under_a_call_is_said_as_such() {
        let addr = fake_server(&[
            ("host-serial:", "OKAY0008shell_v2"),
            ("host:transport:", "OKAY"),
            ("shell", "FAIL0006closed"),
        ])
        .await;
        let adb = Adb::new(Route::Server(addr), Duration::from_secs(2));
        let e = adb.shell("emulator-5554", "true").await.unwrap_err().to_string();
        assert!(e.contains("dropped the transport to `emulator-5554`"), "{e}");
    }

    #[tokio::test]
    async fn a_server_that_hangs_up_mid_answer_is_named() {
        let addr = fake_server(&[
            ("host-serial:", "OKAY0008shell_v2"),
            ("host:transport:", "OKAY"),
            ("shell", "OKAY\u{1}\u{9}\u{0}\u{0}\u{0}par"),
        ])
        .await;
        let adb = Adb::new(Route::Server(addr), Duration::from_secs(2));
        // Half a stdout packet, then the fake hangs up: no "early eof", the call is named.
        let e = adb.shell("emulator-5554", "true").await.unwrap_err().to_string();
        assert!(
            e.contains("the adb server dropped the connection during `true` on emulator-5554"),
            "{e}"
        );
    }

    #[test]
    fn route_specs_parse_and_bad_ones_say_what_is_expected() {
        assert_eq!(
            Route::parse_direct("tcp:127.0.0.1:5555").unwrap(),
            Route::Direct("127.0.0.1:5555".parse().unwrap())
        );
        assert_eq!(
            Route::parse_direct("server:127.0.0.1:5037").unwrap(),
            Route::Server("127.0.0.1:5037".parse().unwrap())
        );
        assert!(Route::parse_direct("nonsense").unwrap_err().contains("tcp:HOST:PORT"));
    }
}
