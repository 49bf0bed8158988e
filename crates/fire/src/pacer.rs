//! The dispatcher: one thread that reads the schedule and decides when each request goes.
//!
//! Open loop: the request is sent at its `offset_ns`. Tokio's timer has millisecond
//! granularity, so this thread instead sleeps (with a 1 ns timer slack) until shortly before the
//! deadline and spins the rest, then hands the request to the network runtime. Closed loop: it
//! keeps `concurrency` requests in flight, sending the next one when a slot frees. Both modes
//! share this loop, so capped open loop later is the two conditions together. The request body
//! is encoded before the wait, keeping serialisation off the critical path.

use crate::body::{self, BodyOptions};
use crate::sink::Sink;
use crate::stop::Stop;
use bytes::Bytes;
use std::io::BufRead;
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::Duration;
use tokenpipe_format::clock::RunClock;
use tokenpipe_format::{Done, ErrorKind, LoopMode, Record, RecordReader};
use tokio::sync::mpsc::UnboundedSender;

/// A request ready to go.
pub struct Job {
    /// Request id.
    pub id: u64,
    /// Intended send time (see `Sent::scheduled_ns`).
    pub scheduled_ns: Option<u64>,
    /// Encoded API body.
    pub body: Bytes,
}

/// What the dispatcher needs.
pub struct Pacer {
    /// The run clock.
    pub clock: RunClock,
    /// Where jobs go.
    pub jobs: UnboundedSender<Job>,
    /// Completion times of requests, one message per finished request (closed loop).
    pub slots: Receiver<u64>,
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
        let mut in_flight: u64 = 0;
        while let Some(record) = reader.next_record()? {
            let req = match record {
                Record::Schedule(s) => {
                    if mode.is_none() {
                        let n = self.concurrency.or(s.concurrency).unwrap_or(1).max(1);
                        mode = Some((s.mode, n));
                    }
                    continue;
                }
                Record::Request(r) => r,
                _ => continue,
            };
            let at = |msg: String| {
                tokenpipe_cli::bad_input(format!(
                    "{}: line {}: {msg}",
                    reader.source_name(),
                    reader.line()
                ))
            };
            if self.stop.is_stopped() {
                self.not_sent(req.id);
                continue;
            }
            let body = body::encode(&req, &self.body).map_err(at)?;
            let (loop_mode, concurrency) = *mode.get_or_insert_with(|| match req.offset_ns {
                Some(_) => (LoopMode::Open, 1),
                None => (LoopMode::Closed, self.concurrency.unwrap_or(1).max(1)),
            });
            let scheduled_ns = match loop_mode {
                LoopMode::Open => {
                    let Some(offset) = req.offset_ns else {
                        return Err(at(
                            "field \"offset_ns\": null in an open-loop schedule".into()
                        ));
                    };
                    if !self.wait_until(offset) {
                        self.not_sent(req.id);
                        continue;
                    }
                    offset
                }
                LoopMode::Closed => {
                    let mut freed_at = None;
                    while in_flight >= concurrency {
                        match self.slots.recv() {
                            Ok(t) => {
                                in_flight -= 1;
                                freed_at = Some(t);
                            }
                            Err(_) => break,
                        }
                    }
                    if self.stop.is_stopped() {
                        self.not_sent(req.id);
                        continue;
                    }
                    in_flight += 1;
                    freed_at.unwrap_or_else(|| self.clock.now_ns())
                }
            };
            let job = Job {
                id: req.id,
                scheduled_ns: Some(scheduled_ns),
                body,
            };
            if self.jobs.send(job).is_err() {
                break;
            }
        }
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

    fn not_sent(&self, id: u64) {
        self.sink.record(&Record::Done(Done {
            id,
            at_ns: self.clock.now_ns(),
            ok: false,
            status: None,
            error_kind: Some(ErrorKind::NotSent),
            error: Some("run stopped before this request was sent".into()),
            prompt_tokens: None,
            completion_tokens: None,
            events: 0,
            finish_reason: None,
        }));
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
