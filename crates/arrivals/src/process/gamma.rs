//! The gamma arrival process (`--rate R --burstiness K`), Poisson when `K = 1`.
//!
//! Inter-arrival gaps are gamma distributed with shape `k` (the burstiness) and scale
//! `1 / (rate · k)`, so the mean gap is `k · 1/(rate·k) = 1/rate` whatever `k` is, and the
//! coefficient of variation is `1/√k`: `k = 1` is a Poisson process (exponential gaps), `k < 1`
//! bunches requests into bursts, `k > 1` spaces them more evenly. This is the parameterisation of
//! `vllm bench serve --burstiness`. As there, the first request goes at offset 0 and each gap
//! follows the request before it.

use super::{seconds_to_ns, ArrivalProcess, ProcessError};
use rand_chacha::ChaCha8Rng;
use rand_distr::Distribution;
use tokenpipe_format::LoopMode;

/// Gamma-distributed gaps with mean `1/rate` seconds and shape `burstiness`, drawn from the
/// seed's arrival stream.
pub struct Gamma {
    gaps: rand_distr::Gamma<f64>,
    rng: ChaCha8Rng,
    elapsed_s: f64,
    first: bool,
}

impl Gamma {
    /// Starts the process; fails when the parameters do not describe a distribution.
    pub fn new(rate: f64, burstiness: f64, rng: ChaCha8Rng) -> Result<Self, ProcessError> {
        let bad = |m: String| ProcessError::Parameters(m);
        if !(rate.is_finite() && rate > 0.0) {
            return Err(bad(format!(
                "--rate must be a positive number or inf, got {rate}"
            )));
        }
        if !(burstiness.is_finite() && burstiness > 0.0) {
            return Err(bad(format!(
                "--burstiness must be positive, got {burstiness}"
            )));
        }
        let scale = 1.0 / (rate * burstiness);
        if !(scale.is_finite() && scale > 0.0) {
            return Err(bad(format!(
                "--rate {rate} with --burstiness {burstiness} gives a mean gap that a float cannot hold; use a smaller rate or burstiness"
            )));
        }
        let gaps = rand_distr::Gamma::new(burstiness, scale)
            .map_err(|e| bad(format!("--burstiness {burstiness} with --rate {rate}: {e}")))?;
        Ok(Self {
            gaps,
            rng,
            elapsed_s: 0.0,
            first: true,
        })
    }
}

impl ArrivalProcess for Gamma {
    fn mode(&self) -> LoopMode {
        LoopMode::Open
    }

    fn next_offset_ns(&mut self) -> Result<Option<u64>, ProcessError> {
        if self.first {
            self.first = false;
        } else {
            self.elapsed_s += self.gaps.sample(&mut self.rng);
        }
        seconds_to_ns(self.elapsed_s).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn offsets(rate: f64, k: f64, seed: u64, n: usize) -> Vec<u64> {
        let mut p = Gamma::new(rate, k, ChaCha8Rng::seed_from_u64(seed)).unwrap();
        (0..n)
            .map(|_| p.next_offset_ns().unwrap().unwrap())
            .collect()
    }

    fn gaps(rate: f64, k: f64, n: usize) -> Vec<f64> {
        offsets(rate, k, 7, n)
            .windows(2)
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
        let offs = offsets(100.0, 0.2, 1, 1000);
        assert_eq!(offs[0], 0);
        assert!(offs.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn a_schedule_past_u64_nanoseconds_is_an_error() {
        let mut slow = Gamma::new(1e-300, 1.0, ChaCha8Rng::seed_from_u64(1)).unwrap();
        assert_eq!(slow.next_offset_ns(), Ok(Some(0)));
        assert!(matches!(
            slow.next_offset_ns(),
            Err(ProcessError::Overflow { .. })
        ));
        let too_fast = Gamma::new(1e308, 10.0, ChaCha8Rng::seed_from_u64(1));
        assert!(too_fast
            .err()
            .is_some_and(|e| e.to_string().contains("smaller rate")));
    }

    #[test]
    fn rejects_bad_parameters() {
        for (rate, k) in [(0.0, 1.0), (-1.0, 1.0), (1.0, 0.0), (f64::NAN, 1.0)] {
            assert!(Gamma::new(rate, k, ChaCha8Rng::seed_from_u64(1)).is_err());
        }
    }
}
