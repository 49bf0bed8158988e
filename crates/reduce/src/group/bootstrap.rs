//! 95 % intervals for the percentiles of a group of runs, by bootstrap over the pooled samples
//! as the merged HDR histogram holds them (docs/metrics.md, "Several runs").
//!
//! One replicate draws N samples with replacement from the N pooled ones. Drawing N values
//! uniformly from the samples puts a multinomial(N; c₁/N, …, c_K/N) number of them in the K
//! histogram buckets, so a replicate is drawn bucket by bucket as binomials: bucket k gets
//! Binomial(N − drawn so far, c_k / (c_k + … + c_K)). That costs K draws per replicate, however
//! many samples there are. The percentile of a replicate is read as the summary reads it
//! (the bucket holding the ⌈q·N⌉-th smallest value, reported at that bucket's value).

use crate::stat::{nearest_rank, Stat};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Binomial, Distribution};

/// Bootstrap replicates per interval.
const REPLICATES: usize = 1000;

/// The seed of every bootstrap, mixed with the metric's name, so output is reproducible.
const SEED: u64 = 0x7031_3162_6f6f_7473;

/// The value of percentile `p` (0 to 100) of samples counted per bucket: the bucket holding the
/// [`nearest_rank`]-th smallest, as the summary reads it.
fn quantile(buckets: &[(f64, u64)], counts: &[u64], p: f64) -> f64 {
    let total: u64 = counts.iter().sum();
    let rank = nearest_rank(p, total);
    let mut seen = 0;
    for (&(value, _), &count) in buckets.iter().zip(counts) {
        seen += count;
        if seen >= rank {
            return value;
        }
    }
    buckets.last().map_or(f64::NAN, |b| b.0)
}

/// For each percentile in `percentiles` (0 to 100), the 95 % bootstrap interval `[lo, hi]` in
/// histogram units (ns for latencies) of that percentile of `stat`'s samples: the 2.5th and 97.5th percentiles
/// (ranks 25 and 975 of 1000) of the replicates' values. `None` without samples.
pub fn percentile_intervals(
    stat: &Stat,
    percentiles: &[f64],
    metric: &str,
) -> Option<Vec<[f64; 2]>> {
    let buckets = stat.buckets();
    let total: u64 = buckets.iter().map(|b| b.1).sum();
    if total == 0 {
        return None;
    }
    // tail[k] = c_k + … + c_K, the samples of bucket k and above.
    let mut tail = vec![0u64; buckets.len() + 1];
    for k in (0..buckets.len()).rev() {
        tail[k] = tail[k + 1] + buckets[k].1;
    }
    let seed = SEED ^ tokenpipe_format::ids::fnv1a([metric.as_bytes()]);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut replicates = vec![Vec::with_capacity(REPLICATES); percentiles.len()];
    let mut counts = vec![0u64; buckets.len()];
    for _ in 0..REPLICATES {
        let mut left = total;
        for (k, count) in counts.iter_mut().enumerate() {
            let p = buckets[k].1 as f64 / tail[k] as f64;
            *count = if left == 0 || p <= 0.0 {
                0
            } else if p >= 1.0 {
                left
            } else {
                // n and p are valid here (0 < p < 1), so the distribution always builds.
                Binomial::new(left, p).map_or(0, |b| b.sample(&mut rng))
            };
            left -= *count;
        }
        for (values, &p) in replicates.iter_mut().zip(percentiles) {
            values.push(quantile(&buckets, &counts, p));
        }
    }
    let ranked = |values: &mut Vec<f64>| {
        values.sort_by(f64::total_cmp);
        let at = |q: f64| values[(q * REPLICATES as f64).ceil() as usize - 1];
        [at(0.025), at(0.975)]
    };
    Some(replicates.iter_mut().map(ranked).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread_stat() -> Stat {
        let mut stat = Stat::new();
        // 1 to 400 ms in 1 ms steps: p50 200 ms, p90 360 ms, p99 396 ms.
        for ms in 1..=400u64 {
            stat.push_ns(ms * 1_000_000);
        }
        stat
    }

    #[test]
    fn quantile_matches_the_summary_reading() {
        let stat = spread_stat();
        let buckets = stat.buckets();
        let counts: Vec<u64> = buckets.iter().map(|b| b.1).collect();
        let m = stat.moments(&[0.0, 50.0, 90.0, 99.0, 100.0]).unwrap();
        for (p, want) in m.percentiles {
            assert_eq!(quantile(&buckets, &counts, p) / 1e6, want, "p{p}");
        }
    }

    #[test]
    fn intervals_hold_the_pooled_value_and_repeat_exactly() {
        let stat = spread_stat();
        let ps = [50.0, 90.0, 99.0];
        // Histogram units (ns) back to the summary's ms.
        let ci: Vec<[f64; 2]> = percentile_intervals(&stat, &ps, "ttft")
            .unwrap()
            .into_iter()
            .map(|[lo, hi]| [lo / 1e6, hi / 1e6])
            .collect();
        let m = stat.moments(&ps).unwrap();
        for ((p, value), [lo, hi]) in m.percentiles.iter().zip(&ci) {
            assert!(
                lo <= value && value <= hi,
                "p{p}: {value} not in [{lo}, {hi}]"
            );
            assert!(lo < hi, "p{p}: a resampled percentile varies");
        }
        // The median of 400 evenly spread values moves by about ±1.96·√(400·¼)=±20 ranks.
        let [lo, hi] = ci[0];
        assert!(
            (170.0..=190.0).contains(&lo) && (210.0..=230.0).contains(&hi),
            "{lo} {hi}"
        );
        let again = percentile_intervals(&stat, &ps, "ttft").unwrap();
        let again: Vec<[f64; 2]> = again.into_iter().map(|[l, h]| [l / 1e6, h / 1e6]).collect();
        assert_eq!(again, ci, "the same seed draws the same replicates");
        assert_eq!(percentile_intervals(&Stat::new(), &ps, "ttft"), None);
    }
}
