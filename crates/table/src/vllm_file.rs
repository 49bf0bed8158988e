//! Reads the result file of `vllm bench serve --save-result` (one JSON object, pretty-printed
//! or not; `--append-result` puts one per line) as runs, so that runs published with vLLM sit
//! in the same table as ours. The figures go to the summary's `vllm` member unchanged; our own
//! fields get the ones that mean the same thing. The per-request arrays of `--save-detailed`
//! are not needed and not read (`reduce --from-vllm` recomputes from them).

use crate::report::RunReport;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use tokenpipe_format::{Header, StatName, Summary};

/// The tool a vLLM result came from, as the header of its run names it.
pub const TOOL: &str = "vllm bench serve";

/// The result figures kept in the `vllm` member (besides `{mean,median,std,p…}_{metric}_ms`).
const FIGURES: &[&str] = &[
    "duration",
    "completed",
    "failed",
    "total_input_tokens",
    "total_output_tokens",
    "request_throughput",
    "request_goodput",
    "output_throughput",
    "total_token_throughput",
    "max_output_tokens_per_s",
    "max_concurrent_requests",
];

/// The run's settings copied to its header's params, where `table` finds what tells runs
/// apart (`max_concurrency` also as `concurrency`, `request_rate` as `rate_per_s`).
const PARAMS: &[&str] = &[
    "model_id",
    "backend",
    "endpoint_type",
    "label",
    "tokenizer_id",
    "num_prompts",
    "request_rate",
    "burstiness",
    "max_concurrency",
    "date",
];

const METRICS: &[&str] = &["ttft", "tpot", "itl", "e2el"];

/// Whether a JSON object is a vLLM result rather than one of our records: it has vLLM's
/// `completed` and `duration` and no `type`.
pub fn is_vllm_result(object: &Map<String, Value>) -> bool {
    !object.contains_key("type")
        && object.contains_key("completed")
        && object.contains_key("duration")
}

/// The run of one vLLM result object. `source` names the file (and `line` the line of an
/// appended result, when there are several) in messages and in the run id.
pub fn run_from_vllm(
    object: &Map<String, Value>,
    source: &str,
    line: Option<usize>,
) -> anyhow::Result<RunReport> {
    let at = match line {
        Some(n) => format!("{source}: line {n}"),
        None => source.to_string(),
    };
    let bad = |key: &str, what: &str| {
        tokenpipe_cli::bad_input(format!(
            "{at}: field \"{key}\": expected {what} (reading a `vllm bench serve` result)"
        ))
    };
    let mut vllm = BTreeMap::new();
    for (key, value) in object {
        if FIGURES.contains(&key.as_str()) || latency_key(key).is_some() {
            if !(value.is_number() || value.is_null()) {
                return Err(bad(key, "a number"));
            }
            vllm.insert(key.clone(), value.clone());
        }
    }
    let count = |key: &str| -> anyhow::Result<u64> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(0),
            Some(v) => v.as_u64().ok_or_else(|| bad(key, "a whole number")),
        }
    };
    let number = |key: &str| object.get(key).and_then(Value::as_f64).unwrap_or(0.0);
    let text = |key: &str| {
        object
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    if object.get("duration").and_then(Value::as_f64).is_none() {
        return Err(bad("duration", "a number"));
    }
    let run_id = match line {
        Some(n) => format!("{}-{n}", run_id(source)),
        None => run_id(source),
    };
    let mut summary = Summary {
        label: text("label")
            .or_else(|| text("model_id"))
            .map_or_else(|| run_id.clone(), str::to_string),
        run_id: run_id.clone(),
        requests_ok: count("completed")?,
        requests_failed: count("failed")?,
        duration_s: number("duration"),
        input_tokens: count("total_input_tokens")?,
        output_tokens: count("total_output_tokens")?,
        request_throughput_per_s: number("request_throughput"),
        output_throughput_tokens_per_s: number("output_throughput"),
        total_throughput_tokens_per_s: number("total_token_throughput"),
        definitions: Some("vllm".into()),
        ..Summary::default()
    };
    // vLLM's statistics under our names: mean, population std, median as p50, each percentile.
    let mut percentiles = vec![50.0];
    for (key, value) in &vllm {
        let (Some((stat, metric)), Some(v)) = (latency_key(key), value.as_f64()) else {
            continue;
        };
        if let StatName::Percentile(p) = stat {
            percentiles.push(p);
        }
        summary.set_stat(metric, stat, Some(v));
    }
    percentiles.sort_by(f64::total_cmp);
    percentiles.dedup();
    summary.percentiles = percentiles;
    summary.vllm = Some(vllm);
    let mut header = Header::new(TOOL, run_id, Vec::new());
    for key in PARAMS {
        if let Some(v) = object.get(*key).filter(|v| !v.is_null()) {
            header.params.insert((*key).into(), v.clone());
        }
    }
    for (theirs, ours) in [
        ("max_concurrency", "concurrency"),
        ("request_rate", "rate_per_s"),
    ] {
        if let Some(v) = object.get(theirs).filter(|v| v.is_number()) {
            header.params.insert(ours.into(), v.clone());
        }
    }
    Ok(RunReport {
        header: Some(header),
        summary,
    })
}

/// Reads `mean_ttft_ms`, `median_itl_ms`, `std_tpot_ms`, `p99.9_e2el_ms` as our statistic and
/// metric.
fn latency_key(key: &str) -> Option<(StatName, &'static str)> {
    let rest = key.strip_suffix("_ms")?;
    let (stat, metric) = rest.split_once('_')?;
    let metric = METRICS.iter().find(|m| **m == metric)?;
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

/// vLLM's result has no run id: the file's name stands in, as in `reduce --from-vllm`.
fn run_id(source: &str) -> String {
    let name = std::path::Path::new(source)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| source.to_string());
    format!("vllm-{name}")
}
