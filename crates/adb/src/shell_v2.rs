//! The shell v2 stream (AOSP `shell_protocol.h`): packets of `[u8 id][u32 LE length][bytes]`
//! that carry stdout, stderr and, last, the exit code. The same decoder serves the adb server path
//! and the direct path, which both receive the stream in arbitrary chunks. Bodies go straight
//! into bounded captures as they arrive, so a packet's claimed length never sizes a buffer.

use super::capture::{Capture, ShellOutput};

const ID_STDOUT: u8 = 1;
const ID_STDERR: u8 = 2;
const ID_EXIT: u8 = 3;
const ID_CLOSE_STDIN: u8 = 4;
const ID_WINDOW_SIZE: u8 = 5;

// Ids 0 (stdin) and 5 (window size) flow host → device only; if echoed, they are skipped.

/// The packet that tells the device our stdin is closed (commands reading stdin see EOF).
pub fn close_stdin_packet() -> Vec<u8> {
    vec![ID_CLOSE_STDIN, 0, 0, 0, 0]
}

#[derive(Debug)]
pub struct Decoder {
    header: Vec<u8>,
    /// The packet being read: its id and the body bytes still to come.
    body: Option<(u8, usize)>,
    exit: Vec<u8>,
    stdout: Capture,
    stderr: Capture,
    exit_code: Option<i32>,
}

impl Decoder {
    /// Keeps at most `cap` bytes of each of stdout and stderr (see `Capture`).
    pub fn new(cap: usize) -> Decoder {
        Decoder {
            header: Vec::with_capacity(5),
            body: None,
            exit: Vec::new(),
            stdout: Capture::new(cap),
            stderr: Capture::new(cap),
            exit_code: None,
        }
    }

    /// Feeds received bytes; returns true once the exit packet has arrived.
    pub fn feed(&mut self, mut bytes: &[u8]) -> Result<bool, String> {
        while !bytes.is_empty() && self.exit_code.is_none() {
            match self.body {
                None => {
                    let take = (5 - self.header.len()).min(bytes.len());
                    self.header.extend_from_slice(&bytes[..take]);
                    bytes = &bytes[take..];
                    if self.header.len() == 5 {
                        let id = self.header[0];
                        if id > ID_WINDOW_SIZE {
                            return Err(format!(
                                "a shell packet with unknown id {id} (header bytes {})",
                                super::message::hex(&self.header)
                            ));
                        }
                        let len = u32::from_le_bytes(self.header[1..5].try_into().expect("4 bytes")) as usize;
                        self.header.clear();
                        self.body = Some((id, len));
                        self.end_packet_if_done();
                    }
                }
                Some((id, remaining)) => {
                    let take = remaining.min(bytes.len());
                    let (body, rest) = bytes.split_at(take);
                    match id {
                        ID_STDOUT => self.stdout.push(body),
                        ID_STDERR => self.stderr.push(body),
                        ID_EXIT if self.exit.len() < 4 => self.exit.extend_from_slice(body),
                        _ => {} // stdin echoes, window sizes: nothing to keep
                    }
                    bytes = rest;
                    self.body = Some((id, remaining - take));
                    self.end_packet_if_done();
                }
            }
        }
        Ok(self.exit_code.is_some())
    }

    fn end_packet_if_done(&mut self) {
        if let Some((id, 0)) = self.body {
            self.body = None;
            if id == ID_EXIT {
                self.exit_code = Some(self.exit.first().map_or(0, |&c| i32::from(c)));
            }
        }
    }

    pub fn finish(self) -> ShellOutput {
        let (stdout, out_dropped) = self.stdout.finish();
        let (stderr, err_dropped) = self.stderr.finish();
        ShellOutput {
            stdout,
            stderr,
            exit_code: self.exit_code,
            dropped: out_dropped + err_dropped,
        }
    }
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
            packet(5, b"12345678"),
            packet(1, b"more"),
            packet(3, &[7]),
        ]
        .concat();
        for split in 0..stream.len() {
            let mut d = Decoder::new(1 << 20);
            assert!(!d.feed(&stream[..split]).unwrap() || split == stream.len());
            assert!(d.feed(&stream[split..]).unwrap());
            let out = d.finish();
            assert_eq!(out.stdout, b"hello\nmore");
            assert_eq!(out.stderr, b"oops\n");
            assert_eq!(out.exit_code, Some(7));
        }
    }

    #[test]
    fn an_unknown_packet_id_is_an_error_that_shows_the_bytes() {
        let e = Decoder::new(1 << 20).feed(&packet(9, b"x")).unwrap_err();
        assert!(e.contains("09 01 00 00 00"), "{e}");
    }

    #[test]
    fn a_huge_claimed_length_allocates_nothing_up_front() {
        let mut d = Decoder::new(1 << 20);
        let mut header = vec![1u8];
        header.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(!d.feed(&header).unwrap());
        assert!(!d.feed(b"some").unwrap());
        assert_eq!(d.finish().stdout, b"some");
    }
}
