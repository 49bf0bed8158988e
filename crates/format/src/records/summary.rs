//! The `summary` record `reduce` writes per run, and the flat key grammar of its statistics.
//!
//! Counts and throughputs are fixed fields. Every statistic of a latency metric is a flat
//! member named `{metric}_{stat}_{unit}`: `ttft_mean_ms`, `itl_p99_ms`, `e2el_p99.9_ms`,
//! `dispatch_lag_max_ms`, where `stat` is `mean`, `std`, `min`, `max` or `p` followed by the
//! percentile. So `reduce --percentiles 50,95,99.9` adds members without a new field in the
//! format, and jq (`.ttft_p95_ms`, `.["ttft_p99.9_ms"]`) and CSV tools read them as they read any
//! other member. `percentiles` lists which percentiles the run carries.

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Metrics over one run, as `reduce` computes them (docs/metrics.md defines each).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// Name of this run in tables (reduce's `--label`, else the model, else the run id).
    pub label: String,
    /// The run id of the `fire` run summarised.
    pub run_id: String,
    /// Requests that ended `ok`.
    pub requests_ok: u64,
    /// Requests that failed, whatever the kind.
    pub requests_failed: u64,
    /// From the first send to the last `done`, in seconds.
    pub duration_s: f64,
    /// Prompt tokens of successful requests, from the server's usage (0 where it reported none).
    pub input_tokens: u64,
    /// Output tokens of successful requests (usage, else the sum of token events).
    pub output_tokens: u64,
    /// Successful requests per second of `duration_s`.
    pub request_throughput_per_s: f64,
    /// Output tokens per second of `duration_s`.
    pub output_throughput_tokens_per_s: f64,
    /// Input plus output tokens per second of `duration_s`.
    pub total_throughput_tokens_per_s: f64,
    /// Times `fire`'s output was blocked by a slow reader (its `stall` records); omitted when
    /// none. Token stamps taken during a stall may be late.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub output_stalls: u64,
    /// How long those stalls held `fire`'s network thread in all, in milliseconds.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub output_stall_ms: f64,
    /// Whether `fire` kept to its schedule and had CPU to spare (its `client` record's
    /// `kept_up`); false marks a run whose load or stamps the client may have distorted.
    /// Omitted when the run has no `client` record (a `fire` before format 1.3, a killed run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_kept_up: Option<bool>,
    /// Why the client did not keep up, one sentence per reason; omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_warnings: Vec<String>,
    /// CPU seconds the client spent, user and system, all threads; omitted without a `client`
    /// record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu_s: Option<f64>,
    /// Jitter: ITL p99 divided by ITL p50 (1.0 is perfectly even streaming).
    #[serde(default)]
    pub itl_jitter: Option<f64>,
    /// The percentiles carried for every latency metric, e.g. `[50, 90, 99]`. Empty in a 1.0
    /// summary, which carries p50, p90 and p99.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub percentiles: Vec<f64>,
    // --- runs: repeats and shards ---
    /// A group summary: the run ids of the repeated runs of one configuration it pools, in
    /// order. Omitted on the summary of a single run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<String>,
    /// A group summary: per numeric member of its runs' summaries, its mean, sample standard
    /// deviation, CV % and the 95 % interval of the mean over the runs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub across_runs: BTreeMap<String, super::AcrossRuns>,
    /// A group summary: per latency percentile member (`ttft_p99_ms`), a 95 % bootstrap
    /// interval `[lo, hi]` over the pooled samples.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub percentile_ci95: BTreeMap<String, [f64; 2]>,
    /// A run merged from the shards of one plan: how many parts the plan was split into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<u32>,
    /// The run ids of the parts merged, in the order they were read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shard_runs: Vec<String>,
    /// The indices of the plan's parts that were not in the input (the figures cover the
    /// others only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards_missing: Vec<u32>,
    /// Every `{metric}_{stat}_{unit}` member; null where no request contributed a value.
    #[serde(flatten)]
    pub stats: Stats,
    /// Per metric, what it takes to merge this run's statistics exactly with another run's
    /// (shards, repeated runs), so percentiles are recomputed rather than averaged. Omitted
    /// when empty.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub histograms: BTreeMap<String, MetricState>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

/// One metric's samples in mergeable form. The HDR histogram is HdrHistogram's standard
/// compressed encoding (V2, deflated, base64: the `HISTF...` strings of HdrHistogram log files,
/// readable by its Java, C, Go, Python and Rust libraries), of nanosecond values.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct MetricState {
    /// The histogram of the samples, in nanoseconds.
    pub hdr: String,
    /// Number of samples.
    pub count: u64,
    /// Sum of the samples, in nanoseconds (the exact mean is `sum_ns / count`).
    pub sum_ns: f64,
    /// Sum of squared deviations from the mean, in ns² (the population variance is
    /// `m2_ns2 / count`); merged with Chan's formula.
    pub m2_ns2: f64,
    /// The smallest sample, in nanoseconds.
    pub min_ns: f64,
    /// The largest sample, in nanoseconds.
    pub max_ns: f64,
}

/// A statistic of one metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StatName {
    /// Arithmetic mean.
    Mean,
    /// Population standard deviation.
    Std,
    /// Smallest sample.
    Min,
    /// Largest sample.
    Max,
    /// The percentile, from 0 to 100 (`99.9`).
    Percentile(f64),
}

impl StatName {
    /// The stat's part of a member name: `mean`, `p99`, `p99.9`.
    pub fn key_part(self) -> Cow<'static, str> {
        match self {
            StatName::Mean => "mean".into(),
            StatName::Std => "std".into(),
            StatName::Min => "min".into(),
            StatName::Max => "max".into(),
            StatName::Percentile(p) => format!("p{p}").into(),
        }
    }

    /// Reads a stat part back (`p99.9` is a percentile).
    pub fn parse(part: &str) -> Option<Self> {
        Some(match part {
            "mean" => StatName::Mean,
            "std" => StatName::Std,
            "min" => StatName::Min,
            "max" => StatName::Max,
            p => {
                let digits = p.strip_prefix('p')?;
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                    return None;
                }
                let v: f64 = digits.parse().ok()?;
                if !(0.0..=100.0).contains(&v) {
                    return None;
                }
                StatName::Percentile(v)
            }
        })
    }
}

/// The units a statistic member may end in.
const UNITS: &[&str] = &["ms", "s", "tokens"];

/// The member name of a statistic: `stat_key("ttft", StatName::Percentile(99.9), "ms")` is
/// `ttft_p99.9_ms`.
pub fn stat_key(metric: &str, stat: StatName, unit: &str) -> String {
    format!("{metric}_{}_{unit}", stat.key_part())
}

/// Splits a member name into metric, stat and unit, when it follows the grammar.
pub fn parse_stat_key(key: &str) -> Option<(&str, StatName, &str)> {
    let (rest, unit) = key.rsplit_once('_')?;
    if !UNITS.contains(&unit) {
        return None;
    }
    let (metric, stat) = rest.rsplit_once('_')?;
    let valid_metric = metric.starts_with(|c: char| c.is_ascii_lowercase())
        && metric
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    valid_metric.then_some(())?;
    Some((metric, StatName::parse(stat)?, unit))
}

/// The statistic members of a summary, by name. Reading keeps only members that follow the
/// grammar and hold a number or null, so a newer writer's other members are skipped, as any
/// unknown member is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Stats(pub BTreeMap<String, Option<f64>>);

impl Serialize for Stats {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Stats {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let all = BTreeMap::<String, serde_json::Value>::deserialize(d)?;
        let stats = all
            .into_iter()
            .filter(|(k, _)| parse_stat_key(k).is_some())
            .filter_map(|(k, v)| match v {
                serde_json::Value::Null => Some((k, None)),
                serde_json::Value::Number(n) => n.as_f64().map(|x| (k, Some(x))),
                _ => None,
            })
            .collect();
        Ok(Stats(stats))
    }
}

impl JsonSchema for Stats {
    fn schema_name() -> Cow<'static, str> {
        "Stats".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "description": "Statistics of latency metrics, one member each, named {metric}_{stat}_{unit}: stat is mean, std, min, max or p<percentile> (p50, p99.9).",
            "patternProperties": {
                "^[a-z][a-z0-9_]*_(mean|std|min|max|p[0-9.]+)_(ms|s|tokens)$": {"type": ["number", "null"]}
            }
        })
    }
}

impl Summary {
    /// The millisecond statistic `stat` of `metric` (`ttft`, `tpot`, `itl`, `e2el`,
    /// `dispatch_lag`), when the run carries it and has a value.
    pub fn stat(&self, metric: &str, stat: StatName) -> Option<f64> {
        self.stats
            .0
            .get(&stat_key(metric, stat, "ms"))
            .copied()
            .flatten()
    }

    /// Sets the millisecond statistic `stat` of `metric` (null when `value` is `None`).
    pub fn set_stat(&mut self, metric: &str, stat: StatName, value: Option<f64>) {
        self.stats.0.insert(stat_key(metric, stat, "ms"), value);
    }

    /// The percentiles this summary carries: its `percentiles` list, or those of a 1.0
    /// summary.
    pub fn percentile_set(&self) -> Cow<'_, [f64]> {
        if self.percentiles.is_empty() {
            Cow::Owned(vec![50.0, 90.0, 99.0])
        } else {
            Cow::Borrowed(&self.percentiles)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip() {
        for (metric, stat, key) in [
            ("ttft", StatName::Percentile(99.0), "ttft_p99_ms"),
            ("itl", StatName::Percentile(99.9), "itl_p99.9_ms"),
            ("dispatch_lag", StatName::Max, "dispatch_lag_max_ms"),
            ("e2el", StatName::Std, "e2el_std_ms"),
        ] {
            assert_eq!(stat_key(metric, stat, "ms"), key);
            assert_eq!(parse_stat_key(key), Some((metric, stat, "ms")));
        }
        for not_stat in [
            "request_throughput_per_s",
            "duration_s",
            "itl_jitter",
            "ttft_p_ms",
            "ttft_p101_ms",
            "Ttft_mean_ms",
            "_mean_ms",
        ] {
            assert_eq!(parse_stat_key(not_stat), None, "{not_stat}");
        }
    }

    #[test]
    fn flat_members_and_unknown_ones() {
        let line = r#"{"label":"a","run_id":"r","requests_ok":1,"requests_failed":0,"duration_s":1.0,
            "input_tokens":1,"output_tokens":2,"request_throughput_per_s":1.0,
            "output_throughput_tokens_per_s":2.0,"total_throughput_tokens_per_s":3.0,
            "ttft_mean_ms":5.5,"ttft_p99.9_ms":7.0,"itl_p50_ms":null,
            "future_note":"text","future_count":3,"future_stat_p50_ms":"not a number"}"#;
        let s: Summary = serde_json::from_str(line).unwrap();
        assert_eq!(s.stat("ttft", StatName::Mean), Some(5.5));
        assert_eq!(s.stat("ttft", StatName::Percentile(99.9)), Some(7.0));
        assert_eq!(s.stat("itl", StatName::Percentile(50.0)), None);
        assert_eq!(s.stats.0.len(), 3, "{:?}", s.stats);
        assert_eq!(s.percentile_set().as_ref(), [50.0, 90.0, 99.0]);
        let text = serde_json::to_string(&s).unwrap();
        assert!(text.contains("\"ttft_p99.9_ms\":7.0"), "{text}");
        assert!(text.contains("\"itl_p50_ms\":null"), "{text}");
        assert!(!text.contains("histograms"), "{text}");
        assert!(!text.contains("client_"), "{text}");
    }

    #[test]
    fn client_members_are_fields_not_statistics() {
        let line = r#"{"label":"a","run_id":"r","requests_ok":1,"requests_failed":0,"duration_s":1.0,
            "input_tokens":1,"output_tokens":2,"request_throughput_per_s":1.0,
            "output_throughput_tokens_per_s":2.0,"total_throughput_tokens_per_s":3.0,
            "client_kept_up":false,"client_warnings":["late"],"client_cpu_s":0.25}"#;
        let s: Summary = serde_json::from_str(line).unwrap();
        assert_eq!(s.client_kept_up, Some(false));
        assert_eq!(s.client_warnings, ["late"]);
        assert_eq!(s.client_cpu_s, Some(0.25));
        assert!(s.stats.0.is_empty(), "{:?}", s.stats);
    }
}
