//! The measured window a summary reports on, when it is not the whole run.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The stretch of the run clock a summary's throughputs are divided by, and whose sends its
/// latencies come from (docs/metrics.md, "Windows").
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct MeasuredWindow {
    /// The phase's name (`measure`), `manual` for reduce's `--warmup`/`--measure`, or
    /// `after_warmup` for the batches after a batch run's warm-up batches.
    pub name: String,
    /// Where it begins, seconds from the run start: the later of the window's start and the
    /// run's first send.
    pub start_s: f64,
    /// Where it ends: the earlier of the window's end and the run's last event.
    pub end_s: f64,
}
