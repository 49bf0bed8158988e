//! Batch mode (`--batch N --runs R`, llama-benchy's runs): N requests sent together, the next
//! N once all of them have ended, R times. Each request carries its batch index, so that
//! `reduce` can report per-batch and per-run figures.

use super::{Arrival, ArrivalProcess, ProcessError};
use tokenpipe_format::LoopMode;

/// `size` requests at once, `runs` times; draws nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batch {
    size: u64,
    runs: u64,
    given: u64,
}

impl Batch {
    /// Batches of `size` (at least 1), `runs` of them.
    pub fn new(size: u64, runs: u64) -> Self {
        Self {
            size: size.max(1),
            runs,
            given: 0,
        }
    }
}

impl ArrivalProcess for Batch {
    fn mode(&self) -> LoopMode {
        LoopMode::Batch
    }

    fn concurrency(&self) -> Option<u64> {
        Some(self.size)
    }

    fn limit(&self) -> Option<u64> {
        Some(self.size.saturating_mul(self.runs))
    }

    fn next_arrival(&mut self) -> Result<Option<Arrival>, ProcessError> {
        if self.given >= self.size.saturating_mul(self.runs) {
            return Ok(None);
        }
        self.given += 1;
        Ok(Some(Arrival::at(None)))
    }

    fn batch(&self) -> Option<u64> {
        Some(self.given.saturating_sub(1) / self.size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_are_numbered_and_end_after_the_last_run() {
        let mut p = Batch::new(3, 2);
        let mut batches = vec![];
        while p.next_arrival().unwrap().is_some() {
            batches.push(p.batch().unwrap());
        }
        assert_eq!(batches, [0, 0, 0, 1, 1, 1]);
    }
}
