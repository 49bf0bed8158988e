//! The SLO a point is held to (`--slo 'ttft.p99<=2s,tpot.p50<=50ms'`) and the pass rule:
//! a bound holds when the 95 % interval of its percentile lies within it, fails when the
//! interval lies beyond it, and is unsure when the interval straddles it (docs/sweep.md,
//! "The pass rule").

use tokenpipe_format::{stat_key, SloValue, StatName, Summary};

/// One bound: percentile `percentile` of `metric` at most `bound_ms`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// The metric, as reduce names it (`ttft`, `tpot`, `e2el`, …).
    pub metric: &'static str,
    /// The percentile bounded, 0 to 100.
    pub percentile: f64,
    /// The largest value that meets the bound, in ms.
    pub bound_ms: f64,
}

impl Bound {
    /// The summary member bounded, e.g. `ttft_p99_ms`.
    pub fn key(&self) -> String {
        stat_key(self.metric, StatName::Percentile(self.percentile), "ms")
    }
}

/// Reads one `METRIC.pQ<=DURATION` bound. The metric names and the duration are `reduce
/// --slo`'s own (its parser reads them), with the percentile the bound applies to.
pub fn parse_bound(text: &str) -> Result<Bound, String> {
    let form = "expected METRIC.pQ<=DURATION such as ttft.p99<=2s or tpot.p50<=50ms";
    let (left, duration) = text
        .split_once("<=")
        .ok_or_else(|| format!("--slo: {form}, got `{text}`"))?;
    let (metric, percentile) = left
        .trim()
        .split_once(".p")
        .ok_or_else(|| format!("--slo: {form} (the percentile is missing), got `{text}`"))?;
    let percentile =
        tokenpipe_cli::parse_percentile(percentile).map_err(|e| format!("--slo: {e}"))?;
    let reduce_bound = tokenpipe_reduce::parse_slo_bound(&format!("{metric}={duration}"))
        .map_err(|e| format!("--slo: {e}"))?;
    Ok(Bound {
        metric: reduce_bound.metric.name(),
        percentile,
        bound_ms: reduce_bound.bound_ns / 1e6,
    })
}

/// Refuses a member bounded twice, which would leave the intended bound unclear.
pub fn check_unique(bounds: &[Bound]) -> Result<(), String> {
    for (i, b) in bounds.iter().enumerate() {
        if bounds[..i].iter().any(|a| a.key() == b.key()) {
            return Err(format!(
                "--slo: `{}` is bounded twice; give it one bound",
                b.key()
            ));
        }
    }
    Ok(())
}

/// What the bounds say of one summary (a run's, or the group summary of a point's runs).
#[derive(Debug, Clone, PartialEq)]
pub enum Judgement {
    /// Every interval within its bound.
    Pass,
    /// An interval wholly beyond its bound.
    Fail,
    /// No interval beyond its bound, one straddling it: the point estimates say `passes`.
    Unsure {
        /// Whether every point estimate meets its bound.
        passes: bool,
    },
    /// A bounded member has no value (no request gave one).
    NoValue(String),
}

/// Each bound's member in `summary`, with its interval and whether it is met.
pub fn values(bounds: &[Bound], summary: &Summary) -> Vec<SloValue> {
    bounds
        .iter()
        .map(|b| {
            let key = b.key();
            let value = summary.stat(b.metric, StatName::Percentile(b.percentile));
            let ci95 =
                summary.percentile_ci95.get(&key).copied().or_else(|| {
                    tokenpipe_reduce::summary_interval(summary, b.metric, b.percentile)
                });
            let met = match ci95 {
                Some([_, hi]) if hi <= b.bound_ms => Some(true),
                Some([lo, _]) if lo > b.bound_ms => Some(false),
                Some(_) => None,
                // Without an interval (no histogram), the value alone decides, for sure.
                None => value.map(|v| v <= b.bound_ms),
            };
            SloValue {
                key,
                value,
                ci95,
                bound: b.bound_ms,
                met,
            }
        })
        .collect()
}

/// The pass rule over the values [`values`] gave.
pub fn judge(values: &[SloValue]) -> Judgement {
    if let Some(v) = values.iter().find(|v| v.value.is_none()) {
        return Judgement::NoValue(v.key.clone());
    }
    if values.iter().any(|v| v.met == Some(false)) {
        return Judgement::Fail;
    }
    if values.iter().all(|v| v.met == Some(true)) {
        return Judgement::Pass;
    }
    let passes = values.iter().all(|v| v.value.is_some_and(|x| x <= v.bound));
    Judgement::Unsure { passes }
}

/// One line per bound for a reason: `tpot_p50_ms 20.1 [19.9, 20.3] <= 22`.
pub fn describe(values: &[SloValue]) -> String {
    let one = |v: &SloValue| {
        let value = v.value.map_or("none".into(), |x| format!("{x:.4}"));
        let ci = v
            .ci95
            .map_or(String::new(), |[lo, hi]| format!(" [{lo:.4}, {hi:.4}]"));
        let op = match v.met {
            Some(true) => "<=",
            Some(false) => ">",
            None => "~",
        };
        format!("{} {value}{ci} {op} {}", v.key, v.bound)
    };
    values.iter().map(one).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_read_reduce_s_metrics_and_durations_with_a_percentile() {
        let b = parse_bound("ttft.p99<=2s").unwrap();
        assert_eq!((b.metric, b.percentile, b.bound_ms), ("ttft", 99.0, 2000.0));
        assert_eq!(b.key(), "ttft_p99_ms");
        let b = parse_bound(" tpot.p50 <= 50ms").unwrap();
        assert_eq!((b.metric, b.bound_ms), ("tpot", 50.0));
        assert_eq!(
            parse_bound("e2el.p99.9<=1.5s").unwrap().key(),
            "e2el_p99.9_ms"
        );
        // The flags fuzz target's find: `p-0` named a member nothing reads back.
        assert_eq!(parse_bound("ttft.p-0<=2").unwrap().key(), "ttft_p0_ms");
        for bad in [
            "ttft<=2s",
            "ttft.p99=2s",
            "ttft.p101<=2s",
            "nope.p99<=2s",
            "ttft.p99<=fast",
        ] {
            let e = parse_bound(bad).unwrap_err();
            assert!(e.starts_with("--slo: "), "{bad}: {e}");
        }
        let twice = [
            parse_bound("ttft.p99<=2s").unwrap(),
            parse_bound("ttft.p99<=1s").unwrap(),
        ];
        assert!(check_unique(&twice).is_err());
    }

    fn value(v: f64, lo: f64, hi: f64) -> SloValue {
        let b = Bound {
            metric: "tpot",
            percentile: 50.0,
            bound_ms: 22.0,
        };
        let mut s = Summary::default();
        s.set_stat("tpot", StatName::Percentile(50.0), Some(v));
        s.percentile_ci95.insert(b.key(), [lo, hi]);
        values(&[b], &s).remove(0)
    }

    #[test]
    fn the_interval_decides_and_the_estimate_breaks_a_straddle() {
        assert_eq!(judge(&[value(20.0, 19.0, 21.0)]), Judgement::Pass);
        assert_eq!(judge(&[value(24.0, 23.0, 25.0)]), Judgement::Fail);
        assert_eq!(
            judge(&[value(21.5, 21.0, 23.0)]),
            Judgement::Unsure { passes: true }
        );
        assert_eq!(
            judge(&[value(22.5, 21.0, 23.0)]),
            Judgement::Unsure { passes: false }
        );
        assert_eq!(
            judge(&[value(20.0, 19.0, 21.0), value(24.0, 23.0, 25.0)]),
            Judgement::Fail
        );
        let none = SloValue {
            key: "tpot_p50_ms".into(),
            value: None,
            ci95: None,
            bound: 1.0,
            met: None,
        };
        assert_eq!(judge(&[none]), Judgement::NoValue("tpot_p50_ms".into()));
        assert!(describe(&[value(20.0, 19.0, 21.0)])
            .contains("tpot_p50_ms 20.0000 [19.0000, 21.0000] <= 22"));
    }
}
