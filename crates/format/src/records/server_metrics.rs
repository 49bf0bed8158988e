//! The `server_metrics` record: a scrape of the server's Prometheus `/metrics`, taken by
//! `fire --server-metrics` once before the first request and once after the last, so that
//! `reduce` can put the server's own counts and latencies beside the client's.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Which end of the run a scrape was taken at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScrapePhase {
    /// Before the first request was sent.
    Before,
    /// After the last request ended (or when the run was interrupted).
    After,
    /// While the run went on (`fire --server-metrics-every`), stamped on fire's clock; its
    /// histogram buckets (`_bucket` series) are left out.
    During,
}

/// One scrape of the server's metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerMetrics {
    /// When the scrape's answer had been read, in ns from the run start.
    pub at_ns: u64,
    /// Before the run's requests or after them.
    pub phase: ScrapePhase,
    /// The URL scraped.
    pub url: String,
    /// Every `vllm:` (vLLM's) and `llamacpp:` (llama.cpp's) sample with a finite value, keyed
    /// by its series as the server wrote it:
    /// the metric name with its labels, `name{label="value",…}` (just `name` without labels).
    pub samples: BTreeMap<String, f64>,
}

/// The metric-name prefixes of the engines whose metrics a scrape keeps: vLLM's (and simserve's)
/// and llama.cpp's `llama-server --metrics`.
pub const ENGINE_PREFIXES: [&str; 2] = ["vllm:", "llamacpp:"];

/// The metric-name prefixes kept from the other endpoints of `fire --scrape`, besides the
/// engines': NVIDIA's DCGM exporter (`DCGM_FI_…`: power, energy, utilisation) and the
/// Prometheus node exporter's load and memory gauges (its per-CPU and per-device series are
/// not kept).
pub const EXPORTER_PREFIXES: [&str; 4] =
    ["DCGM_", "node_load", "node_memory_Mem", "node_memory_Swap"];

/// The most samples one scrape keeps: a page past it keeps its first ones (in page order), so
/// that a scrape every second of a long run stays small.
pub const MAX_SCRAPE_SAMPLES: usize = 4096;

/// Reads the samples of a Prometheus text exposition whose metric names start with `prefix`,
/// keyed as [`ServerMetrics::samples`]. Comments, blank lines, other metrics, non-finite values
/// and lines that do not parse are skipped: a scrape is advice, never a reason to fail.
pub fn parse_exposition(text: &str, prefix: &str) -> BTreeMap<String, f64> {
    let mut samples = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || !line.starts_with(prefix) {
            continue;
        }
        let Some((series, rest)) = split_series(line) else {
            continue;
        };
        let value = rest
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<f64>().ok());
        if let Some(value) = value.filter(|v| v.is_finite()) {
            samples.insert(series.to_string(), value);
        }
    }
    samples
}

/// Splits `name{labels} value …` after the series, honouring quoted label values (which may
/// hold spaces, braces and escaped quotes).
fn split_series(line: &str) -> Option<(&str, &str)> {
    let open = line.find(['{', ' ', '\t'])?;
    if line.as_bytes()[open] != b'{' {
        return Some((&line[..open], &line[open..]));
    }
    let (mut quoted, mut escaped) = (false, false);
    for (i, c) in line[open..].char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '}' if !quoted => {
                let end = open + i + 1;
                return Some((&line[..end], &line[end..]));
            }
            _ => {}
        }
    }
    None
}

/// The metric name of a series key: what precedes its labels.
pub fn series_name(series: &str) -> &str {
    series.split('{').next().unwrap_or(series)
}

/// The sum over every series of metric `name` whose labels `keep` accepts (called with the
/// series key), or `None` if there is none: across engines and models, as a dashboard would.
pub fn sum_series(
    samples: &BTreeMap<String, f64>,
    name: &str,
    keep: impl Fn(&str) -> bool,
) -> Option<f64> {
    let mut found = None;
    for (series, value) in samples {
        if series_name(series) == name && keep(series) {
            *found.get_or_insert(0.0) += value;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_read_with_their_labels_and_junk_is_skipped() {
        let text = "# HELP vllm:x help\n# TYPE vllm:x counter\n\
            vllm:x_total{model_name=\"a b}\\\"c\",engine=\"0\"} 3.0\n\
            vllm:y 2.5 1700000000\n\
            vllm:z{le=\"+Inf\"} NaN\n\
            vllm:broken{a=\"1\" 4\n\
            python_gc_objects_collected_total 9\n\
            vllm:w{le=\"+Inf\"} +Inf\n\
            \n";
        let samples = parse_exposition(text, "vllm:");
        assert_eq!(samples.len(), 2, "{samples:?}");
        assert_eq!(
            samples["vllm:x_total{model_name=\"a b}\\\"c\",engine=\"0\"}"],
            3.0
        );
        assert_eq!(samples["vllm:y"], 2.5);
        assert_eq!(sum_series(&samples, "vllm:x_total", |_| true), Some(3.0));
        assert_eq!(sum_series(&samples, "vllm:x_total", |_| false), None);
        assert_eq!(sum_series(&samples, "vllm:nothing", |_| true), None);
    }
}
