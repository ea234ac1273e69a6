//! Pure parsers for the text Android devices print: `&str` in, typed data out, no I/O.
//!
//! The server reads device output through these, and the simulator builds its answers from
//! the same types, so the two cannot drift apart.

pub mod activity;
pub mod crashes;
pub mod device_state;
pub mod dumpsys_package;
pub mod getprop;
pub mod identity;
pub mod input_device;
pub mod keys;
pub mod logcat;
pub mod packages;
pub mod relative_point;
pub mod screen_state;
pub mod selector;
pub mod text;
pub mod ui_elements;
pub mod ui_refs;
pub mod uiautomator;
pub mod unix_sockets;
