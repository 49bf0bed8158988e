//! One metric's accumulator: the mean from a compensated running sum, the population standard
//! deviation from Welford's running sums, an exact maximum, and percentiles read from an HDR histogram of nanoseconds. Memory is
//! fixed by the histogram's range and precision, never by the number of samples.

use hdrhistogram::Histogram;

/// Significant decimal digits the histograms keep: a percentile is within 0.1% of the exact order
/// statistic.
pub const SIGFIG: u8 = 3;

const NS_PER_MS: f64 = 1e6;

/// Accumulates the samples of one metric, in nanoseconds.
#[derive(Debug, Clone)]
pub struct Stat {
    count: u64,
    /// Neumaier-compensated sum and its running error: the mean is their sum over the count,
    /// correctly rounded for any realistic run.
    sum: f64,
    sum_err: f64,
    /// Welford's running mean and sum of squared deviations, for the variance.
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
    hist: Histogram<u64>,
}

/// What a table shows of one metric, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moments {
    /// Arithmetic mean.
    pub mean_ms: f64,
    /// Population standard deviation (divides by n, as numpy's default does).
    pub std_ms: f64,
    /// Median, from the histogram.
    pub p50_ms: f64,
    /// 90th percentile, from the histogram.
    pub p90_ms: f64,
    /// 99th percentile, from the histogram.
    pub p99_ms: f64,
    /// The largest sample, exact.
    pub max_ms: f64,
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
            count: 0,
            sum: 0.0,
            sum_err: 0.0,
            mean: 0.0,
            m2: 0.0,
            min: 0.0,
            max: 0.0,
            // An auto-resizing histogram with 3 significant figures always constructs.
            hist: Histogram::new(SIGFIG).unwrap_or_else(|_| unreachable!("sigfig 3 is valid")),
        }
    }

    /// Adds a sample of a whole number of nanoseconds.
    pub fn push_ns(&mut self, ns: u64) {
        self.push_ns_f64(ns as f64);
    }

    /// Adds a sample that may have a fraction of a nanosecond (TPOT is a quotient). The mean, the
    /// standard deviation and the maximum keep the fraction; the histogram records the nearest
    /// whole nanosecond.
    pub fn push_ns_f64(&mut self, ns: f64) {
        self.count += 1;
        let t = self.sum + ns;
        self.sum_err += if self.sum.abs() >= ns.abs() {
            (self.sum - t) + ns
        } else {
            (ns - t) + self.sum
        };
        self.sum = t;
        let delta = ns - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (ns - self.mean);
        if self.count == 1 {
            (self.min, self.max) = (ns, ns);
        } else {
            self.min = self.min.min(ns);
            self.max = self.max.max(ns);
        }
        let whole = ns.round() as u64;
        if self.hist.record(whole).is_err() {
            // Only values near u64::MAX cannot be tracked; clamp rather than fail.
            self.hist.saturating_record(whole);
        }
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The summary of the samples in milliseconds, or `None` when there were none.
    pub fn moments(&self) -> Option<Moments> {
        if self.count == 0 {
            return None;
        }
        let std = (self.m2 / self.count as f64).max(0.0).sqrt();
        Some(Moments {
            mean_ms: (self.sum + self.sum_err) / self.count as f64 / NS_PER_MS,
            std_ms: std / NS_PER_MS,
            p50_ms: self.quantile_ns(0.50) / NS_PER_MS,
            p90_ms: self.quantile_ns(0.90) / NS_PER_MS,
            p99_ms: self.quantile_ns(0.99) / NS_PER_MS,
            max_ms: self.max / NS_PER_MS,
        })
    }

    /// The percentile `q`. The histogram finds the bucket holding the smallest sample with at
    /// least a fraction `q` of samples at or below it (`value_at_quantile`); that sample lies in
    /// the bucket's range, and within the exact minimum and maximum. We report the middle of that
    /// interval, so the error is at most half a bucket (0.05%) either way, and a metric whose
    /// samples are all equal reports that value exactly.
    fn quantile_ns(&self, q: f64) -> f64 {
        let bucket = self.hist.value_at_quantile(q);
        let lo = (self.hist.lowest_equivalent(bucket) as f64).max(self.min);
        let hi = (self.hist.highest_equivalent(bucket) as f64).min(self.max);
        if lo >= hi {
            return lo.min(self.max);
        }
        lo + (hi - lo) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_has_no_moments() {
        assert_eq!(Stat::new().moments(), None);
    }

    #[test]
    fn exact_mean_std_max() {
        let mut s = Stat::new();
        for ms in [50u64, 70] {
            s.push_ns(ms * 1_000_000);
        }
        let m = s.moments().unwrap();
        assert_eq!(m.mean_ms, 60.0);
        assert_eq!(m.std_ms, 10.0);
        assert_eq!(m.max_ms, 70.0);
        assert_eq!(s.count(), 2);
    }

    #[test]
    fn mean_is_the_sum_over_the_count() {
        let mut s = Stat::new();
        for ns in [1_000_000u64, 3_000_000, 1_000_000] {
            s.push_ns(ns);
        }
        assert_eq!(s.moments().unwrap().mean_ms, 5e6 / 3.0 / NS_PER_MS);
        let mut s = Stat::new();
        // Far past 2^53 in total: the compensation keeps the small samples.
        s.push_ns(1 << 60);
        for _ in 0..1000 {
            s.push_ns(3);
        }
        let want = ((1u128 << 60) + 3000) as f64 / 1001.0 / NS_PER_MS;
        assert_eq!(s.moments().unwrap().mean_ms, want);
    }

    #[test]
    fn percentiles_within_a_tenth_of_a_percent() {
        let mut s = Stat::new();
        for i in 1..=1000u64 {
            s.push_ns(i * 1_234_567);
        }
        let m = s.moments().unwrap();
        for (got, want) in [
            (m.p50_ms, 500.0 * 1.234567),
            (m.p90_ms, 900.0 * 1.234567),
            (m.p99_ms, 990.0 * 1.234567),
        ] {
            assert!((got - want).abs() / want <= 5e-4, "{got} vs {want}");
        }
        assert_eq!(m.max_ms, 1000.0 * 1.234567);
    }

    #[test]
    fn percentiles_stay_within_min_and_max() {
        let mut s = Stat::new();
        s.push_ns(123_456_789);
        let m = s.moments().unwrap();
        assert_eq!(m.p99_ms, m.max_ms);
        assert_eq!(m.p50_ms, 123.456789);
        let mut s = Stat::new();
        s.push_ns(15_000_000);
        s.push_ns(20_000_000);
        let m = s.moments().unwrap();
        // No interpolation: the median is the lower sample, to within half a bucket.
        assert!((m.p50_ms - 15.0).abs() <= 15.0 * 5e-4, "{m:?}");
        assert_eq!(format!("{:.2}", m.p50_ms), "15.00");
        assert!((m.p99_ms - 20.0).abs() <= 20.0 * 5e-4, "{m:?}");
        assert!(m.p99_ms <= m.max_ms);
    }

    #[test]
    fn fractional_samples_keep_their_fraction() {
        let mut s = Stat::new();
        s.push_ns_f64(2.5);
        s.push_ns_f64(3.5);
        let m = s.moments().unwrap();
        assert_eq!(m.mean_ms, 3.0 / NS_PER_MS);
        assert_eq!(m.std_ms, 0.5 / NS_PER_MS);
        assert_eq!(m.max_ms, 3.5 / NS_PER_MS);
    }

    #[test]
    fn huge_values_do_not_fail() {
        let mut s = Stat::new();
        s.push_ns(u64::MAX);
        assert!(s.moments().is_some());
    }
}
