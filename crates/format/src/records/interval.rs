//! The `interval` record: what happened in one slice of a run's clock, written by
//! `reduce --every` while the run is still being read, so that a long run can be watched live.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One slice `[start_s, end_s)` of the run clock. Events are placed by their own stamps, so a
/// slice tells what the run was doing then, not what had finished by then.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Interval {
    /// Where the slice begins, seconds from the run start.
    pub start_s: f64,
    /// Where it ends (exclusive); the last slice of a run ends at its last event.
    pub end_s: f64,
    /// Requests sent in the slice.
    pub sent: u64,
    /// Requests whose `done` in the slice was ok.
    pub ended_ok: u64,
    /// Requests whose `done` in the slice was not ok, whatever the kind.
    pub ended_failed: u64,
    /// The `tokens` of token events stamped in the slice, whatever became of their requests.
    pub output_tokens: u64,
    /// `output_tokens` per second of the slice.
    pub output_tps: f64,
    /// Requests sent before the slice's end and not ended by then.
    pub in_flight: u64,
    /// Median TTFT of the requests whose first content came in the slice; null when none did.
    #[serde(default)]
    pub ttft_p50_ms: Option<f64>,
    /// 99th percentile of the same TTFTs.
    #[serde(default)]
    pub ttft_p99_ms: Option<f64>,
    /// Median of the inter-token gaps that ended in the slice; null when none did.
    #[serde(default)]
    pub itl_p50_ms: Option<f64>,
    /// 99th percentile of the same gaps.
    #[serde(default)]
    pub itl_p99_ms: Option<f64>,
    /// Events that arrived after the slice they were stamped in had been written (stamped
    /// more than the grace before the newest stamp): counted here, in the next slice written;
    /// a late send still counts in `in_flight`, and nothing else does.
    #[serde(default)]
    pub late_events: u64,
    /// The server's gauges scraped during the slice (`fire --server-metrics-every`), by the
    /// names of the summary's `gauges`: the mean of the slice's samples. Omitted without such
    /// scrapes.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub gauges: std::collections::BTreeMap<String, f64>,
}
