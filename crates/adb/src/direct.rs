//! A direct connection to a device's adbd over TCP (an emulator's port, `adb tcpip`, or
//! `droidmcp sim`), with no adb server in between.
//!
//! adb_client's `ADBTcpDevice` has no shell v2 (so no exit code and stderr mixed into stdout),
//! leaves Nagle on (each request waits ~40 ms for a delayed ACK), and spins when the device
//! drops the link. This client keeps one authenticated connection per device and carries many
//! streams on it at once, as adbd allows: a reader task routes each message to its stream, a
//! writer task sends what the streams queue. Flow control is per stream: a WRTE from the device
//! is acknowledged only when its stream's owner reads it, so a slow reader holds back only its
//! own stream and buffers at most one payload. Dropping a `Stream` sends CLSE, which ends the
//! remote command; a stream dropped before the device opened it is closed when its OKAY comes,
//! as is anything the device sends on a stream nobody holds. The connection and its other
//! streams go on.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::message::*;
use super::{AdbError, adbkey};

/// What the device said about itself in its CNXN banner.
#[derive(Debug, Clone, Default)]
pub struct Banner {
    pub product: Option<String>,
    pub model: Option<String>,
    pub device: Option<String>,
    pub features: Vec<String>,
}

impl Banner {
    /// Parses `device::ro.product.name=x;ro.product.model=y;ro.product.device=z;features=a,b`.
    pub fn parse(raw: &[u8]) -> Banner {
        let text = String::from_utf8_lossy(raw);
        let props = text.trim_end_matches('\0').splitn(3, ':').nth(2).unwrap_or("");
        let mut banner = Banner::default();
        for pair in props.split(';') {
            let Some((key, value)) = pair.split_once('=') else {
                continue;
            };
            match key {
                "ro.product.name" => banner.product = Some(value.to_string()),
                "ro.product.model" => banner.model = Some(value.to_string()),
                "ro.product.device" => banner.device = Some(value.to_string()),
                "features" => banner.features = value.split(',').map(str::to_string).collect(),
                _ => {}
            }
        }
        banner
    }
}

/// What the reader task hands a stream.
#[derive(Debug)]
enum Event {
    /// OKAY: the first one opens the stream (with the device's id), later ones ack our WRTE.
    Okay(u32),
    Data(Vec<u8>),
    Closed,
}

/// Streams by local id, and why the connection ended once it has.
#[derive(Debug, Default)]
struct Router {
    streams: Mutex<HashMap<u32, mpsc::UnboundedSender<Event>>>,
    lost: Mutex<Option<String>>,
}

impl Router {
    /// Hands `event` to stream `local`; false when no stream of ours has that id (any more).
    fn route(&self, local: u32, event: Event) -> bool {
        let streams = self.streams.lock().unwrap_or_else(|p| p.into_inner());
        match streams.get(&local) {
            Some(tx) => tx.send(event).is_ok(),
            None => false,
        }
    }

    /// Marks the connection lost (the first reason wins) and ends every stream on it.
    fn lose(&self, why: String) {
        let mut lost = self.lost.lock().unwrap_or_else(|p| p.into_inner());
        if lost.is_none() {
            tracing::debug!(target: "droidmcp::adb::direct", why, "direct connection lost");
            *lost = Some(why);
        }
        drop(lost);
        self.streams.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    fn lost(&self) -> Option<String> {
        self.lost.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[derive(Debug)]
struct Inner {
    addr: SocketAddr,
    banner: Banner,
    max_payload: usize,
    outbox: mpsc::UnboundedSender<Message>,
    router: Arc<Router>,
    next_local: AtomicU32,
    tasks: [JoinHandle<()>; 2],
}

impl Drop for Inner {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// One authenticated connection to a device; cheap to clone, shared by every call.
#[derive(Debug, Clone)]
pub struct Connection {
    inner: Arc<Inner>,
}

/// adb's CNXN/AUTH exchange: our key's signature, else the public key offered and the user's
/// answer awaited for `auth_wait`. Gives the device's banner and its largest payload.
async fn handshake(
    addr: SocketAddr,
    reader: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
    write: &mut tokio::net::tcp::OwnedWriteHalf,
    auth_wait: std::time::Duration,
) -> Result<(Banner, usize), AdbError> {
    let send = |msg: Message| msg.encode();
    write
        .write_all(&send(Message::new(
            A_CNXN,
            A_VERSION,
            MAX_PAYLOAD,
            b"host::\0".to_vec(),
        )))
        .await
        .map_err(|e| handshake_error(addr, e.into()))?;
    let mut sent_signature = false;
    let mut prompt_since: Option<tokio::time::Instant> = None;
    loop {
        let next = Message::read_from(reader);
        let msg = match prompt_since {
            None => next.await,
            Some(since) => match tokio::time::timeout_at(since + auth_wait, next).await {
                Ok(msg) => msg,
                Err(_) => {
                    return Err(AdbError::Unauthorized(format!(
                        "{addr} did not know this host's key and nobody accepted the \"Allow USB debugging\" prompt within {} ms; accept it on the device (tick \"Always allow\"), then retry",
                        auth_wait.as_millis()
                    )));
                }
            },
        }
        .map_err(|e| handshake_error(addr, e))?;
        match msg.command {
            A_CNXN => {
                let max_payload = (msg.arg1 as usize).clamp(4096, MAX_PAYLOAD as usize);
                return Ok((Banner::parse(&msg.payload), max_payload));
            }
            A_AUTH if msg.arg0 == AUTH_TOKEN && !sent_signature => {
                let key = adbkey::host_key_async().await?;
                let signature = adbkey::sign(&key, &msg.payload)?;
                write
                    .write_all(&send(Message::new(A_AUTH, AUTH_SIGNATURE, 0, signature)))
                    .await?;
                sent_signature = true;
            }
            A_AUTH if msg.arg0 == AUTH_TOKEN && prompt_since.is_none() => {
                // Our signature was refused: offer the public key; the device asks its user,
                // and answers CNXN once they accept.
                let key = adbkey::host_key_async().await?;
                let mut public = adbkey::android_public_key(&key)?.into_bytes();
                public.push(0);
                write
                    .write_all(&send(Message::new(A_AUTH, AUTH_RSAPUBLICKEY, 0, public)))
                    .await?;
                tracing::info!(target: "droidmcp::adb::direct", %addr, "waiting for the user to accept this host's key on the device");
                prompt_since = Some(tokio::time::Instant::now());
            }
            A_AUTH => {} // a new token while the prompt is up: keep waiting
            A_STLS => {
                return Err(AdbError::Protocol(format!(
                    "{addr} asks for TLS (wireless debugging); pair it with `adb pair` and reach it through the adb server"
                )));
            }
            other => {
                return Err(AdbError::Protocol(format!(
                    "{addr} answered {} while connecting",
                    command_name(other)
                )));
            }
        }
    }
}

impl Connection {
    /// Connects and authenticates with the standard `~/.android/adbkey` (made if missing). When
    /// the device does not know the key, it is offered and the connection waits up to
    /// `auth_wait` for the user to accept the prompt on the device, as adb does.
    pub async fn open(addr: SocketAddr, auth_wait: std::time::Duration) -> Result<Connection, AdbError> {
        let stream = TcpStream::connect(addr)
            .await
            .map_err(|source| AdbError::DeviceUnreachable { addr, source })?;
        stream.set_nodelay(true).ok();
        let (read, mut write) = stream.into_split();
        let mut reader = BufReader::new(read);
        let (banner, max_payload) = handshake(addr, &mut reader, &mut write, auth_wait).await?;

        let router = Arc::new(Router::default());
        let (outbox, mut queued) = mpsc::unbounded_channel::<Message>();
        let writer_router = router.clone();
        let writer = tokio::spawn(async move {
            while let Some(msg) = queued.recv().await {
                if let Err(e) = write.write_all(&msg.encode()).await {
                    writer_router.lose(describe_io(&e));
                    return;
                }
            }
        });
        let reader_router = router.clone();
        let reader_outbox = outbox.clone();
        let reader = tokio::spawn(async move {
            loop {
                let msg = match Message::read_from(&mut reader).await {
                    Ok(msg) => msg,
                    Err(e) => {
                        reader_router.lose(describe_message_error(&e));
                        return;
                    }
                };
                let event = match msg.command {
                    A_OKAY => Event::Okay(msg.arg0),
                    A_WRTE => Event::Data(msg.payload),
                    A_CLSE => Event::Closed,
                    other => {
                        tracing::debug!(target: "droidmcp::adb::direct", command = %command_name(other), "ignored a message from the device");
                        continue;
                    }
                };
                let open_on_device = !matches!(event, Event::Closed);
                if !reader_router.route(msg.arg1, event) && open_on_device {
                    // Nobody holds this stream: it was dropped (a cancel, a timeout) before the
                    // device opened it, so the device's OKAY is the first we hear of its id.
                    // Closing it here is what ends the command, as adb's own server does.
                    tracing::debug!(target: "droidmcp::adb::direct", local = msg.arg1, remote = msg.arg0, "closing a stream nobody holds");
                    let _ = reader_outbox.send(Message::new(A_CLSE, msg.arg1, msg.arg0, Vec::new()));
                }
            }
        });
        Ok(Connection {
            inner: Arc::new(Inner {
                addr,
                banner,
                max_payload,
                outbox,
                router,
                next_local: AtomicU32::new(1),
                tasks: [reader, writer],
            }),
        })
    }

    pub fn banner(&self) -> &Banner {
        &self.inner.banner
    }

    pub fn has_feature(&self, name: &str) -> bool {
        self.inner.banner.features.iter().any(|f| f == name)
    }

    /// Why the connection ended, once it has.
    pub fn lost(&self) -> Option<String> {
        self.inner.router.lost()
    }

    /// The error a call on a lost connection gets: bad data, or a disconnection.
    fn lost_error(&self) -> AdbError {
        let why = self.lost().unwrap_or_else(|| "the connection ended".into());
        match why.strip_prefix(BAD_DATA) {
            Some(detail) => AdbError::bad_data(detail),
            None => AdbError::disconnected(why),
        }
    }

    pub fn same_as(&self, other: &Connection) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Opens a stream to `service` (e.g. `shell,v2,raw:ls`). `Refused` when the device answers
    /// CLSE; `Disconnected` when the connection ends first, before anything ran.
    pub async fn open_stream(&self, service: &str) -> Result<Stream, AdbError> {
        let inner = &self.inner;
        let mut payload = service.as_bytes().to_vec();
        payload.push(0);
        if payload.len() > inner.max_payload {
            return Err(AdbError::Protocol(format!(
                "the command is {} bytes, over the device's {}-byte limit",
                payload.len(),
                inner.max_payload
            )));
        }
        let local = inner.next_local.fetch_add(1, Ordering::Relaxed);
        let (tx, events) = mpsc::unbounded_channel();
        inner
            .router
            .streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(local, tx);
        // A connection lost before the stream was registered would never end it.
        if self.lost().is_some() {
            return Err(self.lost_error());
        }
        let mut stream = Stream {
            conn: self.clone(),
            local,
            remote: 0,
            events,
            pending: None,
            write_acked: true,
            closed: false,
        };
        stream.send(Message::new(A_OPEN, local, 0, payload))?;
        match stream.events.recv().await {
            Some(Event::Okay(remote)) => {
                stream.remote = remote;
                Ok(stream)
            }
            Some(Event::Closed) => {
                stream.closed = true;
                Err(AdbError::DeviceRefused(format!(
                    "it closed the stream for {} at once (an unknown service, or adbd could not start it)",
                    super::abbreviate(service)
                )))
            }
            Some(Event::Data(_)) => Err(AdbError::bad_data(format!(
                "the device wrote on stream {local} before opening it"
            ))),
            None => Err(self.lost_error()),
        }
    }
}

/// One open stream. Reading acknowledges what it returns; dropping it closes it on the device.
#[derive(Debug)]
pub struct Stream {
    conn: Connection,
    local: u32,
    remote: u32,
    events: mpsc::UnboundedReceiver<Event>,
    /// Data that arrived while a write waited for its ack, not yet acknowledged.
    pending: Option<Vec<u8>>,
    write_acked: bool,
    closed: bool,
}

impl Stream {
    fn send(&self, msg: Message) -> Result<(), AdbError> {
        self.conn.inner.outbox.send(msg).map_err(|_| self.lost())
    }

    fn lost(&self) -> AdbError {
        self.conn.lost_error()
    }

    /// The next bytes the device wrote, or `None` once it closed the stream.
    pub async fn read(&mut self) -> Result<Option<Vec<u8>>, AdbError> {
        if let Some(data) = self.pending.take() {
            self.send(Message::new(A_OKAY, self.local, self.remote, Vec::new()))?;
            return Ok(Some(data));
        }
        if self.closed {
            return Ok(None);
        }
        loop {
            match self.events.recv().await {
                Some(Event::Data(data)) => {
                    self.send(Message::new(A_OKAY, self.local, self.remote, Vec::new()))?;
                    return Ok(Some(data));
                }
                Some(Event::Okay(_)) => self.write_acked = true,
                Some(Event::Closed) => {
                    self.closed = true;
                    return Ok(None);
                }
                None => return Err(self.lost()),
            }
        }
    }

    /// Writes `data` as WRTEs of at most the device's payload size, one in flight at a time.
    pub async fn write(&mut self, data: &[u8]) -> Result<(), AdbError> {
        for chunk in data.chunks(self.conn.inner.max_payload) {
            while !self.write_acked {
                match self.events.recv().await {
                    Some(Event::Okay(_)) => self.write_acked = true,
                    // Held unacknowledged: the device sends no more until it is read.
                    Some(Event::Data(data)) => self.pending = Some(data),
                    Some(Event::Closed) => {
                        self.closed = true;
                        return Err(AdbError::DeviceRefused(
                            "it closed the stream while we were still writing to it".into(),
                        ));
                    }
                    None => return Err(self.lost()),
                }
            }
            self.send(Message::new(A_WRTE, self.local, self.remote, chunk.to_vec()))?;
            self.write_acked = false;
        }
        Ok(())
    }

    /// Reads until the device closes the stream, keeping what `capture` keeps.
    pub async fn read_to_end(&mut self, capture: &mut super::capture::Capture) -> Result<(), AdbError> {
        while let Some(data) = self.read().await? {
            capture.push(&data);
        }
        Ok(())
    }

    pub fn max_payload(&self) -> usize {
        self.conn.inner.max_payload
    }

    fn closed_by_device(&mut self) {
        self.closed = true;
    }

    /// The stream as a byte pipe, for a protocol crate that wants `AsyncRead + AsyncWrite` (the
    /// DevTools WebSocket): a task copies both ways with the stream's own flow control (one WRTE
    /// in flight, each read acknowledged once passed on). Dropping the pipe closes the stream;
    /// the device closing it ends the pipe.
    pub fn into_pipe(mut self) -> tokio::io::DuplexStream {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (ours, theirs) = tokio::io::duplex(256 * 1024);
        tokio::spawn(async move {
            let (mut from_caller, mut to_caller) = tokio::io::split(ours);
            let mut buf = vec![0u8; self.max_payload()];
            if let Some(data) = self.pending.take()
                && (to_caller.write_all(&data).await.is_err()
                    || self
                        .send(Message::new(A_OKAY, self.local, self.remote, Vec::new()))
                        .is_err())
            {
                return;
            }
            loop {
                let acked = self.write_acked;
                tokio::select! {
                    event = self.events.recv() => match event {
                        Some(Event::Data(data)) => {
                            if to_caller.write_all(&data).await.is_err()
                                || self.send(Message::new(A_OKAY, self.local, self.remote, Vec::new())).is_err()
                            {
                                return;
                            }
                        }
                        Some(Event::Okay(_)) => self.write_acked = true,
                        Some(Event::Closed) => return self.closed_by_device(),
                        None => return,
                    },
                    read = from_caller.read(&mut buf), if acked => match read {
                        Ok(0) | Err(_) => return,
                        Ok(n) => {
                            if self.send(Message::new(A_WRTE, self.local, self.remote, buf[..n].to_vec())).is_err() {
                                return;
                            }
                            self.write_acked = false;
                        }
                    },
                }
            }
        });
        theirs
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        let inner = &self.conn.inner;
        inner
            .router
            .streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.local);
        // An OKAY that reached this stream's queue but was not read yet: the device opened it.
        while let Ok(event) = self.events.try_recv() {
            if let Event::Okay(remote) = event
                && self.remote == 0
            {
                self.remote = remote;
            }
        }
        // Our CLSE ends the remote command, or acknowledges the device's own. Before the device
        // opened the stream its id is unknown (adbd ignores a CLSE to id 0): the reader closes
        // the stream when the device's OKAY arrives for an id nobody holds.
        if self.remote != 0 {
            let _ = inner
                .outbox
                .send(Message::new(A_CLSE, self.local, self.remote, Vec::new()));
        }
        if !self.closed {
            tracing::debug!(target: "droidmcp::adb::direct", local = self.local, addr = %inner.addr, "closed a stream before the device did");
        }
    }
}

fn handshake_error(addr: SocketAddr, e: MessageError) -> AdbError {
    AdbError::disconnected(format!(
        "{addr} ended the connection during the handshake ({})",
        describe_message_error(&e)
    ))
}

/// Starts the reason of a connection lost to bytes that were not adb messages.
const BAD_DATA: &str = "bad data: ";

fn describe_io(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => "the device closed the connection in the middle of a message".into(),
        std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe => {
            "the device reset the connection".into()
        }
        _ => format!("i/o error: {e}"),
    }
}

fn describe_message_error(e: &MessageError) -> String {
    match e {
        MessageError::Closed => "the device closed the connection".into(),
        MessageError::Io(io) => describe_io(io),
        MessageError::BadMagic(_) | MessageError::TooLarge(_) | MessageError::BadChecksum { .. } => {
            format!("{BAD_DATA}{e}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banner_fields_and_features_are_read() {
        let b = Banner::parse(
            b"device::ro.product.name=sdk;ro.product.model=Pixel 7;ro.product.device=emu64xa;features=shell_v2,cmd\0",
        );
        assert_eq!(b.model.as_deref(), Some("Pixel 7"));
        assert_eq!(b.device.as_deref(), Some("emu64xa"));
        assert_eq!(b.features, ["shell_v2", "cmd"]);
    }
}
