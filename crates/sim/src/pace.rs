//! How a request waits for its next deadline: on the server's shared [`PreciseTimer`] when the
//! clock is real, on a tokio `Sleep` when time is virtual.
//!
//! The choice is made once per server ([`Pacer`]); each request then holds one [`Wait`], which
//! needs no task, channel or allocation per token. Tokio's arm is kept because unit tests run on
//! paused virtual time (`start_paused`), which only tokio's timer follows, and as the fallback
//! where no timerfd exists.

use crate::schedule::Schedule;
use crate::timer::PreciseTimer;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use tokenpipe_format::clock::monotonic_ns;
use tokio::time::Sleep;

/// How a server times its tokens, chosen once per server.
#[derive(Clone)]
pub enum Pacer {
    /// The shared timerfd: tokens leave within microseconds of their deadline.
    Precise(PreciseTimer),
    /// Tokio's millisecond timer, which follows paused and advanced virtual time.
    Tokio,
}

impl Pacer {
    /// The precise timer if a timerfd can be had, else tokio's with one warning on stderr
    /// (tokens may then leave up to 2 ms late). Must be called inside a tokio runtime.
    pub fn start() -> Self {
        match PreciseTimer::start() {
            Ok(timer) => Pacer::Precise(timer),
            Err(e) => {
                eprintln!(
                    "simserve: warning: no timerfd ({e}); using tokio's millisecond timer, \
                     tokens may leave up to 2 ms late"
                );
                Pacer::Tokio
            }
        }
    }

    /// The waiting state of one request whose first wait is for token `k` of `schedule`.
    /// The tokio arm arms its `Sleep` here, so it must be called inside a runtime.
    pub fn wait(&self, schedule: &Schedule, k: u64) -> Wait {
        match self {
            Pacer::Precise(timer) => Wait::Precise {
                timer: timer.clone(),
                registered: None,
            },
            Pacer::Tokio => Wait::Tokio(Box::pin(tokio::time::sleep_until(schedule.deadline(k)))),
        }
    }
}

/// One request's wait for its next deadline.
pub enum Wait {
    /// Registered with the shared timerfd, at most once per deadline.
    Precise {
        /// The server's timer.
        timer: PreciseTimer,
        /// The deadline and waker last registered, so that polls before the deadline (hyper
        /// polls a body for other reasons too) add no heap entries.
        registered: Option<(u64, Waker)>,
    },
    /// One pinned tokio `Sleep`, reset on each new deadline.
    Tokio(Pin<Box<Sleep>>),
}

impl Wait {
    /// Ready once token `k` of `schedule` is due, never before; otherwise arranges for `cx` to
    /// be woken then.
    pub fn poll_until(&mut self, cx: &mut Context<'_>, schedule: &Schedule, k: u64) -> Poll<()> {
        match self {
            Wait::Precise { timer, registered } => {
                let deadline = schedule.deadline_ns(k);
                if monotonic_ns() >= deadline {
                    return Poll::Ready(());
                }
                match registered {
                    Some((d, w)) if w.will_wake(cx.waker()) => {
                        if *d != deadline {
                            timer.register(deadline, cx.waker());
                            *d = deadline;
                        }
                    }
                    _ => {
                        timer.register(deadline, cx.waker());
                        *registered = Some((deadline, cx.waker().clone()));
                    }
                }
                Poll::Pending
            }
            Wait::Tokio(sleep) => {
                let deadline = schedule.deadline(k);
                if sleep.deadline() != deadline {
                    sleep.as_mut().reset(deadline);
                }
                sleep.as_mut().poll(cx)
            }
        }
    }

    /// Completes once token `k` of `schedule` is due: for answers sent whole.
    pub async fn until(&mut self, schedule: &Schedule, k: u64) {
        std::future::poll_fn(|cx| self.poll_until(cx, schedule, k)).await;
    }
}
