//! Closed loop: N requests in flight; the next one leaves the moment one ends. The dispatcher
//! releases requests at once into a bounded queue, and the send loop takes the next one as a
//! slot frees, in the runtime, so that a slot never waits for the dispatcher thread to be
//! scheduled. Each request's `scheduled_ns` is the instant its slot freed.

use super::{Dispatch, Pace, Policy, Release};
use tokenpipe_format::Request;

/// Keeps `n` requests in flight.
pub struct Closed {
    /// Requests in flight.
    pub n: u64,
}

impl Policy for Closed {
    fn in_flight_limit(&self) -> Option<Dispatch> {
        Some(Dispatch::Limit(self.n))
    }

    fn release(&mut self, _req: &Request, _pace: &Pace) -> Result<Release, String> {
        Ok(Release::WhenFree)
    }
}
