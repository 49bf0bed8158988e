//! Service-level objectives as `reduce --slo` takes them (`ttft=200ms,tpot=50ms,e2el=2s`): a
//! bound per metric, inclusive. A request is good when every bounded metric is at or under its
//! bound; the count of good requests per second is goodput (vLLM's `--goodput`, whose
//! `ttft:200` is our `ttft=200ms`).

use std::fmt;

/// A per-request metric an objective can bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SloMetric {
    /// Time to first token.
    Ttft,
    /// Time per output token after the first.
    Tpot,
    /// End-to-end latency.
    E2el,
}

impl SloMetric {
    /// Every metric, in the order vLLM checks them.
    pub const ALL: [SloMetric; 3] = [SloMetric::Ttft, SloMetric::Tpot, SloMetric::E2el];

    /// The name on the command line and in vLLM's `--goodput`.
    pub fn name(self) -> &'static str {
        match self {
            SloMetric::Ttft => "ttft",
            SloMetric::Tpot => "tpot",
            SloMetric::E2el => "e2el",
        }
    }
}

impl fmt::Display for SloMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One objective: `metric` must be at most `bound_ns`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slo {
    /// The bounded metric.
    pub metric: SloMetric,
    /// The largest value that still meets the objective, in nanoseconds.
    pub bound_ns: f64,
}

impl Slo {
    /// True when `value_ns` meets the objective (the bound itself included, as in vLLM).
    pub fn met_by(&self, value_ns: f64) -> bool {
        value_ns <= self.bound_ns
    }
}

/// Parses one `metric=duration` item (`ttft=200ms`). The duration needs its unit: vLLM's
/// `--goodput` takes bare milliseconds and our tools take bare seconds, so a bare number would
/// be read wrongly by one half of the users.
pub fn parse_slo(item: &str) -> Result<Slo, String> {
    let (name, bound) = item
        .split_once('=')
        .ok_or_else(|| format!("expected metric=duration such as ttft=200ms, got `{item}`"))?;
    let name = name.trim();
    let metric = SloMetric::ALL
        .into_iter()
        .find(|m| m.name() == name)
        .ok_or_else(|| format!("unknown SLO metric `{name}`; use ttft, tpot or e2el"))?;
    let bound = bound.trim();
    if !bound.ends_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(format!(
            "give the bound of `{name}` a unit (200ms, 1.5s), got `{bound}`"
        ));
    }
    let d = tokenpipe_cli::parse_duration(bound)?;
    Ok(Slo {
        metric,
        bound_ns: d.as_nanos() as f64,
    })
}

/// Parses a whole `--slo` value (`ttft=200ms,tpot=50ms`); a metric named twice is an error.
pub fn parse_slos(s: &str) -> Result<Vec<Slo>, String> {
    let mut slos: Vec<Slo> = Vec::new();
    for item in s.split(',').filter(|i| !i.trim().is_empty()) {
        let slo = parse_slo(item)?;
        check_new(&slos, slo)?;
        slos.push(slo);
    }
    Ok(slos)
}

/// Refuses a second bound for a metric that already has one.
pub fn check_new(slos: &[Slo], slo: Slo) -> Result<(), String> {
    if slos.iter().any(|s| s.metric == slo.metric) {
        return Err(format!("`{}` has two SLO bounds", slo.metric));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_parse_with_units_and_bad_ones_say_why() {
        assert_eq!(
            parse_slos("ttft=200ms, tpot=50ms,e2el=1.5s").unwrap(),
            [
                Slo {
                    metric: SloMetric::Ttft,
                    bound_ns: 200e6
                },
                Slo {
                    metric: SloMetric::Tpot,
                    bound_ns: 50e6
                },
                Slo {
                    metric: SloMetric::E2el,
                    bound_ns: 1.5e9
                },
            ]
        );
        for (bad, says) in [
            ("ttft=200", "unit"),
            ("itl=5ms", "unknown SLO metric"),
            ("ttft", "metric=duration"),
            ("ttft=1ms,ttft=2ms", "two SLO bounds"),
            ("ttft=5parsecs", "unknown unit"),
        ] {
            let e = parse_slos(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn the_bound_itself_is_met() {
        let s = parse_slo("ttft=200ms").unwrap();
        assert!(s.met_by(200e6));
        assert!(!s.met_by(200e6 + 1.0));
    }
}
