//! The summary's `llama_benchy` member: llama-benchy's own figures for a batch run (N requests
//! sent together, all awaited, repeated), computed by its formulas so that a number read here
//! can be set beside one read from its table. docs/metrics.md, "llama-benchy's figures",
//! defines each member.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// llama-benchy's figures of one run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct LlamaBenchy {
    /// Requests per batch: the schedule's `batch` (or `concurrency`) parameter, else the
    /// largest batch seen; omitted when the run has neither (no batch indices).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u64>,
    /// Batches with at least one successful request; 0 when the requests carry no batch index.
    pub batches: u64,
    /// The network round trip subtracted from TTFR for `est_ppt` (reduce's `--net-latency`,
    /// else the one fire measured, its header's `net_latency_ms`, else 0), in ms.
    pub net_latency_ms: f64,
    /// Prefill tokens per second as llama-benchy's table shows it: per batch when the
    /// concurrency is above 1, else per request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pp_tps: Option<SpreadFigure>,
    /// Generation tokens per second as llama-benchy's table shows it (per batch or per
    /// request, as `pp_tps`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tg_tps: Option<SpreadFigure>,
    /// Per request: `prompt_tokens / est_ppt` (llama-benchy's `pp_req_throughput`, its
    /// "t/s (req)" column of the pp row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pp_tps_request: Option<SpreadFigure>,
    /// Per request: `decode tokens / (last token stamp − first token stamp)` (llama-benchy's
    /// `tg_req_throughput`, its "t/s (req)" column of the tg row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tg_tps_request: Option<SpreadFigure>,
    /// Per batch: `Σ prompt_tokens / (last first token − first start)`; omitted without batch
    /// indices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pp_tps_batch: Option<SpreadFigure>,
    /// Per batch: `Σ decode tokens / (latest last token stamp − earliest first token)`;
    /// omitted without batch indices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tg_tps_batch: Option<SpreadFigure>,
    /// Peak generation throughput per batch: the most token stamps of the batch in a 1 s
    /// window (llama-benchy's `peak_throughput`, "peak t/s"); omitted without batch indices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_tps: Option<SpreadFigure>,
    /// Peak generation throughput per request, over each request's own stamps (llama-benchy's
    /// `peak_req_throughput`, "peak t/s (req)").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_tps_request: Option<SpreadFigure>,
    /// Time to first response (any event, a role-only chunk included), over the successful requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfr_ms: Option<MeanStd>,
    /// Estimated prompt processing time: `max(0, TTFR − net latency)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub est_ppt_ms: Option<MeanStd>,
    /// Time to the first token with content, network latency included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e_ttft_ms: Option<MeanStd>,
}

/// A rate's mean and spread, as llama-benchy prints it (`mean ± std`), with its CV.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct SpreadFigure {
    /// Arithmetic mean.
    pub mean: f64,
    /// Population standard deviation (numpy's `np.std`).
    pub std: f64,
    /// Coefficient of variation, `100 · std / mean`; null when the mean is 0.
    pub cv_pct: Option<f64>,
    /// Values averaged: batches or requests.
    pub n: u64,
    /// What one value is: `batch` or `request`.
    pub per: String,
}

/// A time's mean and population standard deviation, in the unit its name ends in.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct MeanStd {
    /// Arithmetic mean.
    pub mean: f64,
    /// Population standard deviation.
    pub std: f64,
}
