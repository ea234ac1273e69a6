#![no_main]
//! The simulator's `sync:` service, reached through its real transport: a host connects, opens
//! `sync:` and writes the fuzz input as the stream's bytes. Time is paused, so a stall costs
//! nothing, and the simulator is loaded once.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use droidmcp::adb::message::{A_CLSE, A_CNXN, A_OKAY, A_OPEN, A_VERSION, A_WRTE, MAX_PAYLOAD, Message};
use droidmcp::sim::{AuthPolicy, Simulator};
use libfuzzer_sys::fuzz_target;
use tokio::io::AsyncWriteExt;

fn simulator() -> Arc<Simulator> {
    static SIM: OnceLock<Arc<Simulator>> = OnceLock::new();
    SIM.get_or_init(|| {
        let profile = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/pixel-emulator");
        Arc::new(Simulator::load(profile.as_ref(), None, AuthPolicy::None).expect("load the profile"))
    })
    .clone()
}

fuzz_target!(|data: &[u8]| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let (host, device) = tokio::io::duplex(1 << 20);
        let (device_read, device_write) = tokio::io::split(device);
        let served = tokio::spawn(droidmcp::sim::transport::serve_stream(
            simulator(),
            device_read,
            device_write,
            "fuzz",
        ));
        let (mut host_read, mut host_write) = tokio::io::split(host);
        let mut wire = Message::new(A_CNXN, A_VERSION, MAX_PAYLOAD, b"host::\0".to_vec()).encode();
        wire.extend(Message::new(A_OPEN, 1, 0, b"sync:\0".to_vec()).encode());
        for chunk in data.chunks(4096) {
            wire.extend(Message::new(A_WRTE, 1, 1, chunk.to_vec()).encode());
        }
        if host_write.write_all(&wire).await.is_err() {
            return;
        }
        // Acknowledge what the device writes, as a host does, until it closes or goes quiet.
        loop {
            let next = tokio::time::timeout(Duration::from_secs(5), Message::read_from(&mut host_read)).await;
            match next {
                Ok(Ok(msg)) if msg.command == A_WRTE => {
                    let okay = Message::new(A_OKAY, 1, msg.arg0, Vec::new()).encode();
                    if host_write.write_all(&okay).await.is_err() {
                        break;
                    }
                }
                Ok(Ok(msg)) if msg.command == A_CLSE => break,
                Ok(Ok(_)) => {}
                _ => break,
            }
        }
        let _ = host_write.shutdown().await;
        drop(host_write);
        drop(host_read);
        let _ = tokio::time::timeout(Duration::from_secs(60), served).await;
    });
});
