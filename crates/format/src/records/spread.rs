//! How one figure varies over repeated runs of one configuration: the `across_runs` members of
//! a group summary (docs/metrics.md, "Several runs").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One summary member over the runs of a group, so that a published figure can carry its
/// spread (`mean ± sd`, CV %) and the uncertainty of its mean (a Student-t interval).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct AcrossRuns {
    /// Runs that carried a number for the member.
    pub n: u64,
    /// Mean of the runs' values.
    pub mean: f64,
    /// Sample standard deviation of the runs' values (divides by n − 1).
    pub sd: f64,
    /// Coefficient of variation, 100 · sd / mean; null when the mean is 0.
    pub cv_pct: Option<f64>,
    /// 95 % Student-t interval of the mean, `[lo, hi]`.
    pub ci95: [f64; 2],
}
