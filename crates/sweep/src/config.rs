//! What a sweep does, as a plain value: the command line ([`crate::cli`]) builds it, the
//! library ([`crate::sweep`]) runs it.

use crate::slo::Bound;
use crate::values::Domain;
use std::time::Duration;

/// Which values are run.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Every value, in increasing order (`--scan`).
    Scan(Vec<f64>),
    /// A search of `[low, high]` for the largest value that meets the SLO (`--find`).
    Find {
        /// The low end, run first.
        low: f64,
        /// The high end, run only when the values below the range's middle all pass.
        high: f64,
    },
}

/// A sweep, ready to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// The variable's name, `{NAME}` in the command.
    pub variable: String,
    /// How its values are spaced and how fine a search goes.
    pub domain: Domain,
    /// The values to run.
    pub plan: Plan,
    /// The SLO; a scan may have none (its points are then measured, not judged).
    pub slo: Vec<Bound>,
    /// The most runs a point gets: repeats are made while its intervals straddle a bound
    /// (without an SLO, every point gets this many).
    pub repeat: u32,
    /// A command run before every run but the first (`--between`).
    pub between: Option<String>,
    /// Run the first value once, unmeasured, before the sweep (`--warmup`).
    pub warmup: bool,
    /// No run is started once this many were made.
    pub max_runs: Option<u64>,
    /// No run is started once this much time has passed since the first.
    pub max_time: Option<Duration>,
    /// Stop a scan at the saturation knee.
    pub stop_at_knee: bool,
    /// The gain per doubling below which the knee is marked.
    pub knee_gain: f64,
    /// The command, with `{NAME}` where the value goes.
    pub command: String,
    /// The runs' label in tables (reduce's `--label`); none for reduce's default.
    pub label: Option<String>,
    /// Metadata carried on every point's summary (reduce's `--meta`).
    pub meta: std::collections::BTreeMap<String, String>,
    /// sweep's command line, for the headers it writes.
    pub argv: Vec<String>,
}

impl Config {
    /// The percentiles each point's summaries carry: reduce's default ones, the median (the
    /// knee rule reads the median E2EL) and every percentile the SLO bounds.
    pub fn percentiles(&self) -> Vec<f64> {
        let mut ps = tokenpipe_reduce::SummaryOptions::default().percentiles;
        ps.push(50.0);
        ps.extend(self.slo.iter().map(|b| b.percentile));
        ps.sort_by(f64::total_cmp);
        ps.dedup();
        ps
    }
}
