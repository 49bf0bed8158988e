//! How a request waits for its next deadline: on the server's shared [`PreciseTimer`] when the
//! clock is real, on a tokio `Sleep` when time is virtual.
//!
//! The choice is made once per server ([`TokenTimer`]); each request then holds one [`Waiter`],
//! which needs no task, channel or allocation per token. Tokio's arm is kept because unit tests run on
//! paused virtual time (`start_paused`), which only tokio's timer follows, and as the fallback
//! where no timerfd exists.

use crate::timer::PreciseTimer;
use crate::timetable::Timetable;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use tokenpipe_format::clock::monotonic_ns;
use tokio::time::Sleep;

/// How a server times its tokens, chosen once per server.
#[derive(Clone)]
pub enum TokenTimer {
    /// The shared timerfd: tokens leave within microseconds of their deadline.
    Precise(PreciseTimer),
    /// Tokio's millisecond timer, which follows paused and advanced virtual time.
    Tokio,
}

impl TokenTimer {
    /// The precise timer if a timerfd can be had, else tokio's with one warning on stderr
    /// (tokens may then leave up to 2 ms late). Must be called inside a tokio runtime.
    pub fn start() -> Self {
        match PreciseTimer::start() {
            Ok(timer) => TokenTimer::Precise(timer),
            Err(e) => {
                eprintln!(
                    "simserve: warning: no timerfd ({e}); using tokio's millisecond timer, \
                     tokens may leave up to 2 ms late"
                );
                TokenTimer::Tokio
            }
        }
    }

    /// The waiting state of one request whose first wait is for token `k` of `timetable`.
    /// The tokio arm arms its `Sleep` here, so it must be called inside a runtime.
    pub fn waiter(&self, timetable: &Timetable, k: u64) -> Waiter {
        match self {
            TokenTimer::Precise(timer) => Waiter::Precise {
                timer: timer.clone(),
                registered: None,
            },
            TokenTimer::Tokio => {
                Waiter::Tokio(Box::pin(tokio::time::sleep_until(timetable.deadline(k))))
            }
        }
    }
}

/// One request's wait for its next deadline.
pub enum Waiter {
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

impl Waiter {
    /// Ready once token `k` of `timetable` is due, never before; otherwise arranges for `cx` to
    /// be woken then.
    pub fn poll_until(&mut self, cx: &mut Context<'_>, timetable: &Timetable, k: u64) -> Poll<()> {
        match self {
            Waiter::Precise { timer, registered } => {
                let deadline = timetable.deadline_ns(k);
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
            Waiter::Tokio(sleep) => {
                let deadline = timetable.deadline(k);
                if sleep.deadline() != deadline {
                    sleep.as_mut().reset(deadline);
                }
                sleep.as_mut().poll(cx)
            }
        }
    }

    /// Completes once token `k` of `timetable` is due: for answers sent whole.
    pub async fn until(&mut self, timetable: &Timetable, k: u64) {
        std::future::poll_fn(|cx| self.poll_until(cx, timetable, k)).await;
    }
}
