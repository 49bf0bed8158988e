//! The `result` record `reduce --per-request` writes: one flat line per request with every
//! per-request value of docs/metrics.md, so a notebook reads a run as a table
//! (`jq -c 'select(.type=="result")' | pandas.read_json(lines=True)`) without re-deriving a
//! formula.

use crate::Grouping;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What one request measured. Times are milliseconds (floats); a member is null where the
/// request has no such value (no TTFT without content, no TPOT for a one-token answer).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ResultRecord {
    /// Request id.
    pub id: u64,
    /// True when its `done` was ok.
    pub ok: bool,
    /// The `done`'s error kind as written; `unfinished` for a request whose run ended before
    /// its `done`; null when ok.
    pub error_kind: Option<String>,
    /// HTTP status, when a response head arrived.
    pub status: Option<u16>,
    /// Its session, turn, batch and tags, as on its `done` (flat members, omitted when empty).
    #[serde(flatten)]
    pub grouping: Grouping,
    /// When it was due, on the run clock.
    pub scheduled_ms: Option<f64>,
    /// When it left the client; null if it never did.
    pub sent_ms: Option<f64>,
    /// When it ended; null if the run ended first.
    pub done_ms: Option<f64>,
    /// Client queue time: `max(0, sent − scheduled)` (the summary's dispatch lag).
    pub queue_ms: Option<f64>,
    /// Time to first token: first content event − sent.
    pub ttft_ms: Option<f64>,
    /// Time to first response: first event of any kind − sent.
    pub ttfr_ms: Option<f64>,
    /// First content event − scheduled (coordinated-omission safe TTFT).
    pub ttft_from_scheduled_ms: Option<f64>,
    /// End-to-end latency: done − sent.
    pub e2el_ms: Option<f64>,
    /// done − scheduled.
    pub e2el_from_scheduled_ms: Option<f64>,
    /// (E2EL − TTFT) / (output_tokens − 1), for more than one output token.
    pub tpot_ms: Option<f64>,
    /// Mean gap between its content events.
    pub itl_mean_ms: Option<f64>,
    /// Longest gap between its content events: its worst stall.
    pub itl_max_ms: Option<f64>,
    /// Population standard deviation of its gaps.
    pub itl_std_ms: Option<f64>,
    /// Mean gap per token (each gap split over the tokens of the event that ended it).
    pub itl_per_token_mean_ms: Option<f64>,
    /// Output length.
    pub output_tokens: u64,
    /// Where `output_tokens` came from: `usage` (the server's, exact) or `counted` (the sum
    /// of its token events).
    pub output_tokens_source: String,
    /// Prompt length, from the server's usage.
    pub input_tokens: Option<u64>,
    /// `usage` when `input_tokens` is known, else null.
    pub input_tokens_source: Option<String>,
    /// Token events that carried text.
    pub content_events: u64,
    /// Token events that stood for tokens without text.
    pub empty_events: u64,
    /// output_tokens / E2EL, in tokens per second.
    pub user_tps: Option<f64>,
    /// output_tokens / (E2EL − TTFT), in tokens per second.
    pub user_gen_tps: Option<f64>,
    /// input_tokens / TTFT, in tokens per second.
    pub prefill_tps: Option<f64>,
    /// The last choice's `finish_reason`.
    pub finish_reason: Option<String>,
    /// Time to first answer token: first answer event − sent; omitted, as the members below,
    /// for a request without reasoning (its TTFA is its TTFT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfa_ms: Option<f64>,
    /// First answer event − first reasoning event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_duration_ms: Option<f64>,
    /// Output tokens spent reasoning (`done.reasoning_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Output tokens of the answer proper (`done.answer_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_tokens: Option<u64>,
    /// Prompt tokens the server's prefix cache served (`done.cached_tokens`); omitted, as
    /// `cache_hit_ratio`, when the usage did not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// `cached_tokens / input_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_hit_ratio: Option<f64>,
}
