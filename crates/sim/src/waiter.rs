//! The server's clock and how a request waits on it: the shared [`PreciseTimer`] on
//! `CLOCK_MONOTONIC` when time is real, a tokio `Sleep` on tokio's clock when time is virtual.
//!
//! The choice is made once per server ([`TokenTimer`]); each request then holds one [`Waiter`],
//! which needs no task, channel or allocation per token. Tokio's arm is kept because unit tests
//! run on paused virtual time (`start_paused`), which only tokio's timer follows, and as the
//! fallback where no timerfd exists.
//!
//! Instants are plain nanoseconds on the timer's clock ([`TokenTimer::now_ns`]), the unit the
//! [`Engine`](crate::engine::Engine) works in: `CLOCK_MONOTONIC` for the precise timer (the
//! same clock as the stamps file), nanoseconds since the timer was made for tokio's.

use crate::timer::PreciseTimer;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokenpipe_format::clock::monotonic_ns;
use tokio::time::{Instant, Sleep};

/// How a server times its tokens, chosen once per server.
#[derive(Clone)]
pub enum TokenTimer {
    /// The shared timerfd: tokens leave within microseconds of their deadline.
    Precise(PreciseTimer),
    /// Tokio's millisecond timer, which follows paused and advanced virtual time.
    Tokio {
        /// Instant 0 of this timer's clock.
        epoch: Instant,
    },
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
                TokenTimer::tokio()
            }
        }
    }

    /// Tokio's timer, with its clock's origin now: for tests on paused virtual time (made
    /// inside the paused runtime, so that the origin is virtual too).
    pub fn tokio() -> Self {
        TokenTimer::Tokio {
            epoch: Instant::now(),
        }
    }

    /// The current instant on this timer's clock, in nanoseconds.
    pub fn now_ns(&self) -> u64 {
        match self {
            TokenTimer::Precise(_) => monotonic_ns(),
            TokenTimer::Tokio { epoch } => since(*epoch),
        }
    }

    /// The waiting state of one request. Arms nothing yet, so it needs no runtime.
    pub fn waiter(&self) -> Waiter {
        match self {
            TokenTimer::Precise(timer) => Waiter::Precise {
                timer: timer.clone(),
                registered: None,
            },
            TokenTimer::Tokio { epoch } => Waiter::Tokio {
                epoch: *epoch,
                sleep: None,
            },
        }
    }
}

/// One request's wait for its next instant.
pub enum Waiter {
    /// Registered with the shared timerfd, at most once per instant.
    Precise {
        /// The server's timer.
        timer: PreciseTimer,
        /// The instant and waker last registered, so that polls before the instant (hyper
        /// polls a body for other reasons too) add no heap entries.
        registered: Option<(u64, Waker)>,
    },
    /// One pinned tokio `Sleep`, made on the first wait and reset on each new instant.
    Tokio {
        /// Instant 0 of the clock.
        epoch: Instant,
        /// The sleep, once there was something to wait for.
        sleep: Option<Pin<Box<Sleep>>>,
    },
}

/// Nanoseconds on tokio's clock since `epoch`.
fn since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Where tokio's clock stands in for an instant it cannot represent: a year ahead.
const FAR: Duration = Duration::from_secs(365 * 24 * 3600);

impl Waiter {
    /// The current instant on the clock this waiter waits on, in nanoseconds.
    pub fn now_ns(&self) -> u64 {
        match self {
            Waiter::Precise { .. } => monotonic_ns(),
            Waiter::Tokio { epoch, .. } => since(*epoch),
        }
    }

    /// Ready once the clock reads `at_ns` or later, never before; otherwise arranges for `cx`
    /// to be woken then. The tokio arm must be polled inside a runtime.
    pub fn poll_until(&mut self, cx: &mut Context<'_>, at_ns: u64) -> Poll<()> {
        match self {
            Waiter::Precise { timer, registered } => {
                if monotonic_ns() >= at_ns {
                    return Poll::Ready(());
                }
                match registered {
                    Some((d, w)) if w.will_wake(cx.waker()) => {
                        if *d != at_ns {
                            timer.register(at_ns, cx.waker());
                            *d = at_ns;
                        }
                    }
                    _ => {
                        timer.register(at_ns, cx.waker());
                        *registered = Some((at_ns, cx.waker().clone()));
                    }
                }
                Poll::Pending
            }
            Waiter::Tokio { epoch, sleep } => {
                let at = epoch
                    .checked_add(Duration::from_nanos(at_ns))
                    .unwrap_or_else(|| Instant::now() + FAR);
                let sleep = sleep.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
                if sleep.deadline() != at {
                    sleep.as_mut().reset(at);
                }
                sleep.as_mut().poll(cx)
            }
        }
    }
}
