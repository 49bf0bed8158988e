//! SLO bounds for goodput (`reduce --slo ttft=200ms,tpot=50ms`): which per-request value each
//! bound applies to, and how a bound is read from the command line.

use crate::request::RequestResult;
use tokenpipe_format::vocab;

/// A per-request value an SLO can bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SloMetric {
    /// Time to first token.
    Ttft,
    /// Time to first response event.
    Ttfr,
    /// Time per output token after the first.
    Tpot,
    /// End-to-end latency.
    E2el,
    /// The request's mean inter-token gap.
    Itl,
    /// Time to first token from the scheduled instant.
    TtftSched,
    /// End-to-end latency from the scheduled instant.
    E2elSched,
}

impl SloMetric {
    /// Every metric, with its name on the command line and in the summary's `slo`.
    pub const ALL: &'static [(SloMetric, &'static str)] = &[
        (SloMetric::Ttft, vocab::TTFT.name),
        (SloMetric::Ttfr, vocab::TTFR.name),
        (SloMetric::Tpot, vocab::TPOT.name),
        (SloMetric::E2el, vocab::E2EL.name),
        (SloMetric::Itl, vocab::ITL.name),
        (SloMetric::TtftSched, vocab::TTFT_SCHED.name),
        (SloMetric::E2elSched, vocab::E2EL_SCHED.name),
    ];

    /// The name on the command line and in the summary.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(m, _)| *m == self)
            .map_or("", |(_, name)| name)
    }

    /// The request's value in nanoseconds, from its own method; `None` where it has none.
    pub fn value_ns(self, r: &RequestResult) -> Option<f64> {
        match self {
            SloMetric::Ttft => r.ttft_ns().map(|v| v as f64),
            SloMetric::Ttfr => r.ttfr_ns().map(|v| v as f64),
            SloMetric::Tpot => r.tpot_ns(),
            SloMetric::E2el => r.e2el_ns().map(|v| v as f64),
            SloMetric::Itl => r.itl_mean_ns(),
            SloMetric::TtftSched => r.ttft_from_scheduled_ns().map(|v| v as f64),
            SloMetric::E2elSched => r.e2el_from_scheduled_ns().map(|v| v as f64),
        }
    }
}

/// One bound: `metric ≤ bound_ns`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SloBound {
    /// What is bounded.
    pub metric: SloMetric,
    /// The largest value that meets the bound, in nanoseconds.
    pub bound_ns: f64,
}

impl SloBound {
    /// Whether `r` meets this bound. A request without the value (no TPOT for a one-token
    /// answer, no ITL with fewer than two content events) meets it: it cannot have broken it.
    pub fn met_by(&self, r: &RequestResult) -> bool {
        self.metric.value_ns(r).is_none_or(|v| v <= self.bound_ns)
    }
}

/// Reads one `METRIC=DURATION` bound (`ttft=200ms`, `e2el=2s`, `itl=500us`).
pub fn parse_slo_bound(s: &str) -> Result<SloBound, String> {
    let (name, duration) = s
        .split_once('=')
        .ok_or_else(|| format!("expected METRIC=DURATION such as ttft=200ms, got `{s}`"))?;
    let name = name.trim();
    let metric = SloMetric::ALL
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(m, _)| *m)
        .ok_or_else(|| {
            let names: Vec<&str> = SloMetric::ALL.iter().map(|(_, n)| *n).collect();
            format!(
                "unknown SLO metric `{name}`; use one of {}",
                names.join(", ")
            )
        })?;
    let bound = tokenpipe_cli::parse_duration(duration)?;
    Ok(SloBound {
        metric,
        bound_ns: bound.as_nanos() as f64,
    })
}

/// Refuses a metric bounded twice, which would leave the intended bound unclear.
pub fn check_unique(bounds: &[SloBound]) -> Result<(), String> {
    for (i, b) in bounds.iter().enumerate() {
        if bounds[..i].iter().any(|a| a.metric == b.metric) {
            return Err(format!(
                "--slo: `{}` is bounded twice; give each metric one bound",
                b.metric.name()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_take_a_metric_and_a_duration_with_its_unit() {
        let b = parse_slo_bound("ttft=200ms").unwrap();
        assert_eq!((b.metric, b.bound_ns), (SloMetric::Ttft, 200e6));
        assert_eq!(parse_slo_bound("e2el=2s").unwrap().bound_ns, 2e9);
        assert_eq!(parse_slo_bound("itl=250us").unwrap().bound_ns, 250e3);
        let b = parse_slo_bound("ttft_sched=1.5s").unwrap();
        assert_eq!((b.metric, b.bound_ns), (SloMetric::TtftSched, 1.5e9));
        for (metric, name) in SloMetric::ALL {
            assert_eq!(metric.name(), *name);
            assert_eq!(
                parse_slo_bound(&format!("{name}=1ms")).unwrap().metric,
                *metric
            );
        }
        for bad in ["ttft", "ttft=", "ttft=fast", "speed=1s", "=1s", "ttft=-1ms"] {
            assert!(parse_slo_bound(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_metric_bounded_twice_is_refused() {
        let two = [
            parse_slo_bound("ttft=1s").unwrap(),
            parse_slo_bound("ttft=2s").unwrap(),
        ];
        let err = check_unique(&two).unwrap_err();
        assert!(err.contains("`ttft` is bounded twice"), "{err}");
        assert!(check_unique(&two[..1]).is_ok());
    }
}
