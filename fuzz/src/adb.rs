//! The wire decoders of `crates/adb/src/`, by path (see lib.rs).

#[path = "../../crates/adb/src/capture.rs"]
pub mod capture;
#[path = "../../crates/adb/src/message.rs"]
pub mod message;
#[path = "../../crates/adb/src/shell_v2.rs"]
pub mod shell_v2;
#[path = "../../crates/adb/src/console/reply.rs"]
pub mod console_reply;
