//! Code mode (issue 15), in progress: a script composes many tool calls in a sandbox and only
//! what it prints comes back. `sandbox.rs` is the runtime and its limits; `api.rs` makes the
//! script's API and its TypeScript description from the tools' schemas. Per-run workspaces and
//! skills come next.

pub mod api;
pub mod sandbox;
