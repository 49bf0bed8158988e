//! Closed loop (`--concurrency N`): no timetable. `fire` keeps N requests in flight and sends
//! the next one the moment one ends, so every request's offset is null. A fill interval, a
//! duration and phases are properties of the schedule, not of the process (see the crate's
//! `Plan`).

use super::{Arrival, ArrivalProcess, ProcessError};
use tokenpipe_format::LoopMode;

/// A fixed number of requests in flight; draws nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClosedLoop {
    concurrency: u64,
}

impl ClosedLoop {
    /// Keeps `concurrency` requests in flight.
    pub fn new(concurrency: u64) -> Self {
        Self { concurrency }
    }
}

impl ArrivalProcess for ClosedLoop {
    fn mode(&self) -> LoopMode {
        LoopMode::Closed
    }

    fn concurrency(&self) -> Option<u64> {
        Some(self.concurrency)
    }

    fn next_arrival(&mut self) -> Result<Option<Arrival>, ProcessError> {
        Ok(Some(Arrival::at(None)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_offsets_and_the_concurrency_for_the_schedule() {
        let mut p = ClosedLoop::new(8);
        assert_eq!(p.next_arrival(), Ok(Some(Arrival::at(None))));
        assert_eq!((p.mode(), p.concurrency()), (LoopMode::Closed, Some(8)));
    }
}
