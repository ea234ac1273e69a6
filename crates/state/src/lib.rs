//! State that every principal (and, with a shared store, every instance) sees alike: device
//! leases (`Leases`) and each principal's handles (`Handles`: cache entries), each behind one interface with two stores, in the process (the default) and in
//! Redis (`--state`, several instances behind a balancer; issue 45). The rule of who may act on
//! a leased device (`Lease::lets`) lives here, once, for both stores and their callers; time
//! comes from a `Clock`, so tests move it instead of sleeping.

mod clock;
mod handles;
mod in_redis;
mod leases;

pub use clock::{Clock, ManualClock, SystemClock};
pub use handles::{Bound, Full, Handles, InProcessHandles, Kind, Versioned};
pub use in_redis::Redis;
pub use leases::{Holder, InProcess, Lease, Leases, Pending, StateError, Taken};
