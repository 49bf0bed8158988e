//! Turns a run's folded [`RunStats`] into the `summary` record: throughputs over the run's
//! duration, the per-metric moments in milliseconds, and jitter. docs/metrics.md defines each
//! field; this module is the code of those definitions.

use crate::run::RunStats;
use crate::stat::Moments;
use tokenpipe_format::{Header, Summary};

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
    let ttft = stats.ttft.moments();
    let tpot = stats.tpot.moments();
    let itl = stats.itl.moments();
    let e2el = stats.e2el.moments();
    let lag = stats.dispatch_lag.moments();
    Summary {
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
        ttft_mean_ms: ttft.map(|m| m.mean_ms),
        ttft_std_ms: ttft.map(|m| m.std_ms),
        ttft_p50_ms: ttft.map(|m| m.p50_ms),
        ttft_p90_ms: ttft.map(|m| m.p90_ms),
        ttft_p99_ms: ttft.map(|m| m.p99_ms),
        ttft_max_ms: ttft.map(|m| m.max_ms),
        tpot_mean_ms: tpot.map(|m| m.mean_ms),
        tpot_std_ms: tpot.map(|m| m.std_ms),
        tpot_p50_ms: tpot.map(|m| m.p50_ms),
        tpot_p90_ms: tpot.map(|m| m.p90_ms),
        tpot_p99_ms: tpot.map(|m| m.p99_ms),
        tpot_max_ms: tpot.map(|m| m.max_ms),
        itl_mean_ms: itl.map(|m| m.mean_ms),
        itl_std_ms: itl.map(|m| m.std_ms),
        itl_p50_ms: itl.map(|m| m.p50_ms),
        itl_p90_ms: itl.map(|m| m.p90_ms),
        itl_p99_ms: itl.map(|m| m.p99_ms),
        itl_max_ms: itl.map(|m| m.max_ms),
        e2el_mean_ms: e2el.map(|m| m.mean_ms),
        e2el_std_ms: e2el.map(|m| m.std_ms),
        e2el_p50_ms: e2el.map(|m| m.p50_ms),
        e2el_p90_ms: e2el.map(|m| m.p90_ms),
        e2el_p99_ms: e2el.map(|m| m.p99_ms),
        e2el_max_ms: e2el.map(|m| m.max_ms),
        itl_jitter: itl.and_then(jitter),
        dispatch_lag_mean_ms: lag.map(|m| m.mean_ms),
        dispatch_lag_p50_ms: lag.map(|m| m.p50_ms),
        dispatch_lag_p99_ms: lag.map(|m| m.p99_ms),
        dispatch_lag_max_ms: lag.map(|m| m.max_ms),
    }
}

/// ITL p99 over ITL p50; undefined when the median gap is zero.
fn jitter(itl: Moments) -> Option<f64> {
    (itl.p50_ms > 0.0).then(|| itl.p99_ms / itl.p50_ms)
}
