//! One metric's accumulator over a run: [`Running`] moments (exact mean, standard deviation,
//! min, max) and an HDR histogram of nanoseconds for the percentiles. Memory is fixed by the
//! histogram's range and precision, never by the number of samples; two accumulators merge
//! exactly, and one can be saved into a summary's `histograms` and read back ([`MetricState`]).

use crate::running::Running;
use crate::sparse::SparseStat;
use hdrhistogram::Histogram;
use tokenpipe_format::histogram::{self, HistogramError};
use tokenpipe_format::MetricState;

/// The rank (from 1) of percentile `p` (0 to 100) among `n` samples: ⌈p·n/100⌉, at least 1.
/// `p·n/100` is computed in floating point, where `99.9 · 1000 / 100` comes out just above 999;
/// a margin far below one rank keeps such products on their whole number.
pub fn nearest_rank(p: f64, n: u64) -> u64 {
    let x = p * n as f64 / 100.0;
    let rank = (x - 1e-9 * x.max(1.0)).ceil();
    (rank.max(1.0) as u64).min(n.max(1))
}

const NS_PER_MS: f64 = 1e6;

/// Accumulates the samples of one metric, in nanoseconds.
#[derive(Debug, Clone)]
pub struct Stat {
    run: Running,
    hist: Histogram<u64>,
}

/// What a summary shows of one metric, in milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Moments {
    /// Arithmetic mean.
    pub mean_ms: f64,
    /// Population standard deviation (divides by n, as numpy's default does).
    pub std_ms: f64,
    /// Sample standard deviation (divides by n − 1); `None` for a single sample.
    pub sstd_ms: Option<f64>,
    /// The smallest sample, exact.
    pub min_ms: f64,
    /// The largest sample, exact.
    pub max_ms: f64,
    /// The requested percentiles and their values, from the histogram.
    pub percentiles: Vec<(f64, f64)>,
}

impl Moments {
    /// The value of percentile `p`, if it was requested.
    pub fn p(&self, p: f64) -> Option<f64> {
        self.percentiles
            .iter()
            .find(|(q, _)| *q == p)
            .map(|(_, v)| *v)
    }
}

impl Default for Stat {
    fn default() -> Self {
        Self::new()
    }
}

impl Stat {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self {
            run: Running::default(),
            hist: histogram::empty(),
        }
    }

    /// Adds a sample of a whole number of nanoseconds.
    pub fn push_ns(&mut self, ns: u64) {
        self.push_ns_f64(ns as f64);
    }

    /// Adds a sample that may have a fraction of a nanosecond (TPOT is a quotient). The moments
    /// keep the fraction; the histogram records the nearest whole nanosecond.
    pub fn push_ns_f64(&mut self, ns: f64) {
        self.run.push(ns);
        self.record(ns.round() as u64, 1);
    }

    fn record(&mut self, ns: u64, count: u64) {
        if self.hist.record_n(ns, count).is_err() {
            // Only values near u64::MAX cannot be tracked; clamp rather than fail.
            self.hist.saturating_record(ns);
        }
    }

    /// Adds every sample of a request's sparse accumulator: its moments exactly, its buckets
    /// into the histogram (the same buckets the samples would have fallen in one by one).
    pub fn add_sparse(&mut self, sparse: &SparseStat) {
        self.run.merge(sparse.running());
        for (bucket, count) in sparse.buckets() {
            self.record(bucket, count);
        }
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &Stat) {
        self.run.merge(&other.run);
        if self.hist.add(&other.hist).is_err() {
            for v in other.hist.iter_recorded() {
                self.record(v.value_iterated_to(), v.count_at_value());
            }
        }
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.run.count()
    }

    /// The summary of the samples in milliseconds with the `percentiles` asked for, or `None`
    /// when there were none.
    pub fn moments(&self, percentiles: &[f64]) -> Option<Moments> {
        self.moments_scaled(percentiles, NS_PER_MS)
    }

    /// The same statistics with every value divided by `per_unit` rather than 10⁶: for a
    /// metric recorded in another fixed-point unit (tokens/s recorded as milli-tokens/s takes
    /// 1000). The members named `_ms` then hold that unit.
    pub fn moments_scaled(&self, percentiles: &[f64], per_unit: f64) -> Option<Moments> {
        if self.run.count() == 0 {
            return None;
        }
        Some(Moments {
            mean_ms: self.run.mean() / per_unit,
            std_ms: self.run.std() / per_unit,
            sstd_ms: self.run.sample_std().map(|s| s / per_unit),
            min_ms: self.run.min() / per_unit,
            max_ms: self.run.max() / per_unit,
            percentiles: percentiles
                .iter()
                .map(|&p| (p, self.percentile_ns(p) / per_unit))
                .collect(),
        })
    }

    /// The percentile `p` (0 to 100): the bucket holding the [`nearest_rank`]-th smallest
    /// sample; that sample lies in the bucket's range, and within the exact minimum and maximum.
    /// We report the middle of that interval, so the error is at most half a bucket (0.05%)
    /// either way, and a metric whose samples are all equal reports that value exactly.
    fn percentile_ns(&self, p: f64) -> f64 {
        let n = self.hist.len();
        let rank = nearest_rank(p, n);
        // `value_at_quantile` takes the ⌈q·N⌉-th sample; asking for the middle of the rank's
        // slot keeps float rounding of q·N from moving it by one.
        let q = (rank as f64 - 0.5) / n.max(1) as f64;
        self.bucket_value_ns(self.hist.value_at_quantile(q))
    }

    /// The value a percentile that falls in the histogram bucket holding `bucket` reports
    /// ([`histogram::reported_value`]).
    fn bucket_value_ns(&self, bucket: u64) -> f64 {
        histogram::reported_value(&self.hist, bucket, self.run.min(), self.run.max())
    }

    /// Every recorded histogram bucket in ascending order, as the value in nanoseconds a
    /// percentile falling in it reports and the number of samples in it: what a bootstrap of
    /// the percentiles resamples.
    pub fn buckets(&self) -> Vec<(f64, u64)> {
        histogram::buckets(&self.hist, self.run.min(), self.run.max())
    }

    /// The accumulator in the form a summary carries, for exact merging later.
    pub fn to_state(&self) -> MetricState {
        MetricState {
            hdr: histogram::encode(&self.hist),
            count: self.run.count(),
            sum_ns: self.run.sum(),
            m2_ns2: self.run.m2(),
            min_ns: self.run.min(),
            max_ns: self.run.max(),
        }
    }

    /// Reads back an accumulator saved by [`Stat::to_state`]; the error says what is wrong.
    pub fn from_state(state: &MetricState) -> Result<Self, HistogramError> {
        Ok(Stat {
            run: Running::from_parts(
                state.count,
                state.sum_ns,
                state.m2_ns2,
                state.min_ns,
                state.max_ns,
            ),
            hist: state.histogram()?,
        })
    }
}

#[cfg(test)]
mod tests;
