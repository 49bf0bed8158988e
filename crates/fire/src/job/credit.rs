//! Read-ahead credits: the reader thread takes one per schedule record before reading it, and
//! the record carries it ([`Credit`]) until its job leaves the queues (sent, or dropped), so
//! records read but not yet sent never exceed [`READ_AHEAD`] (or twice a batch's size, when that
//! is more). A credit lives in the [`Job`](super::Job) it travels with, which is why the gate
//! lives here, below the dispatcher that hands jobs on.

use crate::sync::lock;
use std::sync::{Arc, Condvar, Mutex};
use tokenpipe_format::Record;

/// Records read ahead of their send, at most.
pub const READ_AHEAD: usize = 4096;

#[derive(Default)]
struct GateState {
    /// Credits there are (at least [`READ_AHEAD`]).
    limit: usize,
    taken: usize,
    closed: bool,
}

/// The credit counter shared by the reader and every holder of a credit.
pub struct Gate {
    state: Mutex<GateState>,
    freed: Condvar,
}

impl Default for Gate {
    fn default() -> Self {
        Self::for_schedule(None)
    }
}

impl Gate {
    /// A gate for the schedule whose first record is `first`: [`READ_AHEAD`] credits, or twice
    /// a batch's size when that is more, since a batch is released only once it has been read
    /// whole (a smaller gate would wait for ever on a batch larger than itself).
    pub fn for_schedule(first: Option<&Record>) -> Self {
        let batch = match first {
            Some(Record::Schedule(s)) if s.mode.is(tokenpipe_format::LoopMode::Batch) => s
                .concurrency
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(0),
            _ => 0,
        };
        Self {
            state: Mutex::new(GateState {
                limit: READ_AHEAD.max(batch.saturating_mul(2)),
                closed: false,
                taken: 0,
            }),
            freed: Condvar::new(),
        }
    }

    /// Waits for a credit; `None` once the dispatcher has stopped listening.
    pub fn take(self: &Arc<Self>) -> Option<Credit> {
        let mut st = lock(&self.state);
        while st.taken >= st.limit && !st.closed {
            st = self.freed.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        if st.closed {
            return None;
        }
        st.taken += 1;
        Some(Credit(self.clone()))
    }

    /// Stops the reader at its next record.
    pub fn close(&self) {
        lock(&self.state).closed = true;
        self.freed.notify_all();
    }
}

/// One record's place in the read-ahead; given back when dropped.
pub struct Credit(Arc<Gate>);

impl Drop for Credit {
    fn drop(&mut self) {
        let mut st = lock(&self.0.state);
        st.taken = st.taken.saturating_sub(1);
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_format::{LoopMode, Schedule};

    fn credits_without_waiting(gate: &Arc<Gate>, want: usize) -> Vec<Credit> {
        let mut held = Vec::new();
        while held.len() < want {
            let st = gate.state.lock().unwrap();
            if st.taken >= st.limit {
                break;
            }
            drop(st);
            held.extend(gate.take());
        }
        held
    }

    #[test]
    fn a_batch_larger_than_the_read_ahead_can_be_read_whole() {
        let batch = Record::Schedule(Schedule {
            mode: LoopMode::Batch.into(),
            concurrency: Some(5000),
            ..Schedule::default()
        });
        let gate = Arc::new(Gate::for_schedule(Some(&batch)));
        assert_eq!(credits_without_waiting(&gate, 5000).len(), 5000);
        let plain = Arc::new(Gate::default());
        let held = credits_without_waiting(&plain, 5000);
        assert_eq!(held.len(), READ_AHEAD);
        drop(held);
        assert_eq!(plain.state.lock().unwrap().taken, 0, "credits come back");
    }
}
