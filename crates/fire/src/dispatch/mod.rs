//! Sending: when each request of the schedule leaves, and how many may be in flight.
//!
//! The shared machinery lives here: the [`Dispatcher`], one thread that reads the schedule,
//! encodes each request's body ahead of its turn and releases it to the network runtime; the
//! [`send_loop`] in the runtime, which starts a task per released request and keeps the
//! in-flight limit; and [`not_sent`], the `done` of a request the run stopped before sending.
//!
//! What differs between ways of sending is a [`Policy`], one file each: `open` (every request at
//! its schedule offset) and `closed` (N in flight, the next as one ends). A policy answers two
//! questions: the in-flight limit, and, for each request in turn, when it may be released
//! (blocking the dispatcher thread until then, with [`Pace::wait_until`]). A capped open loop is
//! `open`'s release with a limit; a batch releases everything at once at one instant; a
//! multi-turn session releases a turn once the previous turn's `done` plus its think time has
//! passed, which needs the send loop to tell the policy when requests end (the loop already
//! sees every end; a channel back to the dispatcher thread is the missing piece). Each is one
//! more file and one arm in [`policy_for`].
//!
//! Timing: tokio's timer has millisecond granularity, so the dispatcher thread instead sleeps
//! (with a 1 ns timer slack) until shortly before a deadline and spins the rest.

mod closed;
mod open;

use crate::api::{BodyOptions, Dialect};
use crate::exchange::{self, Ctx};
use crate::job::Job;
use crate::sink::Sink;
use crate::stop::Stop;
use std::collections::VecDeque;
use std::io::BufRead;
use std::sync::Arc;
use std::time::Duration;
use tokenpipe_format::clock::RunClock;
use tokenpipe_format::{
    Done, ErrorKind, Grouping, IdSet, LoopMode, OrOther, Record, RecordReader, Request, Schedule,
};
use tokio::sync::mpsc::{Receiver, Sender};

pub use closed::Closed;
pub use open::Open;

/// What a policy decided for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// Send it now; it was due at this run time (`scheduled_ns`).
    At(u64),
    /// Send it the moment the in-flight count allows; that moment is its `scheduled_ns`.
    WhenFree,
    /// The run stopped while waiting: it is never sent.
    Stopped,
}

/// A way of sending: the in-flight limit, and when each request may leave.
pub trait Policy: Send {
    /// The most requests in flight at once, if limited ([`Dispatch::Limit`] or
    /// [`Dispatch::Cap`]); set before the first request is released and kept by the send loop.
    fn in_flight_limit(&self) -> Option<Dispatch>;

    /// Blocks until `req` may be released (or the run stops). `Err` is bad input, a message
    /// naming the field at fault.
    fn release(&mut self, req: &Request, pace: &Pace) -> Result<Release, String>;
}

/// Picks the policy from the schedule's first record: its `schedule` record, or, when it has
/// none, its first `request` (an offset means open loop). `concurrency` is the `--concurrency`
/// flag, which overrides the schedule's for a closed loop. `Err` is bad input.
pub fn policy_for(first: &Record, concurrency: Option<u64>) -> Result<Box<dyn Policy>, String> {
    let (mode, n, cap) = match first {
        Record::Schedule(s) => {
            not_yet_run(s)?;
            match &s.mode {
                OrOther::Known(m) => (*m, concurrency.or(s.concurrency), s.max_concurrency),
                OrOther::Other(other) => {
                    return Err(format!(
                        "field \"mode\": loop mode \"{other}\" is newer than this fire knows (open, closed); upgrade tokenpipe"
                    ))
                }
            }
        }
        Record::Request(r) if r.offset_ns.is_some() => (LoopMode::Open, concurrency, None),
        _ => (LoopMode::Closed, concurrency, None),
    };
    Ok(match mode {
        LoopMode::Open => {
            if concurrency.is_some() {
                eprintln!(
                    "fire: warning: --concurrency applies to closed-loop schedules; this one is open loop, so it is ignored"
                );
            }
            Box::new(Open { cap })
        }
        LoopMode::Closed => Box::new(Closed {
            n: n.unwrap_or(1).max(1),
        }),
        LoopMode::Batch => unreachable_batch()?,
    })
}

/// Schedule features this `fire` reads but cannot run yet: refused with a message that names
/// the field, rather than run in a way that would quietly measure something else.
fn not_yet_run(s: &Schedule) -> Result<(), String> {
    let refuse = |field: &str, what: &str| {
        Err(format!(
            "field \"{field}\": this fire cannot run {what} yet; write the schedule without it"
        ))
    };
    if s.mode.is(LoopMode::Batch) {
        return refuse("mode", "batch schedules (mode \"batch\")");
    }
    if s.fill_interval_ns.is_some() {
        return refuse("fill_interval_ns", "a fill phase");
    }
    // An open loop's requests all fall before its duration (`arrivals` cuts them there), so
    // only a closed loop needs the sender to stop on time.
    if s.duration_ns.is_some() && !s.mode.is(LoopMode::Open) {
        return refuse("duration_ns", "a closed loop bounded by time");
    }
    Ok(())
}

fn unreachable_batch() -> Result<Box<dyn Policy>, String> {
    Err("field \"mode\": this fire cannot run batch schedules yet".into())
}

/// What the dispatcher tells the send loop.
pub enum Dispatch {
    /// Keep at most this many requests in flight, from now on; requests released
    /// [`Release::WhenFree`] are scheduled at the instants slots free.
    Limit(u64),
    /// Keep at most this many requests in flight (an open loop's cap): a request due while
    /// all are busy waits for a slot, and the wait is part of its queue time.
    Cap(u64),
    /// Send this request.
    Job(Job),
}

/// The dispatcher thread's clock and stop signal, with which policies wait.
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
    /// Sleeps then spins until `deadline_ns` of run time; false if the run was stopped first.
    pub fn wait_until(&self, deadline_ns: u64) -> bool {
        loop {
            if self.stop.is_stopped() {
                return false;
            }
            let now = self.clock.now_ns();
            if now >= deadline_ns {
                return true;
            }
            let left = deadline_ns - now;
            if left > SPIN_NS {
                let nap = (left - SPIN_NS).min(MAX_SLEEP_NS);
                std::thread::sleep(Duration::from_nanos(nap));
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

/// Requests encoded ahead by the dispatcher and waiting for their turn.
pub const JOB_QUEUE: usize = 4096;

/// The dispatcher thread: reads the schedule and releases its requests by a [`Policy`].
pub struct Dispatcher {
    /// Clock and stop signal.
    pub pace: Pace,
    /// Where jobs go; bounded ([`JOB_QUEUE`]), so a schedule is read only as fast as it is sent.
    pub jobs: Sender<Dispatch>,
    /// Output, for `not_sent` records.
    pub sink: Arc<Sink>,
    /// The API dialect that encodes bodies.
    pub dialect: &'static dyn Dialect,
    /// Body settings.
    pub body: BodyOptions,
    /// When requests leave.
    pub policy: Box<dyn Policy>,
    /// The run's cache-busting salt, when the schedule asks for one.
    pub salt: Option<crate::salt::RunSalt>,
    /// The run's counts.
    pub live: Arc<crate::live::Counters>,
}

impl Dispatcher {
    /// Runs until the schedule ends, starting with `first` (a record already read from
    /// `reader`); returns the error of a malformed schedule line. Once the run is stopped,
    /// every request still read gets a `not_sent` done.
    pub fn run<R: BufRead>(
        mut self,
        mut reader: RecordReader<R>,
        first: Option<Record>,
    ) -> anyhow::Result<()> {
        tighten_timer_slack();
        let mut limit_sent = false;
        let mut seen = IdSet::new();
        let mut pending = first;
        loop {
            let record = match pending.take() {
                Some(r) => r,
                None => match reader.next_record()? {
                    Some(r) => r,
                    None => break,
                },
            };
            let Record::Request(mut req) = record else {
                continue;
            };
            self.live.read();
            let echo = std::mem::take(&mut req.grouping);
            let at = |msg: String| {
                tokenpipe_cli::bad_input(format!(
                    "{}: line {}: {msg}",
                    reader.source_name(),
                    reader.line()
                ))
            };
            if !seen.insert(req.id) {
                return Err(at(format!(
                    "field \"id\": request {} appears twice; ids must be unique within a run",
                    req.id
                )));
            }
            // A `think_time_ns` marks a turn that waits for the one before; a `turn` alone is a
            // label, sent like any request.
            if req.think_time_ns.is_some() {
                return Err(at(
                    "field \"think_time_ns\": this fire cannot run the later turns of multi-turn sessions yet; write the schedule without --turns".into(),
                ));
            }
            if self.pace.stop.is_stopped() {
                self.not_sent(req.id, echo);
                continue;
            }
            if let Some(salt) = &self.salt {
                salt.apply(&mut req, echo.turn);
            }
            let body = self.dialect.encode(&req, &self.body).map_err(at)?;
            if !limit_sent {
                limit_sent = true;
                if let Some(limit) = self.policy.in_flight_limit() {
                    if self.jobs.blocking_send(limit).is_err() {
                        self.not_sent(req.id, echo);
                        break;
                    }
                }
            }
            let scheduled_ns = match self.policy.release(&req, &self.pace).map_err(at)? {
                Release::At(t) => {
                    self.live.released(t, self.pace.clock.now_ns());
                    Some(t)
                }
                Release::WhenFree => None,
                Release::Stopped => {
                    self.not_sent(req.id, echo);
                    continue;
                }
            };
            let job = Job {
                id: req.id,
                scheduled_ns,
                body,
                echo,
            };
            if let Err(e) = self.jobs.blocking_send(Dispatch::Job(job)) {
                // The send loop is gone (the runtime ended): this request was never sent.
                if let Dispatch::Job(job) = e.0 {
                    self.not_sent(job.id, job.echo);
                }
                break;
            }
        }
        tokenpipe_cli::warn_truncated("fire", reader.source_name(), reader.truncated_tail());
        Ok(())
    }

    fn not_sent(&self, id: u64, echo: Grouping) {
        self.live.not_sent();
        not_sent(&self.sink, &self.pace.clock, id, echo);
    }
}

/// Writes the `done` of a request that will never be sent, so that no request goes unrecorded.
pub fn not_sent(sink: &Sink, clock: &RunClock, id: u64, echo: Grouping) {
    sink.record(&Record::Done(Done {
        id,
        at_ns: clock.now_ns(),
        ok: false,
        error_kind: Some(ErrorKind::NotSent.into()),
        error: Some("run stopped before this request was sent".into()),
        grouping: echo,
        ..Done::default()
    }));
}

/// Starts each released request as a task, keeping at most the policy's limit in flight.
/// A request released [`Release::WhenFree`] starts here, in the runtime, the moment a slot
/// frees: its `scheduled_ns` is that instant, and the delay to its `sent_ns` is the client's own.
pub async fn send_loop(ctx: &Arc<Ctx>, mut jobs: Receiver<Dispatch>) {
    let mut tasks = tokio::task::JoinSet::new();
    let mut limit = usize::MAX;
    // Only a closed loop schedules requests at the instants slots free; a capped open loop
    // keeps its own offsets and needs no record of them.
    let mut track_freed = false;
    let mut freed_at: VecDeque<u64> = VecDeque::new();
    loop {
        tokio::select! {
            biased;
            ended = tasks.join_next(), if !tasks.is_empty() => {
                if let (Some(Ok(at_ns)), true) = (ended, track_freed) {
                    freed_at.push_back(at_ns);
                }
            }
            msg = jobs.recv(), if tasks.len() < limit => match msg {
                None => break,
                Some(Dispatch::Limit(n)) => {
                    limit = usize::try_from(n).unwrap_or(usize::MAX).max(1);
                    track_freed = true;
                }
                Some(Dispatch::Cap(n)) => limit = usize::try_from(n).unwrap_or(usize::MAX).max(1),
                Some(Dispatch::Job(mut job)) => {
                    if ctx.stop.is_stopped() {
                        ctx.live.not_sent();
                        not_sent(&ctx.sink, &ctx.clock, job.id, job.echo);
                        continue;
                    }
                    if job.scheduled_ns.is_none() {
                        job.scheduled_ns = Some(freed_at.pop_front().unwrap_or_else(|| ctx.clock.now_ns()));
                    }
                    tasks.spawn(exchange::run(ctx.clone(), job));
                }
            },
        }
    }
    while tasks.join_next().await.is_some() {}
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
            Some(Dispatch::Job(_)) | None => None,
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
    fn an_open_loop_bounded_by_time_runs_as_written() {
        let timed = Record::Schedule(Schedule {
            duration_ns: Some(5),
            ..Schedule::default()
        });
        assert!(policy_for(&timed, None).is_ok());
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
    fn features_this_fire_cannot_run_are_refused_by_name() {
        for (schedule, field) in [
            (
                Schedule {
                    mode: LoopMode::Batch.into(),
                    concurrency: Some(2),
                    ..Schedule::default()
                },
                "mode",
            ),
            (
                Schedule {
                    mode: LoopMode::Closed.into(),
                    fill_interval_ns: Some(1),
                    ..Schedule::default()
                },
                "fill_interval_ns",
            ),
            (
                Schedule {
                    mode: LoopMode::Closed.into(),
                    duration_ns: Some(1),
                    ..Schedule::default()
                },
                "duration_ns",
            ),
        ] {
            let e = policy_for(&Record::Schedule(schedule), None).err().unwrap();
            assert!(e.contains(&format!("\"{field}\"")), "{e}");
        }
    }

    #[test]
    fn open_loop_waits_for_the_offset_and_needs_one() {
        let pace = Pace {
            clock: RunClock::start(),
            stop: Arc::new(Stop::default()),
        };
        let Record::Request(mut req) = request(Some(2_000_000)) else {
            unreachable!()
        };
        assert_eq!(
            Open { cap: None }.release(&req, &pace),
            Ok(Release::At(2_000_000))
        );
        assert!(pace.clock.now_ns() >= 2_000_000);
        req.offset_ns = None;
        assert!(Open { cap: None }
            .release(&req, &pace)
            .unwrap_err()
            .contains("offset_ns"));
        pace.stop.trigger(crate::stop::StopReason::Interrupted);
        req.offset_ns = Some(u64::MAX);
        assert_eq!(
            Open { cap: None }.release(&req, &pace),
            Ok(Release::Stopped)
        );
        assert_eq!(Closed { n: 3 }.release(&req, &pace), Ok(Release::WhenFree));
    }
}
