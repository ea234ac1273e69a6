//! droidmcp: an MCP server that drives Android devices with answers sized for a model's
//! context window, and a simulated device that speaks adbd's wire protocol.
//! The code map is in `docs/ARCHITECTURE.md`.
//!
//! The lower layers are crates of the workspace (`crates/`); each is re-exported here under its
//! room's name, so `crate::adb::…` and `droidmcp::adb::…` read as before.

pub use ::adb;
pub use ::android;
pub use ::confine;
pub use ::context;
pub use ::flow;
pub mod http;
pub use droidmcp_image as image;
pub mod jsonrpc;
pub mod panel;
pub mod principals;
pub mod replay;
pub use ::script;
pub mod server;
pub use ::sim;
pub use ::state;
pub mod stdio;
pub mod tools;
