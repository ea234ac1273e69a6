#![no_main]
//! `getprop` output: parsed, summarised, and written back the way the simulator prints it.

use droidmcp_pure::android::getprop::{format_getprop, parse_getprop, summarize};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let props = parse_getprop(&text);
    let _ = summarize(&props);
    // What we print, we read back the same.
    let again = parse_getprop(&format_getprop(&props));
    assert_eq!(again, props, "format_getprop then parse_getprop changed the properties");
});
