//! The adbd transport message: a 24-byte little-endian header plus payload (AOSP `protocol.txt`).
//! Shared by both ends: the direct client in `adb/direct.rs` and the simulator in `sim/transport.rs`.

use tokio::io::{AsyncRead, AsyncReadExt};

pub const A_CNXN: u32 = 0x4e58_4e43;
pub const A_AUTH: u32 = 0x4854_5541;
pub const A_OPEN: u32 = 0x4e45_504f;
pub const A_OKAY: u32 = 0x5941_4b4f;
pub const A_CLSE: u32 = 0x4553_4c43;
pub const A_WRTE: u32 = 0x4554_5257;
pub const A_STLS: u32 = 0x534c_5453;

/// The version adbd announces. From `0x01000001` on, peers may skip the checksum; we always send it.
pub const A_VERSION: u32 = 0x0100_0001;
/// The largest payload we accept: the host's maxdata is capped to this.
pub const MAX_PAYLOAD: u32 = 1024 * 1024;

pub const AUTH_TOKEN: u32 = 1;
pub const AUTH_SIGNATURE: u32 = 2;
pub const AUTH_RSAPUBLICKEY: u32 = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub command: u32,
    pub arg0: u32,
    pub arg1: u32,
    pub payload: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum MessageError {
    #[error("connection closed")]
    Closed,
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    /// The header's magic does not match its command: not an adb message at all.
    #[error("not an adb message header (bytes {0})")]
    BadMagic(String),
    #[error("payload of {0} bytes is over the {MAX_PAYLOAD}-byte limit")]
    TooLarge(u32),
    #[error("payload checksum {got:#x} does not match header {want:#x}")]
    BadChecksum { got: u32, want: u32 },
}

/// adb's `data_check`: the byte sum of the payload (not a CRC32, whatever protocol.txt says).
pub fn checksum(payload: &[u8]) -> u32 {
    payload.iter().fold(0u32, |sum, &b| sum.wrapping_add(u32::from(b)))
}

impl Message {
    pub fn new(command: u32, arg0: u32, arg1: u32, payload: impl Into<Vec<u8>>) -> Message {
        Message {
            command,
            arg0,
            arg1,
            payload: payload.into(),
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + self.payload.len());
        for word in [
            self.command,
            self.arg0,
            self.arg1,
            self.payload.len() as u32,
            checksum(&self.payload),
            self.command ^ 0xffff_ffff,
        ] {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(&self.payload);
        out
    }

    /// Reads one message. A zero checksum is accepted, as adbd does for peers that skip it.
    pub async fn read_from<R: AsyncRead + Unpin>(r: &mut R) -> Result<Message, MessageError> {
        let mut header = [0u8; 24];
        match r.read_exact(&mut header).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(MessageError::Closed),
            Err(e) => return Err(e.into()),
        }
        let word = |i: usize| u32::from_le_bytes(header[i * 4..i * 4 + 4].try_into().expect("4 bytes"));
        let (command, arg0, arg1, len, check, magic) = (word(0), word(1), word(2), word(3), word(4), word(5));
        if magic != command ^ 0xffff_ffff {
            return Err(MessageError::BadMagic(hex(&header[..16])));
        }
        if len > MAX_PAYLOAD {
            return Err(MessageError::TooLarge(len));
        }
        let mut payload = vec![0u8; len as usize];
        r.read_exact(&mut payload).await?;
        let got = checksum(&payload);
        if check != 0 && got != check {
            return Err(MessageError::BadChecksum { got, want: check });
        }
        Ok(Message {
            command,
            arg0,
            arg1,
            payload,
        })
    }
}

/// Bytes as short hex, for errors that show what the device sent.
pub fn hex(bytes: &[u8]) -> String {
    let shown: Vec<String> = bytes.iter().take(16).map(|b| format!("{b:02x}")).collect();
    let more = if bytes.len() > 16 { " …" } else { "" };
    format!("{}{more}", shown.join(" "))
}

/// A readable name for logs.
pub fn command_name(command: u32) -> String {
    let bytes = command.to_le_bytes();
    if bytes.iter().all(u8::is_ascii_uppercase) {
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        format!("{command:#010x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn encode_then_read_round_trips_and_bad_checksum_is_refused() {
        let m = Message::new(A_WRTE, 7, 9, b"hello".to_vec());
        let bytes = m.encode();
        assert_eq!(&bytes[..4], b"WRTE");
        assert_eq!(Message::read_from(&mut &bytes[..]).await.unwrap(), m);
        let mut bad = bytes.clone();
        bad[24] ^= 1;
        assert!(matches!(
            Message::read_from(&mut &bad[..]).await,
            Err(MessageError::BadChecksum { .. })
        ));
    }
}
