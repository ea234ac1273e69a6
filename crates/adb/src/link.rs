//! Each device's link speed, as the bytes it already sent show it: every exec stream's capture
//! times its data from the stream's open to its last byte (`capture::Timing`, beside the bytes
//! it counts, where the fuzz targets include it too), and that is one sample, never more than
//! the link whatever the host does. A device's speed is the fastest of its recent samples: a
//! stream its program writes slowly (`screencap -p` writes its PNG while encoding it) shows less
//! than the link, never more. Before anything the device sent could measure it, `PROBES` do: a
//! few MiB the phone makes at once, and again once `PROBE_AGAIN` has passed: a measure taken
//! while the host was busy reads slow, and the PNG streams a slow reading chooses never show more
//! (they are as slow as the phone encodes), so without a fresh probe it would stick. Small
//! transfers (under `MIN_SAMPLE_BYTES`) are no measure and are not kept.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use super::capture::{MIN_SAMPLE_BYTES, Timing};

/// What measures a link nothing has measured yet: bytes the phone makes at once (toybox's
/// `head` copies /dev/zero), so the time is the link's, plus the program's start and the host's
/// own delays. 1 MiB first (0.2 s over Wi-Fi); when that took under `DECISIVE` the link is fast
/// or the host was busy, and 4 MiB more (34 ms over USB 3) tell which.
pub const PROBES: [&str; 2] = ["head -c 1048576 /dev/zero", "head -c 4194304 /dev/zero"];
pub const DECISIVE: Duration = Duration::from_millis(100);
/// What a probe may take at most (a quarter of the device-call timeout when that is less): a
/// link too slow for it, or a stream that stalls, leaves the link unmeasured (PNG) rather than
/// costing the screenshot that asked its answer.
pub const PROBE_LIMIT: Duration = Duration::from_secs(2);

/// How many recent samples a device's speed is the fastest of: a link that changes (a phone
/// moved from USB to Wi-Fi) shows within this many transfers.
const RECENT: usize = 8;

/// How long a device's probe stands: then the next frame choice probes again (0.2 s on Wi-Fi
/// every 5 min, 0.07% of the phone's time; 50 ms on USB).
pub const PROBE_AGAIN: Duration = Duration::from_secs(300);

/// One device's link: its recent samples, and when it was last probed.
#[derive(Debug, Default)]
struct Link {
    recent: VecDeque<f64>,
    probed: Option<Instant>,
}

/// Every device's link, by serial.
#[derive(Debug, Default)]
pub struct Links(Mutex<HashMap<String, Link>>);

impl Links {
    pub fn record(&self, serial: &str, timing: &Timing) {
        let Some(speed) = timing.bytes_per_s() else { return };
        let mut links = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let recent = &mut links.entry(serial.to_string()).or_default().recent;
        if recent.len() == RECENT {
            recent.pop_front();
        }
        recent.push_back(speed);
        tracing::debug!(target: "droidmcp::adb::link", serial, mb_per_s = speed / 1e6, "link sample");
    }

    /// The device's link in MB/s, once a transfer has measured it.
    pub fn mb_per_s(&self, serial: &str) -> Option<f64> {
        let links = self.0.lock().unwrap_or_else(|p| p.into_inner());
        links
            .get(serial)?
            .recent
            .iter()
            .copied()
            .reduce(f64::max)
            .map(|b| b / 1e6)
    }

    /// Whether the device's link wants a probe at `now`: nothing has measured it, or its last
    /// probe is `PROBE_AGAIN` old. Says yes once: the caller probes, and the time is noted.
    pub fn probe_due(&self, serial: &str, now: Instant) -> bool {
        let mut links = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let link = links.entry(serial.to_string()).or_default();
        let due = match link.probed {
            None => link.recent.is_empty(),
            Some(at) => now.saturating_duration_since(at) >= PROBE_AGAIN,
        };
        if due || link.probed.is_none() {
            // A link first measured by what it sent counts as probed then.
            link.probed = Some(now);
        }
        due
    }
}

impl super::Adb {
    /// The device's link speed in MB/s, measured from what it already sent (`link`), or by
    /// `PROBES` when nothing has measured it yet or the last probe is `PROBE_AGAIN` old; `None`
    /// if nothing could.
    pub async fn link_mb_per_s(&self, serial: &str) -> Option<f64> {
        let (source, located) = self.locate(serial).await.ok()?;
        if !source.links.probe_due(&located, Instant::now()) {
            return source.links.mb_per_s(&located);
        }
        let limit = (self.timeout() / 4).min(PROBE_LIMIT);
        for probe in PROBES {
            let started = std::time::Instant::now();
            if let Err(e) = source.exec(&located, probe, None, limit, &|_| {}).await {
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

    #[test]
    fn a_link_is_probed_when_unmeasured_and_again_once_its_probe_is_old() {
        use super::PROBE_AGAIN;
        use std::time::{Duration, Instant};
        let links = Links::default();
        let start = Instant::now();
        assert!(links.probe_due("a", start), "never measured");
        assert!(!links.probe_due("a", start + Duration::from_secs(1)), "just probed");
        assert!(!links.probe_due("a", start + PROBE_AGAIN - Duration::from_millis(1)));
        assert!(links.probe_due("a", start + PROBE_AGAIN), "its probe is old");
        assert!(!links.probe_due("a", start + PROBE_AGAIN), "once");
        assert!(links.probe_due("a", start + PROBE_AGAIN * 2 + Duration::from_secs(1)));
        // A link its own transfers measured first is probed only once the time has passed.
        let mut big = Timing::default();
        std::thread::sleep(std::time::Duration::from_millis(2));
        big.saw(MIN_SAMPLE_BYTES as usize);
        links.record("b", &big);
        assert!(!links.probe_due("b", start), "measured by what it sent");
        assert!(links.probe_due("b", start + PROBE_AGAIN));
    }
}
