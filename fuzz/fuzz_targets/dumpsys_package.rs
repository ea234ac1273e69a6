#![no_main]
//! `dumpsys package NAME` output, and `dumpsys activity activities` (the focused app).

use droidmcp_pure::android::activity::focus_for_screen;
use droidmcp_pure::android::dumpsys_package::parse_package_dump;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = parse_package_dump(&text, "com.example.app");
    let _ = focus_for_screen(&text, Some("com.example.app"));
    let _ = focus_for_screen(&text, None);
});
