//! The server's view beside the client's: when a run holds `fire --server-metrics`'s two
//! scrapes, the changes of the server's counters between them and its mean latencies from its
//! histograms' `_sum` and `_count` (docs/metrics.md, "The server's own figures").
//!
//! Every figure sums the series of one metric over its labels (all engines, all models), as a
//! dashboard's `sum()` would. A counter that went down between the scrapes (the server
//! restarted) gives no figure rather than a negative one.
//!
//! A run made of several parts (shards, or fire processes side by side) holds a pair of scrapes
//! per part. The parts of one server overlap in time and each pair sees the others' traffic,
//! so their deltas must not be added: per server (per scraped URL), the earliest `before` is
//! the smallest value of each counter and the latest `after` the largest (counters only grow),
//! whatever order the parts were read in. The servers' deltas are then added.
//!
//! llama.cpp's `llama-server --metrics` has counters but no histograms and no request counts:
//! its token counts fill the same members where vLLM's are absent, and its latency means stay
//! empty (docs/real-engines.md compares its decode time per token with the client's TPOT).

mod spec;

pub(crate) use spec::label;

use super::{Aggregator, RunSpan};
use crate::error::RequestError;
use crate::request::RequestResult;
use std::collections::BTreeMap;
use tokenpipe_format::{sum_series, Record, ScrapePhase, ServerMetrics, Summary};

/// Series → value of one server's earliest or latest scrape.
type Samples = BTreeMap<String, f64>;

/// Per scraped URL, the smallest `before` and the largest `after` value of every series.
#[derive(Debug, Default)]
pub struct ServerMetricsAggregator {
    servers: BTreeMap<String, (Option<Samples>, Option<Samples>)>,
}

/// Folds `scrape` into `kept`, keeping per series the smaller (`keep_min`) or larger value.
fn fold(kept: &mut Option<Samples>, scrape: &Samples, keep_min: bool) {
    let Some(kept) = kept else {
        *kept = Some(scrape.clone());
        return;
    };
    for (series, &value) in scrape {
        kept.entry(series.clone())
            .and_modify(|v| {
                *v = if keep_min { v.min(value) } else { v.max(value) };
            })
            .or_insert(value);
    }
}

impl ServerMetricsAggregator {
    /// The change of the summed series of `name` (filtered by `keep`), added over the servers
    /// that have it (an exporter of `fire --scrape` has no engine's series); `None` unless
    /// one has it, every server that has it in one scrape has it in both, and it did not go
    /// down there.
    fn delta(&self, name: &str, keep: impl Fn(&str) -> bool + Copy) -> Option<f64> {
        let mut total = None;
        for (before, after) in self.servers.values() {
            let before = sum_series(before.as_ref()?, name, keep);
            let after = sum_series(after.as_ref()?, name, keep);
            let (before, after) = match (before, after) {
                (None, None) => continue,
                (Some(before), Some(after)) if after >= before => (before, after),
                _ => return None,
            };
            *total.get_or_insert(0.0) += after - before;
        }
        total
    }

    /// The mean of the observations a histogram took between the scrapes, in ms: the first of
    /// `names` the server exposes.
    fn mean_ms(&self, names: &[&str]) -> Option<f64> {
        names.iter().find_map(|name| {
            let count = self.delta(&format!("{name}_count"), |_| true)?;
            let sum = self.delta(&format!("{name}_sum"), |_| true)?;
            (count > 0.0).then(|| sum / count * 1e3)
        })
    }
}

/// A token or request count read from a float sample.
fn whole(value: f64) -> u64 {
    value.round() as u64
}

/// Whether a `vllm:request_success_total` series counts a request that was not aborted.
fn succeeded(series: &str) -> bool {
    series.contains("finished_reason=\"stop\"") || series.contains("finished_reason=\"length\"")
}

impl Aggregator for ServerMetricsAggregator {
    fn add(&mut self, _result: &RequestResult) -> Result<(), RequestError> {
        Ok(())
    }

    fn server_metrics(&mut self, scrape: &ServerMetrics) {
        let (before, after) = self.servers.entry(scrape.url.clone()).or_default();
        match scrape.phase {
            ScrapePhase::Before => fold(before, &scrape.samples, true),
            ScrapePhase::After => fold(after, &scrape.samples, false),
            // The gauges of the scrapes during the run are `telemetry`'s.
            ScrapePhase::During => {}
        }
    }

    fn finish(&mut self, _span: &RunSpan, s: &mut Summary, _out: &mut Vec<Record>) {
        let complete = |(b, a): &(Option<Samples>, Option<Samples>)| b.is_some() && a.is_some();
        if self.servers.is_empty() || !self.servers.values().all(complete) {
            return;
        }
        let all = |_: &str| true;
        // llama.cpp counts the prompt tokens it computed apart from those its slot cache held.
        let llama_prompt = || {
            let cached = self.delta("llamacpp:prompt_tokens_cached_total", all);
            Some(self.delta("llamacpp:prompt_tokens_total", all)? + cached.unwrap_or(0.0))
        };
        s.server_prompt_tokens = self
            .delta("vllm:prompt_tokens_total", all)
            .or_else(llama_prompt)
            .map(whole);
        s.server_generation_tokens = self
            .delta("vllm:generation_tokens_total", all)
            .or_else(|| self.delta("llamacpp:tokens_predicted_total", all))
            .map(whole);
        s.server_requests_succeeded = self
            .delta("vllm:request_success_total", succeeded)
            .map(whole);
        s.server_ttft_mean_ms = self.mean_ms(&["vllm:time_to_first_token_seconds"]);
        s.server_itl_mean_ms = self.mean_ms(&[
            "vllm:inter_token_latency_seconds",
            "vllm:time_per_output_token_seconds",
        ]);
        s.server_e2el_mean_ms = self.mean_ms(&["vllm:e2e_request_latency_seconds"]);
        spec::fill(self, s);
        self.prefix_cache(s);
    }
}

impl ServerMetricsAggregator {
    /// The prefix cache's lookups and hits over the run, in prompt tokens, and their ratio:
    /// vLLM V1's `vllm:prefix_cache_{queries,hits}_total`, else V0's `vllm:gpu_prefix_cache_*`
    /// (a server that exposes both has the same values under each), else llama.cpp's prompt
    /// tokens cached and computed. SGLang has no counters, only its `sglang:cache_hit_rate`
    /// gauge: its value at the end of the run is taken as the ratio.
    fn prefix_cache(&self, s: &mut Summary) {
        let all = |_: &str| true;
        let pair =
            |queries: &str, hits: &str| Some((self.delta(queries, all)?, self.delta(hits, all)?));
        let llama = || {
            let hits = self.delta("llamacpp:prompt_tokens_cached_total", all)?;
            Some((
                self.delta("llamacpp:prompt_tokens_total", all)? + hits,
                hits,
            ))
        };
        let counted = pair(
            "vllm:prefix_cache_queries_total",
            "vllm:prefix_cache_hits_total",
        )
        .or_else(|| {
            pair(
                "vllm:gpu_prefix_cache_queries_total",
                "vllm:gpu_prefix_cache_hits_total",
            )
        })
        .or_else(llama);
        if let Some((queries, hits)) = counted {
            s.server_prefix_cache_queries = Some(whole(queries));
            s.server_prefix_cache_hits = Some(whole(hits));
            s.server_prefix_cache_hit_ratio = (queries > 0.0).then(|| hits / queries);
            return;
        }
        s.server_prefix_cache_hit_ratio = self.last_gauge("sglang:cache_hit_rate");
    }

    /// A gauge's value at the last scrape, averaged over its series and the servers.
    fn last_gauge(&self, name: &str) -> Option<f64> {
        let mut values = Vec::new();
        for (_, after) in self.servers.values() {
            let after = after.as_ref()?;
            let series: Vec<f64> = after
                .iter()
                .filter(|(k, _)| k.as_str() == name || k.starts_with(&format!("{name}{{")))
                .map(|(_, v)| *v)
                .collect();
            if !series.is_empty() {
                values.push(series.iter().sum::<f64>() / series.len() as f64);
            }
        }
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    }
}

#[cfg(test)]
mod tests;
