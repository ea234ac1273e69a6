//! The device layer's errors: each names what failed and what to do, and carries what the call
//! was doing once `Adb` has added it.

use std::net::SocketAddr;
use std::time::Duration;

use android::text::echoed;

use super::Route;

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
    #[error("no device `{}`; online now: {}{}. adb-device list shows them", echoed(serial), if .known.is_empty() { "none".to_string() } else { .known.join(", ") }, silent_note(silent))]
    UnknownDevice {
        serial: String,
        known: Vec<String>,
        /// Sources that did not answer (the device may be on one of them).
        silent: Vec<String>,
    },
    #[error("no device is online on the sources that answered{}. adb-device list shows every source and its error", silent_note(.0))]
    NoDeviceAnswering(Vec<String>),
    #[error("device `{0}` is offline; reconnect it (or `adb reconnect offline`) and retry")]
    Offline(String),
    #[error(
        "cannot tell which phone `{}` is ({why}), and leases are kept on the phone, whichever route reaches it. Check that it answers (adb-shell getprop ro.serialno), then try again",
        echoed(device)
    )]
    Unidentified { device: String, why: String },
    #[error("device unauthorized: {0}")]
    Unauthorized(String),
    #[error("{what} timed out after {} ms; its stream was closed, which ends it on the device; the device may be busy or gone. adb-device health tells", after.as_millis())]
    Timeout { what: String, after: Duration },
    #[error("{what}: not done after {} ms. adb-device health tells what is wrong", after.as_millis())]
    WaitedOut { what: String, after: Duration },
    #[error("the adb server refused: {0}")]
    Refused(String),
    #[error("the device refused: {0}")]
    DeviceRefused(String),
    #[error(
        "the adb server dropped the transport to `{0}` (the device went away or restarted). adb-device list shows whether it is back"
    )]
    TransportLost(String),
    #[error(
        "the device disconnected{during}: {detail}. Check the cable or network and that adbd still runs; adb-device list shows whether it is back"
    )]
    Disconnected { during: String, detail: String },
    #[error(
        "the adb server dropped the connection{during}: {detail}. It was stopped or restarted, or the device went away: `adb devices` tells"
    )]
    ServerDropped { during: String, detail: String },
    #[error("bad data from the device{during}: {detail}. The connection was dropped; the next call opens a new one")]
    BadData { during: String, detail: String },
    /// The emulator console's errors, each already saying what to do.
    #[error("{0}")]
    Console(String),
    /// DevTools (WebView, Chrome) errors, each already saying what to do.
    #[error("{0}")]
    DevTools(String),
    #[error("adb key: {0}")]
    Key(String),
    #[error("adb protocol: {0}")]
    Protocol(String),
    #[error("i/o with the device: {0}")]
    Io(#[from] std::io::Error),
}

impl AdbError {
    /// Adds what the call was doing, and names the cause of a bare i/o error by the route it
    /// came over: no "early eof" reaches a user.
    pub(super) fn during(self, what: &str, route: &Route) -> AdbError {
        use std::io::ErrorKind::*;
        let at = format!(" during {what}");
        match self {
            AdbError::Io(e)
                if matches!(
                    e.kind(),
                    UnexpectedEof | ConnectionReset | BrokenPipe | ConnectionAborted
                ) =>
            {
                let detail = "the connection ended in the middle of an answer".to_string();
                match route {
                    Route::Server(_) => AdbError::ServerDropped { during: at, detail },
                    Route::Direct(_) => AdbError::Disconnected { during: at, detail },
                }
            }
            AdbError::Io(e) => AdbError::Io(std::io::Error::new(e.kind(), format!("{what}: {e}"))),
            AdbError::Disconnected { during, detail } if during.is_empty() => {
                AdbError::Disconnected { during: at, detail }
            }
            AdbError::BadData { during, detail } if during.is_empty() => AdbError::BadData { during: at, detail },
            AdbError::ServerDropped { during, detail } if during.is_empty() => {
                AdbError::ServerDropped { during: at, detail }
            }
            other => other,
        }
    }

    pub fn disconnected(detail: impl Into<String>) -> AdbError {
        AdbError::Disconnected {
            during: String::new(),
            detail: detail.into(),
        }
    }

    pub fn bad_data(detail: impl Into<String>) -> AdbError {
        AdbError::BadData {
            during: String::new(),
            detail: detail.into(),
        }
    }

    pub fn server_dropped(detail: impl Into<String>) -> AdbError {
        AdbError::ServerDropped {
            during: String::new(),
            detail: detail.into(),
        }
    }
}

fn silent_note(silent: &[String]) -> String {
    if silent.is_empty() {
        String::new()
    } else {
        format!("; not answering: {}", silent.join(", "))
    }
}
