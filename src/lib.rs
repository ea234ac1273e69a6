//! droidmcp: an MCP server that drives Android devices with answers sized for a model's
//! context window, and a simulated device that speaks adbd's wire protocol.
//! The code map is in `docs/ARCHITECTURE.md`.

pub mod adb;
pub mod android;
pub mod confine;
pub mod context;
pub mod flow;
pub mod http;
pub mod image;
pub mod jsonrpc;
pub mod panel;
pub mod principals;
pub mod replay;
pub mod script;
pub mod server;
pub mod sim;
pub mod stdio;
pub mod tools;
