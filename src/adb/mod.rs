//! The device layer: the only code that talks to devices. Two routes reach one:
//! - through an adb server (port 5037, or `ADB_SERVER_SOCKET` / `ANDROID_ADB_SERVER_PORT`), which
//!   sees every USB device, emulator and `adb connect`ed device;
//! - straight to one device's adbd over TCP (`--adb tcp:HOST:PORT`, or `--sim`).
//!
//! Every call is async, bounded by a timeout, and cancelled by dropping it. Strings from callers
//! reach a device shell only through `quote`.

pub mod adbkey;
pub mod direct;
pub mod host;
pub mod message;
pub mod quote;
mod shell_v2;

use std::net::SocketAddr;
use std::time::Duration;

use serde::Serialize;

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
        if let Ok(socket) = std::env::var("ADB_SERVER_SOCKET") {
            let addr = socket
                .strip_prefix("tcp:")
                .and_then(resolve_addr)
                .ok_or_else(|| format!("ADB_SERVER_SOCKET={socket:?} is not tcp:HOST:PORT"))?;
            return Ok(Route::Server(addr));
        }
        let port = match std::env::var("ANDROID_ADB_SERVER_PORT") {
            Ok(p) => p
                .parse::<u16>()
                .map_err(|_| format!("ANDROID_ADB_SERVER_PORT={p:?} is not a port number"))?,
            Err(_) => 5037,
        };
        Ok(Route::Server(SocketAddr::from(([127, 0, 0, 1], port))))
    }
}

fn resolve_addr(text: &str) -> Option<SocketAddr> {
    use std::net::ToSocketAddrs;
    text.to_socket_addrs().ok()?.next()
}

#[derive(Debug, thiserror::Error)]
pub enum AdbError {
    #[error(
        "cannot reach the adb server at {addr}: {source}. Start it with `adb start-server`, or point --adb at a device (tcp:HOST:PORT)"
    )]
    ServerUnreachable { addr: SocketAddr, source: std::io::Error },
    #[error(
        "cannot reach the device at {addr}: {source}. Check that adbd listens there (emulator console port + 1, or `adb tcpip 5555`)"
    )]
    DeviceUnreachable { addr: SocketAddr, source: std::io::Error },
    #[error("no device is online. Plug in a phone with USB debugging on, start an emulator, or run `droidmcp --sim`")]
    NoDevice,
    #[error("{} devices are online ({}); pass `device` with one of them, or pick a default with adb-device select", .0.len(), .0.join(", "))]
    SeveralDevices(Vec<String>),
    #[error("no device `{serial}`; online now: {}. adb-device list shows them", if .known.is_empty() { "none".to_string() } else { .known.join(", ") })]
    UnknownDevice { serial: String, known: Vec<String> },
    #[error("device `{0}` is offline; reconnect it (or `adb reconnect offline`) and retry")]
    Offline(String),
    #[error("device unauthorized: {0}")]
    Unauthorized(String),
    #[error("{what} timed out after {} ms; the device may be busy or gone. adb-device health tells", after.as_millis())]
    Timeout { what: String, after: Duration },
    #[error("the adb server refused: {0}")]
    Refused(String),
    #[error("adb key: {0}")]
    Key(String),
    #[error("adb protocol: {0}")]
    Protocol(String),
    #[error("i/o with the device: {0}")]
    Io(#[from] std::io::Error),
}

/// One line of `adb devices -l`, or the one device of a direct route.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema, PartialEq, Eq)]
pub struct DeviceEntry {
    pub serial: String,
    /// `device` (online), `offline`, `unauthorized`, `recovery`, …
    pub state: String,
    /// As the adb server reports it: characters other than letters, digits, `-` and `.` become `_`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `usb`, `emulator`, `tcp` (via the adb server) or `direct` (our own adbd connection).
    pub transport: String,
}

/// Parses the answer to `host:devices-l`:
/// `SERIAL<spaces>STATE [usb:1-1] product:x model:y device:z transport_id:n`.
pub fn parse_devices_long(text: &str) -> Vec<DeviceEntry> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let serial = words.next()?.to_string();
            let state = words.next()?.to_string();
            let mut model = None;
            let mut usb = false;
            for word in words {
                if let Some(m) = word.strip_prefix("model:") {
                    model = Some(m.to_string());
                } else if word.starts_with("usb:") {
                    usb = true;
                }
            }
            let transport = if serial.starts_with("emulator-") {
                "emulator"
            } else if usb {
                "usb"
            } else if serial.contains(':') || serial.contains("._adb-tls-") {
                "tcp"
            } else {
                "usb"
            };
            Some(DeviceEntry {
                serial,
                state,
                model,
                transport: transport.to_string(),
            })
        })
        .collect()
}

/// What a shell command gave back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellOutput {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// None only from a device without shell v2 (Android 6 and older).
    pub exit_code: Option<i32>,
    /// A stream went over `shell_v2::MAX_STREAM_BYTES`; the rest was read and dropped.
    pub overflowed: bool,
}

impl ShellOutput {
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// The async facade over both routes.
#[derive(Debug)]
pub struct Adb {
    route: Route,
    timeout: Duration,
    direct: tokio::sync::Mutex<Option<direct::Connection>>,
}

pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

impl Adb {
    pub fn new(route: Route, timeout: Duration) -> Adb {
        Adb {
            route,
            timeout,
            direct: tokio::sync::Mutex::new(None),
        }
    }

    pub fn route(&self) -> &Route {
        &self.route
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    async fn bounded<T>(
        &self,
        what: impl FnOnce() -> String,
        limit: Duration,
        fut: impl Future<Output = Result<T, AdbError>>,
    ) -> Result<T, AdbError> {
        match tokio::time::timeout(limit, fut).await {
            Ok(result) => result,
            Err(_) => Err(AdbError::Timeout {
                what: what(),
                after: limit,
            }),
        }
    }

    /// Every device the route sees, in any state.
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
                let probe = self
                    .bounded(|| format!("connecting to {addr}"), self.timeout, async {
                        let (mut slot, conn) = self.checkout().await?;
                        let model = conn.banner.model.clone();
                        *slot = Some(conn);
                        Ok(model)
                    })
                    .await;
                let (state, model) = match probe {
                    Ok(model) => ("device", model),
                    Err(AdbError::Unauthorized(_)) => ("unauthorized", None),
                    Err(AdbError::DeviceUnreachable { .. }) => return Ok(Vec::new()),
                    Err(e) => return Err(e),
                };
                Ok(vec![DeviceEntry {
                    serial: addr.to_string(),
                    state: state.to_string(),
                    model,
                    transport: "direct".to_string(),
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
            self.bounded(|| format!("connecting to {addr}"), self.timeout, async {
                let (mut slot, conn) = self.checkout().await?;
                *slot = Some(conn);
                Ok(())
            })
            .await?;
            return Ok(serial);
        }
        let devices = self.devices().await?;
        let online: Vec<String> = devices
            .iter()
            .filter(|d| d.state == "device")
            .map(|d| d.serial.clone())
            .collect();
        match requested {
            Some(serial) => match devices.iter().find(|d| d.serial == serial) {
                Some(d) if d.state == "device" => Ok(d.serial.clone()),
                Some(d) if d.state == "unauthorized" => Err(AdbError::Unauthorized(format!(
                    "`{serial}` has not accepted this computer's key; accept the \"Allow USB debugging\" prompt on the device"
                ))),
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
                0 => match devices.iter().find(|d| d.state == "unauthorized") {
                    Some(d) => Err(AdbError::Unauthorized(format!(
                        "`{}` has not accepted this computer's key; accept the \"Allow USB debugging\" prompt on the device",
                        d.serial
                    ))),
                    None => Err(AdbError::NoDevice),
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

    pub async fn shell_with_timeout(
        &self,
        serial: &str,
        command: &str,
        limit: Duration,
    ) -> Result<ShellOutput, AdbError> {
        tracing::debug!(serial, command, "shell");
        let what = || format!("`{}` on {serial}", abbreviate(command));
        match &self.route {
            Route::Server(server) => self.bounded(what, limit, host::shell(*server, serial, command)).await,
            Route::Direct(_) => {
                let call = async {
                    let (mut slot, mut conn) = self.checkout().await?;
                    let output = conn.shell(command).await?;
                    *slot = Some(conn);
                    Ok(output)
                };
                self.bounded(what, limit, call).await
            }
        }
    }

    /// Runs `exec:COMMAND` with `input` on its stdin and returns its raw output (stdout and
    /// stderr together, binary-safe). `sent` hears the bytes uploaded so far. The timeout covers
    /// the whole call, so callers size it for the upload.
    pub async fn exec(
        &self,
        serial: &str,
        command: &str,
        input: &[u8],
        limit: Duration,
        sent: &(dyn Fn(u64) + Send + Sync),
    ) -> Result<Vec<u8>, AdbError> {
        tracing::debug!(serial, command, input = input.len(), "exec");
        let what = || format!("`{}` on {serial}", abbreviate(command));
        match &self.route {
            Route::Server(server) => {
                self.bounded(what, limit, host::exec(*server, serial, command, input, sent))
                    .await
            }
            Route::Direct(_) => {
                let call = async {
                    let (mut slot, mut conn) = self.checkout().await?;
                    let output = conn.exec(command, input, sent).await?;
                    *slot = Some(conn);
                    Ok(output)
                };
                self.bounded(what, limit, call).await
            }
        }
    }

    /// Takes the direct connection out of its slot, opening it first if needed. The caller puts
    /// it back (`*slot = Some(conn)`) only after a call that succeeded: one that failed or was
    /// dropped half-way leaves the slot empty, and the next call starts a fresh connection.
    async fn checkout(
        &self,
    ) -> Result<
        (
            tokio::sync::MutexGuard<'_, Option<direct::Connection>>,
            direct::Connection,
        ),
        AdbError,
    > {
        let Route::Direct(addr) = self.route else {
            return Err(AdbError::Protocol("not a direct route".into()));
        };
        let mut slot = self.direct.lock().await;
        let conn = match slot.take() {
            Some(conn) => conn,
            None => direct::Connection::open(addr).await?,
        };
        Ok((slot, conn))
    }
}

fn abbreviate(command: &str) -> String {
    match command.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &command[..at]),
        None => command.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_long_lines_give_serial_state_model_and_transport() {
        let text = "emulator-5554          device product:sdk_gphone64_x86_64 model:sdk_gphone64_x86_64 device:emu64xa transport_id:1\n\
                    R58M123ABC             unauthorized usb:1-1 transport_id:2\n\
                    127.0.0.1:5555         device product:sim model:Pixel_7 device:emu64xa transport_id:3\n";
        let devices = parse_devices_long(text);
        assert_eq!(devices.len(), 3);
        assert_eq!(devices[0].transport, "emulator");
        assert_eq!(devices[0].model.as_deref(), Some("sdk_gphone64_x86_64"));
        assert_eq!(devices[1].state, "unauthorized");
        assert_eq!(devices[1].transport, "usb");
        assert_eq!(devices[2].transport, "tcp");
        assert_eq!(devices[2].model.as_deref(), Some("Pixel_7"));
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
