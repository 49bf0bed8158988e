//! The `sweep` record: what `sweep` found after running a pipe over one load variable, last in
//! its output after every point's header and summary (docs/sweep.md states the search, the pass
//! rule and the knee rule).

use crate::OrOther;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the values of a sweep were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SweepMode {
    /// Every value of a list or a range (`--scan`).
    #[default]
    Scan,
    /// A bracket from the low end, then bisection to the resolution (`--find`).
    Find,
}

/// How a sweep ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SweepEnd {
    /// The search or the scan finished.
    #[default]
    Done,
    /// A scan stopped at the saturation knee (`--stop-at-knee`).
    Knee,
    /// `--max-runs` runs were made before the search finished.
    MaxRuns,
    /// `--max-time` passed before the search finished.
    MaxTime,
    /// Ctrl-C stopped it; the point it was measuring is reported as such.
    Interrupted,
    /// SIGTERM stopped it.
    Terminated,
    /// The command or the `--between` command failed; `reason` says which and how.
    Failed,
}

/// What a point's runs said about the SLO.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PointStatus {
    /// Every bound held (with 95 % confidence, unless `sure` is false).
    Pass,
    /// A bound was missed (with 95 % confidence, unless `sure` is false).
    Fail,
    /// No SLO was given: the point was measured, not judged.
    #[default]
    Measured,
    /// No comparable run: the command failed, was stopped, or every run's verdict said not
    /// comparable. Not used for the capacity; a search goes no higher than such a point.
    Unusable,
}

/// One SLO bound as the sweep read it: `metric.pQ<=bound`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct SloTerm {
    /// The summary member bounded, e.g. `ttft_p99_ms`.
    pub key: String,
    /// The largest value that meets the bound, in the member's unit (ms).
    pub bound: f64,
}

/// A bounded member's value at one point.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct SloValue {
    /// The summary member, e.g. `ttft_p99_ms`.
    pub key: String,
    /// Its value over the point's comparable runs (pooled when there are several); null when
    /// no request gave one.
    pub value: Option<f64>,
    /// The 95 % bootstrap interval of that value, `[lo, hi]`; null without samples.
    pub ci95: Option<[f64; 2]>,
    /// The bound it is held to.
    pub bound: f64,
    /// True when the interval's upper end meets the bound, false when its lower end misses
    /// it, null when the interval straddles it (the point estimate then decides the status).
    pub met: Option<bool>,
}

/// One value of the load variable and what its runs gave.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct SweepPoint {
    /// The value substituted for `{NAME}`.
    pub value: f64,
    /// Runs made at this value (repeats included).
    pub runs: u64,
    /// Of those, the runs whose verdict said comparable: the only ones the status uses.
    pub comparable_runs: u64,
    /// Pass, fail, measured (no SLO) or unusable.
    pub status: OrOther<PointStatus>,
    /// False when the 95 % intervals still straddled a bound after every repeat, so the point
    /// estimate decided the status.
    pub sure: bool,
    /// One line: why the status is what it is.
    pub reason: String,
    /// Each SLO bound's member at this point, in the order of the SLO.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slo: Vec<SloValue>,
    /// Output tokens per second (of the pooled comparable runs: their mean), what the knee
    /// rule reads; null when the point is unusable.
    pub output_tps: Option<f64>,
    /// Median end-to-end latency in ms (pooled), the latency the knee rule reads.
    pub e2el_p50_ms: Option<f64>,
    /// The run ids of the summaries written for this point, in order.
    pub run_ids: Vec<String>,
}

/// Where throughput stopped growing with load (docs/sweep.md, "The knee").
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Knee {
    /// The load past which more load bought little throughput: the lower end of the first
    /// pair of measured loads whose gain per doubling fell below `threshold`.
    pub value: f64,
    /// The next load measured, the pair's upper end.
    pub next: f64,
    /// Output tokens/s gained per doubling of load from `value` to `next`, as a fraction.
    pub gain_per_doubling: f64,
    /// Median end-to-end latency grown per doubling over the same pair, as a fraction.
    pub latency_growth_per_doubling: f64,
    /// The gain below which the knee is marked (`--knee-gain`).
    pub threshold: f64,
}

/// The last pass and the first fail of the load variable.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Bracket {
    /// The largest value that passed with every lower tested value passing; null when none did.
    pub last_pass: Option<f64>,
    /// The smallest value above it that failed or was unusable; null when none did.
    pub first_fail: Option<f64>,
}

/// What a sweep found, last in its output.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Sweep {
    /// The load variable's name, as in the command's `{NAME}`.
    pub variable: String,
    /// Scan or find.
    pub mode: OrOther<SweepMode>,
    /// The command run for each point, before substitution.
    pub command: String,
    /// The SLO's bounds; empty for a scan without one.
    pub slo: Vec<SloTerm>,
    /// The largest value that meets the SLO, every lower tested value meeting it too; null
    /// when none does or no SLO was given.
    pub capacity: Option<f64>,
    /// The values around the capacity.
    pub bracket: Bracket,
    /// False when a point of the bracket was decided by its point estimate (`sure` false).
    pub sure: bool,
    /// The saturation knee among the usable points; null when none was seen.
    pub knee: Option<Knee>,
    /// Every point measured, in the order measured.
    pub points: Vec<SweepPoint>,
    /// Measured runs in all (repeats included, the `--warmup` run not).
    pub runs: u64,
    /// How it ended.
    pub ended: OrOther<SweepEnd>,
    /// One line: the answer, or why the sweep stopped short of one.
    pub reason: String,
    /// Wall-clock seconds from the first run's start to this record.
    pub duration_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Record;

    #[test]
    fn a_sweep_record_round_trips_and_reads_a_newer_status_as_other() {
        let sweep = Sweep {
            variable: "concurrency".into(),
            mode: SweepMode::Find.into(),
            capacity: Some(4.0),
            points: vec![SweepPoint {
                value: 4.0,
                status: PointStatus::Pass.into(),
                ..SweepPoint::default()
            }],
            ..Sweep::default()
        };
        let record = Record::Sweep(Box::new(sweep));
        let text = serde_json::to_string(&record).unwrap();
        assert!(text.starts_with(r#"{"type":"sweep","variable":"concurrency","mode":"find""#));
        assert!(text.contains(r#""status":"pass""#), "{text}");
        let back: Record = serde_json::from_str(&text).unwrap();
        assert_eq!(back, record);
        let newer = text.replace(r#""status":"pass""#, r#""status":"warming""#);
        let Record::Sweep(read) = serde_json::from_str(&newer).unwrap() else {
            panic!("not a sweep")
        };
        assert_eq!(read.points[0].status, OrOther::Other("warming".into()));
    }
}
