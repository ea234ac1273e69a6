//! Each device's link speed, as the bytes it already sent show it: every exec stream's capture
//! times its data from the first read to the last (`capture::Timing`, beside the bytes it counts,
//! where the fuzz targets include it too), and the bytes after the first read over that
//! time are one sample. A device's speed is the fastest of its recent samples: a stream its
//! program writes slowly (`screencap -p` writes its PNG while encoding it) shows less than the
//! link, never more. Small transfers (under `MIN_SAMPLE_BYTES`) and ones that arrive in one read
//! are no measure (an adb server forwards a device's packets whole) and are not kept.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

pub use super::capture::{MIN_SAMPLE_BYTES, Timing};

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

#[cfg(test)]
mod tests {
    use super::{Links, MIN_SAMPLE_BYTES, Timing};

    #[test]
    fn a_small_or_single_read_transfer_is_no_sample_and_the_fastest_recent_one_is_the_speed() {
        let links = Links::default();
        let mut one_read = Timing::default();
        one_read.saw(10 * MIN_SAMPLE_BYTES as usize);
        assert_eq!(one_read.bytes_per_s(), None, "one read: no time to measure");
        let mut small = Timing::default();
        small.saw(100);
        std::thread::sleep(std::time::Duration::from_millis(2));
        small.saw(100);
        assert_eq!(small.bytes_per_s(), None, "too small to say");
        links.record("a", &small);
        assert_eq!(links.mb_per_s("a"), None);
        let mut big = Timing::default();
        big.saw(1000);
        std::thread::sleep(std::time::Duration::from_millis(2));
        big.saw(MIN_SAMPLE_BYTES as usize);
        let speed = big.bytes_per_s().expect("a sample");
        assert!(speed > 0.0 && speed <= MIN_SAMPLE_BYTES as f64 / 0.002, "{speed}");
        links.record("a", &big);
        assert_eq!(links.mb_per_s("a"), Some(speed / 1e6));
        assert_eq!(links.mb_per_s("b"), None, "per device");
    }
}
