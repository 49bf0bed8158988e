//! The run's running counts, shared by the dispatcher, every request task, the progress view
//! and the self-check. Each event is one relaxed atomic add; only a send and a first token take
//! a lock (the dispatch lags, the waves and the TTFT histogram), once per request and never per
//! token.
//!
//! Sends are grouped by the instant they were due: requests due at the same instant as another
//! form a *wave* (a batch, `--rate inf`, a closed loop's first wave, any instant an open loop's
//! schedule shares), sent one after another on purpose, and the self-check judges a wave by how
//! long sending it took against the run's median TTFT; a request due alone is judged against
//! [`LAG_LIMIT_NS`].

use crate::sync::lock;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
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

/// A wave (requests due at one instant) was sent in time when its last request left within
/// this fraction of the run's median TTFT after the instant (and never less than
/// [`LAG_LIMIT_NS`]): the last request of the wave reached the server before the wave's first
/// answers were due, so a server that batches could still take it in with the others.
/// docs/fire/self-check.md gives the measurement that chose it.
pub const WAVE_TTFT_FRACTION: f64 = 1.25;

/// Due instants whose sends are still counted apart at once; the oldest is closed when a newer
/// one comes. Waves overlap only when the client is far behind (a new one due while an older
/// one is still being sent), so a few suffice; more only cost memory.
const OPEN_INSTANTS: usize = 64;

/// The sends due at one instant, while it is open.
#[derive(Debug, Clone, Copy)]
struct DueAt {
    /// Requests due at it.
    n: u64,
    /// The latest any of them left, after the instant.
    worst_ns: u64,
}

/// Dispatch lags, by request and by the instant the requests were due, and the TTFTs.
struct Lags {
    /// Every send's lag.
    all: Histogram<u64>,
    /// Instants not yet closed, by due time.
    open: BTreeMap<u64, DueAt>,
    /// Closed instants with one request: requests sent, and those more than the limit late.
    alone: u64,
    alone_late: u64,
    /// Closed instants with more than one request: how many, their requests, each one's worst
    /// lag.
    waves: u64,
    wave_requests: u64,
    wave_worst: Histogram<u64>,
    /// Each request's time to its first token, from its send.
    ttft: Histogram<u64>,
}

impl Default for Lags {
    fn default() -> Self {
        // Three significant digits: a lag is read to 0.1 % of its value, from 1 ns up; the
        // histograms grow to fit (auto-resize), so recording does not fail.
        let hist = || Histogram::new(3).unwrap_or_else(|_| unreachable!());
        Self {
            all: hist(),
            open: BTreeMap::new(),
            alone: 0,
            alone_late: 0,
            waves: 0,
            wave_requests: 0,
            wave_worst: hist(),
            ttft: Histogram::new(2).unwrap_or_else(|_| unreachable!()),
        }
    }
}

impl Lags {
    fn sent(&mut self, due_ns: u64, lag_ns: u64) {
        let _ = self.all.record(lag_ns);
        let at = self
            .open
            .entry(due_ns)
            .or_insert(DueAt { n: 0, worst_ns: 0 });
        at.n += 1;
        at.worst_ns = at.worst_ns.max(lag_ns);
        if self.open.len() > OPEN_INSTANTS {
            if let Some((_, oldest)) = self.open.pop_first() {
                self.close(oldest);
            }
        }
    }

    fn close(&mut self, at: DueAt) {
        if at.n == 1 {
            self.alone += 1;
            self.alone_late += u64::from(at.worst_ns > LAG_LIMIT_NS);
        } else {
            self.waves += 1;
            self.wave_requests += at.n;
            let _ = self.wave_worst.record(at.worst_ns);
        }
    }

    /// The waves' figures and the requests due alone, the open instants counted as if closed
    /// now, with the waves judged against `limit_ns`.
    fn judged(&self, limit_ns: u64) -> Judged {
        let mut j = Judged {
            alone: self.alone,
            alone_late: self.alone_late,
            waves: self.waves,
            wave_requests: self.wave_requests,
            waves_late: over(&self.wave_worst, limit_ns),
            wave_lag_max_ns: (!self.wave_worst.is_empty()).then(|| self.wave_worst.max()),
        };
        for at in self.open.values() {
            if at.n == 1 {
                j.alone += 1;
                j.alone_late += u64::from(at.worst_ns > LAG_LIMIT_NS);
            } else {
                j.waves += 1;
                j.wave_requests += at.n;
                j.waves_late += u64::from(at.worst_ns > limit_ns);
                j.wave_lag_max_ns = Some(j.wave_lag_max_ns.unwrap_or(0).max(at.worst_ns));
            }
        }
        j
    }
}

/// How many values of `h` lie above `limit` (to the histogram's 0.1 %).
fn over(h: &Histogram<u64>, limit: u64) -> u64 {
    h.iter_recorded()
        .filter(|v| h.lowest_equivalent(v.value_iterated_to()) > limit)
        .map(|v| v.count_at_value())
        .sum()
}

/// The judged figures of [`Lags`].
struct Judged {
    alone: u64,
    alone_late: u64,
    waves: u64,
    wave_requests: u64,
    waves_late: u64,
    wave_lag_max_ns: Option<u64>,
}

/// The longest a wave may take to send, given the run's median TTFT (when some request had a
/// first token): [`WAVE_TTFT_FRACTION`] of it, never less than [`LAG_LIMIT_NS`].
pub fn wave_limit_ns(ttft_p50_ns: Option<u64>) -> u64 {
    let of_ttft = ttft_p50_ns.map_or(0.0, |t| t as f64 * WAVE_TTFT_FRACTION);
    (of_ttft as u64).max(LAG_LIMIT_NS)
}

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
    lags: Mutex<Lags>,
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
            lags: Mutex::new(Lags::default()),
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

    /// A request left at `sent_ns`; it was due at `scheduled_ns`. Requests given the same
    /// instant make a wave.
    pub fn sent(&self, scheduled_ns: Option<u64>, sent_ns: u64) {
        self.sent.fetch_add(1, Relaxed);
        let now = self.in_flight.fetch_add(1, Relaxed) + 1;
        self.peak_in_flight.fetch_max(now, Relaxed);
        if let Some(due) = scheduled_ns {
            let lag = sent_ns.saturating_sub(due);
            if lag > LAG_LIMIT_NS {
                self.late.fetch_add(1, Relaxed);
            }
            lock(&self.lags).sent(due, lag);
        }
    }

    /// A sent request's first token came `ttft_ns` after its send: the server's pace, which a
    /// wave's sending time is judged against.
    pub fn first_token(&self, ttft_ns: u64) {
        let _ = lock(&self.lags).ttft.record(ttft_ns);
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
        let (lagged, lag_p50_ns, lag_p99_ns, lag_max_ns, ttft_p50_ns, wave_limit, judged) = {
            let lags = lock(&self.lags);
            let h = &lags.all;
            let ttft = (!lags.ttft.is_empty()).then(|| lags.ttft.value_at_quantile(0.50));
            let limit = wave_limit_ns(ttft);
            let judged = lags.judged(limit);
            if h.is_empty() {
                (0, None, None, None, ttft, limit, judged)
            } else {
                (
                    h.len(),
                    Some(h.value_at_quantile(0.50)),
                    Some(h.value_at_quantile(0.99)),
                    Some(h.max()),
                    ttft,
                    limit,
                    judged,
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
            alone: judged.alone,
            alone_late: judged.alone_late,
            waves: judged.waves,
            wave_requests: judged.wave_requests,
            waves_late: judged.waves_late,
            wave_lag_max_ns: judged.wave_lag_max_ns,
            wave_limit_ns: wave_limit,
            ttft_p50_ns,
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
    /// Requests due alone (no other request due at their instant): each is judged against
    /// [`LAG_LIMIT_NS`].
    pub alone: u64,
    /// Of those, the ones more than [`LAG_LIMIT_NS`] late.
    pub alone_late: u64,
    /// Waves: instants at which more than one request was due.
    pub waves: u64,
    /// The requests of the waves.
    pub wave_requests: u64,
    /// Waves whose last request left more than [`Snapshot::wave_limit_ns`] after their instant.
    pub waves_late: u64,
    /// The longest a wave took to send (its last request's lag), when there was a wave.
    pub wave_lag_max_ns: Option<u64>,
    /// The longest a wave may take to send ([`wave_limit_ns`] of the median TTFT).
    pub wave_limit_ns: u64,
    /// Median time to first token from the send, when some request had a first token.
    pub ttft_p50_ns: Option<u64>,
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
    fn requests_due_at_one_instant_are_a_wave_judged_against_the_ttft() {
        let c = Counters::default();
        // A wave of 4 due at 1 ms, the last leaving 6 ms late; two requests due alone, one
        // 2 ms late; then a wave of 2 sent within 0.5 ms.
        for (k, lag) in [0u64, 2_000_000, 4_000_000, 6_000_000].iter().enumerate() {
            c.sent(Some(1_000_000), 1_000_000 + lag + k as u64);
        }
        c.sent(Some(20_000_000), 20_000_100);
        c.sent(Some(30_000_000), 32_000_000);
        c.sent(Some(40_000_000), 40_000_000);
        c.sent(Some(40_000_000), 40_500_000);
        let s = c.snapshot();
        assert_eq!((s.lagged, s.late), (8, 4));
        assert_eq!((s.alone, s.alone_late), (2, 1));
        assert_eq!((s.waves, s.wave_requests), (2, 6));
        let worst = s.wave_lag_max_ns.unwrap();
        assert!(worst.abs_diff(6_000_003) <= 6_000, "{worst}");
        // No first token yet: the wave limit is the 1 ms floor, which the first wave passed.
        assert_eq!((s.ttft_p50_ns, s.wave_limit_ns), (None, LAG_LIMIT_NS));
        assert_eq!(s.waves_late, 1);
        // A median TTFT of 8 ms allows a wave 8 ms × WAVE_TTFT_FRACTION.
        for ttft in [4_000_000, 8_000_000, 30_000_000] {
            c.first_token(ttft);
        }
        let s = c.snapshot();
        let p50 = s.ttft_p50_ns.unwrap();
        assert!(p50.abs_diff(8_000_000) <= 80_000, "{p50}");
        assert_eq!(s.wave_limit_ns, wave_limit_ns(Some(p50)));
        let want = (8_000_000.0 * WAVE_TTFT_FRACTION) as u64;
        assert!(
            s.wave_limit_ns.abs_diff(want) <= 100_000,
            "{}",
            s.wave_limit_ns
        );
        assert_eq!(s.waves_late, 0);
        assert_eq!(wave_limit_ns(Some(1_000)), LAG_LIMIT_NS);
    }

    #[test]
    fn instants_close_oldest_first_and_keep_their_counts() {
        let c = Counters::default();
        // Far more instants than are kept open: every one of them alone, each 2 ms late, and
        // a wave of three at the very start, closed when it is the oldest.
        for _ in 0..3 {
            c.sent(Some(0), 3_000_000);
        }
        for i in 1..=500u64 {
            c.sent(Some(i * 10_000_000), i * 10_000_000 + 2_000_000);
        }
        let s = c.snapshot();
        assert_eq!((s.alone, s.alone_late), (500, 500));
        assert_eq!((s.waves, s.wave_requests, s.waves_late), (1, 3, 1));
        let lags = lock(&c.lags);
        assert_eq!(lags.open.len(), OPEN_INSTANTS);
        assert_eq!(lags.waves, 1, "the wave was closed as the oldest");
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
