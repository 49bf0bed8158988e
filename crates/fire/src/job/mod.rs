//! A request on its way from the schedule to the network: as read ([`Line`]), then ready to go
//! ([`Job`]: its encoded body, when it should have left, what its `done` echoes from the
//! schedule, and what the send loop does when it ends), and how it [`Ended`]. Each carries its
//! read-ahead [`Credit`] (`credit`) until it leaves the queues. Shared by `dispatch` (which
//! makes jobs) and `exchange` (which sends them), and by `session`, which parks later turns;
//! it imports none of them.

pub mod credit;

use bytes::Bytes;
pub use credit::Credit;
use hyper::header::{HeaderName, HeaderValue};
use tokenpipe_format::Grouping;

/// A request ready to go.
pub struct Job {
    /// Request id.
    pub id: u64,
    /// When it should have been sent: the schedule's instant, or `None` for "the instant a slot
    /// frees", filled in by the send loop (see `Sent::scheduled_ns`).
    pub scheduled_ns: Option<u64>,
    /// The instant the self-check judges the client's lateness from, where it is not
    /// `scheduled_ns`: under an open loop's cap, the instant a slot freed for it (later), so a
    /// wait the cap imposes is not taken for a slow client; in a closed loop, the instant its
    /// wave became due (earlier: the first wave's first take, or the first slot of a cluster
    /// that freed together), so the wave is judged as one.
    pub ready_ns: Option<u64>,
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

/// A request as read, with where it was and its read-ahead credit.
pub struct Line {
    /// The request.
    pub req: tokenpipe_format::Request,
    /// Its line in the schedule, for error messages.
    pub line: usize,
    /// Its read-ahead credit.
    pub credit: Credit,
}
