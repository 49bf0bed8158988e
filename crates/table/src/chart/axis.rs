//! The x axis of a chart against load: logarithmic in base 2 when the loads are powers of two
//! (a concurrency sweep 1 2 4 … 64 spreads its points evenly instead of crowding the low
//! loads into one corner), linear otherwise, with whole-number ticks for a setting that counts
//! (concurrency, batch size). The ticks are chosen here, not by plotters, so that they read `1 2
//! 4 8` and never `2.5` requests in flight; the choice is a pure function of the loads, tested
//! without drawing.

use super::draw::{padded, tick};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use std::ops::Range;

/// The most ticks an axis shows before it thins them.
const MAX_TICKS: usize = 10;

/// A load axis: how a load maps to the plotted coordinate, its range and its ticks (both in
/// plotted coordinates).
#[derive(Debug, Clone, PartialEq)]
pub struct LoadAxis {
    /// Whether the plotted coordinate is log₂ of the load.
    pub log2: bool,
    /// The plotted range, padded around the loads.
    pub range: Range<f64>,
    /// Where the ticks go, in plotted coordinates.
    pub ticks: Vec<f64>,
}

impl LoadAxis {
    /// The axis of `loads`; `whole` when the setting counts things (ticks at whole numbers).
    pub fn new(loads: &[f64], whole: bool) -> LoadAxis {
        let finite: Vec<f64> = loads.iter().copied().filter(|v| v.is_finite()).collect();
        let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if finite.is_empty() {
            return LoadAxis {
                log2: false,
                range: 0.0..1.0,
                ticks: vec![0.0, 1.0],
            };
        }
        if powers_of_two(&finite) {
            let (e_lo, e_hi) = (lo.log2().round(), hi.log2().round());
            let span = (e_hi - e_lo) as usize;
            let step = span.div_ceil(MAX_TICKS - 1).max(1);
            let ticks = (0..=span).step_by(step).map(|k| e_lo + k as f64).collect();
            return LoadAxis {
                log2: true,
                range: e_lo - 0.35..e_hi + 0.35,
                ticks,
            };
        }
        let range = padded(lo, hi);
        let step = nice_step(hi - lo, whole);
        let first = (range.start / step).ceil() as i64;
        let last = (range.end / step).floor() as i64;
        let ticks = (first..=last)
            .map(|k| k as f64 * step)
            .filter(|&v| !whole || v >= 0.0)
            .collect();
        LoadAxis {
            log2: false,
            range,
            ticks,
        }
    }

    /// The plotted coordinate of load `x`.
    pub fn to_plot(&self, x: f64) -> f64 {
        if self.log2 {
            x.log2()
        } else {
            x
        }
    }

    /// The tick label at plotted coordinate `v`: the load itself (`16`, not `4` for 2⁴).
    pub fn label(&self, v: f64) -> String {
        if self.log2 {
            tick(v.round().exp2())
        } else {
            tick(v)
        }
    }
}

/// A [`LoadAxis`] as a plotters coordinate: its range, with exactly its ticks as the grid and
/// label positions (plotters' own choice would put ticks between whole loads).
pub struct Ticked {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl From<&LoadAxis> for Ticked {
    fn from(axis: &LoadAxis) -> Ticked {
        Ticked {
            inner: axis.range.clone().into(),
            ticks: axis.ticks.clone(),
        }
    }
}

impl Ranged for Ticked {
    type ValueType = f64;
    type FormatOption = DefaultFormatting;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.inner.range()
    }
}

/// Whether every load is a positive power of two (0.5, 1, 2, 4 …) and they span a factor of four
/// or more: what a doubling sweep looks like, and where a linear axis crowds the low loads.
pub fn powers_of_two(loads: &[f64]) -> bool {
    let all = !loads.is_empty()
        && loads.iter().all(|&x| {
            x > 0.0 && x.is_finite() && {
                let e = x.log2().round();
                e.exp2() == x
            }
        });
    let lo = loads.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = loads.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    all && hi / lo >= 4.0
}

/// A tick step of 1, 2 or 5 times a power of ten that puts at most [`MAX_TICKS`] ticks over
/// `span`; at least 1 when `whole`.
pub fn nice_step(span: f64, whole: bool) -> f64 {
    if !(span.is_finite() && span > 0.0) {
        return 1.0;
    }
    let raw = span / (MAX_TICKS - 1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * mag);
    if whole {
        step.max(1.0).round()
    } else {
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_doubling_sweep_gets_a_log2_axis_with_a_tick_at_each_load() {
        let axis = LoadAxis::new(&[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0], true);
        assert!(axis.log2);
        assert_eq!(axis.ticks, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let labels: Vec<String> = axis.ticks.iter().map(|&t| axis.label(t)).collect();
        assert_eq!(labels, ["1", "2", "4", "8", "16", "32", "64"]);
        assert_eq!(axis.to_plot(16.0), 4.0);
        assert!(axis.range.start < 0.0 && axis.range.end > 6.0);
    }

    #[test]
    fn rates_below_one_and_long_sweeps_stay_readable() {
        let axis = LoadAxis::new(&[0.5, 1.0, 2.0, 4.0], false);
        assert!(axis.log2);
        assert_eq!(axis.label(axis.ticks[0]), "0.5");
        // 2⁰ … 2¹²: 13 powers, thinned to every other one.
        let loads: Vec<f64> = (0..=12).map(|e| f64::from(e).exp2()).collect();
        let axis = LoadAxis::new(&loads, true);
        assert_eq!(axis.ticks, [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0]);
    }

    #[test]
    fn other_loads_get_a_linear_axis_with_whole_ticks_for_counts() {
        for loads in [&[1.0, 3.0, 5.0, 10.0][..], &[2.0, 4.0], &[4.0, 8.0, 12.0]] {
            assert!(!powers_of_two(loads), "{loads:?}");
        }
        let axis = LoadAxis::new(&[1.0, 3.0, 5.0, 10.0], true);
        assert!(!axis.log2);
        assert_eq!(
            axis.ticks,
            [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]
        );
        let axis = LoadAxis::new(&[1.0, 2.0], true);
        assert!(
            axis.ticks.iter().all(|t| t.fract() == 0.0),
            "{:?}",
            axis.ticks
        );
        assert_eq!(axis.ticks, [1.0, 2.0]);
        let axis = LoadAxis::new(&[0.5, 1.5, 2.5], false);
        assert_eq!(axis.ticks, [0.5, 1.0, 1.5, 2.0, 2.5]);
        assert_eq!(axis.label(2.0), "2");
    }

    #[test]
    fn steps_are_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(nice_step(9.0, true), 1.0);
        assert_eq!(nice_step(100.0, true), 20.0);
        assert_eq!(nice_step(0.9, true), 1.0);
        assert_eq!(nice_step(0.9, false), 0.1);
        assert_eq!(nice_step(f64::NAN, false), 1.0);
    }
}
