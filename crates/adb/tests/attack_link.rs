//! Outside attack on the frame choice's link speed (issue 46): `Links` keeps the fastest of a
//! device's 8 recent samples, so one sample that is fast by accident rules the next 7 transfers.

use droidmcp_adb::link::{Links, MIN_SAMPLE_BYTES, Timing};

/// What src/tools/ui/capture.rs `frame_path` needs to pick raw frames: 4 MB a megapixel over the
/// link plus 17 ms must beat a PNG's 140 ms, so about 32.5 MB/s.
const RAW_WINS_ABOVE_MB_PER_S: f64 = 4.0 / (0.140 - 0.017);

/// A Wi-Fi phone (5 MB/s) whose host was busy (2 cores shared here) when a 1 MB dump arrived:
/// the kernel buffered it all, and the late reader drained it in back-to-back reads. That is no
/// measure of the link (it measured memcpy), yet it is kept; the 7 honest 5 MB/s samples that
/// follow cannot outvote it, and each screenshot meanwhile goes raw: 10 MB over Wi-Fi (2 s)
/// instead of a 0.35 s PNG.
#[test]
fn a_backlog_drained_at_once_does_not_make_a_wifi_phone_fast() {
    let links = Links::default();
    // The stream opens; its 1 MB crosses the 5 MB/s link into the host's buffers (200 ms) while
    // the host is busy elsewhere, then is drained in back-to-back reads.
    let mut backlog = Timing::default();
    std::thread::sleep(std::time::Duration::from_millis(200));
    backlog.saw(16 * 1024);
    for _ in 0..16 {
        backlog.saw(64 * 1024);
    }
    links.record("wifi-phone", &backlog);
    for _ in 0..7 {
        // An honest Wi-Fi transfer: 64 KiB, the last of it 13 ms after the open (5 MB/s).
        let mut honest = Timing::default();
        honest.saw(4096);
        std::thread::sleep(std::time::Duration::from_millis(13));
        honest.saw(MIN_SAMPLE_BYTES as usize - 4096);
        links.record("wifi-phone", &honest);
    }
    let speed = links.mb_per_s("wifi-phone").expect("measured");
    println!("after one drained backlog and 7 Wi-Fi samples the link reads {speed:.0} MB/s");
    assert!(
        speed < RAW_WINS_ABOVE_MB_PER_S,
        "a Wi-Fi phone reads {speed:.0} MB/s: raw frames (10 MB each over Wi-Fi) for the next transfers"
    );
}
