//! The time limits inside one request: the whole-request `--timeout`, the first-token limit
//! (from the send to the first event with content) and the idle limit (silence between two
//! reads of the body, from its first byte on). Each wait of a request (for the response head,
//! for the next body frame) is bounded by whichever of them ends first, so a request that
//! breaks one fails with that limit's own error kind. The connect limit lives in the connector
//! (see `lib.rs`).
//!
//! One timer per request serves all three. It is set to the earliest deadline known and never
//! moved while tokens flow: a read only notes its instant, and when the timer fires the
//! deadlines are worked out again, so it is reset about once per idle period instead of once
//! per frame (a timer armed per frame was a timer-wheel insert and removal per token).

use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::task::{Context, Poll};
use std::time::Duration;
use tokenpipe_format::ErrorKind;
use tokio::time::{Instant, Sleep};

/// The limits of every request of a run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    /// From the send to the first content event (`--first-token-timeout`); none when off.
    pub first_token: Option<Duration>,
    /// Longest silence between two body reads (`--idle-timeout`); none when off.
    pub idle: Option<Duration>,
    /// From the send to the end of the stream (`--timeout`); none when off.
    pub whole: Option<Duration>,
}

/// Which limit a wait broke, and how long that limit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expired {
    /// `timeout`, `first_token_timeout` or `idle_timeout`.
    pub kind: ErrorKind,
    /// The limit that passed.
    pub limit: Duration,
}

impl Expired {
    /// The `done.error` message.
    pub fn message(&self) -> String {
        let secs = self.limit.as_secs_f64();
        match self.kind {
            ErrorKind::FirstTokenTimeout => {
                format!("no content within {secs:.3} s of the send (--first-token-timeout)")
            }
            ErrorKind::Timeout => format!("no complete response within {secs:.3} s"),
            _ => format!("the stream was silent for {secs:.3} s (--idle-timeout)"),
        }
    }
}

/// One request's deadlines as it goes, and the one timer that enforces them.
#[derive(Debug)]
pub struct Watch {
    deadlines: Deadlines,
    /// Armed no later than the earliest deadline in force; none until a deadline exists.
    timer: Option<Timer>,
    /// The timer was polled, so it holds this request's waker and wakes it when it fires (a
    /// reset keeps the waker): it is polled again only once it has fired.
    timer_polled: bool,
    /// The stamp of a read noted since the last wait found nothing: a wait that finds nothing
    /// right after it needs no look at the timer when the timer was not due by then (it
    /// would have woken the task, which then looks).
    fresh_read_ns: Option<u64>,
}

#[derive(Debug)]
struct Deadlines {
    limits: Limits,
    first_token_at: Option<Instant>,
    whole_at: Option<Instant>,
    /// The send, on the timer's clock and on the run clock: a read's run-clock stamp becomes
    /// an instant of the timer's clock only when a deadline is worked out.
    sent: Instant,
    sent_ns: u64,
    /// The last read of the body, on the run clock.
    last_read_ns: Option<u64>,
}

impl Watch {
    /// Starts watching a request sent at `sent`, which is `sent_ns` on the run clock (the
    /// clock of the stamps [`read`](Self::read) is given).
    pub fn start(limits: Limits, sent: Instant, sent_ns: u64) -> Self {
        let deadlines = Deadlines {
            limits,
            first_token_at: limits.first_token.and_then(|d| sent.checked_add(d)),
            whole_at: limits.whole.and_then(|d| sent.checked_add(d)),
            sent,
            sent_ns,
            last_read_ns: None,
        };
        Self {
            deadlines,
            timer: None,
            timer_polled: false,
            fresh_read_ns: None,
        }
    }

    /// Notes a read of the body at `at_ns` on the run clock (the frame's own stamp, so that a
    /// frame costs one clock read): the idle limit counts from here. Later reads only move the
    /// idle deadline away; the first one brings it in, so the timer may have to come forward.
    pub fn read(&mut self, at_ns: u64) {
        self.fresh_read_ns = Some(at_ns);
        let first = self.deadlines.last_read_ns.replace(at_ns).is_none();
        if let (true, Some(timer)) = (
            first && self.deadlines.limits.idle.is_some(),
            &mut self.timer,
        ) {
            // The earliest with or without content: firing early only means working it out again.
            if let Some((due, _)) = self.deadlines.earliest(false) {
                if due < timer.sleep.deadline() {
                    timer.reset(due, &self.deadlines);
                }
            }
        }
    }

    /// Awaits `fut` within the limits that apply now.
    pub async fn wait<F: Future>(
        &mut self,
        content_seen: bool,
        fut: F,
    ) -> Result<F::Output, Expired> {
        let mut fut = pin!(fut);
        poll_fn(|cx| match fut.as_mut().poll(cx) {
            Poll::Ready(out) => Poll::Ready(Ok(out)),
            Poll::Pending => self.poll_expired(cx, content_seen).map(Err),
        })
        .await
    }

    /// For a wait whose poll found nothing: ready with the limit that passed, if one did, else
    /// pending with the timer set to wake the task at the earliest deadline. The work per
    /// wake-up is a look at whether the timer fired, and not even that right after a read the
    /// timer was not due at (it is polled only once it fired, and once to arm it); deadlines
    /// are only computed when it fires.
    pub fn poll_expired(&mut self, cx: &mut Context<'_>, content_seen: bool) -> Poll<Expired> {
        let fresh_read_ns = self.fresh_read_ns.take();
        let timer = match &mut self.timer {
            Some(timer) => timer,
            empty => match self.deadlines.earliest(content_seen) {
                None => return Poll::Pending,
                Some((at, _)) => {
                    self.timer_polled = false;
                    empty.insert(Timer::new(at, &self.deadlines))
                }
            },
        };
        // A read is stamped after the wake that led to it: a timer that had fired by then
        // finds its stamp at or past its deadline, and one that fires after it wakes the task.
        let not_due_at_read = fresh_read_ns.is_some_and(|at| at < timer.due_ns);
        if self.timer_polled && (not_due_at_read || !timer.sleep.is_elapsed()) {
            return Poll::Pending;
        }
        self.timer_polled = true;
        while timer.sleep.as_mut().poll(cx).is_ready() {
            // The timer was armed at the earliest deadline known then; a read since may
            // have moved the idle deadline, and content may have lifted the first-token one.
            let Some((at, expired)) = self.deadlines.earliest(content_seen) else {
                return Poll::Pending;
            };
            if at <= Instant::now() {
                return Poll::Ready(expired);
            }
            timer.reset(at, &self.deadlines);
        }
        Poll::Pending
    }
}

/// The request's timer, and its deadline on the run clock too: a read's stamp is compared with
/// that without touching the timer, which lies in an allocation of its own.
#[derive(Debug)]
struct Timer {
    sleep: Pin<Box<Sleep>>,
    due_ns: u64,
}

impl Timer {
    fn new(at: Instant, deadlines: &Deadlines) -> Self {
        Self {
            sleep: Box::pin(tokio::time::sleep_until(at)),
            due_ns: deadlines.run_clock_ns(at),
        }
    }

    /// Moves the timer to `at`; it keeps the waker it holds.
    fn reset(&mut self, at: Instant, deadlines: &Deadlines) {
        self.sleep.as_mut().reset(at);
        self.due_ns = deadlines.run_clock_ns(at);
    }
}

impl Deadlines {
    /// `at` on the run clock (the clock of the read stamps).
    fn run_clock_ns(&self, at: Instant) -> u64 {
        let since_sent = u64::try_from(at.saturating_duration_since(self.sent).as_nanos());
        self.sent_ns.saturating_add(since_sent.unwrap_or(u64::MAX))
    }

    /// The earliest deadline of the next wait, given whether content has come yet.
    fn earliest(&self, content_seen: bool) -> Option<(Instant, Expired)> {
        let first = self
            .first_token_at
            .filter(|_| !content_seen)
            .zip(self.limits.first_token)
            .map(|(at, limit)| {
                let kind = ErrorKind::FirstTokenTimeout;
                (at, Expired { kind, limit })
            });
        let idle = self
            .last_read_ns
            .zip(self.limits.idle)
            .and_then(|(last, limit)| {
                let since_sent = Duration::from_nanos(last.saturating_sub(self.sent_ns));
                let at = self.sent.checked_add(since_sent)?.checked_add(limit)?;
                let kind = ErrorKind::IdleTimeout;
                Some((at, Expired { kind, limit }))
            });
        let whole = self.whole_at.zip(self.limits.whole).map(|(at, limit)| {
            let kind = ErrorKind::Timeout;
            (at, Expired { kind, limit })
        });
        [first, idle, whole]
            .into_iter()
            .flatten()
            .min_by_key(|(at, _)| *at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn each_wait_fails_with_the_limit_that_ends_first() {
        let limits = Limits {
            first_token: Some(Duration::from_millis(500)),
            idle: Some(Duration::from_millis(100)),
            whole: None,
        };
        let slow = || tokio::time::sleep(Duration::from_secs(10));
        // Before the first byte only the first-token limit applies.
        let mut w = Watch::start(limits, Instant::now(), 0);
        let e = w.wait(false, slow()).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::FirstTokenTimeout);
        assert!(e.message().contains("0.500 s"), "{}", e.message());
        // After a read, the idle limit ends first.
        let sent = Instant::now();
        let mut w = Watch::start(limits, sent, 0);
        w.read(run_clock(sent));
        let e = w.wait(false, slow()).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::IdleTimeout);
        assert!(e.message().contains("0.100 s"), "{}", e.message());
        // Once content came, the first-token limit is done with.
        let relaxed = Limits {
            idle: Some(Duration::from_secs(60)),
            ..limits
        };
        let sent = Instant::now();
        let mut w = Watch::start(relaxed, sent, 0);
        w.read(run_clock(sent));
        let e = w.wait(false, slow()).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::FirstTokenTimeout);
        assert!(w.wait(true, slow()).await.is_ok());
        let mut off = Watch::start(Limits::default(), Instant::now(), 0);
        assert!(off.wait(false, slow()).await.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn reads_keep_the_idle_limit_away_and_the_whole_limit_still_ends_it() {
        let limits = Limits {
            first_token: None,
            idle: Some(Duration::from_millis(100)),
            whole: Some(Duration::from_millis(1_000)),
        };
        let start = Instant::now();
        let mut w = Watch::start(limits, start, 0);
        // A read every 60 ms: the idle limit never passes, though the timer was armed at the
        // first read's deadline and fires many times.
        let mut ended = None;
        for _ in 0..40 {
            match w
                .wait(true, tokio::time::sleep(Duration::from_millis(60)))
                .await
            {
                Ok(()) => w.read(run_clock(start)),
                Err(e) => {
                    ended = Some(e);
                    break;
                }
            }
        }
        let e = ended.expect("the whole-request limit ends the stream");
        assert_eq!(e.kind, ErrorKind::Timeout);
        assert_eq!(Instant::now() - start, Duration::from_millis(1_000));
        assert!(e.message().contains("1.000 s"), "{}", e.message());
        // Silence past the idle limit fails at that limit, not later, also when the timer was
        // armed (at the whole-request limit) before the first read brought the idle one in.
        let sent = Instant::now();
        let mut w = Watch::start(limits, sent, 0);
        assert!(w.wait(false, std::future::ready(())).await.is_ok());
        w.read(run_clock(sent));
        let before = Instant::now();
        let e = w.wait(true, slow_read()).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::IdleTimeout);
        assert_eq!(Instant::now() - before, Duration::from_millis(100));
    }

    /// Now on the run clock of a request sent at `sent`, which was 0 on it.
    fn run_clock(sent: Instant) -> u64 {
        u64::try_from((Instant::now() - sent).as_nanos()).unwrap_or(u64::MAX)
    }

    fn slow_read() -> tokio::time::Sleep {
        tokio::time::sleep(Duration::from_secs(10))
    }
}
