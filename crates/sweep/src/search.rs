//! The search of `--find` (docs/sweep.md, "The search"): from the low end, double while the
//! value passes and stays at or below the range's geometric middle; past that middle, try the
//! high end; then bisect the bracket (last pass, first fail) to the resolution. The search is
//! a plain state machine, told each point's outcome, so that it can be tested on a function.

use crate::values::Domain;

/// The state of a search over `[low, high]`.
#[derive(Debug, Clone)]
pub struct Find {
    low: f64,
    high: f64,
    domain: Domain,
    /// The largest value that passed.
    pass: Option<f64>,
    /// The smallest value that did not.
    fail: Option<f64>,
}

impl Find {
    /// A search of `[low, high]` (low below high) in `domain`.
    pub fn new(low: f64, high: f64, domain: Domain) -> Self {
        Find {
            low,
            high,
            domain,
            pass: None,
            fail: None,
        }
    }

    /// Where doubling stops and the high end is tried instead: the geometric middle of the
    /// range, so that a capacity near the high end costs no more than about half again a plain
    /// bisection of the whole range, and a small one far less.
    fn ceiling(&self) -> f64 {
        (self.low * self.high).sqrt().max(2.0 * self.low)
    }

    /// The next value to run, or `None` when the search is over.
    pub fn next(&self) -> Option<f64> {
        match (self.pass, self.fail) {
            (None, None) => Some(self.low),
            (None, Some(_)) => None,
            (Some(pass), None) if pass >= self.high => None,
            (Some(pass), None) => {
                let double = match self.domain {
                    Domain::Integer { .. } => (2.0 * pass).round(),
                    Domain::Real { .. } => 2.0 * pass,
                };
                Some(if double <= self.ceiling() && double < self.high {
                    double
                } else {
                    self.high
                })
            }
            (Some(pass), Some(fail)) => self.domain.middle(pass, fail),
        }
    }

    /// Files the outcome of a point: `passed` or not (a failed or unusable point alike bounds
    /// the search from above).
    pub fn record(&mut self, value: f64, passed: bool) {
        if passed {
            self.pass = Some(self.pass.map_or(value, |p| p.max(value)));
        } else {
            self.fail = Some(self.fail.map_or(value, |f| f.min(value)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search against `passes`, returning the capacity it finds and the runs it took.
    fn search(
        low: f64,
        high: f64,
        domain: Domain,
        passes: impl Fn(f64) -> bool,
    ) -> (Option<f64>, usize) {
        let mut find = Find::new(low, high, domain);
        let (mut runs, mut best) = (0, None);
        while let Some(v) = find.next() {
            runs += 1;
            assert!(runs < 200, "the search does not end");
            let ok = passes(v);
            if ok {
                best = Some(best.map_or(v, |b: f64| b.max(v)));
            }
            find.record(v, ok);
        }
        (best, runs)
    }

    /// A bisection without repeats: the low end, the high end, then halves to the resolution.
    fn bisection_runs(low: f64, high: f64, domain: Domain, passes: impl Fn(f64) -> bool) -> usize {
        if !passes(low) {
            return 1;
        }
        if passes(high) {
            return 2;
        }
        let (mut lo, mut hi, mut runs) = (low, high, 2);
        while let Some(mid) = domain.middle(lo, hi) {
            runs += 1;
            if passes(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        runs
    }

    #[test]
    fn find_returns_the_capacity_in_at_most_half_again_a_bisection_s_runs() {
        let int = Domain::Integer { step: 1 };
        for (low, high) in [
            (1u64, 2u64),
            (1, 8),
            (1, 64),
            (1, 256),
            (2, 100),
            (4, 1000),
            (1, 3),
        ] {
            for capacity in low..high {
                let passes = |v: f64| v <= capacity as f64;
                let (found, runs) = search(low as f64, high as f64, int, passes);
                assert_eq!(
                    found,
                    Some(capacity as f64),
                    "{low}..{high}, capacity {capacity}"
                );
                let plain = bisection_runs(low as f64, high as f64, int, passes);
                assert!(
                    runs as f64 <= 1.5 * plain as f64,
                    "{low}..{high}, capacity {capacity}: {runs} runs against bisection's {plain}"
                );
            }
            // None passes: one run; every value passes: the high end is found.
            assert_eq!(search(low as f64, high as f64, int, |_| false), (None, 1));
            assert_eq!(
                search(low as f64, high as f64, int, |_| true).0,
                Some(high as f64)
            );
        }
    }

    #[test]
    fn a_coarser_step_and_a_decimal_range_stop_at_their_resolution() {
        let (found, _) = search(1.0, 256.0, Domain::Integer { step: 8 }, |v| v <= 100.0);
        let found = found.unwrap();
        assert!(found <= 100.0 && found > 92.0, "{found}");
        let real = Domain::Real { relative: 0.05 };
        let (found, runs) = search(0.5, 64.0, real, |v| v <= 7.3);
        let found = found.unwrap();
        assert!((7.3 / 1.05..=7.3).contains(&found), "{found}");
        let plain = bisection_runs(0.5, 64.0, real, |v| v <= 7.3);
        assert!(runs as f64 <= 1.5 * plain as f64, "{runs} against {plain}");
    }
}
