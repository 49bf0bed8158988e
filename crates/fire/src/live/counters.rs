//! The run's running counts, shared by the dispatcher, every request task, the progress view
//! and the self-check. Each event is one relaxed atomic add; only a send takes a lock (the
//! dispatch-lag histogram), once per request and never per token.

use crate::sync::lock;
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use tokenpipe_format::ErrorKind;

/// A request sent later than this after its scheduled instant was late; more than 1 % of them
/// late (dispatch lag p99 above this) means the client did not keep to the schedule. TTFT is measured
/// from `sent_ns`, so lag does not enter it directly; it changes the load instead: requests
/// arrive later and more bunched than scheduled, and in a closed loop each slot stands idle for
/// the lag. A schedule-corrected TTFT (`first token − scheduled_ns`) grows by the lag: 1 ms is
/// under 5 % of the 20 ms and more TTFT of the fastest servers, and under the noise of most.
/// Defined here, where each send is counted late or not; the self-check judges by the count.
pub const LAG_LIMIT_NS: u64 = 1_000_000;

/// Counts of everything that happened so far, updated from any thread.
pub struct Counters {
    read: AtomicU64,
    sent: AtomicU64,
    ok: AtomicU64,
    /// One count per [`ErrorKind::ALL`] entry, in that order.
    ended_by_kind: Vec<AtomicU64>,
    in_flight: AtomicU64,
    peak_in_flight: AtomicU64,
    output_tokens: AtomicU64,
    lag_ns: Mutex<Histogram<u64>>,
    late: AtomicU64,
    dispatcher_behind_max_ns: AtomicU64,
    resent: AtomicU64,
}

impl Default for Counters {
    fn default() -> Self {
        Self {
            read: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            ok: AtomicU64::new(0),
            ended_by_kind: ErrorKind::ALL.iter().map(|_| AtomicU64::new(0)).collect(),
            in_flight: AtomicU64::new(0),
            peak_in_flight: AtomicU64::new(0),
            output_tokens: AtomicU64::new(0),
            // Three significant digits: a lag is read to 0.1 % of its value, from 1 ns up.
            lag_ns: Mutex::new(Histogram::new(3).unwrap_or_else(|_| unreachable!())),
            late: AtomicU64::new(0),
            dispatcher_behind_max_ns: AtomicU64::new(0),
            resent: AtomicU64::new(0),
        }
    }
}

impl Counters {
    /// A request was read from the schedule (it will end sent or `not_sent`).
    pub fn read(&self) {
        self.read.fetch_add(1, Relaxed);
    }

    /// The dispatcher released a request due at `deadline_ns` at `now_ns`: how far behind its
    /// own schedule the dispatcher thread ran, apart from the send loop's delay after it.
    pub fn released(&self, deadline_ns: u64, now_ns: u64) {
        self.dispatcher_behind_max_ns
            .fetch_max(now_ns.saturating_sub(deadline_ns), Relaxed);
    }

    /// A request left at `sent_ns`; it was due at `scheduled_ns`.
    pub fn sent(&self, scheduled_ns: Option<u64>, sent_ns: u64) {
        self.sent.fetch_add(1, Relaxed);
        let now = self.in_flight.fetch_add(1, Relaxed) + 1;
        self.peak_in_flight.fetch_max(now, Relaxed);
        if let Some(due) = scheduled_ns {
            let lag = sent_ns.saturating_sub(due);
            if lag > LAG_LIMIT_NS {
                self.late.fetch_add(1, Relaxed);
            }
            let mut h = lock(&self.lag_ns);
            // The histogram grows to fit (auto-resize), so recording does not fail.
            let _ = h.record(lag);
        }
    }

    /// A sent request's stream brought `n` more output tokens.
    pub fn tokens(&self, n: u64) {
        if n > 0 {
            self.output_tokens.fetch_add(n, Relaxed);
        }
    }

    /// A sent request ended: `None` when it succeeded, else its error kind.
    pub fn done(&self, error: Option<ErrorKind>) {
        // Never below zero, even if a done came without its send.
        let _ = self
            .in_flight
            .fetch_update(Relaxed, Relaxed, |n| Some(n.saturating_sub(1)));
        match error {
            None => {
                self.ok.fetch_add(1, Relaxed);
            }
            Some(kind) => self.count_kind(kind),
        }
    }

    /// A request was sent once more on a new connection: the reused one it was written on
    /// closed before any answer.
    pub fn resent(&self) {
        self.resent.fetch_add(1, Relaxed);
    }

    /// A request read from the schedule ended without being sent.
    pub fn not_sent(&self) {
        self.count_kind(ErrorKind::NotSent);
    }

    fn count_kind(&self, kind: ErrorKind) {
        if let Some(i) = ErrorKind::ALL.iter().position(|k| *k == kind) {
            self.ended_by_kind[i].fetch_add(1, Relaxed);
        }
    }

    /// The counts now. Each is exact; taken one after another, they may be a moment apart.
    pub fn snapshot(&self) -> Snapshot {
        let (lagged, lag_p50_ns, lag_p99_ns, lag_max_ns) = {
            let h = lock(&self.lag_ns);
            if h.is_empty() {
                (0, None, None, None)
            } else {
                (
                    h.len(),
                    Some(h.value_at_quantile(0.50)),
                    Some(h.value_at_quantile(0.99)),
                    Some(h.max()),
                )
            }
        };
        Snapshot {
            read: self.read.load(Relaxed),
            sent: self.sent.load(Relaxed),
            ok: self.ok.load(Relaxed),
            ended_by_kind: ErrorKind::ALL
                .iter()
                .zip(&self.ended_by_kind)
                .map(|(k, n)| (*k, n.load(Relaxed)))
                .filter(|(_, n)| *n > 0)
                .collect(),
            in_flight: self.in_flight.load(Relaxed),
            peak_in_flight: self.peak_in_flight.load(Relaxed),
            output_tokens: self.output_tokens.load(Relaxed),
            lagged,
            late: self.late.load(Relaxed),
            lag_p50_ns,
            lag_p99_ns,
            lag_max_ns,
            dispatcher_behind_max_ns: self.dispatcher_behind_max_ns.load(Relaxed),
            resent: self.resent.load(Relaxed),
        }
    }
}

/// The counts at one moment, as plain numbers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// Requests read from the schedule.
    pub read: u64,
    /// Requests sent.
    pub sent: u64,
    /// Requests that succeeded.
    pub ok: u64,
    /// Requests that ended otherwise, by kind (kinds with none left out), `cancelled` and
    /// `not_sent` included.
    pub ended_by_kind: Vec<(ErrorKind, u64)>,
    /// Requests sent and not yet ended.
    pub in_flight: u64,
    /// Most requests in flight at once.
    pub peak_in_flight: u64,
    /// Output tokens streamed so far.
    pub output_tokens: u64,
    /// Requests sent with a scheduled instant (those with a dispatch lag).
    pub lagged: u64,
    /// Of those, the ones whose lag passed [`LAG_LIMIT_NS`].
    pub late: u64,
    /// Dispatch lag median, when a request with a scheduled instant was sent.
    pub lag_p50_ns: Option<u64>,
    /// Dispatch lag, 99th percentile.
    pub lag_p99_ns: Option<u64>,
    /// Dispatch lag, largest.
    pub lag_max_ns: Option<u64>,
    /// How late the dispatcher thread released a request at its worst (open loop).
    pub dispatcher_behind_max_ns: u64,
    /// Requests sent a second time because their reused connection closed unanswered.
    pub resent: u64,
}

impl Snapshot {
    /// Requests the server or the network failed.
    pub fn failed(&self) -> u64 {
        self.failures().map(|(_, n)| n).sum()
    }

    /// The failures by kind (the server's or the network's doing only).
    pub fn failures(&self) -> impl Iterator<Item = (ErrorKind, u64)> + '_ {
        self.ended_by_kind
            .iter()
            .copied()
            .filter(|(k, _)| k.is_failure())
    }

    /// Requests in flight when the run was stopped.
    pub fn cancelled(&self) -> u64 {
        self.of_kind(ErrorKind::Cancelled)
    }

    /// Requests the stopped run never sent.
    pub fn not_sent(&self) -> u64 {
        self.of_kind(ErrorKind::NotSent)
    }

    /// Requests ended, whatever the outcome: the `done` records written.
    pub fn ended(&self) -> u64 {
        self.ok + self.ended_by_kind.iter().map(|(_, n)| n).sum::<u64>()
    }

    fn of_kind(&self, kind: ErrorKind) -> u64 {
        self.ended_by_kind
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(0, |(_, n)| *n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_are_kept_apart_and_in_flight_peaks() {
        let c = Counters::default();
        for _ in 0..5 {
            c.read();
        }
        c.sent(Some(100), 100);
        c.sent(Some(200), 1_200);
        c.sent(None, 5_000);
        c.tokens(3);
        c.tokens(0);
        c.done(None);
        c.done(Some(ErrorKind::Timeout));
        c.sent(Some(300), 400);
        c.sent(Some(0), LAG_LIMIT_NS + 1);
        c.done(None);
        c.done(Some(ErrorKind::Cancelled));
        c.done(Some(ErrorKind::Http));
        c.not_sent();
        let s = c.snapshot();
        assert_eq!((s.read, s.sent, s.ok), (5, 5, 2));
        assert_eq!(s.failed(), 2);
        assert_eq!((s.cancelled(), s.not_sent()), (1, 1));
        assert_eq!(s.ended(), 6);
        assert_eq!((s.in_flight, s.peak_in_flight), (0, 3));
        assert_eq!((s.lagged, s.late), (4, 1));
        assert_eq!(s.output_tokens, 3);
        assert_eq!(
            s.failures().collect::<Vec<_>>(),
            [(ErrorKind::Timeout, 1), (ErrorKind::Http, 1)]
        );
        // Lags 0, 1000, 100 ns and just over the limit; the send without a scheduled instant
        // has none. Read to three significant digits.
        assert_eq!(s.lag_p50_ns, Some(100));
        let max = s.lag_max_ns.unwrap();
        assert!(max.abs_diff(LAG_LIMIT_NS) <= LAG_LIMIT_NS / 1000, "{max}");
    }

    #[test]
    fn the_dispatcher_lateness_keeps_its_worst() {
        let c = Counters::default();
        c.released(1_000, 1_500);
        c.released(2_000, 2_100);
        c.released(3_000, 2_900);
        assert_eq!(c.snapshot().dispatcher_behind_max_ns, 500);
        assert_eq!(c.snapshot().lag_p99_ns, None);
    }

    #[test]
    fn counts_from_many_threads_add_up() {
        let c = std::sync::Arc::new(Counters::default());
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let c = c.clone();
                std::thread::spawn(move || {
                    for i in 0..1000 {
                        c.sent(Some(i), i + 10);
                        c.tokens(2);
                        c.done(None);
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        let s = c.snapshot();
        assert_eq!(
            (s.sent, s.ok, s.output_tokens, s.in_flight),
            (4000, 4000, 8000, 0)
        );
        assert!(s.peak_in_flight >= 1 && s.peak_in_flight <= 4);
        assert_eq!(s.lag_p99_ns, Some(10));
    }
}
