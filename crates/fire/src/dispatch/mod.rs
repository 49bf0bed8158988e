//! Sending: when each request of the schedule leaves, and how many may be in flight.
//!
//! The shared machinery lives here and beside it: the reader thread and the dispatcher's inbox
//! (`feed`), the [`Dispatcher`] (`dispatcher`), one thread that encodes each request's body
//! ahead of its turn and releases it to the network runtime at its instant, and the
//! [`send_loop`] (`send`) in the runtime, which starts a task per released request and keeps
//! the in-flight limit. The `done` of a request that is never sent is the request lifecycle's
//! (`exchange::not_sent`), like every other `done`.
//!
//! What differs between ways of sending is a [`Policy`], one file each: `open` (every request at
//! its schedule offset, optionally capped), `closed` (N slots, the next request as one frees,
//! optionally filled one slot at a time) and `batch` (whole batches, each after the one before
//! has ended). A policy answers three questions: the in-flight limit, the instants slots open,
//! and when a request that starts something may leave ([`Admit`]). Later turns of sessions
//! (`crate::session`) work the same under every policy: the send loop reports the end of each
//! turn the dispatcher waits on back to its inbox, and the next turn leaves its think time later.
//!
//! A schedule bounded by time (`duration_ns`) sends nothing at or after it: those in flight
//! finish, and requests it never reached (still queued, waiting for a slot, a later turn, or
//! not yet read) get no record at all; they were never part of the run.
//!
//! Timing: tokio's timer has millisecond granularity, so the dispatcher thread instead sleeps
//! (with a 1 ns timer slack) until shortly before a deadline and spins the rest.

mod batch;
mod closed;
mod dispatcher;
pub mod feed;
mod open;
mod send;

use crate::job::Job;
use crate::stop::Stop;
use std::sync::Arc;
use std::time::Duration;
use tokenpipe_format::clock::RunClock;
use tokenpipe_format::{LoopMode, OrOther, Record, Request, MAX_IN_FLIGHT};

pub use batch::Batch;
pub use closed::Closed;
pub use dispatcher::Dispatcher;
pub use open::Open;
pub use send::{send_loop, Inbox};

/// When a request that starts something (not a later turn of a session) may leave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// At this run time, its `scheduled_ns`.
    At(u64),
    /// The moment a slot is free; that moment is its `scheduled_ns`.
    WhenFree,
    /// With the rest of this batch, once the batch before it has ended.
    Batch(u64),
}

/// A way of sending: the in-flight limit, when slots open, and when each request may leave.
pub trait Policy: Send {
    /// The most requests in flight at once, if limited ([`Dispatch::Limit`] or
    /// [`Dispatch::Cap`]); set before the first request is released and kept by the send loop.
    fn in_flight_limit(&self) -> Option<Dispatch>;

    /// Run times at which the dispatcher opens one more slot (a fill phase); empty when the
    /// limit's slots are all open from the start.
    fn slot_openings(&self) -> Vec<u64> {
        vec![]
    }

    /// When `req` may leave. `Err` is bad input, a message naming the field at fault.
    fn admit(&self, req: &Request) -> Result<Admit, String>;

    /// Whether a session keeps its first turn's slot for its later turns (closed loop), rather
    /// than each turn waiting for a slot as a request of its own.
    fn sessions_hold_slots(&self) -> bool {
        false
    }
}

/// Picks the policy from the schedule's first record: its `schedule` record, or, when it has
/// none, its first `request` (an offset means open loop). `concurrency` is the `--concurrency`
/// flag, which overrides the schedule's for a closed loop. `Err` is bad input.
pub fn policy_for(first: &Record, concurrency: Option<u64>) -> Result<Box<dyn Policy>, String> {
    let (mode, n, cap, fill) = match first {
        Record::Schedule(s) => match &s.mode {
            OrOther::Known(m) => {
                check_in_flight("concurrency", s.concurrency)?;
                check_in_flight("max_concurrency", s.max_concurrency)?;
                (
                    *m,
                    concurrency.or(s.concurrency),
                    s.max_concurrency,
                    s.fill_interval_ns,
                )
            }
            OrOther::Other(other) => {
                return Err(format!(
                    "field \"mode\": loop mode \"{other}\" is newer than this fire knows (open, closed, batch); upgrade tokenpipe"
                ))
            }
        },
        Record::Request(r) if r.offset_ns.is_some() => (LoopMode::Open, concurrency, None, None),
        _ => (LoopMode::Closed, concurrency, None, None),
    };
    if concurrency.is_some() && mode != LoopMode::Closed {
        eprintln!(
            "fire: warning: --concurrency applies to closed-loop schedules; this one is {}, so it is ignored",
            mode.as_ref()
        );
    }
    Ok(match mode {
        LoopMode::Open => Box::new(Open { cap }),
        LoopMode::Closed => Box::new(Closed {
            n: n.unwrap_or(1).max(1),
            fill_interval_ns: fill,
        }),
        LoopMode::Batch => Box::new(Batch),
    })
}

/// Refuses a schedule count of requests in flight above [`MAX_IN_FLIGHT`]: no server serves
/// that many, and a typo would otherwise have fire reserve memory and connections for it.
fn check_in_flight(field: &str, n: Option<u64>) -> Result<(), String> {
    match n {
        Some(n) if n > MAX_IN_FLIGHT => Err(format!(
            "field \"{field}\": {n} requests in flight is more than fire keeps (at most {MAX_IN_FLIGHT})"
        )),
        _ => Ok(()),
    }
}

/// The schedule's time bound (`duration_ns`), if its first record is a `schedule` with one.
pub fn duration_of(first: &Record) -> Option<u64> {
    match first {
        Record::Schedule(s) => s.duration_ns,
        _ => None,
    }
}

/// What the dispatcher tells the send loop.
pub enum Dispatch {
    /// Keep at most this many slots, from now on; requests released [`Admit::WhenFree`] are
    /// scheduled at the instants slots free.
    Limit(u64),
    /// Keep at most this many requests in flight (an open loop's cap): a request due while
    /// all are busy waits for a slot, and the wait is part of its queue time.
    Cap(u64),
    /// One more slot opens; it opened at this run time (a fill phase).
    OpenSlot(u64),
    /// A session gave up the slot it held (it will send no more turns).
    Free,
    /// Start nothing at or after this run time (`duration_ns`).
    Deadline(u64),
    /// Send this request (a later turn, with its session's slot when it holds one).
    Job(Job),
}

/// The dispatcher thread's clock and stop signal.
pub struct Pace {
    /// The run clock.
    pub clock: RunClock,
    /// Run stop signal.
    pub stop: Arc<Stop>,
}

/// Spin for the last stretch before a deadline; sleeping is accurate to about this much.
const SPIN_NS: u64 = 150_000;
/// Longest single sleep, so that a stop is noticed promptly.
const MAX_SLEEP_NS: u64 = 50_000_000;

impl Pace {
    /// Spins until `deadline_ns` of run time (call it within [`SPIN_NS`] of the deadline).
    fn spin_until(&self, deadline_ns: u64) {
        while self.clock.now_ns() < deadline_ns {
            std::hint::spin_loop();
        }
    }

    /// How long to sleep before `deadline_ns` (then spin), at most [`MAX_SLEEP_NS`]; zero
    /// when it is time to spin.
    fn nap_before(&self, deadline_ns: Option<u64>) -> Duration {
        let left = deadline_ns.map_or(u64::MAX, |d| d.saturating_sub(self.clock.now_ns()));
        Duration::from_nanos(left.saturating_sub(SPIN_NS).min(MAX_SLEEP_NS))
    }
}

/// Asks the kernel to wake this thread within 1 ns of its sleep deadline instead of the default
/// 50 µs slack, so that less of each wait needs spinning.
fn tighten_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes an integer and affects only the calling thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_format::Schedule;

    /// The policy's limit as (kind, n), since jobs cannot be compared.
    fn limit_of(p: &dyn Policy) -> Option<(&'static str, u64)> {
        match p.in_flight_limit() {
            Some(Dispatch::Limit(n)) => Some(("limit", n)),
            Some(Dispatch::Cap(n)) => Some(("cap", n)),
            _ => None,
        }
    }

    fn request(offset_ns: Option<u64>) -> Record {
        Record::Request(Request {
            offset_ns,
            ..Request::default()
        })
    }

    #[test]
    fn the_first_record_picks_the_policy() {
        let p = policy_for(&request(Some(5)), None).unwrap();
        assert_eq!(limit_of(&*p), None);
        let p = policy_for(&request(None), None).unwrap();
        assert_eq!(limit_of(&*p), Some(("limit", 1)));
        let p = policy_for(&request(None), Some(8)).unwrap();
        assert_eq!(limit_of(&*p), Some(("limit", 8)));
        let closed = Record::Schedule(Schedule {
            mode: OrOther::Known(LoopMode::Closed),
            concurrency: Some(4),
            requests: None,
            ..Schedule::default()
        });
        assert_eq!(
            limit_of(&*policy_for(&closed, None).unwrap()),
            Some(("limit", 4))
        );
        assert_eq!(
            limit_of(&*policy_for(&closed, Some(2)).unwrap()),
            Some(("limit", 2))
        );
        let newer = Record::Schedule(Schedule {
            mode: OrOther::Other("poisson-batch".into()),
            concurrency: None,
            requests: None,
            ..Schedule::default()
        });
        let e = policy_for(&newer, None).err().unwrap();
        assert!(e.contains("poisson-batch") && e.contains("upgrade"), "{e}");
    }

    #[test]
    fn an_open_loop_cap_travels_to_the_send_loop() {
        let capped = Record::Schedule(Schedule {
            max_concurrency: Some(25),
            ..Schedule::default()
        });
        assert_eq!(
            limit_of(&*policy_for(&capped, None).unwrap()),
            Some(("cap", 25))
        );
    }

    #[test]
    fn a_fill_opens_one_slot_per_interval() {
        let fill = Record::Schedule(Schedule {
            mode: LoopMode::Closed.into(),
            concurrency: Some(3),
            fill_interval_ns: Some(10),
            ..Schedule::default()
        });
        let p = policy_for(&fill, None).unwrap();
        assert_eq!(limit_of(&*p), Some(("limit", 0)));
        assert_eq!(p.slot_openings(), [0, 10, 20]);
        assert!(p.sessions_hold_slots());
    }

    #[test]
    fn each_mode_admits_requests_its_way() {
        let Record::Request(mut req) = request(Some(7)) else {
            unreachable!()
        };
        assert_eq!(Open { cap: None }.admit(&req), Ok(Admit::At(7)));
        assert_eq!(
            Closed {
                n: 1,
                fill_interval_ns: None
            }
            .admit(&req),
            Ok(Admit::WhenFree)
        );
        assert!(Batch.admit(&req).unwrap_err().contains("\"batch\""));
        req.grouping.batch = Some(3);
        assert_eq!(Batch.admit(&req), Ok(Admit::Batch(3)));
        req.offset_ns = None;
        assert!(Open { cap: None }
            .admit(&req)
            .unwrap_err()
            .contains("offset_ns"));
    }
}
