//! vLLM's schedule (`--vllm-compatible`), as `vllm bench serve` computes it since vLLM PR
//! #21108: every request, the first included, waits its own gamma gap after the one before, and
//! with a fixed rate the cumulative delays are then rescaled by one factor so that the last
//! request lands at exactly `N / rate`. With a ramp by index nothing is rescaled, as in vLLM.
//!
//! Why this is not our default: rescaling makes the total fixed, so the gaps are no longer
//! independent — with `K = 1` the offsets are `N/rate` times the order statistics of a uniform
//! sample, not a Poisson process, and the first request is needlessly delayed. It exists so a
//! run can be compared gap for gap with a published `vllm bench serve` run.
//!
//! The gaps come from numpy's legacy generator seeded with `--seed`, drawn as vLLM draws them
//! (`np.random.gamma(shape=K, scale=1/(rate·K))`, one per request in order), so the same seed
//! gives the same offsets as `vllm bench serve --seed` to the nanosecond (vLLM's random dataset
//! draws its lengths from a generator of its own, which leaves this one alone).
//!
//! The rescaling factor needs the sum of all `N` gaps before the first offset is written; this
//! process draws them once from a copy of the generator and again while writing, so memory
//! stays constant.

use super::{seconds_to_ns, Arrival, ArrivalProcess, ProcessError, RateShape, UnitGaps};
use crate::numpy::NumpyLegacy;
use tokenpipe_format::LoopMode;

/// Draws vLLM's gaps: numpy's gamma, or `1/rate` for constant gaps.
#[derive(Clone)]
struct VllmGaps {
    gaps: UnitGaps,
    numpy: NumpyLegacy,
}

impl VllmGaps {
    fn gap_at(&mut self, rate: f64) -> f64 {
        match self.gaps {
            UnitGaps::Constant => 1.0 / rate,
            UnitGaps::Gamma { burstiness } => {
                let theta = 1.0 / (rate * burstiness);
                self.numpy.gamma(burstiness, theta)
            }
        }
    }
}

/// vLLM's schedule for `requests` requests.
pub struct VllmCompatible {
    sampler: VllmGaps,
    rate: RateShape,
    requests: u64,
    index: u64,
    cumulative_s: f64,
    /// Multiplies the cumulative delays; 1 with a ramp.
    factor: f64,
    /// `N / rate`, where the last request lands (fixed rate only).
    target_s: Option<f64>,
}

impl VllmCompatible {
    /// Starts the schedule with numpy's generator seeded by `seed`, as `np.random.seed(seed)`;
    /// fails when the parameters describe no process or a ramp over time (which vLLM has not).
    pub fn new(
        gaps: UnitGaps,
        rate: RateShape,
        requests: u64,
        seed: u32,
    ) -> Result<Self, ProcessError> {
        if let RateShape::OverTime { .. } = rate {
            return Err(ProcessError::Parameters(
                "--vllm-compatible has no ramp over time (vLLM ramps by request index: use --ramp-by-index)"
                    .into(),
            ));
        }
        rate.check()?;
        if let UnitGaps::Gamma { burstiness: k } = gaps {
            if !(k.is_finite() && k > 0.0) {
                return Err(ProcessError::Parameters(format!(
                    "--burstiness must be positive, got {k}"
                )));
            }
            if let RateShape::Fixed(r) = rate {
                let theta = 1.0 / (r * k);
                if !(theta.is_finite() && theta > 0.0) {
                    return Err(ProcessError::Parameters(format!(
                        "--rate {r} with --burstiness {k} gives a mean gap that a float cannot hold; use a smaller rate or burstiness"
                    )));
                }
            }
        }
        let sampler = VllmGaps {
            gaps,
            numpy: NumpyLegacy::new(seed),
        };
        let mut this = Self {
            sampler,
            rate,
            requests,
            index: 0,
            cumulative_s: 0.0,
            factor: 1.0,
            target_s: None,
        };
        if let RateShape::Fixed(r) = rate {
            let mut dry = this.sampler.clone();
            let mut total = 0.0;
            for _ in 0..requests {
                total += dry.gap_at(r);
            }
            if total > 0.0 {
                let target = requests as f64 / r;
                this.factor = target / total;
                this.target_s = Some(target);
            }
        }
        Ok(this)
    }
}

impl ArrivalProcess for VllmCompatible {
    fn mode(&self) -> LoopMode {
        LoopMode::Open
    }

    fn limit(&self) -> Option<u64> {
        Some(self.requests)
    }

    fn next_arrival(&mut self) -> Result<Option<Arrival>, ProcessError> {
        if self.index >= self.requests {
            return Ok(None);
        }
        let rate = self.rate.rate_for_index(self.index).unwrap_or(1.0);
        self.cumulative_s += self.sampler.gap_at(rate);
        self.index += 1;
        let at_s = match self.target_s {
            // The last lands on N/rate exactly, not within a rounding of it.
            Some(target) if self.index == self.requests => target,
            _ => self.cumulative_s * self.factor,
        };
        seconds_to_ns(at_s).map(|ns| Some(Arrival::at(Some(ns))))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Ramp, RampShape};
    use super::*;

    fn offsets(gaps: UnitGaps, rate: RateShape, n: u64, seed: u32) -> Vec<u64> {
        let mut p = VllmCompatible::new(gaps, rate, n, seed).unwrap();
        let mut out = vec![];
        while let Some(a) = p.next_arrival().unwrap() {
            out.push(a.offset_ns.unwrap());
        }
        out
    }

    #[test]
    fn the_last_request_lands_at_n_over_rate_and_the_first_is_delayed() {
        for (n, rate, k, seed) in [(40, 2.0, 1.0, 1), (200, 0.3, 0.7, 42), (1000, 7.0, 3.0, 9)] {
            let offs = offsets(
                UnitGaps::Gamma { burstiness: k },
                RateShape::Fixed(rate),
                n,
                seed,
            );
            assert_eq!(offs.len() as u64, n);
            let want = (n as f64 / rate * 1e9).round() as u64;
            assert_eq!(*offs.last().unwrap(), want, "n {n} rate {rate}");
            assert!(offs[0] > 0);
            assert!(offs.windows(2).all(|w| w[0] <= w[1]));
        }
    }

    #[test]
    fn rescaling_keeps_the_ratios_of_the_cumulative_gaps() {
        // The same draws unscaled, straight from numpy's generator: offsets[i] / offsets[j]
        // must equal cumulative[i] / cumulative[j].
        let rate = RateShape::Fixed(3.0);
        let gaps = UnitGaps::Gamma { burstiness: 1.0 };
        let mut raw = NumpyLegacy::new(5);
        let mut cum = vec![];
        let mut t = 0.0;
        for _ in 0..50 {
            t += raw.gamma(1.0, 1.0 / 3.0);
            cum.push(t);
        }
        let offs = offsets(gaps, rate, 50, 5);
        for i in [0, 10, 30] {
            let ratio = offs[i] as f64 / offs[49] as f64;
            assert!((ratio - cum[i] / cum[49]).abs() < 1e-8, "{i}");
        }
    }

    #[test]
    fn a_ramp_is_not_rescaled_and_a_ramp_over_time_is_refused() {
        let ramp = Ramp {
            start: 1.0,
            end: 10.0,
            shape: RampShape::Linear,
        };
        let offs = offsets(
            UnitGaps::Constant,
            RateShape::ByIndex { ramp, requests: 10 },
            10,
            1,
        );
        // Constant gaps at rates 1, 2, ..., 10: the first at 1 s, the last at the harmonic sum.
        assert_eq!(offs[0], 1_000_000_000);
        let h: f64 = (1..=10).map(|r| 1.0 / r as f64).sum();
        assert_eq!(offs[9], (h * 1e9).round() as u64);
        let over_time = VllmCompatible::new(
            UnitGaps::Constant,
            RateShape::OverTime { ramp, over_s: 5.0 },
            10,
            1,
        );
        assert!(over_time.is_err());
    }

    /// The offsets vLLM 0.32's `get_request` computes (numpy 2.3): `np.random.seed(s)`, a gamma
    /// gap per request, the cumulative sums rescaled to end at N/rate, in nanoseconds.
    #[test]
    fn offsets_are_vllms_to_the_nanosecond() {
        let poisson_like = offsets(
            UnitGaps::Gamma { burstiness: 0.7 },
            RateShape::Fixed(2.0),
            10,
            0,
        );
        assert_eq!(
            poisson_like,
            [
                303898848, 673460102, 862728638, 1062707211, 3188718325, 3943708486, 4269631540,
                4283798144, 4286151288, 5000000000
            ]
        );
        let arena = offsets(
            UnitGaps::Gamma { burstiness: 0.7 },
            RateShape::Fixed(0.3),
            5,
            42,
        );
        assert_eq!(
            arena,
            [
                2202734442,
                10667612451,
                11287915191,
                11439121887,
                16666666667
            ]
        );
        // seed 0, rate 2, burstiness 0.7, 40 prompts: vLLM sent its first request at 0.316 s.
        let forty = offsets(
            UnitGaps::Gamma { burstiness: 0.7 },
            RateShape::Fixed(2.0),
            40,
            0,
        );
        assert_eq!(forty[0], 316266897);
    }
}
