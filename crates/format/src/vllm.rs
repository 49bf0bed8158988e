//! The result file of `vllm bench serve --save-result` (`--save-detailed` adds per-request
//! arrays): its key names, the figures and settings it holds, how its latency statistics are
//! named, and a typed view of one result object. reduce imports such files and writes vLLM's
//! figures (`--vllm-compatible`), table reads them as runs and prints vLLM's block: all of them
//! use the names defined here, so a key is spelled once.

use crate::StatName;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The `tool` of a run read from a vLLM result, in its header.
pub const TOOL: &str = "vllm bench serve";

/// vLLM's result keys, as its `benchmark_serving.py` writes them.
pub mod key {
    /// Seconds from the benchmark's start to its last response.
    pub const DURATION: &str = "duration";
    /// Requests that succeeded.
    pub const COMPLETED: &str = "completed";
    /// Requests that failed.
    pub const FAILED: &str = "failed";
    /// Prompt tokens of the successful requests.
    pub const TOTAL_INPUT_TOKENS: &str = "total_input_tokens";
    /// Generated tokens of the successful requests.
    pub const TOTAL_OUTPUT_TOKENS: &str = "total_output_tokens";
    /// Successful requests per second.
    pub const REQUEST_THROUGHPUT: &str = "request_throughput";
    /// Requests per second that met every `--goodput` bound; null without `--goodput`.
    pub const REQUEST_GOODPUT: &str = "request_goodput";
    /// Generated tokens per second.
    pub const OUTPUT_THROUGHPUT: &str = "output_throughput";
    /// Prompt and generated tokens per second.
    pub const TOTAL_TOKEN_THROUGHPUT: &str = "total_token_throughput";
    /// The most tokens generated in one whole second of the run.
    pub const MAX_OUTPUT_TOKENS_PER_S: &str = "max_output_tokens_per_s";
    /// The most requests in flight at once.
    pub const MAX_CONCURRENT_REQUESTS: &str = "max_concurrent_requests";
    /// `--max-concurrency`, null without it.
    pub const MAX_CONCURRENCY: &str = "max_concurrency";
    /// The date the run was written, `YYYYMMDD-HHMMSS`.
    pub const DATE: &str = "date";
    /// `--backend`.
    pub const BACKEND: &str = "backend";
    /// `--endpoint-type`.
    pub const ENDPOINT_TYPE: &str = "endpoint_type";
    /// `--label`.
    pub const LABEL: &str = "label";
    /// The served model.
    pub const MODEL_ID: &str = "model_id";
    /// The tokenizer the prompts were counted with.
    pub const TOKENIZER_ID: &str = "tokenizer_id";
    /// `--num-prompts`.
    pub const NUM_PROMPTS: &str = "num_prompts";
    /// `--request-rate`: a number, or `"inf"`.
    pub const REQUEST_RATE: &str = "request_rate";
    /// `--burstiness`.
    pub const BURSTINESS: &str = "burstiness";
    /// Per request (`--save-detailed`): prompt tokens.
    pub const INPUT_LENS: &str = "input_lens";
    /// Per request: generated tokens.
    pub const OUTPUT_LENS: &str = "output_lens";
    /// Per request: seconds to the first chunk.
    pub const TTFTS: &str = "ttfts";
    /// Per request: seconds between later chunks.
    pub const ITLS: &str = "itls";
    /// Per request: the error, empty when it succeeded.
    pub const ERRORS: &str = "errors";
    /// Per request: the generated text.
    pub const GENERATED_TEXTS: &str = "generated_texts";
    /// Per request, in some versions: seconds from the start when it was sent.
    pub const START_TIMES: &str = "start_times";
}

/// The run-wide figures of a result, in the order vLLM writes them (the latency statistics
/// aside, see [`latency_key`]).
pub const FIGURES: &[&str] = &[
    key::DURATION,
    key::COMPLETED,
    key::FAILED,
    key::TOTAL_INPUT_TOKENS,
    key::TOTAL_OUTPUT_TOKENS,
    key::REQUEST_THROUGHPUT,
    key::REQUEST_GOODPUT,
    key::OUTPUT_THROUGHPUT,
    key::TOTAL_TOKEN_THROUGHPUT,
    key::MAX_OUTPUT_TOKENS_PER_S,
    key::MAX_CONCURRENT_REQUESTS,
];

/// The run's settings a result records, which a run read from it keeps in its header.
pub const SETTINGS: &[&str] = &[
    key::MODEL_ID,
    key::BACKEND,
    key::ENDPOINT_TYPE,
    key::LABEL,
    key::TOKENIZER_ID,
    key::NUM_PROMPTS,
    key::REQUEST_RATE,
    key::BURSTINESS,
    key::MAX_CONCURRENCY,
    key::DATE,
];

/// A latency metric vLLM reports: its name in the keys, in the printed lines, and the title of
/// its section in the printed block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric {
    /// As in `mean_ttft_ms`; the same name as ours.
    pub name: &'static str,
    /// As in `Mean TTFT (ms):`.
    pub shown: &'static str,
    /// The section's title.
    pub title: &'static str,
}

/// vLLM's latency metrics, in the order of its result and its block.
pub const METRICS: &[Metric] = &[
    Metric {
        name: "ttft",
        shown: "TTFT",
        title: "Time to First Token",
    },
    Metric {
        name: "tpot",
        shown: "TPOT",
        title: "Time per Output Token (excl. 1st token)",
    },
    Metric {
        name: "itl",
        shown: "ITL",
        title: "Inter-token Latency",
    },
    Metric {
        name: "e2el",
        shown: "E2EL",
        title: "End-to-end Latency",
    },
];

/// The metrics `vllm bench serve` prints a section for when `--percentile-metrics` is not
/// given (`ttft,tpot,itl`): End-to-end Latency only when asked for.
pub const DEFAULT_PERCENTILE_METRICS: &[&str] = &["ttft", "tpot", "itl"];

/// The percentiles `vllm bench serve` prints and saves when `--metric-percentiles` is not
/// given (`99`).
pub const DEFAULT_METRIC_PERCENTILES: &[f64] = &[99.0];

/// The latency metric vLLM calls `name` (`ttft`, `e2el`), if it reports one.
pub fn metric(name: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.name == name)
}

/// A latency statistic vLLM writes for each metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stat {
    /// `mean_…`.
    Mean,
    /// `median_…`, always written; our p50.
    Median,
    /// `std_…`, the population standard deviation.
    Std,
    /// `p99_…`, `p99.9_…`: each of `--metric-percentiles` (`p50_…` too when 50 is one).
    Percentile(f64),
}

/// The key of a latency statistic: `mean_ttft_ms`, `median_ttft_ms`, `std_ttft_ms`,
/// `p99_ttft_ms`, `p99.9_ttft_ms`.
pub fn latency_key(metric: &str, stat: Stat) -> String {
    match stat {
        Stat::Mean => format!("mean_{metric}_ms"),
        Stat::Median => format!("median_{metric}_ms"),
        Stat::Std => format!("std_{metric}_ms"),
        Stat::Percentile(p) => format!("p{}_{metric}_ms", percentile_label(p)),
    }
}

/// Reads a latency statistic's key back as our statistic and vLLM's metric.
pub fn parse_latency_key(key: &str) -> Option<(StatName, &'static str)> {
    let rest = key.strip_suffix("_ms")?;
    let (stat, metric) = rest.split_once('_')?;
    let metric = METRICS.iter().find(|m| m.name == metric)?.name;
    let stat = match stat {
        "mean" => StatName::Mean,
        "median" => StatName::Percentile(50.0),
        "std" => StatName::Std,
        p => match StatName::parse(p)? {
            StatName::Percentile(v) => StatName::Percentile(v),
            _ => return None,
        },
    };
    Some((stat, metric))
}

/// A percentile as vLLM names it in its keys: `str(int(p)) if int(p) == p else str(p)`, so 99
/// is `99` and 99.9 is `99.9`.
pub fn percentile_label(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{}", p as i64)
    } else {
        format!("{p}")
    }
}

/// vLLM's result has no run id: the file's name stands in (`vllm-c16` for `runs/c16.json`).
pub fn run_id(source: &str) -> String {
    let name = std::path::Path::new(source)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| source.to_string());
    format!("vllm-{name}")
}

/// One result object, as `--save-result` writes it (or one line of `--append-result`). Kept as
/// its JSON object, since vLLM adds keys from version to version and its latency keys depend
/// on the run's `--metric-percentiles`; the accessors say which key failed and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ResultFile(pub Map<String, Value>);

/// A key of a result whose value is not what it must be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field \"{key}\": expected {expected}")]
pub struct FieldError {
    /// The key.
    pub key: String,
    /// What it must hold: `a number`, `a whole number`.
    pub expected: &'static str,
}

impl ResultFile {
    /// Whether a JSON object is a vLLM result rather than one of our records: it has vLLM's
    /// `completed` and `duration` and no `type`.
    pub fn is_result(object: &Map<String, Value>) -> bool {
        !object.contains_key("type")
            && object.contains_key(key::COMPLETED)
            && object.contains_key(key::DURATION)
    }

    /// The value of `key`, unless absent or null.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    /// A count: 0 when absent or null.
    pub fn count(&self, key: &str) -> Result<u64, FieldError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(0),
            Some(v) => v.as_u64().ok_or(FieldError {
                key: key.into(),
                expected: "a whole number",
            }),
        }
    }

    /// A number, 0 when absent, null or not a number.
    pub fn number(&self, key: &str) -> f64 {
        self.0.get(key).and_then(Value::as_f64).unwrap_or(0.0)
    }

    /// A text, unless absent, null or empty.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }

    /// Every run-wide figure and latency statistic the result has, as written (numbers or
    /// nulls); an error names the first key holding anything else.
    pub fn figures(&self) -> Result<Map<String, Value>, FieldError> {
        let mut figures = Map::new();
        for (k, value) in &self.0 {
            if FIGURES.contains(&k.as_str()) || parse_latency_key(k).is_some() {
                if !(value.is_number() || value.is_null()) {
                    return Err(FieldError {
                        key: k.clone(),
                        expected: "a number",
                    });
                }
                figures.insert(k.clone(), value.clone());
            }
        }
        Ok(figures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_keys_read_back_as_they_are_written() {
        for metric in METRICS {
            for (stat, ours) in [
                (Stat::Mean, StatName::Mean),
                (Stat::Std, StatName::Std),
                (Stat::Median, StatName::Percentile(50.0)),
                (Stat::Percentile(50.0), StatName::Percentile(50.0)),
                (Stat::Percentile(99.0), StatName::Percentile(99.0)),
                (Stat::Percentile(99.9), StatName::Percentile(99.9)),
            ] {
                let key = latency_key(metric.name, stat);
                assert_eq!(parse_latency_key(&key), Some((ours, metric.name)), "{key}");
            }
        }
        assert_eq!(latency_key("ttft", Stat::Percentile(99.0)), "p99_ttft_ms");
        assert_eq!(latency_key("e2el", Stat::Median), "median_e2el_ms");
        assert_eq!(parse_latency_key("mean_ttfts_ms"), None);
        assert_eq!(parse_latency_key("mean_ttft"), None);
    }

    #[test]
    fn the_defaults_are_vllms_and_name_its_metrics() {
        assert_eq!(DEFAULT_PERCENTILE_METRICS, ["ttft", "tpot", "itl"]);
        assert_eq!(DEFAULT_METRIC_PERCENTILES, [99.0]);
        for name in DEFAULT_PERCENTILE_METRICS {
            assert_eq!(metric(name).map(|m| m.name), Some(*name));
        }
        assert_eq!(metric("e2el").map(|m| m.shown), Some("E2EL"));
        assert_eq!(metric("ttfr"), None);
    }

    #[test]
    fn percentiles_are_named_as_python_writes_them() {
        assert_eq!(percentile_label(99.0), "99");
        assert_eq!(percentile_label(99.9), "99.9");
    }

    #[test]
    fn a_result_names_the_key_that_is_wrong() {
        let file: ResultFile = serde_json::from_str(
            r#"{"completed": 2.5, "duration": 1, "mean_ttft_ms": "fast", "model_id": "m"}"#,
        )
        .unwrap();
        assert!(ResultFile::is_result(&file.0));
        assert_eq!(
            file.count(key::COMPLETED).unwrap_err().to_string(),
            "field \"completed\": expected a whole number"
        );
        assert_eq!(
            file.figures().unwrap_err().to_string(),
            "field \"mean_ttft_ms\": expected a number"
        );
        assert_eq!(file.text(key::MODEL_ID), Some("m"));
        assert_eq!(run_id("runs/c16.json"), "vllm-c16");
    }
}
