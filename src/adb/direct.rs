//! A direct connection to a device's adbd over TCP (an emulator's port, `adb tcpip`, or
//! `droidmcp sim`), with no adb server in between.
//!
//! adb_client's `ADBTcpDevice` has no shell v2 (so no exit code and stderr mixed into stdout),
//! leaves Nagle on (each request waits ~40 ms for a delayed ACK), and spins when the device
//! drops the link. This client keeps one authenticated connection per device, sets TCP_NODELAY,
//! and runs one stream at a time on it. A call that is cancelled or times out drops the
//! connection, which ends the remote command; the next call connects again.

use std::net::SocketAddr;

use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use super::message::*;
use super::{AdbError, ShellOutput, adbkey, shell_v2};

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

#[derive(Debug)]
pub struct Connection {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    pub banner: Banner,
    max_payload: usize,
    next_local_id: u32,
}

impl Connection {
    /// Connects and authenticates with the standard `~/.android/adbkey` (made if missing).
    pub async fn open(addr: SocketAddr) -> Result<Connection, AdbError> {
        let stream = TcpStream::connect(addr)
            .await
            .map_err(|source| AdbError::DeviceUnreachable { addr, source })?;
        stream.set_nodelay(true).ok();
        let (read, writer) = stream.into_split();
        let mut conn = Connection {
            reader: BufReader::new(read),
            writer,
            banner: Banner::default(),
            max_payload: 4096,
            next_local_id: 1,
        };
        conn.send(Message::new(A_CNXN, A_VERSION, MAX_PAYLOAD, b"host::\0".to_vec()))
            .await?;
        let mut sent_signature = false;
        loop {
            let msg = conn.recv().await?;
            match msg.command {
                A_CNXN => {
                    conn.max_payload = (msg.arg1 as usize).clamp(4096, MAX_PAYLOAD as usize);
                    conn.banner = Banner::parse(&msg.payload);
                    return Ok(conn);
                }
                A_AUTH if msg.arg0 == AUTH_TOKEN && !sent_signature => {
                    let key = adbkey::load_or_create()?;
                    let signature = adbkey::sign(&key, &msg.payload)?;
                    conn.send(Message::new(A_AUTH, AUTH_SIGNATURE, 0, signature)).await?;
                    sent_signature = true;
                }
                A_AUTH if msg.arg0 == AUTH_TOKEN => {
                    // Our signature was refused: offer the public key; the device asks its user.
                    let key = adbkey::load_or_create()?;
                    let mut public = adbkey::android_public_key(&key)?.into_bytes();
                    public.push(0);
                    conn.send(Message::new(A_AUTH, AUTH_RSAPUBLICKEY, 0, public)).await?;
                    return Err(AdbError::Unauthorized(format!(
                        "{addr}: the device did not know this host's key; accept the \"Allow USB debugging\" prompt on the device, then retry"
                    )));
                }
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

    async fn send(&mut self, msg: Message) -> Result<(), AdbError> {
        self.writer.write_all(&msg.encode()).await?;
        Ok(())
    }

    async fn recv(&mut self) -> Result<Message, AdbError> {
        Message::read_from(&mut self.reader).await.map_err(|e| match e {
            MessageError::Io(io) => AdbError::Io(io),
            MessageError::Closed => AdbError::Protocol("the device closed the connection".into()),
            other => AdbError::Protocol(format!("bad message from the device: {other}")),
        })
    }

    pub fn has_feature(&self, name: &str) -> bool {
        self.banner.features.iter().any(|f| f == name)
    }

    /// Runs a command over shell v2 when the device has it, else over v1 (no exit code, stderr
    /// mixed into stdout, as adbd gives it).
    pub async fn shell(&mut self, command: &str) -> Result<ShellOutput, AdbError> {
        let v2 = self.has_feature("shell_v2");
        let service = if v2 {
            format!("shell,v2,raw:{command}")
        } else {
            format!("shell:{command}")
        };
        let mut payload = service.into_bytes();
        payload.push(0);
        if payload.len() > self.max_payload {
            return Err(AdbError::Protocol(format!(
                "the command is {} bytes, over the device's {}-byte limit",
                payload.len(),
                self.max_payload
            )));
        }
        let local = self.next_local_id;
        self.next_local_id += 1;
        self.send(Message::new(A_OPEN, local, 0, payload)).await?;

        let mut decoder = shell_v2::Decoder::default();
        let mut v1_output = ShellOutput::default();
        let mut remote = 0;
        loop {
            let msg = self.recv().await?;
            if msg.arg1 != local {
                continue; // a late message of an earlier stream
            }
            match msg.command {
                A_OKAY => remote = msg.arg0,
                A_WRTE => {
                    self.send(Message::new(A_OKAY, local, msg.arg0, Vec::new())).await?;
                    if v2 {
                        decoder.feed(&msg.payload).map_err(AdbError::Protocol)?;
                    } else {
                        v1_output.stdout.extend_from_slice(&msg.payload);
                    }
                }
                A_CLSE if remote == 0 => {
                    return Err(AdbError::Protocol(format!(
                        "the device refused the service for {command:?}"
                    )));
                }
                A_CLSE => {
                    self.send(Message::new(A_CLSE, local, remote, Vec::new())).await?;
                    return Ok(if v2 { decoder.finish() } else { v1_output });
                }
                _ => {}
            }
        }
    }
}

impl Connection {
    /// Runs `exec:COMMAND`, streams `input` to its stdin as WRTEs (one in flight, each at most
    /// the device's payload size), and collects its output until the device closes the stream.
    pub async fn exec(
        &mut self,
        command: &str,
        input: &[u8],
        sent: &(dyn Fn(u64) + Send + Sync),
    ) -> Result<Vec<u8>, AdbError> {
        let mut payload = format!("exec:{command}").into_bytes();
        payload.push(0);
        let local = self.next_local_id;
        self.next_local_id += 1;
        self.send(Message::new(A_OPEN, local, 0, payload)).await?;
        let mut output = Vec::new();
        let mut remote = 0;
        let mut chunks = input.chunks(self.max_payload);
        let mut written = 0u64;
        let mut in_flight = false;
        loop {
            if remote != 0
                && !in_flight
                && let Some(chunk) = chunks.next()
            {
                self.send(Message::new(A_WRTE, local, remote, chunk.to_vec())).await?;
                written += chunk.len() as u64;
                sent(written);
                in_flight = true;
            }
            let msg = self.recv().await?;
            if msg.arg1 != local {
                continue;
            }
            match msg.command {
                A_OKAY => {
                    remote = msg.arg0;
                    in_flight = false;
                }
                A_WRTE => {
                    self.send(Message::new(A_OKAY, local, msg.arg0, Vec::new())).await?;
                    output.extend_from_slice(&msg.payload);
                }
                A_CLSE if remote == 0 => {
                    return Err(AdbError::Protocol(format!("the device refused exec for {command:?}")));
                }
                A_CLSE => {
                    self.send(Message::new(A_CLSE, local, remote, Vec::new())).await?;
                    return Ok(output);
                }
                _ => {}
            }
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
