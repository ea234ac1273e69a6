//! Code mode: a script composes many tool calls in a sandbox and only what it prints comes
//! back. `sandbox.rs` is the runtime and its limits; `api.rs` makes the script's API and its
//! TypeScript description from the tools' schemas; `runs.rs` is each run's workspace folder,
//! `skills.rs` the saved skills; both keep their files through `confine`, the one door.

pub mod api;
pub mod runs;
pub mod sandbox;
pub mod skills;
