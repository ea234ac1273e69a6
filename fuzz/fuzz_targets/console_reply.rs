#![no_main]
//! The emulator console's reply parser: every reply it finds uses bytes it was given, and
//! parsing what is left goes on until nothing closes.

use droidmcp_pure::adb::console_reply::{named_token_path, parse_reply};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut rest = data;
    while let Some((reply, used)) = parse_reply(rest) {
        assert!(used > 0 && used <= rest.len());
        let _ = named_token_path(&reply);
        rest = &rest[used..];
    }
});
