//! How a run ends: the stop when the server cannot be reached (at the start or mid-run), the
//! wait for it to come back (`--retry-connect`), and the exit status.
//!
//! Rules (documented in docs/fire/protocol.md and `fire --help`):
//! - **Connect-failure stop**: when [`STOP_AFTER`] requests failed to connect (`connect` or
//!   `connect_timeout`) since the last one that succeeded (or since the start), the server is
//!   taken to be gone: the run stops (requests in flight end as `cancelled`, the rest as
//!   `not_sent`, whose `error` says why) and fire exits 1. A success starts the count again;
//!   other failures (an HTTP error, a stream the dying server broke) neither count nor reset
//!   it. So a dead server costs at most [`STOP_AFTER`] connect failures after the last success,
//!   plus those of requests already in flight when the stop comes (a closed loop's N − 1 at
//!   most). `--keep-going` turns the stop off.
//! - **Retry** (`--retry-connect`): the same count pauses sending instead. The requests that
//!   failed stay failed (they are data); new ones wait while fire tries a connection after
//!   [`Backoff`]'s delays (100 ms, doubling to 5 s); when one opens (or a request in flight
//!   succeeds), sending goes on. When none opens within the limit given (60 s by default), the
//!   run stops as above.
//! - **Exit 1** when at least one request was sent and none succeeded (the message names the
//!   statuses and error kinds they got, the most common first), or when the run ended
//!   with [`STOP_AFTER`] or more connect failures since its last success (with
//!   `--keep-going`); 0 otherwise. Requests the run itself ended (`cancelled`, `not_sent`)
//!   count as neither.

mod tally;

use crate::error::Error;
use crate::sync::lock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use tokenpipe_format::ErrorKind;
use tokio::sync::watch;

/// How many requests must fail to connect since the last success before the run stops (or,
/// with `--retry-connect`, waits for the server).
pub const STOP_AFTER: u64 = 8;

/// The first wait before trying to connect again, under `--retry-connect`.
pub const RETRY_FIRST: Duration = Duration::from_millis(100);
/// The longest wait between two tries, under `--retry-connect`.
pub const RETRY_MOST: Duration = Duration::from_secs(5);

/// What fire does when requests keep failing to connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnUnreachable {
    /// Stop the run and exit 1 (the default).
    #[default]
    Stop,
    /// Send every request anyway (`--keep-going`).
    KeepGoing,
    /// Pause sending until a connection opens, at most this long in all (`--retry-connect`).
    Retry(Duration),
}

/// What the run should do after a request's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reaction {
    /// Nothing: go on.
    Go,
    /// Stop the run: the server is gone.
    Stop,
    /// Sending is paused: wait for the server, at most this long, then resume or stop.
    Wait(Duration),
}

/// The connect failures since the last success: "the row" below.
#[derive(Debug, Default)]
struct Row {
    /// Requests that failed to connect since the last success.
    len: u64,
    /// The first connection error of the row, for the message.
    first_error: Option<String>,
    /// The row reached [`STOP_AFTER`] and the run reacted (stopped, or paused).
    acted: bool,
    /// Every request that ended by then was in the row: nothing else ever ended.
    all_of_the_run: bool,
}

/// What the requests that ended so far say about the run.
#[derive(Debug)]
pub struct Verdict {
    on_unreachable: OnUnreachable,
    /// Requests that ended as a success or a failure of the server or network.
    ended: AtomicU64,
    ok: AtomicU64,
    row: Mutex<Row>,
    /// Sending waits while this is true (`--retry-connect`).
    paused: watch::Sender<bool>,
    /// Pauses so far: a wait for the server that outlived its pause ends.
    pauses: AtomicU64,
    /// Some request was answered 404.
    not_found: AtomicBool,
    /// `--retry-connect` waited this long in vain, and the run stopped.
    gave_up: OnceLock<Duration>,
    /// What the failed requests got, for the words of a run where none succeeded.
    failures: tally::Tally,
}

impl Verdict {
    /// A verdict for a run that reacts to a server gone away as `on_unreachable` says.
    pub fn new(on_unreachable: OnUnreachable) -> Self {
        Self {
            on_unreachable,
            ended: AtomicU64::new(0),
            ok: AtomicU64::new(0),
            row: Mutex::default(),
            paused: watch::Sender::new(false),
            pauses: AtomicU64::new(0),
            not_found: AtomicBool::new(false),
            gave_up: OnceLock::new(),
            failures: tally::Tally::default(),
        }
    }

    /// Notes one request's end; says what the run should do now ([`Reaction::Stop`] and
    /// [`Reaction::Wait`] come once per row of connect failures).
    pub fn record(
        &self,
        kind: Option<ErrorKind>,
        status: Option<u16>,
        error: Option<&str>,
    ) -> Reaction {
        let Some(kind) = kind else {
            self.ended.fetch_add(1, Ordering::SeqCst);
            self.ok.fetch_add(1, Ordering::SeqCst);
            self.succeeded();
            return Reaction::Go;
        };
        if !kind.is_failure() {
            return Reaction::Go;
        }
        if status == Some(404) {
            self.not_found.store(true, Ordering::Relaxed);
        }
        self.failures.add(kind, status);
        let ended = self.ended.fetch_add(1, Ordering::SeqCst) + 1;
        if !matches!(kind, ErrorKind::Connect | ErrorKind::ConnectTimeout) {
            return Reaction::Go;
        }
        let mut row = lock(&self.row);
        row.len += 1;
        if row.len == 1 {
            row.first_error = error.map(str::to_string);
        }
        if row.len < STOP_AFTER || row.acted {
            return Reaction::Go;
        }
        row.all_of_the_run = row.len == ended;
        match self.on_unreachable {
            OnUnreachable::KeepGoing => Reaction::Go,
            OnUnreachable::Stop => {
                row.acted = true;
                Reaction::Stop
            }
            OnUnreachable::Retry(limit) => {
                row.acted = true;
                self.pauses.fetch_add(1, Ordering::SeqCst);
                self.paused.send_replace(true);
                Reaction::Wait(limit)
            }
        }
    }

    /// A request succeeded: the row ends, and a pause with it (the server is there).
    fn succeeded(&self) {
        let mut row = lock(&self.row);
        if row.len > 0 {
            *row = Row::default();
            self.paused.send_replace(false);
        }
    }

    /// A connection opened again after a pause: the row ends and sending goes on.
    pub fn resume(&self) {
        *lock(&self.row) = Row::default();
        self.paused.send_replace(false);
    }

    /// Which pause sending is in, if it is paused: a wait for the server goes on only while
    /// this is still the one it began in.
    pub fn pause(&self) -> Option<u64> {
        let _row = lock(&self.row);
        (*self.paused.borrow()).then(|| self.pauses.load(Ordering::SeqCst))
    }

    /// No connection opened within `limit` of a pause: the run is to stop.
    pub fn give_up(&self, limit: Duration) {
        let _ = self.gave_up.set(limit);
    }

    /// Waits while sending is paused for the server (`--retry-connect`); true when it waited.
    pub async fn connectable(&self) -> bool {
        if !*self.paused.borrow() {
            return false;
        }
        let mut rx = self.paused.subscribe();
        let _ = rx.wait_for(|paused| !*paused).await;
        true
    }

    /// Why the run stopped for connect failures: its error, naming the server and the first
    /// connection error of the row, and how long `--retry-connect` waited in vain, if it did.
    pub fn stop_error(&self, uri: &str) -> Error {
        let waited = self.gave_up.get().copied();
        let row = lock(&self.row);
        let first_error = row
            .first_error
            .clone()
            .unwrap_or_else(|| "no connection".into());
        if row.all_of_the_run && waited.is_none() {
            return Error::EarlyStop {
                after: STOP_AFTER,
                uri: uri.to_string(),
                first_error,
            };
        }
        Error::ServerGone {
            failed: row.len.max(STOP_AFTER),
            succeeded: self.ok.load(Ordering::SeqCst),
            uri: uri.to_string(),
            first_error,
            waited,
        }
    }

    /// The words of a stop for connect failures, for the `error` of each request left unsent.
    pub fn not_sent_detail(&self, uri: &str) -> String {
        let n = lock(&self.row).len.max(STOP_AFTER);
        match self.gave_up.get() {
            None => format!("{n} requests failed to connect to {uri} since the last success"),
            Some(w) => format!(
                "{n} requests failed to connect to {uri} since the last success, and no connection opened within {} s (--retry-connect)",
                w.as_secs_f64()
            ),
        }
    }

    /// True when some request was answered 404 (a wrong --url or --endpoint, usually).
    pub fn saw_not_found(&self) -> bool {
        self.not_found.load(Ordering::Relaxed)
    }

    /// `Err` when requests were sent and none succeeded, or when the run ended with
    /// [`STOP_AFTER`] or more connect failures since its last success (`uri` is where they
    /// went).
    pub fn outcome(&self, uri: &str) -> Result<(), Error> {
        let ended = self.ended.load(Ordering::SeqCst);
        if ended == 0 {
            return Ok(());
        }
        if self.ok.load(Ordering::SeqCst) == 0 {
            return Err(Error::NoneSucceeded {
                ended,
                got: self.failures.summary(),
            });
        }
        if lock(&self.row).len >= STOP_AFTER {
            return Err(self.stop_error(uri));
        }
        Ok(())
    }
}

/// The waits of `--retry-connect` between tries to connect: [`RETRY_FIRST`], doubling up to
/// [`RETRY_MOST`], until `limit` has passed in all.
#[derive(Debug, Clone)]
pub struct Backoff {
    next: Duration,
    left: Duration,
}

impl Backoff {
    /// The waits of one pause, for at most `limit` in all.
    pub fn new(limit: Duration) -> Self {
        Self {
            next: RETRY_FIRST,
            left: limit,
        }
    }
}

impl Iterator for Backoff {
    type Item = Duration;

    /// The next wait, cut to what is left of the limit; `None` once it has passed.
    fn next(&mut self) -> Option<Duration> {
        if self.left.is_zero() {
            return None;
        }
        let wait = self.next.min(self.left);
        self.left -= wait;
        self.next = (self.next * 2).min(RETRY_MOST);
        Some(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_cli::{Ending, ToolError};

    fn connect(v: &Verdict, n: u64) -> Vec<Reaction> {
        (1..=n)
            .map(|i| {
                v.record(
                    Some(ErrorKind::Connect),
                    None,
                    Some(&format!("refused {i}")),
                )
            })
            .collect()
    }

    #[test]
    fn the_run_stops_once_the_first_requests_all_fail_to_connect() {
        let v = Verdict::new(OnUnreachable::Stop);
        for r in connect(&v, STOP_AFTER - 1) {
            assert_eq!(r, Reaction::Go);
        }
        assert_eq!(
            v.record(Some(ErrorKind::ConnectTimeout), None, None),
            Reaction::Stop
        );
        assert_eq!(
            v.record(Some(ErrorKind::Connect), None, None),
            Reaction::Go,
            "only once"
        );
        let stop = v.stop_error("http://h/v1/completions");
        assert!(stop.to_string().contains("first 8 requests"), "{stop}");
        assert!(stop.to_string().contains("refused 1"), "{stop}");
        assert_eq!(stop.ending(), Ending::Failure);
        let none = v.outcome("http://h/v1/completions").unwrap_err();
        assert_eq!(
            none.to_string(),
            "none of the 9 requests sent succeeded: 8 × connect, 1 × connect_timeout"
        );
        assert_eq!(none.ending(), Ending::Failure);
    }

    #[test]
    fn a_server_gone_mid_run_stops_it_after_connect_failures_since_the_last_success() {
        let v = Verdict::new(OnUnreachable::Stop);
        for _ in 0..5 {
            assert_eq!(v.record(None, Some(200), None), Reaction::Go);
        }
        // Streams the dying server broke, among the connect failures: they neither count nor
        // reset the count.
        let mut reactions = connect(&v, 3);
        for _ in 0..3 {
            assert_eq!(
                v.record(Some(ErrorKind::Incomplete), Some(200), None),
                Reaction::Go
            );
        }
        reactions.extend(connect(&v, STOP_AFTER - 3));
        assert_eq!(reactions[..7], [Reaction::Go; 7]);
        assert_eq!(reactions[7], Reaction::Stop);
        let e = v.stop_error("http://h:1/v1/completions");
        let m = e.to_string();
        assert!(
            m.starts_with("stopped: 8 requests failed to connect to http://h:1/v1/completions since the last of 5 successes (refused 1)"),
            "{m}"
        );
        assert!(m.contains("--retry-connect"), "{m}");
        assert_eq!(e.ending(), Ending::Failure);
        assert_eq!(
            v.not_sent_detail("http://h:1/v1/completions"),
            "8 requests failed to connect to http://h:1/v1/completions since the last success"
        );
    }

    #[test]
    fn a_success_resets_the_count_and_other_failures_do_not() {
        let v = Verdict::new(OnUnreachable::Stop);
        for _ in 0..10 {
            connect(&v, STOP_AFTER - 1);
            assert_eq!(v.record(None, Some(200), None), Reaction::Go);
        }
        assert!(v.outcome("u").is_ok());
        let v = Verdict::new(OnUnreachable::Stop);
        connect(&v, STOP_AFTER - 1);
        assert_eq!(
            v.record(Some(ErrorKind::Http), Some(503), None),
            Reaction::Go
        );
        assert_eq!(connect(&v, 1), [Reaction::Stop]);
        let m = v.stop_error("u").to_string();
        assert!(m.contains("with none succeeding"), "{m}");
        let v = Verdict::new(OnUnreachable::Stop);
        assert_eq!(
            v.record(Some(ErrorKind::Http), Some(404), None),
            Reaction::Go
        );
        assert!(v.saw_not_found());
        let v = Verdict::new(OnUnreachable::Stop);
        assert_eq!(
            v.record(Some(ErrorKind::Cancelled), None, None),
            Reaction::Go
        );
        assert!(v.outcome("u").is_ok(), "nothing the server did");
    }

    #[test]
    fn keep_going_sends_everything_but_a_run_ending_unreachable_still_fails() {
        let v = Verdict::new(OnUnreachable::KeepGoing);
        assert!(connect(&v, 20).iter().all(|r| *r == Reaction::Go));
        assert!(matches!(v.outcome("u"), Err(Error::NoneSucceeded { .. })));
        let v = Verdict::new(OnUnreachable::KeepGoing);
        v.record(None, Some(200), None);
        connect(&v, STOP_AFTER - 1);
        assert!(v.outcome("u").is_ok(), "fewer than 8 at the end are data");
        connect(&v, 1);
        let e = v.outcome("u").unwrap_err();
        assert!(matches!(e, Error::ServerGone { .. }), "{e}");
    }

    #[test]
    fn retry_pauses_once_per_count_and_resumes() {
        let limit = Duration::from_secs(7);
        let v = Verdict::new(OnUnreachable::Retry(limit));
        v.record(None, Some(200), None);
        let reactions = connect(&v, STOP_AFTER + 3);
        assert_eq!(reactions[7], Reaction::Wait(limit));
        assert!(reactions[8..].iter().all(|r| *r == Reaction::Go));
        assert_eq!(v.pause(), Some(1));
        // Another failure while paused changes nothing; a success ends the pause.
        v.record(Some(ErrorKind::Http), Some(503), None);
        assert!(*v.paused.borrow());
        v.record(None, Some(200), None);
        assert!(!*v.paused.borrow());
        assert!(v.outcome("u").is_ok());
        assert_eq!(connect(&v, STOP_AFTER)[7], Reaction::Wait(limit));
        assert_eq!(v.pause(), Some(2));
        v.resume();
        assert_eq!(v.pause(), None);
        assert_eq!(connect(&v, STOP_AFTER)[7], Reaction::Wait(limit));
        assert_eq!(v.pause(), Some(3));
        v.give_up(limit);
        let e = v.stop_error("http://h/v1");
        assert!(e.to_string().contains("within 7 s"), "{e}");
        assert!(v.not_sent_detail("http://h/v1").contains("within 7 s"));
    }

    #[test]
    fn backoff_doubles_to_five_seconds_within_the_limit() {
        let waits: Vec<u64> = Backoff::new(Duration::from_secs(20))
            .map(|d| u64::try_from(d.as_millis()).unwrap())
            .collect();
        assert_eq!(
            waits,
            [100, 200, 400, 800, 1600, 3200, 5000, 5000, 3700],
            "sums to the limit"
        );
        assert_eq!(Backoff::new(Duration::ZERO).next(), None);
    }
}
