//! Each device's link speed, as the bytes it already sent show it: every exec stream's capture
//! times its data from the stream's open to its last byte (`capture::Timing`, beside the bytes
//! it counts, where the fuzz targets include it too), and that is one sample, never more than
//! the link whatever the host does. A device's speed is the fastest of its recent samples: a
//! stream its program writes slowly (`screencap -p` writes its PNG while encoding it) shows less
//! than the link, never more. Before anything the device sent could measure it, `PROBES` do: a
//! few MiB the phone makes at once. Small transfers (under `MIN_SAMPLE_BYTES`) are
//! no measure and are not kept.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

pub use super::capture::{MIN_SAMPLE_BYTES, Timing};

/// What measures a link nothing has measured yet: bytes the phone makes at once (toybox's
/// `head` copies /dev/zero), so the time is the link's, plus the program's start and the host's
/// own delays. 1 MiB first (0.2 s over Wi-Fi); when that took under `DECISIVE` the link is fast
/// or the host was busy, and 4 MiB more (34 ms over USB 3) tell which.
pub const PROBES: [&str; 2] = ["head -c 1048576 /dev/zero", "head -c 4194304 /dev/zero"];
pub const DECISIVE: std::time::Duration = std::time::Duration::from_millis(100);

/// How many recent samples a device's speed is the fastest of: a link that changes (a phone
/// moved from USB to Wi-Fi) shows within this many transfers.
const RECENT: usize = 8;

/// Every device's recent samples, by serial.
#[derive(Debug, Default)]
pub struct Links(Mutex<HashMap<String, VecDeque<f64>>>);

impl Links {
    pub fn record(&self, serial: &str, timing: &Timing) {
        let Some(speed) = timing.bytes_per_s() else { return };
        let mut links = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let recent = links.entry(serial.to_string()).or_default();
        if recent.len() == RECENT {
            recent.pop_front();
        }
        recent.push_back(speed);
        tracing::debug!(target: "droidmcp::adb::link", serial, mb_per_s = speed / 1e6, "link sample");
    }

    /// The device's link in MB/s, once a transfer has measured it.
    pub fn mb_per_s(&self, serial: &str) -> Option<f64> {
        let links = self.0.lock().unwrap_or_else(|p| p.into_inner());
        links.get(serial)?.iter().copied().reduce(f64::max).map(|b| b / 1e6)
    }
}

impl super::Adb {
    /// The device's link speed in MB/s, measured from what it already sent (`link`), or by
    /// `PROBES` when nothing has measured it yet; `None` if the probe could not.
    pub async fn link_mb_per_s(&self, serial: &str) -> Option<f64> {
        let (source, located) = self.locate(serial).await.ok()?;
        if let Some(speed) = source.links.mb_per_s(&located) {
            return Some(speed);
        }
        for probe in PROBES {
            let started = std::time::Instant::now();
            if let Err(e) = source.exec(&located, probe, None, self.timeout(), &|_| {}).await {
                tracing::debug!(target: "droidmcp::adb::link", serial, "the link probe failed: {e}");
                break;
            }
            if started.elapsed() >= DECISIVE {
                break;
            }
        }
        source.links.mb_per_s(&located)
    }
}

#[cfg(test)]
mod tests {
    use super::{Links, MIN_SAMPLE_BYTES, Timing};

    #[test]
    fn a_small_transfer_is_no_sample_and_the_fastest_recent_one_is_the_speed() {
        let links = Links::default();
        let mut small = Timing::default();
        std::thread::sleep(std::time::Duration::from_millis(2));
        small.saw(100);
        assert_eq!(small.bytes_per_s(), None, "too small to say");
        links.record("a", &small);
        assert_eq!(links.mb_per_s("a"), None);
        let mut big = Timing::default();
        std::thread::sleep(std::time::Duration::from_millis(2));
        big.saw(MIN_SAMPLE_BYTES as usize);
        let speed = big
            .bytes_per_s()
            .expect("a sample, even in one read: timed from the open");
        assert!(speed > 0.0 && speed <= MIN_SAMPLE_BYTES as f64 / 0.002, "{speed}");
        links.record("a", &big);
        assert_eq!(links.mb_per_s("a"), Some(speed / 1e6));
        assert_eq!(links.mb_per_s("b"), None, "per device");
    }
}
