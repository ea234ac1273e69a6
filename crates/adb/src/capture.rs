//! A command's output, kept within a byte bound: the head up to the cap, then only a short
//! tail, and a count of what went between. Every route collects output through this, so memory
//! follows the cap, not the output's size.

use std::time::{Duration, Instant};

/// What a call keeps of one stream by default (`--max-output-mib`).
pub const DEFAULT_MAX_OUTPUT: usize = 32 * 1024 * 1024;
/// What is kept of the end once the cap is passed, so the answer still shows how it ended.
const TAIL_BYTES: usize = 64 * 1024;

#[derive(Debug)]
pub struct Capture {
    head: Vec<u8>,
    tail: Vec<u8>,
    total: u64,
    cap: usize,
    /// When the bytes came: what the stream says of its link (`link`).
    pub timing: Timing,
}

impl Capture {
    pub fn new(cap: usize) -> Capture {
        Capture {
            head: Vec::new(),
            tail: Vec::new(),
            total: 0,
            cap: cap.max(TAIL_BYTES),
            timing: Default::default(),
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.timing.saw(bytes.len());
        self.total += bytes.len() as u64;
        let room = self.cap - self.head.len();
        let (head, rest) = bytes.split_at(bytes.len().min(room));
        self.head.extend_from_slice(head);
        if rest.is_empty() {
            return;
        }
        self.tail.extend_from_slice(rest);
        if self.tail.len() > 2 * TAIL_BYTES {
            self.tail.drain(..self.tail.len() - TAIL_BYTES);
        }
    }

    /// Bytes seen so far, kept or not.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The kept bytes and how many were dropped. When some were, a marker line stands where they
    /// were, saying how many and why, so whatever shows or stores the text says it is cut.
    pub fn finish(self) -> (Vec<u8>, u64) {
        let Capture {
            mut head,
            mut tail,
            total,
            cap,
            ..
        } = self;
        if tail.is_empty() {
            return (head, 0);
        }
        if tail.len() > TAIL_BYTES {
            tail.drain(..tail.len() - TAIL_BYTES);
        }
        let dropped = total - head.len() as u64 - tail.len() as u64;
        let marker = format!(
            "\n…[droidmcp: {dropped} bytes dropped here; the output passed the {} MiB capture cap (--max-output-mib). Redirect it to a file on the device and read that in parts]…\n",
            cap / (1024 * 1024)
        );
        head.extend_from_slice(marker.as_bytes());
        head.extend_from_slice(&tail);
        (head, dropped)
    }
}

/// What a shell command gave back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellOutput {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// None when the command ended the shell itself on a device without shell v2.
    pub exit_code: Option<i32>,
    /// Bytes dropped past the capture cap (a marker in the text says where).
    pub dropped: u64,
}

impl ShellOutput {
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// A transfer smaller than this says more about timers and packets than about the link.
pub const MIN_SAMPLE_BYTES: u64 = 64 * 1024;
/// How one stream's data arrived, timed from the stream's open: no byte of it crossed the link
/// before, so bytes over that time are never more than the link carries, however late the host
/// reads (a drained backlog), only less (the program's own time before and while it writes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    opened: Instant,
    last: Option<Instant>,
    total: u64,
}

impl Default for Timing {
    /// Opened now.
    fn default() -> Timing {
        Timing {
            opened: Instant::now(),
            last: None,
            total: 0,
        }
    }
}

impl Timing {
    pub fn saw(&mut self, bytes: usize) {
        self.total += bytes as u64;
        self.last = Some(Instant::now());
    }

    /// Bytes per second, if the stream was a measure of its link.
    pub fn bytes_per_s(&self) -> Option<f64> {
        let took = self.last? - self.opened;
        (self.total >= MIN_SAMPLE_BYTES && took > Duration::ZERO).then(|| self.total as f64 / took.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_under_the_cap_is_kept_whole() {
        let mut c = Capture::new(1 << 20);
        c.push(b"hello ");
        c.push(b"world");
        assert_eq!(c.finish(), (b"hello world".to_vec(), 0));
    }

    #[test]
    fn output_over_the_cap_keeps_head_and_tail_and_says_how_much_was_dropped() {
        let mut c = Capture::new(TAIL_BYTES);
        let chunk = vec![b'x'; 4096];
        for _ in 0..100 {
            c.push(&chunk);
        }
        c.push(b"THE END");
        assert_eq!(c.total(), 100 * 4096 + 7);
        let (kept, dropped) = c.finish();
        assert_eq!(dropped, 100 * 4096 + 7 - 2 * TAIL_BYTES as u64);
        assert!(kept.ends_with(b"THE END"));
        let text = String::from_utf8_lossy(&kept);
        assert!(
            text.contains(&format!("{dropped} bytes dropped here")),
            "{}",
            &text[TAIL_BYTES..TAIL_BYTES + 200]
        );
        assert!(kept.len() < 2 * TAIL_BYTES + 300);
    }
}
