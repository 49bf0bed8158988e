//! What `table` renders: every summary read, whole, with the header of the run it came from, so
//! that an exporter can use any field and any provenance, not just the rows of one layout.

use tokenpipe_format::{Header, Interval, Summary};

/// One run: its summary and the header `reduce` wrote before it (none for summary lines picked
/// out with `jq`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunReport {
    /// The header of the summary's run, with its upstream chain (fire's, arrivals').
    pub header: Option<Header>,
    /// The summary, every member kept.
    pub summary: Summary,
    /// The input it was read from (`<stdin>` or the path), which names a run when nothing else
    /// tells runs apart.
    pub source: String,
    /// The `interval` records of `reduce --every` written under the same header, in order: the
    /// run's timeline.
    pub intervals: Vec<Interval>,
}

impl RunReport {
    /// A run read from nowhere in particular (tests, converted files).
    pub fn new(header: Option<Header>, summary: Summary) -> Self {
        Self {
            header,
            summary,
            ..Self::default()
        }
    }

    /// A setting of the run's schedule or client (`concurrency`, `rate_per_s`, `model`), from
    /// the nearest header in its chain that has it.
    pub fn param(&self, key: &str) -> Option<&serde_json::Value> {
        self.header.as_ref().and_then(|h| h.param(key))
    }

    /// The run's own name: its label, its run id when it has none (summaries picked out with
    /// jq, unlabelled files).
    pub fn name(&self) -> &str {
        if self.summary.label.is_empty() {
            &self.summary.run_id
        } else {
            &self.summary.label
        }
    }

    /// Whether this is a group summary: the pooled figures of repeated runs.
    pub fn is_group(&self) -> bool {
        !self.summary.runs.is_empty()
    }
}

/// Every run read, in input order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    /// The runs.
    pub runs: Vec<RunReport>,
    /// What each `sweep` of the input found (its last record), for `--chart capacity`.
    pub sweeps: Vec<tokenpipe_format::Sweep>,
}

impl Report {
    /// The runs a table shows, as indices into `runs` in input order: every run, except those
    /// pooled by a group summary of the input, which stands for them (its cells carry their
    /// spread). Layouts that want the single runs too read `runs` directly.
    pub fn shown(&self) -> Vec<usize> {
        let pooled: std::collections::HashSet<&str> = self
            .runs
            .iter()
            .flat_map(|r| r.summary.runs.iter().map(String::as_str))
            .collect();
        (0..self.runs.len())
            .filter(|&i| {
                let r = &self.runs[i];
                r.is_group() || !pooled.contains(r.summary.run_id.as_str())
            })
            .collect()
    }
}
