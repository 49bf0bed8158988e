//! Arrival processes: when each request of an open-loop run is sent.
//!
//! Inter-arrival gaps are gamma distributed with shape `k` (the burstiness) and scale
//! `1 / (rate · k)`, so the mean gap is `k · 1/(rate·k) = 1/rate` whatever `k` is, and the
//! coefficient of variation is `1/√k`: `k = 1` is a Poisson process (exponential gaps), `k < 1`
//! bunches requests into bursts, `k > 1` spaces them more evenly. This is the parameterisation of
//! `vllm bench serve --burstiness`. As there, the first request goes at offset 0 and each gap
//! follows the request before it.

use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Gamma};

/// How open-loop send times are drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Process {
    /// Every request at offset 0 (`--rate inf`).
    AllAtOnce,
    /// Gamma-distributed gaps with mean `1/rate` seconds and shape `burstiness`.
    Gamma {
        /// Requests per second on average.
        rate: f64,
        /// Gamma shape `k`; 1 is Poisson.
        burstiness: f64,
    },
}

/// Yields nanosecond offsets from the run start, one per request, in non-decreasing order; an
/// error once the schedule runs past what a u64 of nanoseconds holds (about 584 years).
pub struct Offsets {
    gamma: Option<Gamma<f64>>,
    rng: ChaCha8Rng,
    elapsed_s: f64,
    first: bool,
}

impl Offsets {
    /// Starts the process; fails when the parameters do not describe a distribution.
    pub fn new(process: Process, rng: ChaCha8Rng) -> Result<Self, String> {
        let gamma = match process {
            Process::AllAtOnce => None,
            Process::Gamma { rate, burstiness } => {
                if !(rate.is_finite() && rate > 0.0) {
                    return Err(format!(
                        "--rate must be a positive number or inf, got {rate}"
                    ));
                }
                if !(burstiness.is_finite() && burstiness > 0.0) {
                    return Err(format!("--burstiness must be positive, got {burstiness}"));
                }
                let scale = 1.0 / (rate * burstiness);
                if !(scale.is_finite() && scale > 0.0) {
                    return Err(format!(
                        "--rate {rate} with --burstiness {burstiness} gives a mean gap that a float cannot hold; use a smaller rate or burstiness"
                    ));
                }
                Some(
                    Gamma::new(burstiness, scale).map_err(|e| {
                        format!("--burstiness {burstiness} with --rate {rate}: {e}")
                    })?,
                )
            }
        };
        Ok(Self {
            gamma,
            rng,
            elapsed_s: 0.0,
            first: true,
        })
    }
}

impl Iterator for Offsets {
    type Item = Result<u64, String>;

    fn next(&mut self) -> Option<Self::Item> {
        let Some(gamma) = &self.gamma else {
            return Some(Ok(0));
        };
        if self.first {
            self.first = false;
        } else {
            self.elapsed_s += gamma.sample(&mut self.rng);
        }
        let ns = (self.elapsed_s * 1e9).round();
        // u64::MAX as f64 rounds up to 2^64, so `<` keeps the cast exact and in range.
        Some(if ns < u64::MAX as f64 {
            Ok(ns as u64)
        } else {
            Err(format!(
                "the schedule passes 2^64 ns (about 584 years) at {:.3e} s; use a higher --rate or fewer --num-prompts",
                self.elapsed_s
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn gaps(rate: f64, k: f64, n: usize) -> Vec<f64> {
        let offs: Vec<u64> = Offsets::new(
            Process::Gamma {
                rate,
                burstiness: k,
            },
            ChaCha8Rng::seed_from_u64(7),
        )
        .unwrap()
        .take(n)
        .map(Result::unwrap)
        .collect();
        offs.windows(2)
            .map(|w| (w[1] - w[0]) as f64 / 1e9)
            .collect()
    }

    fn mean_cv(xs: &[f64]) -> (f64, f64) {
        let m = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / xs.len() as f64;
        (m, var.sqrt() / m)
    }

    #[test]
    fn mean_gap_is_inverse_rate_and_cv_follows_shape() {
        for (rate, k) in [(2.0, 1.0), (0.3, 0.7), (50.0, 4.0)] {
            let (m, cv) = mean_cv(&gaps(rate, k, 40_000));
            assert!((m * rate - 1.0).abs() < 0.03, "rate {rate} k {k}: mean {m}");
            let want = 1.0 / k.sqrt();
            assert!(
                (cv - want).abs() / want < 0.05,
                "rate {rate} k {k}: cv {cv} want {want}"
            );
        }
    }

    #[test]
    fn offsets_start_at_zero_and_never_decrease() {
        let offs: Vec<u64> = Offsets::new(
            Process::Gamma {
                rate: 100.0,
                burstiness: 0.2,
            },
            ChaCha8Rng::seed_from_u64(1),
        )
        .unwrap()
        .take(1000)
        .map(Result::unwrap)
        .collect();
        assert_eq!(offs[0], 0);
        assert!(offs.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn a_schedule_past_u64_nanoseconds_is_an_error() {
        let mut offs = Offsets::new(
            Process::Gamma {
                rate: 1e-300,
                burstiness: 1.0,
            },
            ChaCha8Rng::seed_from_u64(1),
        )
        .unwrap();
        assert_eq!(offs.next(), Some(Ok(0)));
        assert!(offs.next().unwrap().is_err());
        let too_fast = Offsets::new(
            Process::Gamma {
                rate: 1e308,
                burstiness: 10.0,
            },
            ChaCha8Rng::seed_from_u64(1),
        );
        assert!(too_fast.err().is_some_and(|e| e.contains("smaller rate")));
    }

    #[test]
    fn rejects_bad_parameters() {
        for (rate, k) in [(0.0, 1.0), (-1.0, 1.0), (1.0, 0.0), (f64::NAN, 1.0)] {
            assert!(Offsets::new(
                Process::Gamma {
                    rate,
                    burstiness: k
                },
                ChaCha8Rng::seed_from_u64(1)
            )
            .is_err());
        }
    }
}
