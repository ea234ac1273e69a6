//! Sizing answers for a model's context: the response budget, the cache behind every `cacheId`,
//! and the pages `cache get` serves from it.

pub mod budget;
pub mod cache;
pub mod data;
pub mod page;
pub mod schema;
pub mod shrink;
pub mod workspace;

pub use budget::{Budgeted, DEFAULT_BUDGET};
pub use cache::{Cache, Data, Kind};
