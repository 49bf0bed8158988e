//! The dispatcher: one thread that reads the schedule, encodes each request's body ahead of its
//! turn, and releases it to the network runtime.
//!
//! Open loop: the request is released at its `offset_ns`. Tokio's timer has millisecond
//! granularity, so this thread instead sleeps (with a 1 ns timer slack) until shortly before the
//! deadline and spins the rest. Closed loop: requests are released at once into a bounded
//! queue, and the runtime's send loop (see `crate::run`) takes the next one the moment a request
//! ends, so a slot never waits for this thread to be scheduled. The in-flight limit lives in that
//! loop for both modes, which is where a capped open loop will set it.

use crate::body::{self, BodyOptions};
use crate::sink::Sink;
use crate::stop::Stop;
use bytes::Bytes;
use std::io::BufRead;
use std::sync::Arc;
use std::time::Duration;
use tokenpipe_format::clock::RunClock;
use tokenpipe_format::{Done, ErrorKind, IdSet, LoopMode, OrOther, Record, RecordReader, Request};
use tokio::sync::mpsc::Sender;

/// A request ready to go.
pub struct Job {
    /// Request id.
    pub id: u64,
    /// Open loop: the intended send time. Closed loop: `None`, filled in by the send loop with
    /// the instant a slot became free (see `Sent::scheduled_ns`).
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
    pub tags: std::collections::BTreeMap<String, String>,
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

/// What the dispatcher tells the send loop.
pub enum Dispatch {
    /// Keep at most this many requests in flight, from now on.
    Limit(u64),
    /// Send this request.
    Job(Job),
}

/// What the dispatcher needs.
pub struct Pacer {
    /// The run clock.
    pub clock: RunClock,
    /// Where jobs go; bounded, so a closed-loop schedule is read only as fast as it is sent.
    pub jobs: Sender<Dispatch>,
    /// Run stop signal.
    pub stop: Arc<Stop>,
    /// Output, for `not_sent` records.
    pub sink: Arc<Sink>,
    /// Body settings.
    pub body: BodyOptions,
    /// Closed-loop concurrency from the command line, overriding the schedule's.
    pub concurrency: Option<u64>,
}

/// Spin for the last stretch before a deadline; sleeping is accurate to about this much.
const SPIN_NS: u64 = 150_000;
/// Longest single sleep, so that a stop is noticed promptly.
const MAX_SLEEP_NS: u64 = 50_000_000;

impl Pacer {
    /// Runs until the schedule ends; returns the error of a malformed schedule line.
    pub fn run<R: BufRead>(self, mut reader: RecordReader<R>) -> anyhow::Result<()> {
        tighten_timer_slack();
        let mut mode: Option<(LoopMode, u64)> = None;
        let mut limit_sent = false;
        let mut seen = IdSet::new();
        let mut warned = false;
        while let Some(record) = reader.next_record()? {
            let req = match record {
                Record::Schedule(s) => {
                    if mode.is_none() {
                        let n = self.concurrency.or(s.concurrency).unwrap_or(1).max(1);
                        let m = match s.mode {
                            OrOther::Known(m) => m,
                            OrOther::Other(other) => {
                                return Err(tokenpipe_cli::bad_input(format!(
                                    "{}: line {}: field \"mode\": loop mode \"{other}\" is newer than this fire knows (open, closed); upgrade tokenpipe",
                                    reader.source_name(),
                                    reader.line()
                                )))
                            }
                        };
                        mode = Some((m, n));
                    }
                    continue;
                }
                Record::Request(r) => r,
                _ => continue,
            };
            let mut req = req;
            let echo = Echo::take(&mut req);
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
            if self.stop.is_stopped() {
                self.not_sent(req.id, echo);
                continue;
            }
            let body = body::encode(&req, &self.body).map_err(at)?;
            let (loop_mode, concurrency) = match mode {
                Some(m) => m,
                None => {
                    let m = match req.offset_ns {
                        Some(_) => (LoopMode::Open, 1),
                        None => (LoopMode::Closed, self.concurrency.unwrap_or(1).max(1)),
                    };
                    mode = Some(m);
                    m
                }
            };
            if loop_mode == LoopMode::Open && self.concurrency.is_some() && !warned {
                warned = true;
                eprintln!(
                    "fire: warning: --concurrency applies to closed-loop schedules; this one is open loop, so it is ignored"
                );
            }
            if loop_mode == LoopMode::Closed && !limit_sent {
                limit_sent = true;
                if self
                    .jobs
                    .blocking_send(Dispatch::Limit(concurrency))
                    .is_err()
                {
                    break;
                }
            }
            let scheduled_ns = match loop_mode {
                LoopMode::Open => {
                    let Some(offset) = req.offset_ns else {
                        return Err(at(
                            "field \"offset_ns\": null in an open-loop schedule".into()
                        ));
                    };
                    if !self.wait_until(offset) {
                        self.not_sent(req.id, echo);
                        continue;
                    }
                    Some(offset)
                }
                LoopMode::Closed => None,
            };
            let job = Job {
                id: req.id,
                scheduled_ns,
                body,
                echo,
            };
            if let Err(e) = self.jobs.blocking_send(Dispatch::Job(job)) {
                // The send loop is gone (the run was stopped): this request was never sent.
                if let Dispatch::Job(job) = e.0 {
                    self.not_sent(job.id, job.echo);
                }
                break;
            }
        }
        tokenpipe_cli::warn_truncated("fire", reader.source_name(), reader.truncated_tail());
        Ok(())
    }

    /// Sleeps then spins until `deadline_ns` of run time; false if the run was stopped first.
    fn wait_until(&self, deadline_ns: u64) -> bool {
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

    fn not_sent(&self, id: u64, echo: Echo) {
        not_sent(&self.sink, &self.clock, id, echo);
    }
}

/// Writes the `done` of a request that will never be sent, so that no request goes unrecorded.
pub fn not_sent(sink: &Sink, clock: &RunClock, id: u64, echo: Echo) {
    let mut done = Done {
        id,
        at_ns: clock.now_ns(),
        ok: false,
        error_kind: Some(ErrorKind::NotSent.into()),
        error: Some("run stopped before this request was sent".into()),
        ..Done::default()
    };
    echo.fill(&mut done);
    sink.record(&Record::Done(done));
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
