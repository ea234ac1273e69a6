//! The device layer: the only code that talks to devices. Two routes reach one:
//! - through an adb server (port 5037, or `ADB_SERVER_SOCKET` / `ANDROID_ADB_SERVER_PORT`), which
//!   sees every USB device, emulator and `adb connect`ed device;
//! - straight to one device's adbd over TCP (`--adb tcp:HOST:PORT`, or `--sim`).
//!
//! `--adb` may name several of each (a device farm); `source.rs` is one of them, this facade
//! finds which one reaches a device.
//!
//! Every call is async, bounded by a timeout, and cancelled by dropping it. Strings from callers
//! reach a device shell only through `android::text::quote`.

pub mod adbkey;
pub mod capture;
pub mod console;
mod devices;
pub mod devtools;
pub mod direct;
mod env;
mod error;
pub mod host;
mod identity;
pub mod link;
pub mod message;
pub mod queue;
pub mod shell_v2;
mod source;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use android::text::echoed;
pub use capture::ShellOutput;
pub use devices::{DeviceEntry, Listing, SourceStatus, merge_sources, parse_devices_long};
pub use env::{env_setting, is_set};
pub use error::AdbError;
pub use message::hex;
use source::Source;

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

/// Names the sources `--adb` gives, each `[NAME=]server:HOST:PORT` or `[NAME=]tcp:HOST:PORT`.
/// Unnamed ones are called by their host, or by `HOST:PORT` where two share a host.
pub fn parse_sources(specs: &[String]) -> Result<Vec<(String, Route)>, String> {
    let mut parsed = Vec::new();
    for spec in specs {
        let (name, rest) = match spec.split_once('=') {
            Some((name, rest)) if !name.contains(':') => (Some(name), rest),
            _ => (None, spec.as_str()),
        };
        if let Some(name) = name
            && (name.is_empty()
                || name.len() > 40
                || !name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)))
        {
            return Err(format!(
                "`{}` is not a source name: use up to 40 letters, digits, `.`, `_` or `-` (as in lab1=server:HOST:PORT)",
                echoed(name)
            ));
        }
        let route = Route::parse_direct(rest)?;
        let host_port = rest
            .strip_prefix("server:")
            .or_else(|| rest.strip_prefix("tcp:"))
            .unwrap_or(rest);
        let host = host_port.rsplit_once(':').map_or(host_port, |(host, _)| host);
        parsed.push((name.map(str::to_string), host.to_string(), host_port.to_string(), route));
    }
    let mut sources: Vec<(String, Route)> = Vec::new();
    for (name, host, host_port, route) in &parsed {
        let shared_host = parsed.iter().filter(|(n, h, ..)| n.is_none() && h == host).count() > 1
            || parsed.iter().any(|(n, ..)| n.as_deref() == Some(host.as_str()));
        let label = match name {
            Some(name) => name.clone(),
            None if shared_host => host_port.clone(),
            None => host.clone(),
        };
        if let Some((earlier, _)) = sources.iter().find(|(_, r)| r == route) {
            return Err(format!(
                "--adb gives {host_port} twice (as `{earlier}` and `{label}`); give each source once"
            ));
        }
        if sources.iter().any(|(l, _)| *l == label) {
            return Err(format!(
                "--adb names two sources `{label}`; name them apart, as in lab1=server:HOST:PORT"
            ));
        }
        sources.push((label, route.clone()));
    }
    Ok(sources)
}

/// The async facade over every source: tools name a device by its serial (`label/serial` where
/// two sources see the same serial), and the facade finds the source that reaches it.
#[derive(Debug)]
pub struct Adb {
    sources: Vec<Source>,
    timeout: Duration,
    max_output: usize,
    /// With several sources: which one holds each serial that only one of them sees, as of the
    /// last listing.
    homes: std::sync::Mutex<HashMap<String, usize>>,
    /// Emulator consoles: where each is, and their connections.
    consoles: console::Consoles,
    /// Which phone each route reaches (`identity`), by `label/serial`, read once.
    identities: std::sync::Mutex<HashMap<String, String>>,
}

pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

impl Adb {
    /// One source.
    pub fn new(route: Route, timeout: Duration) -> Adb {
        Adb::with_sources(vec![("local".into(), route)], timeout)
    }

    /// Several sources, as `parse_sources` names them.
    pub fn with_sources(sources: Vec<(String, Route)>, timeout: Duration) -> Adb {
        Adb {
            sources: sources
                .into_iter()
                .map(|(label, route)| Source::new(label, route, timeout))
                .collect(),
            timeout,
            max_output: capture::DEFAULT_MAX_OUTPUT,
            homes: Default::default(),
            consoles: Default::default(),
            identities: Default::default(),
        }
    }

    /// Emulator consoles beside the `emulator-NNNN` ones (`--emulator-console`): by serial, or
    /// (`None`) for any device.
    pub fn with_consoles(mut self, configured: Vec<(Option<String>, SocketAddr)>) -> Adb {
        self.consoles = console::Consoles::new(configured);
        self
    }

    /// Sends one command to the console of `device`'s emulator (a name `resolve` gave) and
    /// returns where that console is and its reply.
    pub async fn emulator_console(
        &self,
        device: &str,
        command: &str,
        limit: Duration,
    ) -> Result<(SocketAddr, console::Reply), AdbError> {
        let server_host = match self.home_of(device).map(|(source, _)| &source.route) {
            Some(Route::Server(addr)) => Some(addr.ip()),
            Some(Route::Direct(_)) => None,
            None => match self.sources.as_slice() {
                [one] => match one.route {
                    Route::Server(addr) => Some(addr.ip()),
                    Route::Direct(_) => None,
                },
                _ => None,
            },
        };
        let Some(addr) = self.consoles.address(device, server_host) else {
            return Err(AdbError::Console(format!(
                "`{}` is not an emulator, so it has no emulator console (emulators are named emulator-NNNN). If it is one reached another way, start droidmcp with --emulator-console {}=HOST:PORT",
                echoed(device),
                echoed(device)
            )));
        };
        let reply = self.consoles.send(addr, command, limit).await?;
        Ok((addr, reply))
    }

    /// How many bytes of each output stream a call keeps (see `capture`).
    pub fn with_max_output(mut self, bytes: usize) -> Adb {
        self.max_output = bytes;
        for source in &mut self.sources {
            source.max_output = bytes;
        }
        self
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    pub fn max_output(&self) -> usize {
        self.max_output
    }

    /// Every device every source sees, in any state. One source's failure is the call's; with
    /// several, each is asked at once within `PROBE_LIMIT`, and one that fails is a row of
    /// `sources` with its error while the others' devices are listed.
    pub async fn devices(&self) -> Result<Listing, AdbError> {
        if let [one] = self.sources.as_slice() {
            let devices = one.devices(self.timeout).await?;
            let routes: Vec<String> = devices.iter().map(|d| format!("{}/{}", one.label, d.serial)).collect();
            self.forget_gone(&routes, &[]);
            return Ok(Listing {
                devices,
                sources: Vec::new(),
            });
        }
        let answers = futures::future::join_all(self.sources.iter().map(Source::devices_among_several)).await;
        let mut routes = Vec::new();
        let mut silent = Vec::new();
        for (source, answer) in self.sources.iter().zip(&answers) {
            match answer {
                Ok(devices) => routes.extend(devices.iter().map(|d| format!("{}/{}", source.label, d.serial))),
                Err(_) => silent.push(source.label.as_str()),
            }
        }
        self.forget_gone(&routes, &silent);
        let mut seen: HashMap<&str, Vec<usize>> = HashMap::new();
        for (at, devices) in answers.iter().enumerate() {
            for device in devices.iter().flatten() {
                seen.entry(device.serial.as_str()).or_default().push(at);
            }
        }
        {
            let mut homes = self.homes.lock().unwrap_or_else(|p| p.into_inner());
            // A source that did not answer keeps its devices: a call to one then names its error.
            homes.retain(|_, at| answers[*at].is_err());
            for (serial, at) in &seen {
                if let [only] = at.as_slice() {
                    homes.insert(serial.to_string(), *only);
                }
            }
        }
        let answers = self
            .sources
            .iter()
            .zip(answers)
            .map(|(s, answer)| (s.label.clone(), s.address(), answer))
            .collect();
        Ok(merge_sources(answers))
    }

    /// Picks the device a call runs on: the one asked for, else the only one online. The name
    /// it returns is the one to call with (qualified where a serial is on several sources).
    /// A device whose source is known is looked for on that source alone, so a source that is
    /// down or slow delays only the calls that need every list.
    pub async fn resolve(&self, requested: Option<&str>) -> Result<String, AdbError> {
        if let [one] = self.sources.as_slice()
            && let Route::Direct(addr) = one.route
        {
            // One device: name it, and say why it cannot be reached if it cannot.
            let serial = addr.to_string();
            if let Some(other) = requested.filter(|r| *r != serial) {
                return Err(AdbError::UnknownDevice {
                    serial: other.to_string(),
                    known: vec![serial],
                    silent: vec![],
                });
            }
            one.reach_direct(addr).await?;
            return Ok(serial);
        }
        if self.sources.len() > 1
            && let Some(name) = requested
            && let Some((source, serial)) = self.home_of(name)
            && let Route::Direct(addr) = source.route
            && serial == addr.to_string()
        {
            // Its one device, as with one source: connecting says whether it can be reached,
            // without a command's round trip before every call.
            source.reach_direct(addr).await?;
            let bare = self
                .home_of(&serial)
                .is_some_and(|(home, _)| std::ptr::eq(home, source));
            return Ok(if bare { serial } else { name.to_string() });
        }
        if self.sources.len() > 1
            && let Some(name) = requested
            && let Some((source, serial)) = self.home_of(name)
            && let Some(device) = source
                .devices(self.timeout)
                .await?
                .into_iter()
                .find(|d| d.serial == serial)
        {
            // `label/serial` of a serial no other source sees is answered by its bare name.
            let bare = self
                .home_of(&serial)
                .is_some_and(|(home, _)| std::ptr::eq(home, source));
            return usable(&device, if bare { &serial } else { name });
        }
        let Listing { devices, sources } = self.devices().await?;
        let silent: Vec<String> = sources
            .into_iter()
            .filter(|s| s.error.is_some())
            .map(|s| s.source)
            .collect();
        let online: Vec<String> = devices
            .iter()
            .filter(|d| d.state == "device")
            .map(|d| d.serial.clone())
            .collect();
        let Some(name) = requested else {
            return match online.len() {
                0 if !silent.is_empty() => Err(AdbError::NoDeviceAnswering(silent)),
                0 => match devices.first() {
                    Some(d) if d.state == "unauthorized" => Err(unauthorized(&d.serial)),
                    Some(d) if d.state == "offline" && devices.len() == 1 => Err(AdbError::Offline(d.serial.clone())),
                    _ => Err(AdbError::NoDevice),
                },
                1 => Ok(online[0].clone()),
                _ => Err(AdbError::SeveralDevices(online)),
            };
        };
        match find_device(&devices, name) {
            Found::One(d) => usable(d, &d.serial),
            Found::Several(names) => Err(AdbError::SeveralDevices(names)),
            Found::None => Err(AdbError::UnknownDevice {
                serial: name.to_string(),
                known: online,
                silent,
            }),
        }
    }

    /// The source that reaches `name` (a serial, or `label/serial`), and its serial there.
    pub(crate) async fn locate(&self, name: &str) -> Result<(&Source, String), AdbError> {
        if let [one] = self.sources.as_slice() {
            return Ok((one, name.to_string()));
        }
        if let Some(found) = self.home_of(name) {
            return Ok(found);
        }
        // Not listed yet (or gone): a fresh listing finds it, or says why not.
        let resolved = self.resolve(Some(name)).await?;
        self.home_of(&resolved).ok_or_else(|| AdbError::UnknownDevice {
            serial: name.to_string(),
            known: vec![],
            silent: vec![],
        })
    }

    /// The route to a device, the same whichever name a call used and however many sources see
    /// its serial: `label/serial` (a name `resolve` gave; a name no source is known for is its
    /// own). One phone reached two ways has two routes; `identity` names the phone.
    pub fn route_name(&self, name: &str) -> String {
        if let [one] = self.sources.as_slice() {
            return format!("{}/{name}", one.label);
        }
        match self.home_of(name) {
            Some((source, serial)) => format!("{}/{serial}", source.label),
            None => name.to_string(),
        }
    }

    fn home_of(&self, name: &str) -> Option<(&Source, String)> {
        if let Some((label, serial)) = name.split_once('/')
            && let Some(source) = self.sources.iter().find(|s| s.label == label)
        {
            return Some((source, serial.to_string()));
        }
        let at = *self.homes.lock().unwrap_or_else(|p| p.into_inner()).get(name)?;
        Some((&self.sources[at], name.to_string()))
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
        let (source, serial) = self.locate(serial).await?;
        source.shell(&serial, command, limit).await
    }

    /// `shell` for a command that holds a secret (a PIN): logs and errors show `shown` instead.
    pub async fn shell_secret(&self, serial: &str, command: &str, shown: &str) -> Result<ShellOutput, AdbError> {
        let (source, serial) = self.locate(serial).await?;
        source.shell_shown_as(&serial, command, shown, self.timeout).await
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
        let file = match input {
            Some(path) => Some(
                tokio::fs::File::open(path)
                    .await
                    .map_err(|e| AdbError::Io(std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))))?,
            ),
            None => None,
        };
        let (source, serial) = self.locate(serial).await?;
        source.exec(&serial, command, file, limit, sent).await
    }

    /// `exec` with `input` already open (a file the one door opened, no link followed), streamed
    /// from where it stands.
    pub async fn exec_file(
        &self,
        serial: &str,
        command: &str,
        input: std::fs::File,
        limit: Duration,
        sent: &(dyn Fn(u64) + Send + Sync),
    ) -> Result<Vec<u8>, AdbError> {
        let (source, serial) = self.locate(serial).await?;
        let file = tokio::fs::File::from_std(input);
        source.exec(&serial, command, Some(file), limit, sent).await
    }
}

/// A byte stream to a device socket, whichever route reached it.
pub trait PipeIo: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> PipeIo for T {}
pub type Pipe = Box<dyn PipeIo>;

impl Adb {
    /// Opens the device's abstract socket `name` (`localabstract:NAME`) through our own adb
    /// stream, no `adb forward`: the DevTools server of a debuggable WebView or of Chrome.
    pub async fn local_abstract(&self, serial: &str, name: &str) -> Result<Pipe, AdbError> {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)) {
            return Err(AdbError::DevTools(format!(
                "`{}` is not a socket name: use letters, digits, `.`, `_` or `-` (as in webview_devtools_remote_1234)",
                echoed(name)
            )));
        }
        let (source, serial) = self.locate(serial).await?;
        source.local_abstract(&serial, name, self.timeout).await
    }
}

/// `name` if the device is online, else why it cannot be used.
fn usable(device: &DeviceEntry, name: &str) -> Result<String, AdbError> {
    match device.state.as_str() {
        "device" => Ok(name.to_string()),
        "unauthorized" => Err(unauthorized(name)),
        "offline" => Err(AdbError::Offline(name.to_string())),
        state => Err(AdbError::Refused(format!(
            "device `{name}` is in state `{state}`, not `device`"
        ))),
    }
}

fn unauthorized(serial: &str) -> AdbError {
    AdbError::Unauthorized(format!(
        "`{serial}` has not accepted this computer's key; accept the \"Allow USB debugging\" prompt on the device"
    ))
}

enum Found<'a> {
    One(&'a DeviceEntry),
    /// A serial several sources see: the qualified names to choose from.
    Several(Vec<String>),
    None,
}

/// The device `name` means: its listed name, or `label/serial` for a serial only that source
/// sees, or a bare serial that several sources see (then the choice is the caller's).
fn find_device<'a>(devices: &'a [DeviceEntry], name: &str) -> Found<'a> {
    if let Some(d) = devices.iter().find(|d| d.serial == name) {
        return Found::One(d);
    }
    if let Some((label, serial)) = name.split_once('/')
        && let Some(d) = devices
            .iter()
            .find(|d| d.serial == serial && d.source.as_deref() == Some(label))
    {
        return Found::One(d);
    }
    let qualified: Vec<String> = devices
        .iter()
        .filter(|d| {
            d.source
                .as_deref()
                .is_some_and(|label| d.serial.strip_prefix(label).and_then(|s| s.strip_prefix('/')) == Some(name))
        })
        .map(|d| d.serial.clone())
        .collect();
    if qualified.is_empty() {
        Found::None
    } else {
        Found::Several(qualified)
    }
}

pub(crate) fn abbreviate(command: &str) -> String {
    let command = shown(command);
    match command.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &command[..at]),
        None => command,
    }
}

/// A command as logs and messages show it: what `input text` types is left out (it may be a
/// password), counted as the characters typed. Its argument has no spaces (`ui type` sends them
/// as `%s`).
pub fn shown(command: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    for word in command.split(' ') {
        let typed = words.len() >= 2 && words[words.len() - 2] == "input" && words[words.len() - 1] == "text";
        words.push(match typed {
            true => format!("<{} chars typed>", unquoted(word).replace("%s", " ").chars().count()),
            false => word.to_string(),
        });
    }
    words.join(" ")
}

/// A shell word as the shell reads it: quotes removed, `\x` outside them an `x`.
fn unquoted(word: &str) -> String {
    let (mut out, mut chars, mut quoted) = (String::new(), word.chars(), None);
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (Some(q), c) if c == q => quoted = None,
            (Some('"'), '\\') => out.extend(chars.next()),
            (Some(_), c) => out.push(c),
            (None, '\'' | '"') => quoted = Some(c),
            (None, '\\') => out.extend(chars.next()),
            (None, c) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
