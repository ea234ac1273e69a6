//! Code mode (issue 15), in progress: a script composes many tool calls in a sandbox and only
//! what it prints comes back. `sandbox.rs` is the runtime and its limits; the `script` tool,
//! per-run workspaces, the API resource and skills come next.

pub mod sandbox;
