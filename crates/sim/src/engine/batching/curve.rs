//! A cost that depends on a size, given as measured points and read between them by straight
//! lines: the time of a decode step by batch size, the prefill rate by tokens in a step. Real
//! engines are neither linear nor constant in either (published llama-benchy sweeps of one GPU
//! go from 17 ms per step at batch 1 to 141 ms at 64, concave), so a profile gives the points it
//! was calibrated on and the model reads the curve.

/// The longest step time a cost curve may name, in ms (an hour): past it, a typo.
pub const MAX_STEP_MS: f64 = 3_600_000.0;

/// Points `(x, y)` joined by straight lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// Sorted by x, at least one, x unique.
    points: Vec<(f64, f64)>,
    /// Past the last point: go on along the last segment (a cost that keeps growing), or stay
    /// at the last value (a rate that has saturated).
    beyond: Beyond,
}

/// What a curve does past its last point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Beyond {
    /// Continue the last segment's slope.
    Extend,
    /// Keep the last value.
    Flat,
}

/// Why a curve cannot be built or read from its text; the parse errors quote the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CurveError {
    /// No point at all.
    #[error("a curve needs at least one point")]
    Empty,
    /// A point is negative, NaN or infinite.
    #[error("curve points must be finite and not negative")]
    NotFinite,
    /// Two points share a size.
    #[error("curve points must have distinct sizes")]
    SameSize,
    /// A part of `X:Y,…` has no `:`.
    #[error("`{part}`: expected SIZE:VALUE")]
    NotPoint {
        /// The part as given.
        part: String,
    },
    /// A point's size or value is not a number.
    #[error("`{part}`: `{word}` is not a number")]
    PointNumber {
        /// The point as given.
        part: String,
        /// The word that is not a number.
        word: String,
    },
    /// A side of `A+B` is not a number.
    #[error("`{text}`: `{word}` is not a number (want A+B)")]
    LineNumber {
        /// The whole cost as given.
        text: String,
        /// The side that is not a number.
        word: String,
    },
    /// A single value is not a number.
    #[error("`{text}`: expected a number or SIZE:VALUE points")]
    NotNumber {
        /// The text as given.
        text: String,
    },
    /// A step takes longer than [`MAX_STEP_MS`].
    #[error("`{text}`: a step of more than {MAX_STEP_MS} ms (an hour)")]
    StepTooLong {
        /// The cost as given.
        text: String,
    },
    /// A rate is zero, which would never finish a prefill.
    #[error("`{text}`: every rate must be above 0")]
    ZeroRate {
        /// The rate as given.
        text: String,
    },
}

// Points are finite (checked by `new`), so equality is an equivalence.
impl Eq for Curve {}

impl Curve {
    /// A curve through `points` (any order). Needs at least one point, finite values, distinct
    /// x and y ≥ 0.
    pub fn new(mut points: Vec<(f64, f64)>, beyond: Beyond) -> Result<Self, CurveError> {
        if points.is_empty() {
            return Err(CurveError::Empty);
        }
        if points
            .iter()
            .any(|(x, y)| !x.is_finite() || !y.is_finite() || *x < 0.0 || *y < 0.0)
        {
            return Err(CurveError::NotFinite);
        }
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        if points.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(CurveError::SameSize);
        }
        Ok(Self { points, beyond })
    }

    /// `a + b·x`: the straight line of a decode step, `a` its fixed part and `b` its cost per
    /// sequence.
    pub fn linear(a: f64, b: f64) -> Result<Self, CurveError> {
        Self::new(vec![(0.0, a), (1.0, a + b)], Beyond::Extend)
    }

    /// Parses `X:Y,X:Y,…` (`1:17.5,8:53.1,64:141.4`).
    pub fn parse(text: &str, beyond: Beyond) -> Result<Self, CurveError> {
        let mut points = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (x, y) = part.split_once(':').ok_or_else(|| CurveError::NotPoint {
                part: part.to_owned(),
            })?;
            let num = |s: &str| {
                s.trim()
                    .parse::<f64>()
                    .map_err(|_| CurveError::PointNumber {
                        part: part.to_owned(),
                        word: s.to_owned(),
                    })
            };
            points.push((num(x)?, num(y)?));
        }
        Self::new(points, beyond)
    }

    /// A step cost as a person types it: `A+B` (`8+0.5`: 8 ms plus 0.5 ms per sequence), a
    /// single number (a constant), or points (`1:17.5,8:53.1`), continued past the last one.
    pub fn parse_cost(text: &str) -> Result<Self, CurveError> {
        let text = text.trim();
        // The `+` of `A+B`, not one of an exponent (`1e+3`).
        let plus = text
            .char_indices()
            .find(|&(i, c)| c == '+' && i > 0 && !text[..i].ends_with(['e', 'E']))
            .map(|(i, _)| i);
        let curve = match plus.filter(|_| !text.contains(':')) {
            Some(i) => {
                let num = |s: &str| {
                    s.trim().parse::<f64>().map_err(|_| CurveError::LineNumber {
                        text: text.to_owned(),
                        word: s.trim().to_owned(),
                    })
                };
                Self::linear(num(&text[..i])?, num(&text[i + 1..])?)?
            }
            None => Self::parse_rate_or_points(text, Beyond::Extend)?,
        };
        if curve.points.iter().any(|&(_, ms)| ms > MAX_STEP_MS) {
            return Err(CurveError::StepTooLong {
                text: text.to_owned(),
            });
        }
        Ok(curve)
    }

    /// A rate as a person types it: one number (`5000`), or points (`1024:3500,16384:7100`)
    /// that stay at the last value past the last one. Every rate must be above zero: a zero
    /// rate would never finish a prefill.
    pub fn parse_rate(text: &str) -> Result<Self, CurveError> {
        let curve = Self::parse_rate_or_points(text.trim(), Beyond::Flat)?;
        if curve.points.iter().any(|&(_, rate)| rate <= 0.0) {
            return Err(CurveError::ZeroRate {
                text: text.trim().to_owned(),
            });
        }
        Ok(curve)
    }

    fn parse_rate_or_points(text: &str, beyond: Beyond) -> Result<Self, CurveError> {
        if text.contains(':') {
            return Self::parse(text, beyond);
        }
        let value = text.parse::<f64>().map_err(|_| CurveError::NotNumber {
            text: text.to_owned(),
        })?;
        Self::new(vec![(1.0, value)], beyond)
    }

    /// The value at `x`: the first point's value before it, straight lines between points,
    /// and past the last point as `beyond` says. Never negative.
    pub fn at(&self, x: f64) -> f64 {
        let pts = &self.points;
        let first = pts[0];
        if x <= first.0 || pts.len() == 1 {
            return first.1;
        }
        for w in pts.windows(2) {
            let ((x0, y0), (x1, y1)) = (w[0], w[1]);
            if x <= x1 {
                return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
            }
        }
        let last = pts[pts.len() - 1];
        match self.beyond {
            Beyond::Flat => last.1,
            Beyond::Extend => {
                let prev = pts[pts.len() - 2];
                let slope = (last.1 - prev.1) / (last.0 - prev.0);
                (last.1 + slope * (x - last.0)).max(0.0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_between_points_and_past_them() {
        let c = Curve::parse("1:10, 3:20 ,5:40", Beyond::Extend).unwrap();
        assert_eq!(c.at(0.0), 10.0);
        assert_eq!(c.at(1.0), 10.0);
        assert_eq!(c.at(2.0), 15.0);
        assert_eq!(c.at(4.0), 30.0);
        assert_eq!(c.at(7.0), 60.0);
        let flat = Curve::parse("1:10,3:20", Beyond::Flat).unwrap();
        assert_eq!(flat.at(100.0), 20.0);
        let line = Curve::linear(5.0, 2.0).unwrap();
        assert_eq!(line.at(10.0), 25.0);
        let one = Curve::parse("4:7", Beyond::Extend).unwrap();
        assert_eq!((one.at(1.0), one.at(9.0)), (7.0, 7.0));
    }

    #[test]
    fn typed_costs_and_rates() {
        let line = Curve::parse_cost("8+0.5").unwrap();
        assert_eq!((line.at(1.0), line.at(64.0)), (8.5, 40.0));
        let pts = Curve::parse_cost("1:10,3:20").unwrap();
        assert_eq!(pts.at(5.0), 30.0);
        assert_eq!(Curve::parse_cost("12").unwrap().at(50.0), 12.0);
        let rate = Curve::parse_rate("1024:100,2048:200").unwrap();
        assert_eq!(rate.at(1e6), 200.0);
        assert_eq!(Curve::parse_rate(" 5000 ").unwrap().at(3.0), 5000.0);
        assert_eq!(
            Curve::parse_cost("8+x").unwrap_err().to_string(),
            "`8+x`: `x` is not a number (want A+B)"
        );
        assert!(Curve::parse_rate("fast").is_err());
        assert!(Curve::parse_cost("-1+2").is_err());
    }

    #[test]
    fn rates_above_zero_and_steps_below_an_hour() {
        assert!(Curve::parse_rate("0").is_err());
        assert!(Curve::parse_rate("1:0,2:0").is_err());
        assert!(Curve::parse_rate("1:5,2:0").is_err());
        assert!(Curve::parse_cost("1e300+1e300").is_err());
        assert_eq!(Curve::parse_cost("1e+3+2").unwrap().at(1.0), 1002.0);
        assert_eq!(Curve::parse_cost("10+0.5").unwrap().at(4.0), 12.0);
    }

    #[test]
    fn bad_points_are_refused() {
        assert!(Curve::parse("", Beyond::Flat).is_err());
        assert!(Curve::parse("1:2,1:3", Beyond::Flat).is_err());
        assert!(Curve::parse("1-2", Beyond::Flat)
            .unwrap_err()
            .to_string()
            .contains("SIZE:VALUE"));
        assert_eq!(
            Curve::parse("1:x", Beyond::Flat).unwrap_err().to_string(),
            "`1:x`: `x` is not a number"
        );
        assert!(Curve::parse("1:-2", Beyond::Flat).is_err());
        assert!(Curve::parse("1:inf", Beyond::Flat).is_err());
    }
}
