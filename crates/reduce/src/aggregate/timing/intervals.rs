//! `reduce --every`: one `interval` record per slice `[k·every, (k+1)·every)` of the run clock,
//! written while the run is still being read. Events are placed by their own stamps. A slice is
//! written once an event stamped at least [`GRACE_NS`] past its end has been read (stamps from
//! `fire`'s threads reach its output slightly out of order), the rest when the run ends; an
//! event stamped in a slice already written is counted as late in the next one written.
//! Memory: one entry per request in flight and one accumulator per slice not yet written; no
//! event is kept.

use crate::aggregate::telemetry::gauges;
use crate::aggregate::{Aggregator, RunSpan};
use crate::error::RequestError;
use crate::request::RequestResult;
use crate::stat::Stat;
use std::collections::BTreeMap;
use std::collections::VecDeque;
use tokenpipe_format::{IntMap, Interval, Record, Sent, ServerMetrics, Summary, Token};

/// How far past a slice's end the newest stamp must be before the slice is written.
pub const GRACE_NS: u64 = 1_000_000_000;

/// A stamp more slices than this past the oldest open one is not sliced: no run has a million
/// slices' gap between two events, and a corrupt stamp must not fill memory with empty ones.
pub const MAX_AHEAD: u64 = 1_000_000;

const NS_PER_S: f64 = 1e9;

/// What a request in flight needs for TTFT and gaps: its send and its last content.
#[derive(Debug, Clone, Copy)]
struct Flight {
    sent_ns: u64,
    last_content_ns: Option<u64>,
}

/// The counts of one slice not yet written.
#[derive(Debug, Default)]
struct Slice {
    sent: u64,
    ended_ok: u64,
    ended_failed: u64,
    /// Requests ended here that had been sent (`in_flight` leaves out the never-sent ones).
    ended_sent: u64,
    output_tokens: u64,
    /// Made at the first sample: most slices of a fine `--every` have none.
    ttft: Option<Stat>,
    itl: Option<Stat>,
    late_events: u64,
    /// The server's gauges scraped in the slice: per name, the sum and count of the samples.
    gauges: BTreeMap<&'static str, (f64, u32)>,
}

impl Slice {
    /// Adds every count of `other` (a slice of no length merged into the one it ends).
    fn absorb(&mut self, other: Slice) {
        self.sent += other.sent;
        self.ended_ok += other.ended_ok;
        self.ended_failed += other.ended_failed;
        self.ended_sent += other.ended_sent;
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.late_events += other.late_events;
        for (name, (sum, n)) in other.gauges {
            let mine = self.gauges.entry(name).or_insert((0.0, 0));
            mine.0 += sum;
            mine.1 += n;
        }
        for (mine, theirs) in [(&mut self.ttft, other.ttft), (&mut self.itl, other.itl)] {
            if let Some(theirs) = theirs {
                mine.get_or_insert_with(Stat::new).merge(&theirs);
            }
        }
    }
}

/// Adds a sample to a statistic made on first use.
fn push(stat: &mut Option<Stat>, ns: u64) {
    stat.get_or_insert_with(Stat::new).push_ns(ns);
}

/// Writes `interval` records as the run goes.
#[derive(Debug)]
pub struct IntervalAggregator {
    every_ns: u64,
    flights: IntMap<u64, Flight>,
    /// Slices from index `first_open` on, not yet written.
    open: VecDeque<Slice>,
    first_open: u64,
    newest_ns: Option<u64>,
    /// Sends and ends stamped before the first open slice, for `in_flight`.
    sent_before: u64,
    ended_before: u64,
    ready: Vec<Record>,
}

impl IntervalAggregator {
    /// Slices of `every_ns` (at least 1).
    pub fn new(every_ns: u64) -> Self {
        IntervalAggregator {
            every_ns: every_ns.max(1),
            flights: IntMap::default(),
            open: VecDeque::new(),
            first_open: 0,
            newest_ns: None,
            sent_before: 0,
            ended_before: 0,
            ready: Vec::new(),
        }
    }

    /// The open slice that holds `at_ns`, or `None` (and a late event counted) when that
    /// slice was written already.
    fn slice(&mut self, at_ns: u64) -> Option<&mut Slice> {
        let index = at_ns / self.every_ns;
        if index < self.first_open {
            self.slice_at_front().late_events += 1;
            return None;
        }
        let offset = (index - self.first_open) as usize;
        if offset >= self.open.len() {
            self.open.resize_with(offset + 1, Slice::default);
        }
        self.open.get_mut(offset)
    }

    fn slice_at_front(&mut self) -> &mut Slice {
        if self.open.is_empty() {
            self.open.push_back(Slice::default());
        }
        &mut self.open[0]
    }

    /// Whether a stamp is too far ahead to slice (see [`MAX_AHEAD`]).
    fn out_of_reach(&self, at_ns: u64) -> bool {
        at_ns / self.every_ns > self.first_open.saturating_add(MAX_AHEAD)
    }

    /// Notes the newest stamp and writes every slice that ends a grace before it.
    fn advance(&mut self, at_ns: u64) {
        let newest = self.newest_ns.map_or(at_ns, |t| t.max(at_ns));
        self.newest_ns = Some(newest);
        while (self.first_open + 1)
            .saturating_mul(self.every_ns)
            .saturating_add(GRACE_NS)
            <= newest
        {
            self.close_front(None);
        }
    }

    /// Writes the first open slice; `cut_ns` ends it early (the run's last event).
    fn close_front(&mut self, cut_ns: Option<u64>) {
        let slice = self.open.pop_front().unwrap_or_default();
        let start_ns = self.first_open.saturating_mul(self.every_ns);
        let full_end = start_ns.saturating_add(self.every_ns);
        let end_ns = cut_ns.map_or(full_end, |c| c.clamp(start_ns, full_end));
        self.first_open += 1;
        self.sent_before += slice.sent;
        self.ended_before += slice.ended_sent;
        let seconds = (end_ns - start_ns) as f64 / NS_PER_S;
        let ttft = slice.ttft.and_then(|s| s.moments(&[50.0, 99.0]));
        let itl = slice.itl.and_then(|s| s.moments(&[50.0, 99.0]));
        self.ready.push(Record::Interval(Interval {
            start_s: start_ns as f64 / NS_PER_S,
            end_s: end_ns as f64 / NS_PER_S,
            sent: slice.sent,
            ended_ok: slice.ended_ok,
            ended_failed: slice.ended_failed,
            output_tokens: slice.output_tokens,
            output_tps: if seconds > 0.0 {
                slice.output_tokens as f64 / seconds
            } else {
                0.0
            },
            in_flight: self.sent_before.saturating_sub(self.ended_before),
            ttft_p50_ms: ttft.as_ref().and_then(|m| m.p(50.0)),
            ttft_p99_ms: ttft.as_ref().and_then(|m| m.p(99.0)),
            itl_p50_ms: itl.as_ref().and_then(|m| m.p(50.0)),
            itl_p99_ms: itl.as_ref().and_then(|m| m.p(99.0)),
            late_events: slice.late_events,
            gauges: slice
                .gauges
                .into_iter()
                .map(|(name, (sum, n))| (name.to_string(), sum / f64::from(n)))
                .collect(),
        }));
    }
}

impl Aggregator for IntervalAggregator {
    fn sees_whole_run(&self) -> bool {
        true
    }

    /// A scrape's gauges go to the slice it was taken in, unless that one was written already
    /// (a scrape is not an event: it is neither late nor does it close a slice).
    fn server_metrics(&mut self, scrape: &ServerMetrics) {
        let index = scrape.at_ns / self.every_ns;
        if self.out_of_reach(scrape.at_ns) || index < self.first_open {
            return;
        }
        let values = gauges::values(&scrape.samples);
        if values.is_empty() {
            return;
        }
        let offset = (index - self.first_open) as usize;
        if offset >= self.open.len() {
            self.open.resize_with(offset + 1, Slice::default);
        }
        for (name, value) in values {
            let entry = self.open[offset].gauges.entry(name).or_insert((0.0, 0));
            entry.0 += value;
            entry.1 += 1;
        }
    }

    fn sent(&mut self, s: &Sent) {
        if self.out_of_reach(s.sent_ns) {
            return;
        }
        self.flights.insert(
            s.id,
            Flight {
                sent_ns: s.sent_ns,
                last_content_ns: None,
            },
        );
        self.advance(s.sent_ns);
        match self.slice(s.sent_ns) {
            Some(slice) => slice.sent += 1,
            None => self.sent_before += 1,
        }
    }

    fn token(&mut self, t: &Token) {
        if self.out_of_reach(t.at_ns) {
            return;
        }
        let flight = self.flights.get_mut(&t.id).map(|f| {
            let before = *f;
            if !t.empty {
                f.last_content_ns = Some(t.at_ns);
            }
            before
        });
        self.advance(t.at_ns);
        if let Some(slice) = self.slice(t.at_ns) {
            slice.output_tokens = slice.output_tokens.saturating_add(u64::from(t.tokens));
            if let Some(f) = flight.filter(|_| !t.empty) {
                match f.last_content_ns {
                    None => push(&mut slice.ttft, t.at_ns.saturating_sub(f.sent_ns)),
                    Some(prev) => push(&mut slice.itl, t.at_ns.saturating_sub(prev)),
                }
            }
        }
    }

    fn add(&mut self, r: &RequestResult) -> Result<(), RequestError> {
        self.flights.remove(&r.id);
        // A request still in flight when the run ended has not ended in any slice.
        let Some(done) = r.done_ns.filter(|&d| !self.out_of_reach(d)) else {
            return Ok(());
        };
        let was_sent = u64::from(r.sent_ns.is_some());
        self.advance(done);
        match self.slice(done) {
            Some(slice) => {
                if r.ok {
                    slice.ended_ok += 1;
                } else {
                    slice.ended_failed += 1;
                }
                slice.ended_sent += was_sent;
            }
            None => self.ended_before += was_sent,
        }
        Ok(())
    }

    fn drain(&mut self, out: &mut Vec<Record>) {
        out.append(&mut self.ready);
    }

    fn finish(&mut self, _span: &RunSpan, _summary: &mut Summary, out: &mut Vec<Record>) {
        if let Some(newest) = self.newest_ns {
            // A run whose last event falls exactly on a slice boundary would end in a slice of
            // no length: what was stamped at that instant joins the slice before, whose end it is.
            let mut last = newest / self.every_ns;
            if newest % self.every_ns == 0 && last > self.first_open {
                let offset = (last - self.first_open) as usize;
                if let Some(tail) = self.open.remove(offset) {
                    if let Some(before) = self.open.get_mut(offset - 1) {
                        before.absorb(tail);
                    }
                }
                last -= 1;
            }
            while self.first_open <= last {
                self.close_front(Some(newest));
            }
        }
        out.append(&mut self.ready);
    }
}
