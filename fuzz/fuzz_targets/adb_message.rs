#![no_main]
//! The 24-byte adb message header and its payload, read as a stream until an error.

use droidmcp_pure::adb::message::Message;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    runtime.block_on(async {
        let mut input = data;
        while let Ok(msg) = Message::read_from(&mut input).await {
            // What we decode, we encode to the same bytes (checksum aside, which may be 0).
            let again = Message::read_from(&mut msg.encode().as_slice()).await.expect("re-read");
            assert_eq!(again.payload, msg.payload);
        }
    });
});
