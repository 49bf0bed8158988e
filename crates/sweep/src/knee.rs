//! The saturation knee (docs/sweep.md, "The knee"): for a measured load a, let b be the
//! smallest measured load at least twice a. The output throughput gained per doubling of load
//! is (T_b / T_a)^(1 / log₂(b / a)) − 1, and the median end-to-end latency grown per doubling is
//! the same with L. The knee is the smallest a whose gain is below the threshold while the
//! latency grows by at least the threshold: more load past it buys little throughput and costs
//! every user time. Pairs a doubling apart or more keep the rule off the noise of two close
//! loads (a search's points near its capacity).

use tokenpipe_format::{Knee, PointStatus, SweepPoint};

/// The gain per doubling below which the knee is marked when `--knee-gain` is not given.
pub const DEFAULT_GAIN: f64 = 0.10;

/// The knee among `points` (any order; unusable ones and those without figures left out), or
/// `None` when no pair saturates.
pub fn find(points: &[SweepPoint], threshold: f64) -> Option<Knee> {
    let mut usable: Vec<(f64, f64, f64)> = points
        .iter()
        .filter(|p| !p.status.is(PointStatus::Unusable))
        .filter_map(|p| Some((p.value, p.output_tps?, p.e2el_p50_ms?)))
        .filter(|&(_, t, l)| t > 0.0 && l > 0.0)
        .collect();
    usable.sort_by(|a, b| a.0.total_cmp(&b.0));
    usable.dedup_by(|b, a| a.0 == b.0);
    usable.iter().enumerate().find_map(|(i, &(a, ta, la))| {
        let &(b, tb, lb) = usable[i + 1..]
            .iter()
            .find(|p| p.0 >= 2.0 * a * (1.0 - 1e-9))?;
        let doublings = (b / a).log2();
        let gain = (tb / ta).powf(1.0 / doublings) - 1.0;
        let growth = (lb / la).powf(1.0 / doublings) - 1.0;
        (gain < threshold && growth >= threshold).then_some(Knee {
            value: a,
            next: b,
            gain_per_doubling: gain,
            latency_growth_per_doubling: growth,
            threshold,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(value: f64, tps: f64, e2el: f64) -> SweepPoint {
        SweepPoint {
            value,
            status: PointStatus::Measured.into(),
            output_tps: Some(tps),
            e2el_p50_ms: Some(e2el),
            ..SweepPoint::default()
        }
    }

    #[test]
    fn the_knee_is_where_throughput_flattens_while_latency_grows() {
        // A server of 4 slots at 10 ms a step: throughput grows with load to 4, then stays.
        let points: Vec<SweepPoint> = [1.0, 2.0, 4.0, 8.0, 16.0]
            .iter()
            .map(|&c| point(c, 100.0 * f64::min(c, 4.0), 100.0 * f64::max(1.0, c / 4.0)))
            .rev()
            .collect();
        let knee = find(&points, DEFAULT_GAIN).unwrap();
        assert_eq!((knee.value, knee.next), (4.0, 8.0));
        assert!(knee.gain_per_doubling.abs() < 1e-12);
        assert!((knee.latency_growth_per_doubling - 1.0).abs() < 1e-12);
    }

    #[test]
    fn no_knee_while_throughput_grows_or_latency_stays() {
        let growing = [
            point(1.0, 100.0, 50.0),
            point(2.0, 190.0, 55.0),
            point(4.0, 350.0, 60.0),
        ];
        assert_eq!(find(&growing, DEFAULT_GAIN), None);
        // Flat throughput with flat latency is a load that did not rise, not saturation.
        let flat = [point(1.0, 100.0, 50.0), point(2.0, 101.0, 50.0)];
        assert_eq!(find(&flat, DEFAULT_GAIN), None);
        // A gain per doubling over a quadrupling: 21 % over two doublings is 10 % a doubling.
        let spaced = [point(1.0, 100.0, 50.0), point(4.0, 121.0, 200.0)];
        assert_eq!(find(&spaced, 0.10), None);
        assert!(find(&spaced, 0.11).is_some());
        // Two close loads are not compared: 4 and 5 are less than a doubling apart.
        let close = [
            point(4.0, 200.0, 200.0),
            point(5.0, 201.0, 250.0),
            point(8.0, 300.0, 260.0),
        ];
        assert_eq!(find(&close, DEFAULT_GAIN), None);
    }
}
