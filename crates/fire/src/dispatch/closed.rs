//! Closed loop: N slots; a request leaves the moment a slot is free. The dispatcher queues
//! requests at once, and the send loop takes the next one as a slot frees, in the runtime, so
//! that a slot never waits for the dispatcher thread to be scheduled. Each request's
//! `scheduled_ns` is the instant its slot opened or freed.
//!
//! Fill (`fill_interval_ns`): slot k opens at k × interval from the run start (k = 0 … N−1)
//! instead of all at once; the dispatcher opens each on time.
//!
//! Sessions: a slot is held by a session across its turns (N conversations in flight): a later
//! turn is sent with its session's slot, and the slot frees when the last turn ends or a turn
//! fails.

use super::{Admit, Dispatch, Policy};
use tokenpipe_format::Request;

/// Keeps `n` requests (or sessions) in flight.
pub struct Closed {
    /// Slots.
    pub n: u64,
    /// Open the slots this far apart instead of together.
    pub fill_interval_ns: Option<u64>,
}

impl Policy for Closed {
    fn in_flight_limit(&self) -> Option<Dispatch> {
        // With a fill, every slot is opened by the dispatcher on time.
        Some(Dispatch::Limit(if self.fill_interval_ns.is_some() {
            0
        } else {
            self.n
        }))
    }

    fn slot_openings(&self) -> Vec<u64> {
        match self.fill_interval_ns {
            Some(gap) => (0..self.n).map(|k| k.saturating_mul(gap)).collect(),
            None => vec![],
        }
    }

    fn admit(&self, _req: &Request) -> Result<Admit, String> {
        Ok(Admit::WhenFree)
    }

    fn sessions_hold_slots(&self) -> bool {
        true
    }
}
