//! A request on its way from the dispatcher to the network: its encoded body, when it should
//! have left, what its `done` echoes from the schedule, and what the send loop does when it
//! ends. Shared by `dispatch` (which makes jobs, and writes `not_sent` for those it never
//! releases) and `exchange` (which sends them and says how they [`Ended`]).

use crate::dispatch::Credit;
use bytes::Bytes;
use hyper::header::{HeaderName, HeaderValue};
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
    /// Headers of this request alone (the schedule's `headers`), over the run's `-H` ones.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// What the request's `done` echoes from the schedule.
    pub echo: Grouping,
    /// Keep the generated text and hand it back in [`Ended::text`]: the session's next turn
    /// carries it.
    pub keep_text: bool,
    /// What the send loop does around this job.
    pub flow: Flow,
    /// Its place in the dispatcher's read-ahead, given back when the job leaves the queues.
    pub credit: Option<Credit>,
    /// In a capped open loop, the instant a slot last freed while every slot was busy, set by
    /// the send loop as it takes the job: a job due before it waited on the cap, not on the
    /// client. Its `sent` keeps `scheduled_ns` (so the wait shows as queue time); only the
    /// client's own lag, which the self-check judges, counts from here.
    pub slot_freed_ns: Option<u64>,
}

impl Job {
    /// The instant from which the client's own lag counts: its `scheduled_ns`, or, when the
    /// cap held it past that, the instant a slot freed for it. `None` without a schedule.
    pub fn due_for_client_ns(&self) -> Option<u64> {
        self.scheduled_ns
            .map(|due| self.slot_freed_ns.map_or(due, |freed| due.max(freed)))
    }
}

/// How a job takes part in the in-flight limit and who hears of its end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flow {
    /// It comes with a slot already held (a later turn of a closed-loop session), so it starts
    /// at once instead of waiting for one.
    pub has_slot: bool,
    /// On success its slot stays held for the session's next turn instead of freeing.
    pub continues: bool,
    /// The dispatcher waits for its end (a session's next turn, a batch's last request).
    pub report_end: bool,
}

/// How a sent request ended, for the dispatcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// Request id.
    pub id: u64,
    /// Its `done.at_ns`.
    pub at_ns: u64,
    /// Its `done.ok`.
    pub ok: bool,
    /// The generated text, when the job kept it.
    pub text: Option<String>,
}
