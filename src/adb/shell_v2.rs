//! The shell v2 stream (AOSP `shell_protocol.h`): packets of `[u8 id][u32 LE length][bytes]`
//! that carry stdout, stderr and, last, the exit code. The same decoder serves the adb server path
//! and the direct path, which both receive the stream in arbitrary chunks.

use super::ShellOutput;

const ID_STDIN: u8 = 0;
const ID_STDOUT: u8 = 1;
const ID_STDERR: u8 = 2;
const ID_EXIT: u8 = 3;
const ID_CLOSE_STDIN: u8 = 4;

/// Each of stdout and stderr keeps at most this many bytes; beyond it the output is flagged, not
/// silently cut, and the rest of the stream is still read so that the exit code arrives.
pub const MAX_STREAM_BYTES: usize = 64 * 1024 * 1024;

#[derive(Debug, Default)]
pub struct Decoder {
    pending: Vec<u8>,
    output: ShellOutput,
    exited: bool,
}

impl Decoder {
    /// Feeds received bytes; returns true once the exit packet has arrived.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<bool, String> {
        self.pending.extend_from_slice(bytes);
        let mut at = 0;
        while self.pending.len() - at >= 5 {
            let id = self.pending[at];
            let len = u32::from_le_bytes(self.pending[at + 1..at + 5].try_into().expect("4 bytes")) as usize;
            if self.pending.len() - at - 5 < len {
                break;
            }
            let body = &self.pending[at + 5..at + 5 + len];
            match id {
                ID_STDOUT => append_capped(&mut self.output.stdout, body, &mut self.output.overflowed),
                ID_STDERR => append_capped(&mut self.output.stderr, body, &mut self.output.overflowed),
                ID_EXIT => {
                    self.output.exit_code = body.first().map(|&c| i32::from(c));
                    self.exited = true;
                }
                ID_STDIN | ID_CLOSE_STDIN | 5 => {}
                other => return Err(format!("unknown shell v2 packet id {other}")),
            }
            at += 5 + len;
        }
        self.pending.drain(..at);
        Ok(self.exited)
    }

    pub fn finish(self) -> ShellOutput {
        self.output
    }
}

fn append_capped(into: &mut Vec<u8>, body: &[u8], overflowed: &mut bool) {
    let room = MAX_STREAM_BYTES.saturating_sub(into.len());
    if body.len() > room {
        *overflowed = true;
    }
    into.extend_from_slice(&body[..body.len().min(room)]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(id: u8, body: &[u8]) -> Vec<u8> {
        let mut p = vec![id];
        p.extend_from_slice(&(body.len() as u32).to_le_bytes());
        p.extend_from_slice(body);
        p
    }

    #[test]
    fn packets_split_at_any_byte_decode_to_the_same_output() {
        let stream = [
            packet(1, b"hello\n"),
            packet(2, b"oops\n"),
            packet(1, b"more"),
            packet(3, &[7]),
        ]
        .concat();
        for split in 0..stream.len() {
            let mut d = Decoder::default();
            assert!(!d.feed(&stream[..split]).unwrap() || split == stream.len());
            assert!(d.feed(&stream[split..]).unwrap());
            let out = d.finish();
            assert_eq!(out.stdout, b"hello\nmore");
            assert_eq!(out.stderr, b"oops\n");
            assert_eq!(out.exit_code, Some(7));
        }
    }

    #[test]
    fn an_unknown_packet_id_is_an_error() {
        assert!(Decoder::default().feed(&packet(9, b"x")).is_err());
    }
}
