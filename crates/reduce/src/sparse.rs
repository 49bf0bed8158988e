//! A request's own accumulator for its inter-token gaps, kept until the request ends (only a
//! successful request's gaps join its run). It holds the moments and a count per histogram
//! bucket, not the gaps: a 100,000-token answer whose gaps fall in a few hundred buckets costs a
//! few hundred entries, so `reduce`'s memory grows with the requests in flight, not the tokens.

use crate::running::Running;
use hdrhistogram::Histogram;
use std::sync::OnceLock;
use tokenpipe_format::IntMap;

/// Moments and bucket counts of one request's samples, in nanoseconds.
#[derive(Debug, Clone, Default)]
pub struct SparseStat {
    run: Running,
    /// The lowest value of each histogram bucket that holds a sample, and how many it holds.
    buckets: IntMap<u64, u64>,
}

/// The bucket grid of every run histogram (same precision), for finding a sample's bucket.
fn grid() -> &'static Histogram<u64> {
    static GRID: OnceLock<Histogram<u64>> = OnceLock::new();
    GRID.get_or_init(tokenpipe_format::histogram::empty)
}

impl SparseStat {
    /// Adds a sample of a whole number of nanoseconds.
    pub fn push_ns(&mut self, ns: u64) {
        self.run.push(ns as f64);
        *self
            .buckets
            .entry(grid().lowest_equivalent(ns))
            .or_insert(0) += 1;
    }

    /// Adds `n` samples of the same value (a gap shared by the `n` tokens of one event).
    pub fn push_ns_n(&mut self, ns: u64, n: u64) {
        if n == 0 {
            return;
        }
        self.run.push_n(ns as f64, n);
        *self
            .buckets
            .entry(grid().lowest_equivalent(ns))
            .or_insert(0) += n;
    }

    /// The samples' moments.
    pub fn running(&self) -> &Running {
        &self.run
    }

    /// Each bucket that holds samples, as (its lowest value, count).
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.buckets.iter().map(|(&b, &n)| (b, n))
    }

    /// Distinct buckets held: the memory this accumulator uses, for tests.
    pub fn bucket_count(&self) -> usize {
        self.buckets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stat::Stat;

    #[test]
    fn a_long_answer_holds_buckets_not_gaps() {
        let mut sparse = SparseStat::default();
        let mut direct = Stat::new();
        for i in 0..100_000u64 {
            let gap = 9_000_000 + (i % 50) * 40_000;
            sparse.push_ns(gap);
            direct.push_ns(gap);
        }
        assert!(sparse.bucket_count() <= 50, "{}", sparse.bucket_count());
        let mut via_sparse = Stat::new();
        via_sparse.add_sparse(&sparse);
        let ps = [50.0, 99.0, 99.9];
        assert_eq!(via_sparse.moments(&ps), direct.moments(&ps));
    }
}
