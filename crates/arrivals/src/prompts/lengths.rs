//! Token lengths of prompts and answers: fixed, or drawn around a mean.
//!
//! `Uniform` is vLLM's range ratio (`--random-range-ratio`): integers uniform in
//! `[⌊L·(1 − r)⌋, ⌈L·(1 + r)⌉]`. `Normal` and `Lognormal` take the spread as a coefficient of
//! variation (standard deviation / mean): a lognormal with mean `L` and CV `c` has
//! `σ² = ln(1 + c²)` and `μ = ln L − σ²/2`, a right-skewed shape like real chat prompts. Draws
//! are rounded and clamped to `[min, max]`.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use rand_distr::Distribution;

/// How a length is chosen for each request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LengthDist {
    /// Always this many tokens.
    Fixed(u64),
    /// Uniform integers within `mean · (1 ± ratio)`.
    Uniform {
        /// The centre.
        mean: u64,
        /// Half-width as a fraction of the mean, in `[0, 1]`.
        ratio: f64,
    },
    /// Normal with this mean and coefficient of variation.
    Normal {
        /// The mean.
        mean: u64,
        /// Standard deviation / mean.
        cv: f64,
    },
    /// Lognormal with this mean and coefficient of variation.
    Lognormal {
        /// The mean.
        mean: u64,
        /// Standard deviation / mean.
        cv: f64,
    },
}

/// The family of a length distribution, as the `--input-dist` flag names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DistKind {
    /// Uniform within mean × (1 ± spread) (vLLM's range ratio).
    Uniform,
    /// Normal, spread = standard deviation / mean.
    Normal,
    /// Lognormal, spread = standard deviation / mean.
    Lognormal,
}

impl DistKind {
    /// Every family, in the order the help lists them.
    pub const ALL: [DistKind; 3] = [DistKind::Uniform, DistKind::Normal, DistKind::Lognormal];
}

/// A spread no distribution can take.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum LengthError {
    /// Negative, NaN or infinite.
    #[error("the spread must be 0 or more, got {}", tokenpipe_format::number::shortest(*.0))]
    Negative(f64),
    /// Over 1 for a uniform draw, which would reach below zero.
    #[error("a uniform range ratio must be at most 1, got {}", tokenpipe_format::number::shortest(*.0))]
    UniformRatio(f64),
}

impl LengthDist {
    /// The distribution `kind` around `mean` with `spread`; fixed when the spread is 0.
    pub fn new(mean: u64, kind: DistKind, spread: f64) -> Result<Self, LengthError> {
        if !(spread.is_finite() && spread >= 0.0) {
            return Err(LengthError::Negative(spread));
        }
        if spread == 0.0 {
            return Ok(LengthDist::Fixed(mean));
        }
        Ok(match kind {
            DistKind::Uniform if spread > 1.0 => return Err(LengthError::UniformRatio(spread)),
            DistKind::Uniform => LengthDist::Uniform {
                mean,
                ratio: spread,
            },
            DistKind::Normal => LengthDist::Normal { mean, cv: spread },
            DistKind::Lognormal => LengthDist::Lognormal { mean, cv: spread },
        })
    }

    /// One length, clamped to `[min, max]`; a fixed length draws nothing.
    pub fn sample(&self, rng: &mut ChaCha8Rng, min: u64, max: u64) -> u64 {
        let drawn = match *self {
            LengthDist::Fixed(n) => return n.clamp(min, max),
            LengthDist::Uniform { mean, ratio } => {
                let low = (mean as f64 * (1.0 - ratio)).floor() as u64;
                let high = (mean as f64 * (1.0 + ratio)).ceil() as u64;
                return rng.random_range(low..=high).clamp(min, max);
            }
            LengthDist::Normal { mean, cv } => {
                let m = mean as f64;
                match rand_distr::Normal::new(m, m * cv) {
                    Ok(d) => d.sample(rng),
                    Err(_) => m,
                }
            }
            LengthDist::Lognormal { mean, cv } => {
                let sigma2 = (1.0 + cv * cv).ln();
                let mu = (mean.max(1) as f64).ln() - sigma2 / 2.0;
                match rand_distr::LogNormal::new(mu, sigma2.sqrt()) {
                    Ok(d) => d.sample(rng),
                    Err(_) => mean as f64,
                }
            }
        };
        let rounded = drawn.round();
        if rounded <= min as f64 {
            min
        } else if rounded >= max as f64 {
            max
        } else {
            rounded as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn draws(d: LengthDist, n: usize) -> Vec<u64> {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        (0..n).map(|_| d.sample(&mut rng, 1, 1 << 24)).collect()
    }

    fn mean_cv(xs: &[u64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let m = xs.iter().sum::<u64>() as f64 / n;
        let var = xs.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>() / n;
        (m, var.sqrt() / m)
    }

    #[test]
    fn uniform_stays_in_vllms_range_and_reaches_both_ends() {
        let xs = draws(
            LengthDist::new(100, DistKind::Uniform, 0.2).unwrap(),
            20_000,
        );
        assert_eq!(*xs.iter().min().unwrap(), 80);
        assert_eq!(*xs.iter().max().unwrap(), 120);
        assert!((mean_cv(&xs).0 - 100.0).abs() < 1.0);
    }

    #[test]
    fn normal_and_lognormal_have_the_asked_mean_and_spread() {
        for kind in [DistKind::Normal, DistKind::Lognormal] {
            let xs = draws(LengthDist::new(1000, kind, 0.3).unwrap(), 40_000);
            let (m, cv) = mean_cv(&xs);
            assert!((m - 1000.0).abs() < 10.0, "{kind:?} mean {m}");
            assert!((cv - 0.3).abs() < 0.015, "{kind:?} cv {cv}");
        }
    }

    #[test]
    fn zero_spread_is_fixed_and_bad_spreads_are_refused() {
        assert_eq!(
            LengthDist::new(7, DistKind::Lognormal, 0.0),
            Ok(LengthDist::Fixed(7))
        );
        assert!(LengthDist::new(7, DistKind::Uniform, 1.5).is_err());
        assert!(LengthDist::new(7, DistKind::Normal, -0.1).is_err());
        assert!(LengthDist::new(7, DistKind::Normal, f64::NAN).is_err());
    }

    #[test]
    fn draws_are_clamped() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let wide = LengthDist::new(10, DistKind::Normal, 5.0).unwrap();
        for _ in 0..1000 {
            let x = wide.sample(&mut rng, 1, 50);
            assert!((1..=50).contains(&x));
        }
    }
}
