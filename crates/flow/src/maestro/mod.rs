//! A flow as a Maestro flow (`write`), and a Maestro flow read back into steps (`read`).

mod args;
mod commands;
pub mod compat;
mod read;
mod script;
mod selectors;
mod write;
mod yaml;

pub use read::{Checked, check_file, parse, parse_file};
pub use write::{location, render};
