#![no_main]
//! `dumpsys battery` and `wm size` output.

use droidmcp_pure::android::device_state::{parse_battery, parse_wm_size};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = parse_battery(&text);
    let _ = parse_wm_size(&text);
});
