//! One request's timetable: its place in the server's [`Engine`] and its wait on the server's
//! timer, together answering "is token k due yet?".
//!
//! A [`Timetable`] is made when a request is admitted and departs from the engine exactly once:
//! explicitly when the answer finished or a fault ended it, or on drop when the client went
//! away. Asking is lazy, as the engine seam allows: for each token it asks the engine with the
//! current time and waits for the instant it names, asking again when the engine said the
//! deadline was not known yet. Neither the engine nor the waiter allocates per token.

use crate::engine::{Admission, Departure, Due, Engine, Ticket};
use crate::waiter::{TokenTimer, Waiter};
use std::sync::Arc;
use std::task::{ready, Context, Poll};

/// One admitted request's token deadlines and its wait for the next one.
pub struct Timetable {
    engine: Arc<dyn Engine>,
    ticket: Ticket,
    waiter: Waiter,
    departed: bool,
    /// Tokens after the first `.0` are due `.1` ns later than the engine says (the `stall=MS`
    /// fault).
    pause: Option<(u64, u64)>,
    /// When the response head was let go after being held back on purpose: no token could
    /// leave before, so none is late for that.
    held_until_ns: u64,
}

impl Timetable {
    /// Admits a request to `engine`; its tokens will wait on `timer`, whose clock `admission`'s
    /// `arrival_ns` was read on.
    pub fn admit(engine: Arc<dyn Engine>, timer: &TokenTimer, admission: &Admission) -> Self {
        let ticket = engine.admit(admission);
        Self {
            engine,
            ticket,
            waiter: timer.waiter(),
            departed: false,
            pause: None,
            held_until_ns: 0,
        }
    }

    /// Delays every token after the first `after` by `delay`: the answer pauses, then goes on
    /// at its own pace (the `stall=MS` fault).
    pub fn pause_after(&mut self, after: u64, delay: std::time::Duration) {
        let ns = u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX);
        self.pause = Some((after, ns));
    }

    /// When the request arrived, on the timer's clock (ns).
    #[cfg(test)]
    pub fn arrival_ns(&self) -> u64 {
        self.ticket.arrival_ns
    }

    /// Ready once token `k` (1-based) is due, never before, with the instant it was due (on
    /// the timer's clock), so that its hand-off can be stamped with its lateness; otherwise
    /// arranges for `cx` to be woken when it is, or when the engine wants to be asked again.
    pub fn poll_due(&mut self, cx: &mut Context<'_>, k: u64) -> Poll<u64> {
        self.poll_token(cx, k, true)
    }

    /// Ready once the engine's first output is due: token 1's deadline without a `stall=MS`
    /// pause, which comes after that output (a chat answer's role chunk leaves then, as vLLM's).
    pub fn poll_first_output(&mut self, cx: &mut Context<'_>) -> Poll<u64> {
        self.poll_token(cx, 1, false)
    }

    /// [`Timetable::poll_due`], with or without the pause.
    fn poll_token(&mut self, cx: &mut Context<'_>, k: u64, paused: bool) -> Poll<u64> {
        loop {
            let now = self.waiter.now_ns();
            match self.engine.due(&self.ticket, k, now) {
                Due::At(at) => {
                    let at = match self.pause {
                        Some((after, ns)) if paused && k > after => at.saturating_add(ns),
                        _ => at,
                    };
                    if at > now {
                        ready!(self.waiter.poll_until(cx, at));
                    }
                    return Poll::Ready(at);
                }
                Due::AskAt(at) if at > now => {
                    // Reached: go round and ask again.
                    ready!(self.waiter.poll_until(cx, at));
                }
                Due::AskAt(_) => {
                    // An instant not in the future breaks the contract; yield rather than spin.
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
            }
        }
    }

    /// Completes once token `k` is due, with the instant it was due: for answers sent whole.
    pub async fn until(&mut self, k: u64) -> u64 {
        std::future::poll_fn(|cx| self.poll_due(cx, k)).await
    }

    /// Notes that the response head, held back on purpose, was let go at `at_ns` (on the
    /// timer's clock): tokens due before then are measured from then.
    pub fn held_until(&mut self, at_ns: u64) {
        self.held_until_ns = at_ns;
    }

    /// How long ago `due_ns` (an instant [`Timetable::poll_due`] named), or the end of a hold
    /// on the head if later, was: the server's own lateness in handing over what it hands
    /// over now.
    pub fn late_ns(&self, due_ns: u64) -> u64 {
        let from = due_ns.max(self.held_until_ns);
        self.waiter.now_ns().saturating_sub(from)
    }

    /// Prompt tokens the engine's prefix cache held for this request (see
    /// [`Engine::cached_tokens`]); asked before it departs.
    pub fn cached_tokens(&self) -> Option<u64> {
        self.engine.cached_tokens(&self.ticket)
    }

    /// Tells the engine the request left; only the first call counts.
    pub fn depart(&mut self, why: Departure) {
        if !self.departed {
            self.departed = true;
            self.engine.depart(&self.ticket, why);
        }
    }
}

impl Drop for Timetable {
    /// Dropped before departing: the answer was dropped unfinished, its client gone.
    fn drop(&mut self) {
        self.depart(Departure::Gone);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Duration;
    use tokio::time::Instant;

    const MS: u64 = 1_000_000;

    /// An engine that knows token k's deadline (k ms after arrival, times ten) only from the
    /// instant token k − 1 was due, and says "ask again" every 3 ms before: the laziness a
    /// batching engine needs. It logs every call.
    #[derive(Default)]
    struct Lazy {
        log: Mutex<Vec<String>>,
    }

    impl Lazy {
        fn note(&self, line: String) {
            self.log.lock().unwrap().push(line);
        }
    }

    impl Engine for Lazy {
        fn admit(&self, a: &Admission) -> Ticket {
            self.note(format!(
                "admit {} {} {}",
                a.arrival_ns, a.prompt_tokens, a.max_tokens
            ));
            Ticket {
                slot: 7,
                arrival_ns: a.arrival_ns,
            }
        }

        fn due(&self, t: &Ticket, k: u64, now_ns: u64) -> Due {
            assert_eq!(t.slot, 7);
            let known_from = t.arrival_ns + (k - 1) * 10 * MS;
            let at = t.arrival_ns + k * 10 * MS;
            if now_ns >= known_from {
                Due::At(at)
            } else {
                Due::AskAt((now_ns + 3 * MS).min(known_from))
            }
        }

        fn depart(&self, t: &Ticket, why: Departure) {
            self.note(format!("depart {} {why:?}", t.slot));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn lazy_answers_are_asked_again_and_tokens_are_on_time() {
        let engine = Arc::new(Lazy::default());
        let timer = TokenTimer::tokio();
        let start = Instant::now();
        let admission = Admission {
            arrival_ns: timer.now_ns(),
            prompt_tokens: 5,
            max_tokens: 4,
            prefix_blocks: Vec::new(),
        };
        let mut timetable = Timetable::admit(engine.clone(), &timer, &admission);
        for k in 1..=3 {
            timetable.until(k).await;
            assert_eq!(start.elapsed(), Duration::from_millis(10 * k), "token {k}");
        }
        // A reader that falls behind finds the token due at once.
        tokio::time::sleep(Duration::from_millis(25)).await;
        let late = start.elapsed();
        timetable.until(4).await;
        assert_eq!(start.elapsed(), late);
        timetable.depart(Departure::Finished);
        timetable.depart(Departure::Failed);
        drop(timetable);
        let log = engine.log.lock().unwrap().clone();
        assert_eq!(log, ["admit 0 5 4", "depart 7 Finished"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_pause_delays_the_tokens_after_it() {
        let engine = Arc::new(Lazy::default());
        let timer = TokenTimer::tokio();
        let start = Instant::now();
        let admission = Admission {
            arrival_ns: timer.now_ns(),
            prompt_tokens: 5,
            max_tokens: 4,
            ..Admission::default()
        };
        let mut timetable = Timetable::admit(engine, &timer, &admission);
        timetable.pause_after(2, Duration::from_millis(100));
        for (k, want_ms) in [(1, 10), (2, 20), (3, 130), (4, 140)] {
            timetable.until(k).await;
            assert_eq!(start.elapsed(), Duration::from_millis(want_ms), "token {k}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_dropped_timetable_departs_as_gone() {
        let engine = Arc::new(Lazy::default());
        let timer = TokenTimer::tokio();
        tokio::time::sleep(Duration::from_millis(2)).await;
        let admission = Admission {
            arrival_ns: timer.now_ns(),
            prompt_tokens: 0,
            max_tokens: 1,
            prefix_blocks: Vec::new(),
        };
        drop(Timetable::admit(engine.clone(), &timer, &admission));
        let log = engine.log.lock().unwrap().clone();
        assert_eq!(
            log,
            [format!("admit {} 0 1", 2 * MS), "depart 7 Gone".into()]
        );
    }
}
