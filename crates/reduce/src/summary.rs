//! Turns a run's folded [`RunStats`] into the `summary` record: throughputs over the run's
//! duration, the per-metric moments in milliseconds, and jitter. docs/metrics.md defines each
//! field; this module is the code of those definitions.

use crate::run::RunStats;
use crate::stat::Moments;
use tokenpipe_format::{Header, StatName, Summary};

/// The label a run gets without `--label`: the model named in its header chain (fire's `model`
/// parameter), else its run id.
pub fn default_label(header: &Header) -> String {
    match header.param("model") {
        Some(serde_json::Value::String(s)) if !s.is_empty() => s.clone(),
        Some(v) if !v.is_null() && !v.is_string() => v.to_string(),
        _ => header.run_id.clone(),
    }
}

/// Builds the summary record of one run.
pub fn summarize(stats: &RunStats, label: String, run_id: String) -> Summary {
    let duration_ns = match (stats.first_sent_ns, stats.last_done_ns) {
        (Some(first), Some(last)) => last.saturating_sub(first),
        _ => 0,
    };
    let duration_s = duration_ns as f64 / 1e9;
    let per_s = |x: f64| {
        if duration_ns == 0 {
            0.0
        } else {
            x / duration_s
        }
    };
    let itl = stats.itl.moments();
    let mut summary = Summary {
        label,
        run_id,
        requests_ok: stats.requests_ok,
        requests_failed: stats.requests_failed,
        duration_s,
        input_tokens: stats.input_tokens,
        output_tokens: stats.output_tokens,
        request_throughput_per_s: per_s(stats.requests_ok as f64),
        output_throughput_tokens_per_s: per_s(stats.output_tokens as f64),
        total_throughput_tokens_per_s: per_s(
            stats.input_tokens as f64 + stats.output_tokens as f64,
        ),
        itl_jitter: itl.and_then(jitter),
        percentiles: vec![50.0, 90.0, 99.0],
        ..Summary::default()
    };
    for (metric, stat) in [
        ("ttft", &stats.ttft),
        ("tpot", &stats.tpot),
        ("itl", &stats.itl),
        ("e2el", &stats.e2el),
        ("dispatch_lag", &stats.dispatch_lag),
    ] {
        let m = stat.moments();
        summary.set_stat(metric, StatName::Mean, m.map(|m| m.mean_ms));
        summary.set_stat(metric, StatName::Std, m.map(|m| m.std_ms));
        summary.set_stat(metric, StatName::Percentile(50.0), m.map(|m| m.p50_ms));
        summary.set_stat(metric, StatName::Percentile(90.0), m.map(|m| m.p90_ms));
        summary.set_stat(metric, StatName::Percentile(99.0), m.map(|m| m.p99_ms));
        summary.set_stat(metric, StatName::Max, m.map(|m| m.max_ms));
    }
    summary
}

/// ITL p99 over ITL p50; undefined when the median gap is zero.
fn jitter(itl: Moments) -> Option<f64> {
    (itl.p50_ms > 0.0).then(|| itl.p99_ms / itl.p50_ms)
}
