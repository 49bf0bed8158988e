//! A request on its way from the dispatcher to the network: its encoded body, when it should
//! have left, and what its `done` echoes from the schedule. Shared by `dispatch` (which makes
//! jobs, and writes `not_sent` for those it never releases) and `exchange` (which sends them).

use bytes::Bytes;
use tokenpipe_format::Grouping;

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
    pub echo: Grouping,
}
