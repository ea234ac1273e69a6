//! The pure parts of droidmcp, compiled on their own: the device-output parsers (the `android`
//! crate, `crates/android/`) and the wire decoders (`adb/message.rs`, `adb/shell_v2.rs`). They
//! are the same source as the server's (the decoders included by path), so the fuzz targets
//! build in about a minute instead of the six the whole crate (rmcp, image, the simulator) takes
//! under cargo-fuzz.

pub use android;

pub mod adb;
