//! How the request rate moves over a run: fixed, ramped by request index (vLLM's
//! `--ramp-up-strategy`) or ramped over time (`--ramp 30s`).
//!
//! A ramp by index gives request `i` of `n` the rate `r(p)` at progress `p = i / (n − 1)`, and
//! its gap is drawn at that rate, as vLLM does. A ramp over time is exact for a non-homogeneous
//! process: unit-mean gaps are summed in "operational time" `s`, and each arrival lands at
//! `t = Λ⁻¹(s)` where `Λ(t) = ∫₀ᵗ r(u) du` is the expected number of arrivals by `t`. With
//! Poisson gaps this is the time-rescaling theorem; with gamma gaps it keeps the burstiness
//! shape along the ramp. After the ramp the rate stays at its end value.

use super::ProcessError;

/// Linear or exponential interpolation between a start and an end rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RampShape {
    /// `r(p) = start + (end − start)·p`.
    Linear,
    /// `r(p) = start·(end/start)^p`: equal ratios in equal steps.
    Exponential,
}

/// A rate that moves from `start` to `end` requests per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ramp {
    /// Rate at the beginning, requests per second.
    pub start: f64,
    /// Rate at the end, requests per second.
    pub end: f64,
    /// How it moves between them.
    pub shape: RampShape,
}

/// The rate of an open-loop schedule over the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateShape {
    /// The same rate throughout, requests per second.
    Fixed(f64),
    /// Ramped by request index over `requests` requests.
    ByIndex {
        /// The ramp.
        ramp: Ramp,
        /// How many requests the ramp spans.
        requests: u64,
    },
    /// Ramped over the first `over_s` seconds, then held at the end rate.
    OverTime {
        /// The ramp.
        ramp: Ramp,
        /// Length of the ramp in seconds.
        over_s: f64,
    },
}

impl Ramp {
    /// The rate at progress `p` in `[0, 1]`.
    pub fn at(&self, p: f64) -> f64 {
        match self.shape {
            RampShape::Linear => self.start + (self.end - self.start) * p,
            RampShape::Exponential => self.start * (self.end / self.start).powf(p),
        }
    }

    fn check(&self) -> Result<(), ProcessError> {
        let ok = |r: f64| r.is_finite() && r > 0.0;
        let start_ok = match self.shape {
            RampShape::Linear => self.start.is_finite() && self.start >= 0.0,
            RampShape::Exponential => ok(self.start),
        };
        if !start_ok {
            let need = match self.shape {
                RampShape::Linear => "zero or more",
                RampShape::Exponential => "positive (an exponential ramp cannot start at 0)",
            };
            return Err(ProcessError::Parameters(format!(
                "the ramp's start rate must be {need}, got {}",
                tokenpipe_format::number::shortest(self.start)
            )));
        }
        if !ok(self.end) {
            return Err(ProcessError::Parameters(format!(
                "the ramp's end rate must be positive, got {}",
                tokenpipe_format::number::shortest(self.end)
            )));
        }
        Ok(())
    }

    /// `Λ(t)` over a ramp of `len` seconds, for `t` in `[0, len]`.
    fn integral(&self, t: f64, len: f64) -> f64 {
        match self.shape {
            RampShape::Linear => self.start * t + (self.end - self.start) * t * t / (2.0 * len),
            RampShape::Exponential => {
                let ln_q = (self.end / self.start).ln();
                if ln_q.abs() < 1e-12 {
                    self.start * t
                } else {
                    self.start * len / ln_q * ((ln_q * t / len).exp() - 1.0)
                }
            }
        }
    }

    /// `Λ⁻¹(s)` over a ramp of `len` seconds, for `s` in `[0, Λ(len)]`.
    fn inverse(&self, s: f64, len: f64) -> f64 {
        match self.shape {
            RampShape::Linear => {
                // a·t + c·t² = s with c = (end − start)/(2·len); this root form is stable for
                // c of either sign and for c = 0.
                let (a, c) = (self.start, (self.end - self.start) / (2.0 * len));
                let root = (a * a + 4.0 * c * s).max(0.0).sqrt();
                if a + root == 0.0 {
                    0.0
                } else {
                    2.0 * s / (a + root)
                }
            }
            RampShape::Exponential => {
                let ln_q = (self.end / self.start).ln();
                if ln_q.abs() < 1e-12 {
                    s / self.start
                } else {
                    len / ln_q * (1.0 + s * ln_q / (self.start * len)).ln()
                }
            }
        }
    }
}

impl RateShape {
    /// Checks the rates; the message names what is wrong.
    pub fn check(&self) -> Result<(), ProcessError> {
        match *self {
            RateShape::Fixed(r) if !(r.is_finite() && r > 0.0) => {
                Err(ProcessError::Parameters(format!(
                    "--rate must be a positive number or inf, got {}",
                    tokenpipe_format::number::shortest(r)
                )))
            }
            RateShape::Fixed(_) => Ok(()),
            RateShape::ByIndex { ramp, .. } => ramp.check(),
            RateShape::OverTime { ramp, over_s } => {
                if !(over_s.is_finite() && over_s > 0.0) {
                    return Err(ProcessError::Parameters(format!(
                        "--ramp must be a positive duration, got {over_s} s"
                    )));
                }
                ramp.check()
            }
        }
    }

    /// The rate request `index` is drawn at (ramps by index); `None` for a ramp over time,
    /// which is not drawn per request.
    pub fn rate_for_index(&self, index: u64) -> Option<f64> {
        match *self {
            RateShape::Fixed(r) => Some(r),
            RateShape::ByIndex { ramp, requests } => {
                let p = index as f64 / requests.saturating_sub(1).max(1) as f64;
                Some(ramp.at(p.min(1.0)))
            }
            RateShape::OverTime { .. } => None,
        }
    }

    /// For a ramp over time: the run time at which `s` expected arrivals have happened.
    pub fn time_at_operational(&self, s: f64) -> f64 {
        match *self {
            RateShape::OverTime { ramp, over_s } => {
                let in_ramp = ramp.integral(over_s, over_s);
                if s <= in_ramp {
                    ramp.inverse(s, over_s).min(over_s)
                } else {
                    over_s + (s - in_ramp) / ramp.end
                }
            }
            RateShape::Fixed(r) => s / r,
            RateShape::ByIndex { .. } => f64::NAN,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(start: f64, end: f64, shape: RampShape) -> Ramp {
        Ramp { start, end, shape }
    }

    #[test]
    fn ramps_by_index_hit_both_ends_like_vllm() {
        let lin = RateShape::ByIndex {
            ramp: ramp(1.0, 5.0, RampShape::Linear),
            requests: 5,
        };
        let rates: Vec<f64> = (0..5).map(|i| lin.rate_for_index(i).unwrap()).collect();
        assert_eq!(rates, [1.0, 2.0, 3.0, 4.0, 5.0]);
        let exp = RateShape::ByIndex {
            ramp: ramp(1.0, 16.0, RampShape::Exponential),
            requests: 5,
        };
        let rates: Vec<f64> = (0..5).map(|i| exp.rate_for_index(i).unwrap()).collect();
        for (got, want) in rates.iter().zip([1.0, 2.0, 4.0, 8.0, 16.0]) {
            assert!((got - want).abs() < 1e-9, "{rates:?}");
        }
    }

    #[test]
    fn the_inverse_undoes_the_integral_for_every_shape() {
        for r in [
            ramp(1.0, 10.0, RampShape::Linear),
            ramp(10.0, 1.0, RampShape::Linear),
            ramp(0.0, 4.0, RampShape::Linear),
            ramp(3.0, 3.0, RampShape::Linear),
            ramp(0.5, 20.0, RampShape::Exponential),
            ramp(20.0, 0.5, RampShape::Exponential),
            ramp(2.0, 2.0, RampShape::Exponential),
        ] {
            for t in [0.0, 0.1, 3.0, 7.5, 30.0] {
                let s = r.integral(t, 30.0);
                let back = r.inverse(s, 30.0);
                assert!((back - t).abs() < 1e-6, "{r:?} t {t}: got {back}");
            }
        }
    }

    #[test]
    fn after_a_ramp_over_time_the_end_rate_holds() {
        let shape = RateShape::OverTime {
            ramp: ramp(1.0, 3.0, RampShape::Linear),
            over_s: 10.0,
        };
        // 20 expected arrivals in the ramp (mean rate 2 over 10 s), then 3 per second.
        assert!((shape.time_at_operational(20.0) - 10.0).abs() < 1e-9);
        assert!((shape.time_at_operational(26.0) - 12.0).abs() < 1e-9);
    }

    #[test]
    fn bad_rates_are_named() {
        let bad = RateShape::ByIndex {
            ramp: ramp(0.0, 5.0, RampShape::Exponential),
            requests: 3,
        };
        assert!(bad.check().unwrap_err().to_string().contains("exponential"));
        let bad = RateShape::OverTime {
            ramp: ramp(1.0, 5.0, RampShape::Linear),
            over_s: 0.0,
        };
        assert!(bad.check().unwrap_err().to_string().contains("--ramp"));
        assert!(RateShape::Fixed(-1.0).check().is_err());
    }
}
