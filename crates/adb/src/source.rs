//! One place devices are reached: an adb server (every device it sees), or one device's adbd
//! over TCP. `Adb` holds one source or several and finds each device's; a source owns its
//! connection, its devices' features and the memory of its last failure.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::{
    AdbError, DeviceEntry, Route, ShellOutput, abbreviate, capture, direct, host, parse_devices_long, shell_v2,
};

/// Ends a shell v1 command line: the exit status, which v1 does not carry, printed last after a
/// marker with a random nonce of this call's, so no output can pass for it.
pub struct ExitMarker(String);

impl ExitMarker {
    pub(super) fn new() -> ExitMarker {
        ExitMarker(format!(":droidmcp-exit-{:016x}:", rand::random::<u64>()))
    }
}

/// The service that runs `command`: shell v2 (framed, exit code) when the device has it, else
/// v1 with a marker that carries the exit code (Android 6 and older).
fn shell_service(command: &str, v2: bool, marker: &ExitMarker) -> String {
    if v2 {
        format!("shell,v2,raw:{command}")
    } else {
        // A newline, not `;`: the command may end in `&` or a comment.
        format!("shell:{command}\necho \"{}$?\"", marker.0)
    }
}

/// Splits the v1 marker off the output: the command's own output, and its exit code.
pub(super) fn split_exit_marker(mut output: Vec<u8>, marker: &ExitMarker) -> (Vec<u8>, Option<i32>) {
    let marker = marker.0.as_bytes();
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
/// `list` and `health` probe a direct device, and ask each of several sources, with this much
/// patience at most: a source that is down must not slow the others.
pub(super) const PROBE_LIMIT: Duration = Duration::from_secs(3);
/// A source whose listing failed is not asked again for this long; its error is reported.
const SOURCE_COOL_DOWN: Duration = Duration::from_secs(5);
/// Then it is asked again with this much patience.
const RETRY_LIMIT: Duration = Duration::from_secs(1);

/// The direct route's one connection, and the last failure to make one.
#[derive(Debug, Default)]
struct DirectSlot {
    conn: Option<direct::Connection>,
    down: Option<(Instant, String)>,
}

#[derive(Debug)]
pub struct Source {
    /// How the source is named in `label/serial` and in the device list.
    pub label: String,
    pub route: Route,
    pub(super) timeout: Duration,
    pub(super) max_output: usize,
    /// Held only while a connection is looked up or opened, never during a call.
    direct: tokio::sync::Mutex<DirectSlot>,
    /// The adb server route: each device's features, asked once (shell v2 or not).
    features: std::sync::Mutex<HashMap<String, Vec<String>>>,
    /// When several sources are asked: the last failed listing, and why.
    down: std::sync::Mutex<Option<(Instant, String)>>,
    /// Each device's link speed, from what its exec streams sent.
    pub(super) links: super::link::Links,
}

impl Source {
    pub fn new(label: String, route: Route, timeout: Duration) -> Source {
        Source {
            label,
            route,
            timeout,
            max_output: capture::DEFAULT_MAX_OUTPUT,
            direct: tokio::sync::Mutex::new(DirectSlot::default()),
            features: std::sync::Mutex::new(HashMap::new()),
            down: std::sync::Mutex::new(None),
            links: Default::default(),
        }
    }

    /// Where the source is, as the device list shows it: `server 10.0.0.2:5037`.
    pub fn address(&self) -> String {
        match &self.route {
            Route::Server(addr) => format!("server {addr}"),
            Route::Direct(addr) => format!("tcp {addr}"),
        }
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

    /// Every device the source sees, in any state, within `limit`. A direct device is probed
    /// with a command.
    pub async fn devices(&self, limit: Duration) -> Result<Vec<DeviceEntry>, AdbError> {
        match &self.route {
            Route::Server(server) => {
                let server = *server;
                self.bounded(|| "listing devices".into(), limit, async move {
                    Ok(parse_devices_long(&host::query(server, "host:devices-l").await?))
                })
                .await
            }
            Route::Direct(addr) => {
                let addr = *addr;
                let limit = limit.min(PROBE_LIMIT);
                let probe = self
                    .bounded(|| format!("probing {addr}"), limit, async {
                        let conn = self.connection(limit).await?;
                        let (conn, _) = self.direct_shell(conn, limit, "true").await?;
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
                    source: None,
                    error,
                }])
            }
        }
    }

    /// The same, asked as one of several sources: within `PROBE_LIMIT`, and a source that just
    /// failed is not asked again for a moment (its error is given back at once).
    pub async fn devices_among_several(&self) -> Result<Vec<DeviceEntry>, String> {
        let last_failure = self.down.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let patience = match last_failure {
            Some((at, why)) if at.elapsed() < SOURCE_COOL_DOWN => {
                return Err(format!("{why} ({} ms ago)", at.elapsed().as_millis()));
            }
            // A source that was down gets a short retry: one that is back answers fast.
            Some(_) => RETRY_LIMIT,
            None => PROBE_LIMIT,
        };
        let result = match self.devices(self.timeout.min(patience)).await {
            // A direct device that cannot be reached is a source that is down, as a server is.
            Ok(devices) if matches!(self.route, Route::Direct(_)) => {
                match devices.iter().find(|d| d.state == "offline") {
                    Some(d) => Err(d.error.clone().unwrap_or_else(|| "offline".into())),
                    None => Ok(devices),
                }
            }
            Ok(devices) => Ok(devices),
            Err(e) => Err(e.to_string()),
        };
        let mut down = self.down.lock().unwrap_or_else(|p| p.into_inner());
        *down = result.as_ref().err().map(|why| (Instant::now(), why.clone()));
        result
    }

    /// A direct source's one device: connects, so that the error says why it cannot be reached.
    pub async fn reach_direct(&self, addr: SocketAddr) -> Result<(), AdbError> {
        self.connection_for_a_call()
            .await
            .map_err(|e| e.during(&format!("connecting to {addr}"), &self.route))
            .map(drop)
    }

    /// Runs `command` on `serial`'s shell (see `Adb::shell_with_timeout`).
    pub async fn shell(&self, serial: &str, command: &str, limit: Duration) -> Result<ShellOutput, AdbError> {
        self.shell_shown_as(serial, command, &super::shown(command), limit)
            .await
    }

    /// `shell`, where the log and any error show `shown` instead of the command (which holds a
    /// secret, such as a PIN).
    pub async fn shell_shown_as(
        &self,
        serial: &str,
        command: &str,
        shown: &str,
        limit: Duration,
    ) -> Result<ShellOutput, AdbError> {
        tracing::debug!(target: "droidmcp::adb::source", serial, command = shown, "shell");
        let what = || format!("`{}` on {serial}", abbreviate(shown));
        match &self.route {
            Route::Server(server) => {
                let call = async {
                    let v2 = self
                        .server_features(*server, serial)
                        .await?
                        .iter()
                        .any(|f| f == "shell_v2");
                    let marker = ExitMarker::new();
                    let service = shell_service(command, v2, &marker);
                    host::shell(*server, serial, &service, (!v2).then_some(&marker), self.max_output).await
                };
                self.bounded(what, limit, call).await
            }
            Route::Direct(_) => {
                let conn = self
                    .connection_for_a_call()
                    .await
                    .map_err(|e| e.during(&what(), &self.route))?;
                let call = async { Ok(self.direct_shell(conn, limit, command).await?.1) };
                self.bounded(what, limit, call).await
            }
        }
    }

    /// Runs `exec:COMMAND` with `file` streamed to its stdin (see `Adb::exec`).
    pub async fn exec(
        &self,
        serial: &str,
        command: &str,
        file: Option<tokio::fs::File>,
        limit: Duration,
        sent: &(dyn Fn(u64) + Send + Sync),
    ) -> Result<Vec<u8>, AdbError> {
        tracing::debug!(target: "droidmcp::adb::source", serial, command = %super::shown(command), "exec");
        let what = || format!("`{}` on {serial}", abbreviate(command));
        match &self.route {
            Route::Server(server) => {
                let (output, timing) = self
                    .bounded(
                        what,
                        limit,
                        host::exec(*server, serial, command, file, self.max_output, sent),
                    )
                    .await?;
                self.links.record(serial, &timing);
                Ok(output)
            }
            Route::Direct(_) => {
                let conn = self
                    .connection_for_a_call()
                    .await
                    .map_err(|e| e.during(&what(), &self.route))?;
                let call = async {
                    let (_, mut stream) = self.direct_stream(conn, limit, |_| format!("exec:{command}")).await?;
                    // Opened now: the link is timed from here (`capture::Timing`).
                    let mut output = capture::Capture::new(self.max_output);
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
                                tracing::debug!(target: "droidmcp::adb::source", "exec input cut short: {e}");
                                break;
                            }
                            written += n as u64;
                            sent(written);
                        }
                    }
                    stream.read_to_end(&mut output).await?;
                    let timing = output.timing;
                    Ok((output.finish().0, timing))
                };
                let (output, timing) = self.bounded(what, limit, call).await?;
                self.links.record(serial, &timing);
                Ok(output)
            }
        }
    }

    /// A byte stream to the device's abstract socket `name` (`localabstract:NAME`), for DevTools.
    /// `limit` bounds the opening only; the caller bounds what it does with the stream.
    pub async fn local_abstract(&self, serial: &str, name: &str, limit: Duration) -> Result<super::Pipe, AdbError> {
        let service = format!("localabstract:{name}");
        let what = || format!("opening `{service}` on {serial}");
        match &self.route {
            Route::Server(server) => {
                let stream = self
                    .bounded(what, limit, host::open_service(*server, serial, &service))
                    .await?;
                Ok(Box::new(stream))
            }
            Route::Direct(_) => {
                let conn = self
                    .connection_for_a_call()
                    .await
                    .map_err(|e| e.during(&what(), &self.route))?;
                let (_, stream) = self
                    .bounded(what, limit, self.direct_stream(conn, limit, |_| service.clone()))
                    .await?;
                Ok(Box::new(stream.into_pipe()))
            }
        }
    }

    /// A stream to the direct device for the service `service` names (from the connection's
    /// features), on `conn`, the shared connection; if that proves dead before the stream opened
    /// (a restarted device), nothing ran, so it is opened once more on a new connection.
    async fn direct_stream(
        &self,
        conn: direct::Connection,
        limit: Duration,
        service: impl Fn(&direct::Connection) -> String,
    ) -> Result<(direct::Connection, direct::Stream), AdbError> {
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
        conn: direct::Connection,
        limit: Duration,
        command: &str,
    ) -> Result<(direct::Connection, ShellOutput), AdbError> {
        let marker = ExitMarker::new();
        let (conn, mut stream) = self
            .direct_stream(conn, limit, |conn| {
                shell_service(command, conn.has_feature("shell_v2"), &marker)
            })
            .await?;
        let output = self.read_shell(&conn, &mut stream, &marker).await?;
        Ok((conn, output))
    }

    async fn read_shell(
        &self,
        conn: &direct::Connection,
        stream: &mut direct::Stream,
        marker: &ExitMarker,
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
            let (stdout, exit_code) = split_exit_marker(stdout, marker);
            Ok(ShellOutput {
                stdout,
                exit_code,
                dropped,
                ..Default::default()
            })
        }
    }

    /// The shared direct connection for a call, before the call's own timer starts: waiting for
    /// it (another call connecting, a key prompt on the device) is time queued, with its own
    /// bound, the server's timeout, once for the slot and once for the connect.
    async fn connection_for_a_call(&self) -> Result<direct::Connection, AdbError> {
        super::queue::waited(self.connection(self.timeout)).await
    }

    /// The shared direct connection, opened if there is none or the one there was lost, waiting
    /// at most `limit` for another call's connect, and as long for its own (a key prompt on the
    /// device for 3/4 of it, so that the error names the prompt).
    async fn connection(&self, limit: Duration) -> Result<direct::Connection, AdbError> {
        let Route::Direct(addr) = self.route else {
            return Err(AdbError::Protocol("not a direct route".into()));
        };
        let Ok(mut slot) = tokio::time::timeout(limit, self.direct.lock()).await else {
            return Err(AdbError::WaitedOut {
                what: format!("waiting for another call's connection to {addr} (a key prompt on the device?)"),
                after: limit,
            });
        };
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
        let opened = tokio::time::timeout(limit, direct::Connection::open(addr, limit * 3 / 4))
            .await
            .unwrap_or_else(|_| {
                Err(AdbError::Timeout {
                    what: format!("connecting to {addr}"),
                    after: limit,
                })
            });
        match opened {
            Ok(conn) => {
                slot.down = None;
                slot.conn = Some(conn.clone());
                Ok(conn)
            }
            Err(AdbError::DeviceUnreachable { addr, source }) => {
                slot.down = Some((Instant::now(), source.to_string()));
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
        tracing::info!(target: "droidmcp::adb::source", "the direct connection was found dead; reconnecting once");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_cannot_forge_the_v1_exit_marker() {
        let marker = ExitMarker::new();
        let line = format!("{}3\n", marker.0);
        // Forged markers: the old fixed one, and one with another nonce, printed after ours (a
        // background job) or before it.
        let output = format!(":droidmcp-exit:0\nhello\n{line}:droidmcp-exit-0000000000000000:0\n");
        let (stdout, code) = split_exit_marker(output.into_bytes(), &marker);
        assert_eq!(code, None, "our marker is not last: the status is unknown, not forged");
        assert!(
            String::from_utf8(stdout)
                .unwrap()
                .starts_with(":droidmcp-exit:0\nhello\n")
        );
        let (stdout, code) = split_exit_marker(format!(":droidmcp-exit:0\nhi\n{line}").into_bytes(), &marker);
        assert_eq!((stdout, code), (b":droidmcp-exit:0\nhi\n".to_vec(), Some(3)));
        assert_ne!(ExitMarker::new().0, marker.0, "a nonce per call");
    }
}
