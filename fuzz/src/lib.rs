//! The pure parts of droidmcp, compiled on their own: the device-output parsers (`android/`)
//! and the wire decoders (`adb/message.rs`, `adb/shell_v2.rs`). They are the same source files
//! as the server's, included by path, so the fuzz targets build in about a minute instead of
//! the six the whole crate (rmcp, image, the simulator) takes under cargo-fuzz.

#[path = "../../src/android/mod.rs"]
pub mod android;

pub mod adb;
