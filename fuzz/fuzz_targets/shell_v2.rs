#![no_main]
//! The shell v2 packet decoder, fed in the pieces the first byte chooses, with a small cap.

use droidmcp_pure::adb::shell_v2::Decoder;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let mut decoder = Decoder::new(4096);
    let step = usize::from(split).max(1);
    for chunk in rest.chunks(step) {
        match decoder.feed(chunk) {
            Ok(true) | Err(_) => break,
            Ok(false) => {}
        }
    }
    let out = decoder.finish();
    assert!(out.stdout.len() <= 4096 + 70 * 1024 && out.stderr.len() <= 4096 + 70 * 1024);
});
