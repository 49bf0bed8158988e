//! Batch mode (llama-benchy's runs): the requests of batch b (those with `batch` = b, written
//! together) leave together, once every request of batch b−1 has its `done`. Every request of a
//! batch is scheduled at the batch's release instant: the `done.at_ns` of the previous batch's
//! last request, or, for the first batch, the moment it was read whole. A session's later
//! turns belong to their batch, which ends when they have ended too.

use super::{Admit, Dispatch, Policy};
use std::collections::VecDeque;
use tokenpipe_format::Request;

/// Releases whole batches, each after the one before has ended.
pub struct Batch;

impl Policy for Batch {
    fn in_flight_limit(&self) -> Option<Dispatch> {
        None
    }

    fn admit(&self, req: &Request) -> Result<Admit, String> {
        match req.grouping.batch {
            Some(b) => Ok(Admit::Batch(b)),
            None => Err("field \"batch\": missing in a batch schedule".into()),
        }
    }
}

/// Batches read and not yet released, and how many requests of the released one are still
/// going.
pub struct Gate<T> {
    /// Consecutive groups of records by batch index, oldest first.
    waiting: VecDeque<(u64, Vec<T>)>,
    /// Requests of the released batch without their `done` yet.
    pub outstanding: usize,
    /// The latest `done.at_ns` of the released batch.
    pub last_end_ns: Option<u64>,
}

impl<T> Default for Gate<T> {
    fn default() -> Self {
        Self {
            waiting: VecDeque::new(),
            outstanding: 0,
            last_end_ns: None,
        }
    }
}

impl<T> Gate<T> {
    /// Adds a record of batch `b`.
    pub fn push(&mut self, b: u64, item: T) {
        match self.waiting.back_mut() {
            Some((last, items)) if *last == b => items.push(item),
            _ => self.waiting.push_back((b, vec![item])),
        }
    }

    /// The next batch, when it is whole (another batch follows it, or the input ended) and
    /// the one before it has ended: its records and its release instant.
    pub fn ready(&mut self, input_done: bool, now_ns: u64) -> Option<(Vec<T>, u64)> {
        let whole = self.waiting.len() >= 2 || (input_done && !self.waiting.is_empty());
        if !whole || self.outstanding > 0 {
            return None;
        }
        let (_, items) = self.waiting.pop_front()?;
        self.outstanding = items.len();
        let at = self.last_end_ns.take().unwrap_or(now_ns);
        Some((items, at))
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// Everything still waiting, for a stop.
    pub fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.waiting.drain(..).flat_map(|(_, items)| items)
    }

    /// A request of the released batch ended (at `at_ns`, when it was sent).
    pub fn ended(&mut self, at_ns: Option<u64>) {
        self.outstanding = self.outstanding.saturating_sub(1);
        if let Some(at) = at_ns {
            self.last_end_ns = Some(self.last_end_ns.map_or(at, |l| l.max(at)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_waits_to_be_whole_and_for_the_one_before() {
        let mut g = Gate::default();
        g.push(0, 'a');
        g.push(0, 'b');
        assert!(g.ready(false, 5).is_none(), "batch 0 may still grow");
        g.push(1, 'c');
        assert_eq!(g.ready(false, 5), Some((vec!['a', 'b'], 5)));
        assert!(g.ready(true, 6).is_none(), "batch 0 is still going");
        g.ended(Some(40));
        g.ended(Some(30));
        assert_eq!(g.ready(true, 50), Some((vec!['c'], 40)));
        assert!(g.is_empty());
    }
}
