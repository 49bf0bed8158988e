//! The server's view beside the client's: when a run holds `fire --server-metrics`'s two
//! scrapes, the changes of the server's counters between them and its mean latencies from its
//! histograms' `_sum` and `_count` (docs/metrics.md, "The server's own figures").
//!
//! Every figure sums the series of one metric over its labels (all engines, all models), as a
//! dashboard's `sum()` would. A counter that went down between the scrapes (the server
//! restarted) gives no figure rather than a negative one.

use super::Aggregator;
use crate::request::RequestResult;
use std::collections::BTreeMap;
use tokenpipe_format::{sum_series, Record, ScrapePhase, ServerMetrics, Summary};

/// Keeps the first `before` scrape and the last `after` scrape of a run.
#[derive(Debug, Default)]
pub struct ServerMetricsAggregator {
    before: Option<BTreeMap<String, f64>>,
    after: Option<BTreeMap<String, f64>>,
}

impl ServerMetricsAggregator {
    /// The change of the summed series of `name` (filtered by `keep`), if both scrapes have it
    /// and it did not go down.
    fn delta(&self, name: &str, keep: impl Fn(&str) -> bool + Copy) -> Option<f64> {
        let before = sum_series(self.before.as_ref()?, name, keep)?;
        let after = sum_series(self.after.as_ref()?, name, keep)?;
        (after >= before).then_some(after - before)
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
    fn add(&mut self, _result: &RequestResult) -> Result<(), String> {
        Ok(())
    }

    fn server_metrics(&mut self, scrape: &ServerMetrics) {
        match scrape.phase {
            ScrapePhase::Before => {
                self.before.get_or_insert_with(|| scrape.samples.clone());
            }
            ScrapePhase::After => self.after = Some(scrape.samples.clone()),
        }
    }

    fn finish(&mut self, s: &mut Summary, _out: &mut Vec<Record>) {
        if self.before.is_none() || self.after.is_none() {
            return;
        }
        let all = |_: &str| true;
        s.server_prompt_tokens = self.delta("vllm:prompt_tokens_total", all).map(whole);
        s.server_generation_tokens = self.delta("vllm:generation_tokens_total", all).map(whole);
        s.server_requests_succeeded = self
            .delta("vllm:request_success_total", succeeded)
            .map(whole);
        s.server_ttft_mean_ms = self.mean_ms(&["vllm:time_to_first_token_seconds"]);
        s.server_itl_mean_ms = self.mean_ms(&[
            "vllm:inter_token_latency_seconds",
            "vllm:time_per_output_token_seconds",
        ]);
        s.server_e2el_mean_ms = self.mean_ms(&["vllm:e2e_request_latency_seconds"]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scrape(phase: ScrapePhase, pairs: &[(&str, f64)]) -> ServerMetrics {
        ServerMetrics {
            at_ns: 0,
            phase,
            url: "http://h/metrics".into(),
            samples: pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        }
    }

    #[test]
    fn deltas_and_means_between_the_two_scrapes() {
        let l = "{model_name=\"m\",engine=\"0\"}";
        let key = |name: &str| format!("{name}{l}");
        let ok =
            "vllm:request_success_total{model_name=\"m\",engine=\"0\",finished_reason=\"length\"}";
        let abort =
            "vllm:request_success_total{model_name=\"m\",engine=\"0\",finished_reason=\"abort\"}";
        let before = [
            (key("vllm:prompt_tokens_total"), 100.0),
            (key("vllm:generation_tokens_total"), 50.0),
            (ok.to_string(), 2.0),
            (abort.to_string(), 1.0),
            (key("vllm:time_to_first_token_seconds_count"), 2.0),
            (key("vllm:time_to_first_token_seconds_sum"), 0.1),
            (key("vllm:e2e_request_latency_seconds_count"), 2.0),
            (key("vllm:e2e_request_latency_seconds_sum"), 1.0),
            (key("vllm:time_per_output_token_seconds_count"), 10.0),
            (key("vllm:time_per_output_token_seconds_sum"), 0.05),
        ];
        let after = [
            (key("vllm:prompt_tokens_total"), 130.0),
            (key("vllm:generation_tokens_total"), 90.0),
            (ok.to_string(), 6.0),
            (abort.to_string(), 3.0),
            (key("vllm:time_to_first_token_seconds_count"), 6.0),
            (key("vllm:time_to_first_token_seconds_sum"), 0.3),
            (key("vllm:e2e_request_latency_seconds_count"), 6.0),
            // went down: a restart, no figure
            (key("vllm:e2e_request_latency_seconds_sum"), 0.5),
            (key("vllm:time_per_output_token_seconds_count"), 30.0),
            (key("vllm:time_per_output_token_seconds_sum"), 0.15),
        ];
        let as_refs = |v: &[(String, f64)]| -> Vec<(String, f64)> { v.to_vec() };
        let mut a = ServerMetricsAggregator::default();
        let mut s = Summary::default();
        a.finish(&mut s, &mut vec![]);
        assert_eq!(s.server_prompt_tokens, None, "no scrapes, no figures");
        let to = |phase, v: Vec<(String, f64)>| {
            let pairs: Vec<(&str, f64)> = v.iter().map(|(k, x)| (k.as_str(), *x)).collect();
            scrape(phase, &pairs)
        };
        a.server_metrics(&to(ScrapePhase::Before, as_refs(&before)));
        a.server_metrics(&to(ScrapePhase::After, as_refs(&after)));
        a.finish(&mut s, &mut vec![]);
        assert_eq!(s.server_prompt_tokens, Some(30));
        assert_eq!(s.server_generation_tokens, Some(40));
        assert_eq!(s.server_requests_succeeded, Some(4));
        let ttft = s.server_ttft_mean_ms.unwrap();
        assert!((ttft - 50.0).abs() < 1e-9, "{ttft}");
        let itl = s.server_itl_mean_ms.unwrap();
        assert!((itl - 5.0).abs() < 1e-9, "{itl}");
        assert_eq!(s.server_e2el_mean_ms, None);
    }
}
