//! Sub-millisecond token deadlines: one shared `timerfd` for the whole server.
//!
//! Tokio's timer works in whole milliseconds: it rounds every deadline up to the next tick and
//! sleeps in `epoll_wait` with a millisecond timeout, so a token due at 50.0 ms leaves at 51 ms
//! (about 1 ms late at the median, 2 ms at p99). That lateness would eat the margin of every
//! client measurement made against the server, so streamed tokens are timed here instead.
//!
//! [`PreciseTimer`] is one Linux `timerfd` on `CLOCK_MONOTONIC`, armed on absolute nanosecond
//! deadlines (`TFD_TIMER_ABSTIME`) and watched by tokio's own reactor through `AsyncFd`, so it
//! costs no extra thread and no spinning: one driver task keeps a heap of `(deadline, waker)`
//! entries, wakes those that are due, and re-arms the timerfd on the earliest one left. However
//! many streams are waiting, the kernel holds one timer for all of them, and the kernel's
//! hrtimer fires it within microseconds. A deadline is never woken early: the driver wakes only
//! entries whose deadline is at or before the clock, and the waiting body checks the clock
//! again itself.
//!
//! Where no timerfd exists (another OS, or creating one failed), [`TokenTimer::start`] warns
//! once and falls back to tokio's timer; tests on paused virtual time use that arm too.
//!
//! [`TokenTimer::start`]: crate::waiter::TokenTimer::start

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use tokenpipe_format::clock::monotonic_ns;
use tokio::time::Sleep;

/// A deadline meaning "none": the timerfd is disarmed.
const NEVER: u64 = u64::MAX;

/// One waiting task: woken once `deadline` (CLOCK_MONOTONIC ns) has passed. Ordered by
/// `(deadline, seq)` only, so entries with equal deadlines fire in registration order.
struct Entry {
    deadline: u64,
    seq: u64,
    waker: Waker,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.deadline, self.seq).cmp(&(other.deadline, other.seq))
    }
}

/// What registrations and the driver share, behind one mutex.
struct State {
    /// Earliest deadline on top.
    heap: BinaryHeap<Reverse<Entry>>,
    /// Breaks ties between equal deadlines.
    seq: u64,
    /// The deadline the driver armed the timerfd on last (or is about to), `NEVER` if none: a
    /// registration earlier than this must wake the driver so it re-arms.
    armed: u64,
    /// The driver task, while it waits; taken when the handles are all gone.
    driver: Option<Waker>,
}

struct Shared {
    state: Mutex<State>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves the heap consistent: keep going.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Drop for Shared {
    /// The last handle went away: wake the driver so it sees that and ends.
    fn drop(&mut self) {
        let driver = self.lock().driver.take();
        if let Some(driver) = driver {
            driver.wake();
        }
    }
}

/// A handle on the server's one high-resolution timer. Cheap to clone (an `Arc`); the driver
/// task ends when the last handle is dropped.
#[derive(Clone)]
pub struct PreciseTimer {
    shared: Arc<Shared>,
}

impl PreciseTimer {
    /// Creates the timerfd and spawns its driver task, so that every stream can share one kernel
    /// timer. Must be called inside a tokio runtime with I/O enabled. Fails where no timerfd can
    /// be had (not Linux, out of descriptors).
    pub fn start() -> io::Result<Self> {
        let fd = sys::TimerFd::new()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                heap: BinaryHeap::new(),
                seq: 0,
                armed: NEVER,
                driver: None,
            }),
        });
        let driver = Driver {
            shared: Arc::downgrade(&shared),
            fd,
            fd_armed: NEVER,
            fallback: None,
            due: Vec::new(),
        };
        tokio::spawn(driver);
        Ok(Self { shared })
    }

    /// Asks for `waker` to be woken once CLOCK_MONOTONIC reaches `deadline_ns`, never before.
    /// Callers check the clock first and do not register a deadline already past. Registering
    /// the same deadline twice wakes twice: harmless, but a wasted heap entry.
    pub fn register(&self, deadline_ns: u64, waker: &Waker) {
        let mut state = self.shared.lock();
        let seq = state.seq;
        state.seq = seq.wrapping_add(1);
        state.heap.push(Reverse(Entry {
            deadline: deadline_ns,
            seq,
            waker: waker.clone(),
        }));
        // Earlier than what the timerfd waits for: the driver must re-arm it. `armed` is set
        // to this deadline now so that a burst of earlier registrations wakes the driver once.
        let driver = if deadline_ns < state.armed {
            state.armed = deadline_ns;
            state.driver.take()
        } else {
            None
        };
        drop(state);
        if let Some(driver) = driver {
            driver.wake();
        }
    }
}

/// The one task that owns the timerfd: wakes due entries and keeps the timerfd armed on the
/// earliest remaining deadline.
struct Driver {
    /// Weak, so that dropping every handle ends the driver.
    shared: std::sync::Weak<Shared>,
    fd: sys::TimerFd,
    /// The deadline the timerfd itself is armed on (`NEVER`: disarmed), to skip useless
    /// `timerfd_settime` calls.
    fd_armed: u64,
    /// Set if the timerfd ever fails: from then on the driver waits on tokio's timer instead,
    /// late by a millisecond but with no stream left hanging.
    fallback: Option<Pin<Box<Sleep>>>,
    /// Wakers taken from the heap, woken after the lock is released; reused, so no allocation
    /// once it has grown to the largest burst.
    due: Vec<Waker>,
}

impl Driver {
    /// Wakes every entry due at `now`, records `cx` as the driver's waker and returns the
    /// earliest deadline left (`NEVER` if none), or `None` once every handle is gone.
    fn fire_due(&mut self, now: u64, cx: &Context<'_>) -> Option<u64> {
        let shared = self.shared.upgrade()?;
        let next = {
            let mut state = shared.lock();
            while let Some(Reverse(top)) = state.heap.peek() {
                if top.deadline > now {
                    break;
                }
                if let Some(Reverse(entry)) = state.heap.pop() {
                    self.due.push(entry.waker);
                }
            }
            let next = state.heap.peek().map_or(NEVER, |Reverse(e)| e.deadline);
            state.armed = next;
            match &mut state.driver {
                Some(w) if w.will_wake(cx.waker()) => {}
                slot => *slot = Some(cx.waker().clone()),
            }
            next
        };
        // Dropped before waking, so that a last handle dropped meanwhile finds the lock free.
        drop(shared);
        for waker in self.due.drain(..) {
            waker.wake();
        }
        Some(next)
    }

    /// Waits for `next` on the timerfd: ready when it (or an earlier arming) expired.
    fn poll_fd(&mut self, cx: &mut Context<'_>, now: u64, next: u64) -> Poll<io::Result<()>> {
        if next != self.fd_armed {
            // A timerfd that already expired is disarmed: no call needed to disarm it.
            if next != NEVER || self.fd_armed > now {
                self.fd.arm(next)?;
            }
            self.fd_armed = next;
        }
        self.fd.poll_expired(cx)
    }

    /// Waits for `next` on tokio's timer, after the timerfd failed.
    fn poll_fallback(&mut self, cx: &mut Context<'_>, now: u64, next: u64) -> Poll<()> {
        let wait = std::time::Duration::from_nanos(next.saturating_sub(now));
        let at = tokio::time::Instant::now()
            .checked_add(wait)
            .unwrap_or_else(|| tokio::time::Instant::now() + FAR);
        let sleep = self
            .fallback
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
        sleep.as_mut().reset(at);
        sleep.as_mut().poll(cx)
    }
}

/// Where tokio's timer stands in for "never": a year.
const FAR: std::time::Duration = std::time::Duration::from_secs(365 * 24 * 3600);

impl Future for Driver {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        loop {
            let now = monotonic_ns();
            let Some(next) = this.fire_due(now, cx) else {
                return Poll::Ready(());
            };
            if this.fallback.is_none() {
                match this.poll_fd(cx, now, next) {
                    // Expired: go round, wake what is due and re-arm.
                    Poll::Ready(Ok(())) => continue,
                    // Woken by the timerfd or by a registration earlier than `armed`.
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Err(e)) => {
                        eprintln!(
                            "simserve: warning: timerfd failed ({e}); using tokio's \
                             millisecond timer from now on"
                        );
                    }
                }
            }
            if this.poll_fallback(cx, now, next).is_pending() {
                return Poll::Pending;
            }
        }
    }
}

#[cfg(target_os = "linux")]
mod sys {
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::task::{Context, Poll};
    use tokio::io::unix::AsyncFd;

    /// A non-blocking `CLOCK_MONOTONIC` timerfd registered with tokio's reactor.
    pub struct TimerFd(AsyncFd<OwnedFd>);

    impl TimerFd {
        pub fn new() -> io::Result<Self> {
            // SAFETY: plain syscall with constant flags; the result is checked below.
            let fd = unsafe {
                libc::timerfd_create(
                    libc::CLOCK_MONOTONIC,
                    libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
                )
            };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `fd` is a fresh descriptor that nothing else owns.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            // SAFETY: the `OwnedFd` is moved into the `AsyncFd`, which alone closes it, on drop.
            let fd = unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) };
            Ok(Self(fd.map_err(|e| e.into_parts().1)?))
        }

        /// Arms the timer on the absolute CLOCK_MONOTONIC instant `deadline_ns`, or disarms it
        /// for `u64::MAX`. A deadline already past expires at once.
        pub fn arm(&self, deadline_ns: u64) -> io::Result<()> {
            let value = if deadline_ns == u64::MAX {
                libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                }
            } else {
                // Zero would disarm: the earliest meaningful instant is 1 ns.
                let ns = deadline_ns.max(1);
                libc::timespec {
                    tv_sec: (ns / 1_000_000_000).min(libc::time_t::MAX as u64) as libc::time_t,
                    tv_nsec: (ns % 1_000_000_000) as libc::c_long,
                }
            };
            let spec = libc::itimerspec {
                it_interval: libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                },
                it_value: value,
            };
            // SAFETY: the descriptor is open and `spec` is a valid itimerspec; the old value is
            // not asked for.
            let rc = unsafe {
                libc::timerfd_settime(
                    self.0.as_raw_fd(),
                    libc::TFD_TIMER_ABSTIME,
                    &spec,
                    std::ptr::null_mut(),
                )
            };
            if rc < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        }

        /// Ready once the timer expired since the last call (consuming the expiration count),
        /// otherwise registers `cx` with the reactor.
        pub fn poll_expired(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            loop {
                let mut guard = match self.0.poll_read_ready(cx) {
                    Poll::Ready(Ok(guard)) => guard,
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Pending => return Poll::Pending,
                };
                let mut count = 0u64;
                // SAFETY: reads 8 bytes into a valid u64 from an open descriptor.
                let n = unsafe {
                    libc::read(
                        self.0.as_raw_fd(),
                        (&mut count as *mut u64).cast(),
                        std::mem::size_of::<u64>(),
                    )
                };
                if n == 8 {
                    // Level-triggered readiness would report it again otherwise; the
                    // expiration was consumed, so the reactor must tell us of the next one.
                    guard.clear_ready();
                    return Poll::Ready(Ok(()));
                }
                let err = io::Error::last_os_error();
                if n < 0 && err.kind() != io::ErrorKind::WouldBlock {
                    return Poll::Ready(Err(err));
                }
                // EAGAIN (re-armed before we read, or a stale readiness): wait again.
                guard.clear_ready();
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    use std::io;
    use std::task::{Context, Poll};

    /// No timerfd here: [`PreciseTimer::start`](super::PreciseTimer::start) fails and the
    /// server uses tokio's timer.
    pub enum TimerFd {}

    impl TimerFd {
        pub fn new() -> io::Result<Self> {
            Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "timerfd needs Linux",
            ))
        }

        pub fn arm(&self, _deadline_ns: u64) -> io::Result<()> {
            match *self {}
        }

        pub fn poll_expired(&self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            match *self {}
        }
    }
}

#[cfg(test)]
mod tests;
