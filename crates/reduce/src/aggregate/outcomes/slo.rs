//! SLO bounds for goodput (`reduce --slo ttft=200ms,tpot=50ms`): which per-request value each
//! bound applies to. The command line reads them.

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
    /// Time to first answer token (the first that was not reasoning).
    Ttfa,
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
        (SloMetric::Ttfa, vocab::TTFA.name),
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
            SloMetric::Ttfa => r.ttfa_ns().map(|v| v as f64),
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
