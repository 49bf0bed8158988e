//! The open-loop renewal process (`--rate R --burstiness K`, `--arrival constant`, ramps):
//! requests arrive on their own timetable, whatever the server is doing.
//!
//! Gaps are gamma distributed with shape `k` (the burstiness) and scale `1 / (rate · k)`, so the
//! mean gap is `1/rate` whatever `k` is, and the coefficient of variation is `1/√k`: `k = 1` is a
//! Poisson process (exponential gaps), `k < 1` bunches requests into bursts, `k > 1` spaces them
//! more evenly; `--arrival constant` makes every gap exactly `1/rate`. This is the
//! parameterisation of `vllm bench serve --burstiness`. Unlike vLLM, the first request goes at
//! offset 0 and each later gap follows the request before it, and nothing is rescaled: the
//! process is a true renewal process (see [`super::VllmCompatible`] for vLLM's schedule).

use super::{seconds_to_ns, Arrival, ArrivalProcess, ProcessError, RateShape};
use rand_chacha::ChaCha8Rng;
use rand_distr::Distribution;
use tokenpipe_format::number::shortest;
use tokenpipe_format::LoopMode;

/// The shape of the gaps between arrivals, before the rate scales them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UnitGaps {
    /// Gamma distributed with this shape (1 is Poisson).
    Gamma {
        /// The gamma shape `k`.
        burstiness: f64,
    },
    /// Every gap exactly `1/rate`.
    Constant,
}

/// Draws gaps of a given shape at a given rate: the part of the open loop that vLLM's schedule
/// shares.
#[derive(Clone)]
pub(super) struct GapSampler {
    gaps: UnitGaps,
    /// Gamma at the fixed rate, built once (the common case).
    fixed: Option<rand_distr::Gamma<f64>>,
    /// Gamma of unit mean, for ramps over time.
    unit: Option<rand_distr::Gamma<f64>>,
    rng: ChaCha8Rng,
}

impl GapSampler {
    pub(super) fn new(
        gaps: UnitGaps,
        rate: &RateShape,
        rng: ChaCha8Rng,
    ) -> Result<Self, ProcessError> {
        let bad = ProcessError::Parameters;
        rate.check()?;
        let (mut fixed, mut unit) = (None, None);
        if let UnitGaps::Gamma { burstiness: k } = gaps {
            if !(k.is_finite() && k > 0.0) {
                return Err(bad(format!(
                    "--burstiness must be positive, got {}",
                    shortest(k)
                )));
            }
            if let RateShape::Fixed(r) = *rate {
                fixed = Some(gamma(k, r)?);
            }
            unit = Some(
                rand_distr::Gamma::new(k, 1.0 / k)
                    .map_err(|e| bad(format!("--burstiness {}: {e}", shortest(k))))?,
            );
        }
        Ok(Self {
            gaps,
            fixed,
            unit,
            rng,
        })
    }

    /// A gap in seconds at `rate` requests per second.
    pub(super) fn gap_at(&mut self, rate: f64) -> Result<f64, ProcessError> {
        Ok(match (self.gaps, &self.fixed) {
            (UnitGaps::Constant, _) => 1.0 / rate,
            (UnitGaps::Gamma { .. }, Some(g)) => g.sample(&mut self.rng),
            (UnitGaps::Gamma { burstiness }, None) => {
                gamma(burstiness, rate)?.sample(&mut self.rng)
            }
        })
    }

    /// A gap of unit mean, in expected arrivals.
    pub(super) fn unit_gap(&mut self) -> f64 {
        match &self.unit {
            Some(g) => g.sample(&mut self.rng),
            None => 1.0,
        }
    }
}

fn gamma(k: f64, rate: f64) -> Result<rand_distr::Gamma<f64>, ProcessError> {
    let scale = 1.0 / (rate * k);
    let (r_text, k_text) = (shortest(rate), shortest(k));
    if !(scale.is_finite() && scale > 0.0) {
        return Err(ProcessError::Parameters(format!(
            "--rate {r_text} with --burstiness {k_text} gives a mean gap that a float cannot hold; use a smaller rate or burstiness"
        )));
    }
    rand_distr::Gamma::new(k, scale).map_err(|e| {
        ProcessError::Parameters(format!("--burstiness {k_text} with --rate {r_text}: {e}"))
    })
}

/// The open loop: the first request at 0, then one gap after another.
pub struct OpenLoop {
    sampler: Option<GapSampler>,
    rate: RateShape,
    index: u64,
    /// Seconds from the start (fixed rate and ramps by index).
    elapsed_s: f64,
    /// Expected arrivals so far (ramps over time).
    operational: f64,
}

impl OpenLoop {
    /// Starts the process; fails when the parameters do not describe one.
    pub fn new(gaps: UnitGaps, rate: RateShape, rng: ChaCha8Rng) -> Result<Self, ProcessError> {
        Ok(Self {
            sampler: Some(GapSampler::new(gaps, &rate, rng)?),
            rate,
            index: 0,
            elapsed_s: 0.0,
            operational: 0.0,
        })
    }

    /// Every request at offset 0 (`--rate inf`); draws nothing.
    pub fn all_at_once() -> Self {
        Self {
            sampler: None,
            rate: RateShape::Fixed(f64::INFINITY),
            index: 0,
            elapsed_s: 0.0,
            operational: 0.0,
        }
    }
}

impl ArrivalProcess for OpenLoop {
    fn mode(&self) -> LoopMode {
        LoopMode::Open
    }

    fn next_arrival(&mut self) -> Result<Option<Arrival>, ProcessError> {
        let index = self.index;
        self.index += 1;
        let Some(sampler) = &mut self.sampler else {
            return Ok(Some(Arrival::at(Some(0))));
        };
        let at_s = match self.rate {
            RateShape::OverTime { .. } => {
                if index > 0 {
                    self.operational += sampler.unit_gap();
                }
                self.rate.time_at_operational(self.operational)
            }
            RateShape::Fixed(_) | RateShape::ByIndex { .. } => {
                if index > 0 {
                    let rate = self.rate.rate_for_index(index).unwrap_or(1.0);
                    self.elapsed_s += sampler.gap_at(rate)?;
                }
                self.elapsed_s
            }
        };
        seconds_to_ns(at_s).map(|ns| Some(Arrival::at(Some(ns))))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Ramp, RampShape};
    use super::*;
    use rand::SeedableRng;

    fn process(gaps: UnitGaps, rate: RateShape, seed: u64) -> OpenLoop {
        OpenLoop::new(gaps, rate, ChaCha8Rng::seed_from_u64(seed)).unwrap()
    }

    fn offsets_of(p: &mut OpenLoop, n: usize) -> Vec<u64> {
        (0..n)
            .map(|_| p.next_arrival().unwrap().unwrap().offset_ns.unwrap())
            .collect()
    }

    fn offsets(rate: f64, k: f64, seed: u64, n: usize) -> Vec<u64> {
        let mut p = process(
            UnitGaps::Gamma { burstiness: k },
            RateShape::Fixed(rate),
            seed,
        );
        offsets_of(&mut p, n)
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
    fn constant_gaps_are_exact() {
        let mut p = process(UnitGaps::Constant, RateShape::Fixed(4.0), 1);
        assert_eq!(
            offsets_of(&mut p, 4),
            [0, 250_000_000, 500_000_000, 750_000_000]
        );
    }

    #[test]
    fn all_at_once_is_all_zero() {
        let mut p = OpenLoop::all_at_once();
        assert_eq!(offsets_of(&mut p, 3), [0, 0, 0]);
    }

    #[test]
    fn a_linear_ramp_over_time_with_constant_gaps_lands_on_the_integral() {
        // Rate 1 → 3 over 10 s: Λ(t) = t + t²/10; the 20th expected arrival lands at 10 s and
        // the 8th at t = 2·8/(1 + √(1 + 3.2)) ≈ 6.2450 s.
        let ramp = Ramp {
            start: 1.0,
            end: 3.0,
            shape: RampShape::Linear,
        };
        let mut p = process(
            UnitGaps::Constant,
            RateShape::OverTime { ramp, over_s: 10.0 },
            1,
        );
        let offs = offsets_of(&mut p, 21);
        assert_eq!(offs[20], 10_000_000_000);
        let want = 16.0 / (1.0 + 4.2f64.sqrt());
        assert!((offs[8] as f64 / 1e9 - want).abs() < 1e-6, "{}", offs[8]);
    }

    #[test]
    fn a_ramp_by_index_speeds_up_the_gaps() {
        let ramp = Ramp {
            start: 1.0,
            end: 100.0,
            shape: RampShape::Exponential,
        };
        let mut p = process(
            UnitGaps::Gamma { burstiness: 1.0 },
            RateShape::ByIndex {
                ramp,
                requests: 2000,
            },
            3,
        );
        let offs = offsets_of(&mut p, 2000);
        let early = (offs[200] - offs[0]) as f64 / 200.0;
        let late = (offs[1999] - offs[1799]) as f64 / 200.0;
        assert!(early > 10.0 * late, "early {early} late {late}");
    }

    #[test]
    fn a_schedule_past_u64_nanoseconds_is_an_error() {
        let mut slow = process(
            UnitGaps::Gamma { burstiness: 1.0 },
            RateShape::Fixed(1e-300),
            1,
        );
        assert_eq!(slow.next_arrival(), Ok(Some(Arrival::at(Some(0)))));
        assert!(matches!(
            slow.next_arrival(),
            Err(ProcessError::Overflow { .. })
        ));
        let too_fast = OpenLoop::new(
            UnitGaps::Gamma { burstiness: 10.0 },
            RateShape::Fixed(1e308),
            ChaCha8Rng::seed_from_u64(1),
        );
        assert!(too_fast
            .err()
            .is_some_and(|e| e.to_string().contains("smaller rate")));
    }

    #[test]
    fn rejects_bad_parameters() {
        for (rate, k) in [(0.0, 1.0), (-1.0, 1.0), (1.0, 0.0), (f64::NAN, 1.0)] {
            let p = OpenLoop::new(
                UnitGaps::Gamma { burstiness: k },
                RateShape::Fixed(rate),
                ChaCha8Rng::seed_from_u64(1),
            );
            assert!(p.is_err(), "{rate} {k}");
        }
    }
}
