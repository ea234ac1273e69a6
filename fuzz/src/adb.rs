//! The wire decoders of `src/adb/`, by path (see lib.rs).

#[path = "../../src/adb/capture.rs"]
pub mod capture;
#[path = "../../src/adb/message.rs"]
pub mod message;
#[path = "../../src/adb/shell_v2.rs"]
pub mod shell_v2;
#[path = "../../src/adb/console/reply.rs"]
pub mod console_reply;
