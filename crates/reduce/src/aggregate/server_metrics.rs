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
        a.finish(&RunSpan::default(), &mut s, &mut vec![]);
        assert_eq!(s.server_prompt_tokens, None, "no scrapes, no figures");
        let to = |phase, v: Vec<(String, f64)>| {
            let pairs: Vec<(&str, f64)> = v.iter().map(|(k, x)| (k.as_str(), *x)).collect();
            scrape(phase, &pairs)
        };
        a.server_metrics(&to(ScrapePhase::Before, as_refs(&before)));
        a.server_metrics(&to(ScrapePhase::After, as_refs(&after)));
        a.finish(&RunSpan::default(), &mut s, &mut vec![]);
        assert_eq!(s.server_prompt_tokens, Some(30));
        assert_eq!(s.server_generation_tokens, Some(40));
        assert_eq!(s.server_requests_succeeded, Some(4));
        let ttft = s.server_ttft_mean_ms.unwrap();
        assert!((ttft - 50.0).abs() < 1e-9, "{ttft}");
        let itl = s.server_itl_mean_ms.unwrap();
        assert!((itl - 5.0).abs() < 1e-9, "{itl}");
        assert_eq!(s.server_e2el_mean_ms, None);
    }

    #[test]
    fn llama_cpp_counters_give_the_token_counts() {
        let before = [
            ("llamacpp:prompt_tokens_total", 1000.0),
            ("llamacpp:prompt_tokens_cached_total", 40.0),
            ("llamacpp:tokens_predicted_total", 300.0),
            ("llamacpp:tokens_predicted_seconds_total", 1.0),
        ];
        let after = [
            ("llamacpp:prompt_tokens_total", 1400.0),
            ("llamacpp:prompt_tokens_cached_total", 52.0),
            ("llamacpp:tokens_predicted_total", 492.0),
            ("llamacpp:tokens_predicted_seconds_total", 1.5),
        ];
        let mut a = ServerMetricsAggregator::default();
        a.server_metrics(&scrape(ScrapePhase::Before, &before));
        a.server_metrics(&scrape(ScrapePhase::After, &after));
        let mut s = Summary::default();
        a.finish(&RunSpan::default(), &mut s, &mut vec![]);
        // Computed and cached prompt tokens together.
        assert_eq!(s.server_prompt_tokens, Some(412));
        assert_eq!(s.server_generation_tokens, Some(192));
        assert_eq!(s.server_requests_succeeded, None);
        assert_eq!(s.server_ttft_mean_ms, None);
        assert_eq!(s.server_itl_mean_ms, None);
        // Its cache: 12 of the 412 prompt tokens.
        assert_eq!(s.server_prefix_cache_queries, Some(412));
        assert_eq!(s.server_prefix_cache_hits, Some(12));
        let ratio = s.server_prefix_cache_hit_ratio.unwrap();
        assert!((ratio - 12.0 / 412.0).abs() < 1e-12, "{ratio}");
    }

    fn cache_figures(before: &[(&str, f64)], after: &[(&str, f64)]) -> Summary {
        let mut a = ServerMetricsAggregator::default();
        a.server_metrics(&scrape(ScrapePhase::Before, before));
        a.server_metrics(&scrape(ScrapePhase::After, after));
        let mut s = Summary::default();
        a.finish(&RunSpan::default(), &mut s, &mut vec![]);
        s
    }

    #[test]
    fn prefix_cache_hits_from_vllm_s_counters_old_or_new_and_sglang_s_gauge() {
        let l = "{model_name=\"m\",engine=\"0\"}";
        let (q, h) = (
            format!("vllm:prefix_cache_queries_total{l}"),
            format!("vllm:prefix_cache_hits_total{l}"),
        );
        let (oq, oh) = (
            format!("vllm:gpu_prefix_cache_queries_total{l}"),
            format!("vllm:gpu_prefix_cache_hits_total{l}"),
        );
        // Both names with the same values (simserve, a vLLM between the two): counted once.
        let s = cache_figures(
            &[(&q, 100.0), (&h, 10.0), (&oq, 100.0), (&oh, 10.0)],
            &[(&q, 500.0), (&h, 310.0), (&oq, 500.0), (&oh, 310.0)],
        );
        assert_eq!(
            (s.server_prefix_cache_queries, s.server_prefix_cache_hits),
            (Some(400), Some(300))
        );
        assert_eq!(s.server_prefix_cache_hit_ratio, Some(0.75));
        let s = cache_figures(&[(&oq, 0.0), (&oh, 0.0)], &[(&oq, 64.0), (&oh, 16.0)]);
        assert_eq!(s.server_prefix_cache_hit_ratio, Some(0.25));
        // No lookups: counts, no ratio.
        let s = cache_figures(&[(&q, 5.0), (&h, 5.0)], &[(&q, 5.0), (&h, 5.0)]);
        assert_eq!(s.server_prefix_cache_queries, Some(0));
        assert_eq!(s.server_prefix_cache_hit_ratio, None);
        let s = cache_figures(
            &[("sglang:cache_hit_rate{model_name=\"m\"}", 0.1)],
            &[("sglang:cache_hit_rate{model_name=\"m\"}", 0.625)],
        );
        assert_eq!(s.server_prefix_cache_queries, None);
        assert_eq!(s.server_prefix_cache_hit_ratio, Some(0.625));
        let s = cache_figures(&[("x", 1.0)], &[("x", 2.0)]);
        assert_eq!(s.server_prefix_cache_hit_ratio, None);
    }

    fn at(url: &str, phase: ScrapePhase, prompt: f64) -> ServerMetrics {
        ServerMetrics {
            at_ns: 0,
            phase,
            url: url.into(),
            samples: [("vllm:prompt_tokens_total{engine=\"0\"}".to_string(), prompt)].into(),
        }
    }

    #[test]
    fn parts_of_one_server_span_its_earliest_and_latest_scrape_in_any_order() {
        use ScrapePhase::{After, Before};
        let one = "http://a/metrics";
        // Two parts side by side on one server: 0 → 300 and 100 → 400 overlap; the run's
        // server counted 400, not 300 + 300, whichever part is read first.
        for order in [[0, 1], [1, 0]] {
            let parts = [
                [at(one, Before, 0.0), at(one, After, 300.0)],
                [at(one, Before, 100.0), at(one, After, 400.0)],
            ];
            let mut a = ServerMetricsAggregator::default();
            for i in order {
                for scrape in &parts[i] {
                    a.server_metrics(scrape);
                }
            }
            let mut s = Summary::default();
            a.finish(&RunSpan::default(), &mut s, &mut vec![]);
            assert_eq!(s.server_prompt_tokens, Some(400), "{order:?}");
        }
        // Parts on two servers: their deltas add up.
        let mut a = ServerMetricsAggregator::default();
        let two = "http://b/metrics";
        for scrape in [
            at(one, Before, 1000.0),
            at(two, Before, 5.0),
            at(one, After, 1200.0),
            at(two, After, 55.0),
        ] {
            a.server_metrics(&scrape);
        }
        let mut s = Summary::default();
        a.finish(&RunSpan::default(), &mut s, &mut vec![]);
        assert_eq!(s.server_prompt_tokens, Some(250));
        // An exporter with none of the engine's series leaves the engine's figures as they were.
        let dcgm = "http://gpu:9400/metrics";
        for phase in [Before, After] {
            a.server_metrics(&ServerMetrics {
                at_ns: 0,
                phase,
                url: dcgm.into(),
                samples: [("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"}".to_string(), 70.0)].into(),
            });
        }
        let mut s = Summary::default();
        a.finish(&RunSpan::default(), &mut s, &mut vec![]);
        assert_eq!(s.server_prompt_tokens, Some(250));
        // A server scraped only before the run leaves the figures out.
        a.server_metrics(&at("http://c/metrics", Before, 1.0));
        let mut s = Summary::default();
        a.finish(&RunSpan::default(), &mut s, &mut vec![]);
        assert_eq!(s.server_prompt_tokens, None);
    }
}
