//! Code mode: a script composes many tool calls in a sandbox and only what it prints comes
//! back. `sandbox.rs` is the runtime and its limits; `api.rs` makes the script's API and its
//! TypeScript description from the tools' schemas; `runs.rs` is each run's workspace folder,
//! `skills.rs` the saved skills, `confine.rs` the path checks both use.

pub mod api;
pub mod confine;
pub mod runs;
pub mod sandbox;
pub mod skills;
