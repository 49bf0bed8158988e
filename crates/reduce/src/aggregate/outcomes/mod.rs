//! What became of each request and what that is worth: the run's counts by outcome
//! ([`counts`]), the latency and rate metrics beyond vLLM's set with the number of values behind
//! every metric ([`latency`]), reasoning and answer apart ([`reasoning`]), the prefix cache's
//! hits from the usage ([`cache`]), a `result` record per request ([`per_request`]), goodput against
//! SLO bounds ([`goodput`], [`slo`]) and the run's metadata ([`meta`]). docs/metrics.md defines
//! each field.

pub mod cache;
pub mod counts;
pub mod goodput;
pub mod latency;
pub mod meta;
pub mod per_request;
pub mod reasoning;
pub mod slo;

use super::{Aggregator, SummaryOptions};
use crate::request::RequestResult;
use std::collections::BTreeMap;

/// The command line's choices for this part of the summary.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OutcomeOptions {
    /// Write a `result` record per request as it ends.
    pub per_request: bool,
    /// Bounds a request must meet to count as good; none: no goodput fields.
    pub slo: Vec<slo::SloBound>,
    /// Run metadata for every summary (and the reduce header).
    pub meta: BTreeMap<String, String>,
}

/// The aggregators of this part for one run: counts and the extra metrics always, the rest as
/// `opts` asks.
pub fn aggregators(opts: &SummaryOptions) -> Vec<Box<dyn Aggregator>> {
    let own = &opts.outcomes;
    let mut aggs: Vec<Box<dyn Aggregator>> = vec![
        Box::new(counts::Counts::default()),
        Box::new(latency::MoreLatency::new(opts)),
        Box::new(reasoning::ReasoningFigures::new(opts)),
        Box::new(cache::CacheHits::default()),
    ];
    if own.per_request {
        aggs.push(Box::new(per_request::PerRequest::default()));
    }
    if !own.slo.is_empty() {
        aggs.push(Box::new(goodput::Goodput::new(own.slo.clone())));
    }
    if !own.meta.is_empty() {
        aggs.push(Box::new(meta::Meta(own.meta.clone())));
    }
    aggs
}

/// How a request that was not ok ended, as the summary's `errors` and the `result` record name
/// it: its `done`'s kind as written, `unfinished` when the run ended first, `unknown` for a
/// failed `done` without a kind. `None` when it was ok.
pub fn error_label(r: &RequestResult) -> Option<&str> {
    if r.ok {
        return None;
    }
    Some(match (&r.error_kind, r.done_ns) {
        (Some(kind), _) => kind.as_str(),
        (None, None) => "unfinished",
        (None, Some(_)) => "unknown",
    })
}
