//! A flow as a Maestro flow (`write`), and a Maestro flow read back into steps (`read`); a command
//! with a `${…}` read again, rendered, as its step runs (`rendered`, `template`).

mod args;
mod blocks;
pub(crate) mod command;
pub mod compat;
mod fields;
mod read;
mod rendered;
mod script;
mod selectors;
pub mod template;
mod write;
pub(crate) mod yaml;

pub use fields::fields;
pub use read::{Checked, check_file, parse, parse_file};
pub use rendered::{StepCheck, read_rendered, request};
pub use write::{location, render};
