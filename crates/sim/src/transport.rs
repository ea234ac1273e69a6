//! One host connection to the simulated adbd: handshake, AUTH, stream multiplexing with adb's
//! flow control (one WRTE in flight per stream), and the fault injection on the way out.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::RngCore;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use super::auth::{AuthPolicy, verify_signature};
use super::{Faults, Simulator, services};
use adb::message::*;

/// Messages the connection writes, in order.
type Outbox = mpsc::UnboundedSender<Message>;

/// The device side of one stream, as a service sees it.
pub struct StreamIo {
    local_id: u32,
    remote_id: u32,
    max_payload: usize,
    out: Outbox,
    input: mpsc::UnboundedReceiver<Vec<u8>>,
    okays: mpsc::UnboundedReceiver<()>,
    streams: Streams,
    /// Bytes the host sent that a `read_exact` has not consumed yet.
    pending: Vec<u8>,
    /// A WRTE was sent and its OKAY has not arrived yet.
    awaiting_okay: bool,
    /// The device, whose link (`costs`) paces what the stream sends.
    sim: Arc<Simulator>,
}

/// The piece a modelled link sends at a time: small enough that a 100 KB frame arrives in many.
const LINK_PIECE: usize = 16 * 1024;

/// The stream was closed by the host or the connection went away.
#[derive(Debug)]
pub struct StreamClosed;

impl StreamIo {
    /// Sends `data` as WRTE messages no larger than the negotiated maxdata. One WRTE is in flight
    /// at a time: each waits for the OKAY of the one before, not for its own, so the service can
    /// go on reading (adb_client sends QUIT before it acknowledges the last sync reply).
    ///
    /// On a modelled link (the profile's `[costs]`) the bytes leave at its speed, in pieces, as
    /// a phone's reach the host: that is what the host measures the link by. Each piece leaves
    /// when the link would have carried it, counted from the start of the write.
    pub async fn write(&mut self, data: &[u8]) -> Result<(), StreamClosed> {
        let speed = self.sim.with_device(|d| crate::costs::link_bytes_per_s(d));
        let piece = match speed {
            Some(_) => self.max_payload.clamp(1, LINK_PIECE),
            None => self.max_payload.max(1),
        };
        let (started, mut sent) = (tokio::time::Instant::now(), 0usize);
        for chunk in data.chunks(piece) {
            if let Some(speed) = speed {
                sent += chunk.len();
                self.sim.with_device(|d| crate::costs::transfer(d, chunk.len()));
                tokio::time::sleep_until(started + Duration::from_secs_f64(sent as f64 / speed)).await;
            }
            if self.awaiting_okay {
                self.okays.recv().await.ok_or(StreamClosed)?;
            }
            self.out
                .send(Message::new(A_WRTE, self.local_id, self.remote_id, chunk.to_vec()))
                .map_err(|_| StreamClosed)?;
            self.awaiting_okay = true;
        }
        Ok(())
    }

    /// The next bytes the host wrote, or `None` once the host closed the stream.
    pub async fn read(&mut self) -> Option<Vec<u8>> {
        if !self.pending.is_empty() {
            return Some(std::mem::take(&mut self.pending));
        }
        self.input.recv().await
    }

    /// Exactly `n` bytes, across WRTE boundaries; `None` if the host closes first.
    pub async fn read_exact(&mut self, n: usize) -> Option<Vec<u8>> {
        while self.pending.len() < n {
            let more = self.input.recv().await?;
            self.pending.extend_from_slice(&more);
        }
        let rest = self.pending.split_off(n);
        Some(std::mem::replace(&mut self.pending, rest))
    }

    /// Waits until the host closes the stream, discarding anything it writes.
    pub async fn closed(&mut self) {
        while self.input.recv().await.is_some() {}
    }
}

impl Drop for StreamIo {
    /// A finished service closes its side, unless the host closed it first.
    fn drop(&mut self) {
        let was_open = crate::lock(&self.streams).remove(&self.local_id).is_some();
        if was_open {
            let _ = self
                .out
                .send(Message::new(A_CLSE, self.local_id, self.remote_id, Vec::new()));
        }
    }
}

struct StreamEntry {
    remote_id: u32,
    input: mpsc::UnboundedSender<Vec<u8>>,
    okays: mpsc::UnboundedSender<()>,
}

type Streams = Arc<Mutex<HashMap<u32, StreamEntry>>>;

/// Serves one host connection until it closes or a fault ends it.
pub async fn serve_connection(sim: Arc<Simulator>, socket: TcpStream) {
    let peer = socket.peer_addr().map(|a| a.to_string()).unwrap_or_default();
    // Without NODELAY each small message waits on Nagle + delayed ACK (~40 ms a round trip).
    let _ = socket.set_nodelay(true);
    let (reader, writer) = socket.into_split();
    serve_stream(sim, reader, writer, &peer).await;
}

/// The same over any byte stream: the fuzz target (`fuzz/`) feeds one from memory.
pub async fn serve_stream<R, W>(sim: Arc<Simulator>, mut reader: R, writer: W, peer: &str)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out, outbox) = mpsc::unbounded_channel();
    let writer_task = tokio::spawn(write_loop(writer, outbox, sim.faults.clone()));

    match handshake(&sim, &mut reader, &out).await {
        Ok(max_payload) => {
            tracing::info!(target: "droidmcp::sim::transport", %peer, max_payload, "host connected");
            dispatch_loop(&sim, &mut reader, &out, max_payload).await;
        }
        Err(e) => tracing::info!(target: "droidmcp::sim::transport", %peer, "handshake ended: {e}"),
    }
    drop(out);
    let _ = writer_task.await;
    tracing::info!(target: "droidmcp::sim::transport", %peer, "host disconnected");
}

/// Runs CNXN (and AUTH when the policy asks for it). Returns the payload size both sides accept.
async fn handshake(
    sim: &Simulator,
    reader: &mut (impl AsyncRead + Unpin),
    out: &Outbox,
) -> Result<usize, MessageError> {
    let mut max_payload = MAX_PAYLOAD as usize;
    let mut token = [0u8; 20];
    loop {
        let msg = Message::read_from(reader).await?;
        match (msg.command, msg.arg0) {
            (A_CNXN, _) => {
                max_payload = (msg.arg1 as usize).clamp(256, MAX_PAYLOAD as usize);
                match &sim.auth {
                    AuthPolicy::None => break,
                    _ => {
                        rand::rng().fill_bytes(&mut token);
                        send(out, Message::new(A_AUTH, AUTH_TOKEN, 0, token.to_vec()))?;
                    }
                }
            }
            (A_AUTH, AUTH_SIGNATURE) => {
                let accepted = match &sim.auth {
                    AuthPolicy::AcceptAny | AuthPolicy::None => true,
                    AuthPolicy::Keys { keys, .. } => keys.iter().any(|k| verify_signature(k, &token, &msg.payload)),
                };
                if accepted {
                    break;
                }
                // As adbd does: a fresh token, so the host can try its next key or send its public key.
                rand::rng().fill_bytes(&mut token);
                send(out, Message::new(A_AUTH, AUTH_TOKEN, 0, token.to_vec()))?;
            }
            (A_AUTH, AUTH_RSAPUBLICKEY) => {
                match sim.auth {
                    AuthPolicy::AcceptAny => break,
                    // The device asks its user, who taps "Allow" after a while.
                    AuthPolicy::Keys {
                        allow_after: Some(after),
                        ..
                    } => {
                        tokio::time::sleep(after).await;
                        break;
                    }
                    // Nobody answers the prompt: the host stays "unauthorized" until it gives up.
                    _ => {
                        tracing::info!(target: "droidmcp::sim::transport", "public key offered but not in the allowed keys: staying unauthorized")
                    }
                }
            }
            (cmd, _) => {
                tracing::debug!(target: "droidmcp::sim::transport", "ignoring {} before the connection is up", command_name(cmd))
            }
        }
    }
    send(
        out,
        Message::new(A_CNXN, A_VERSION, MAX_PAYLOAD, sim.banner().into_bytes()),
    )?;
    Ok(max_payload)
}

fn send(out: &Outbox, msg: Message) -> Result<(), MessageError> {
    out.send(msg).map_err(|_| MessageError::Closed)
}

async fn dispatch_loop(sim: &Arc<Simulator>, reader: &mut (impl AsyncRead + Unpin), out: &Outbox, max_payload: usize) {
    let streams: Streams = Arc::default();
    let mut next_local_id = 1u32;
    loop {
        let msg = match Message::read_from(reader).await {
            Ok(m) => m,
            Err(MessageError::Closed) => break,
            Err(e) => {
                tracing::warn!(target: "droidmcp::sim::transport", "dropping connection: {e}");
                break;
            }
        };
        match msg.command {
            A_OPEN => {
                let remote_id = msg.arg0;
                // adbd reads a service name up to its first NUL (it was a C string).
                let name = msg.payload.split(|b| *b == 0).next().unwrap_or_default();
                let name = String::from_utf8_lossy(name).into_owned();
                if !services::is_known(sim, &name) {
                    tracing::debug!(target: "droidmcp::sim::transport", service = %name, "refusing unknown service");
                    let _ = out.send(Message::new(A_CLSE, 0, remote_id, Vec::new()));
                    continue;
                }
                let local_id = next_local_id;
                next_local_id = next_local_id.wrapping_add(1).max(1);
                let (input_tx, input) = mpsc::unbounded_channel();
                let (okay_tx, okays) = mpsc::unbounded_channel();
                crate::lock(&streams).insert(
                    local_id,
                    StreamEntry {
                        remote_id,
                        input: input_tx,
                        okays: okay_tx,
                    },
                );
                let _ = out.send(Message::new(A_OKAY, local_id, remote_id, Vec::new()));
                let io = StreamIo {
                    local_id,
                    remote_id,
                    max_payload,
                    out: out.clone(),
                    input,
                    okays,
                    streams: streams.clone(),
                    pending: Vec::new(),
                    awaiting_okay: false,
                    sim: sim.clone(),
                };
                // At info: the reliability tests read this as the device's command log.
                // What `input text` types stays out of the log (a password, a token).
                let shown = match name.split_once(':') {
                    Some((service, command)) => format!("{service}:{}", adb::shown(command)),
                    None => name.to_string(),
                };
                tracing::info!(target: "droidmcp::sim::transport", service = %shown, local_id, "stream opened");
                tokio::spawn(services::run(sim.clone(), name, io));
            }
            A_WRTE => {
                let map = crate::lock(&streams);
                if let Some(s) = map.get(&msg.arg1) {
                    // Buffer rather than block: acknowledge at once (adb_client may send its next
                    // write before acknowledging ours, so waiting here could deadlock).
                    let _ = s.input.send(msg.payload);
                    let _ = out.send(Message::new(A_OKAY, msg.arg1, s.remote_id, Vec::new()));
                }
            }
            A_OKAY => {
                if let Some(s) = crate::lock(&streams).get(&msg.arg1) {
                    let _ = s.okays.send(());
                }
            }
            A_CLSE => {
                // Dropping the entry closes the service's channels; it stops on its next read/write.
                crate::lock(&streams).remove(&msg.arg1);
            }
            A_CNXN => tracing::debug!(target: "droidmcp::sim::transport", "host re-sent CNXN; ignoring"),
            other => tracing::debug!(target: "droidmcp::sim::transport", "ignoring {}", command_name(other)),
        }
    }
    // Closing every stream wakes every service of this connection so it can finish.
    crate::lock(&streams).clear();
}

/// Writes outgoing messages, applying latency, garbage and dropped-connection faults.
async fn write_loop(mut writer: impl AsyncWrite + Unpin, mut outbox: mpsc::UnboundedReceiver<Message>, faults: Faults) {
    let mut written: u64 = 0;
    let mut garbage_sent = false;
    while let Some(msg) = outbox.recv().await {
        if faults.latency > Duration::ZERO {
            tokio::time::sleep(faults.latency).await;
        }
        let bytes = msg.encode();
        if let Some(limit) = faults.drop_after_bytes {
            let room = limit.saturating_sub(written) as usize;
            if bytes.len() >= room {
                let _ = writer.write_all(&bytes[..room]).await;
                tracing::warn!(target: "droidmcp::sim::transport", limit, "fault: dropping the connection");
                break;
            }
        }
        if let Some(after) = faults.garbage_after_bytes
            && !garbage_sent
            && written >= after
        {
            let mut junk = [0u8; 24];
            rand::rng().fill_bytes(&mut junk);
            let _ = writer.write_all(&junk).await;
            garbage_sent = true;
            tracing::warn!(target: "droidmcp::sim::transport", after, "fault: sent 24 garbage bytes");
        }
        if writer.write_all(&bytes).await.is_err() {
            break;
        }
        written += bytes.len() as u64;
    }
    // Shutting down both directions makes the dispatch loop see EOF after a dropped connection.
    let _ = writer.shutdown().await;
}
