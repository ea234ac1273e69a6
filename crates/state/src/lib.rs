//! State that every principal (and, with a shared store, every instance) sees alike: device
//! leases, behind one interface (`Leases`) so a store outside the process (Redis, issue 45) can
//! take the in-process one's place. The rule of who may act on a leased device (`Lease::lets`)
//! lives here, once, for both the store and its callers; time comes from a `Clock`, so tests
//! move it instead of sleeping.

mod clock;
mod leases;

pub use clock::{Clock, ManualClock, SystemClock};
pub use leases::{Holder, InProcess, Lease, Leases, Pending, StateError, Taken};
