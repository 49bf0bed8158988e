//! A request on its way from the dispatcher to the network: its encoded body, when it should
//! have left, and what its `done` echoes from the schedule. Shared by `dispatch` (which makes
//! jobs, and writes `not_sent` for those it never releases) and `exchange` (which sends them).

use bytes::Bytes;
use std::collections::BTreeMap;
use tokenpipe_format::{Done, Request};

/// A request ready to go.
pub struct Job {
    /// Request id.
    pub id: u64,
    /// When it should have been sent: the schedule's instant, or `None` for "the instant a slot
    /// frees", filled in by the send loop (see `Sent::scheduled_ns`).
    pub scheduled_ns: Option<u64>,
    /// Encoded API body.
    pub body: Bytes,
    /// What the request's `done` echoes from the schedule.
    pub echo: Echo,
}

/// The schedule's grouping fields of a request, written back on its `done` so that results can
/// be grouped without the schedule.
#[derive(Debug, Clone, Default)]
pub struct Echo {
    /// The request's session.
    pub session: Option<String>,
    /// Its turn within the session.
    pub turn: Option<u32>,
    /// Its tags.
    pub tags: BTreeMap<String, String>,
}

impl Echo {
    /// Takes the grouping fields out of a schedule request.
    pub fn take(req: &mut Request) -> Self {
        Echo {
            session: req.session.take(),
            turn: req.turn,
            tags: std::mem::take(&mut req.tags),
        }
    }

    /// Fills them into a `done` record.
    pub fn fill(self, done: &mut Done) {
        done.session = self.session;
        done.turn = self.turn;
        done.tags = self.tags;
    }
}
