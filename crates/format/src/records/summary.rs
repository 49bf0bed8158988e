//! The `summary` record `reduce` writes per run, and the flat key grammar of its statistics.
//!
//! Counts and throughputs are fixed fields. Every statistic of a latency metric is a flat
//! member named `{metric}_{stat}_{unit}`: `ttft_mean_ms`, `itl_p99_ms`, `e2el_p99.9_ms`,
//! `dispatch_lag_max_ms`, `user_tps_p50_tps`, where `stat` is `mean`, `std` (population), `sstd`
//! (sample), `min`, `max` or `p` followed by the percentile, and `unit` one of [`UNITS`]. So `reduce --percentiles 50,95,99.9` adds members without a new field in the
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
    /// From the first send to the last `done`, in seconds; with a measured `window`, the
    /// window's length.
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
    /// Why the client's lateness was not judged although it kept up (its `client` record's
    /// `not_judged`: a run too short to judge); omitted when it was judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_not_judged: Option<String>,
    /// Jitter: ITL p99 divided by ITL p50 (1.0 is perfectly even streaming).
    #[serde(default)]
    pub itl_jitter: Option<f64>,
    /// The percentiles carried for every latency metric, e.g. `[50, 90, 99]`. Empty in a 1.0
    /// summary, which carries p50, p90 and p99.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub percentiles: Vec<f64>,
    // --- llama-benchy ---
    /// llama-benchy's figures (docs/metrics.md, "llama-benchy's figures"): a batch run's, or
    /// any run's with reduce's `--llama-benchy`; omitted otherwise and when no request
    /// succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llama_benchy: Option<super::LlamaBenchy>,
    // --- per-request records, counts, coverage, goodput and metadata ---
    /// Requests the run held: every request with a `sent` or a `done`, whatever its end.
    /// Absent from summaries written before format 1.4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_scheduled: Option<u64>,
    /// Requests that left the client (with a `sent`), so a stopped run's unsent rest shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_sent: Option<u64>,
    /// The failed requests the server or the network caused (`requests_failed` less the
    /// `cancelled`, `not_sent` and unfinished ones the run itself ended), so a stopped run is
    /// told apart from a failing server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_failed_server: Option<u64>,
    /// Every request that was not ok, by error kind as written (`unfinished`: no `done` at
    /// all; `unknown`: a failed `done` without a kind); omitted when every request was ok.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<String, u64>,
    /// Whether the run is comparable with others, and why not (docs/verdict.md): complete,
    /// the client kept up, the server agrees. Absent from summaries written before format 1.7;
    /// [`super::Verdict::of`] works it out for those.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<super::Verdict>,
    /// Per metric, how many values its statistics were computed from, so each figure says
    /// which requests it covers.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub samples: BTreeMap<String, u64>,
    /// The SLO bounds of goodput (`reduce --slo`), metric to bound in milliseconds; omitted
    /// without `--slo`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub slo: BTreeMap<String, f64>,
    /// Requests that were ok and met every bound of `slo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub good_requests: Option<u64>,
    /// `good_requests` per second of `duration_s`: the goodput, beside the throughput.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput_per_s: Option<f64>,
    /// `good_requests` over the requests the server answered (ok, or failed by the server or
    /// the network): the share served well. Requests the run itself ended (cancelled, not
    /// sent, unfinished) are not the server's to serve and do not count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub good_fraction: Option<f64>,
    /// What was measured, as the user named it (`reduce --meta model=…`): model, hardware,
    /// engine, so a summary read alone says what it describes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub meta: BTreeMap<String, String>,
    // --- vllm-compatible ---
    /// Whose definitions the extra figures follow: `vllm` under `reduce --vllm-compatible`.
    /// Omitted otherwise. The statistic members above always follow docs/metrics.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definitions: Option<String>,
    /// `vllm bench serve`'s result figures under its own key names and units (`duration`,
    /// `completed`, `mean_ttft_ms`, `p99_itl_ms`, `max_concurrent_requests`, ...), computed with
    /// its definitions; omitted without `--vllm-compatible`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vllm: Option<BTreeMap<String, serde_json::Value>>,
    // --- windows, peak throughput and concurrency ---
    /// The measured window, when the summary is not over the whole run (reduce's `--phase`,
    /// a run's `measure` phase, or `--warmup`/`--measure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<crate::MeasuredWindow>,
    /// Requests sent outside the window, left out of every count and latency above; present
    /// exactly when `window` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_outside_window: Option<u64>,
    /// Most output tokens stamped in any 1 s of the measured span (1 ms steps); omitted when
    /// the span is shorter than 1 s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_output_tps: Option<f64>,
    /// Where that busiest second begins, seconds from the run start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_output_tps_at_s: Option<f64>,
    /// Requests in flight (sent, not yet done), averaged over the measured span's time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_concurrency: Option<f64>,
    /// Most requests in flight at once within the measured span.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_concurrency: Option<u64>,
    /// Server output tokens/s derived from the users' view: mean `user_tps` of the successful
    /// requests times the concurrency named by `server_tps_concurrency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_tps_from_users: Option<f64>,
    /// Which concurrency `server_tps_from_users` used: `closed_loop` (the loop's N) or
    /// `mean_concurrency` (measured, open loop and batches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_tps_concurrency: Option<String>,
    // --- server metrics ---
    /// The server's own count of prompt tokens over the run: the change of its
    /// `vllm:prompt_tokens_total` between `fire --server-metrics`'s two scrapes (llama.cpp:
    /// `llamacpp:prompt_tokens_total` plus `llamacpp:prompt_tokens_cached_total`). Omitted
    /// without both scrapes (so for the fields below).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_prompt_tokens: Option<u64>,
    /// The change of the server's `vllm:generation_tokens_total` (llama.cpp:
    /// `llamacpp:tokens_predicted_total`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_generation_tokens: Option<u64>,
    /// The change of the server's `vllm:request_success_total` with `finished_reason` `stop`
    /// or `length` (aborted requests left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_requests_succeeded: Option<u64>,
    /// Mean TTFT as the server measured it: the change of `vllm:time_to_first_token_seconds`'s
    /// `_sum` over the change of its `_count`, in ms; omitted when no request was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_ttft_mean_ms: Option<f64>,
    /// Mean inter-token latency as the server measured it, from
    /// `vllm:inter_token_latency_seconds` (or the older `vllm:time_per_output_token_seconds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_itl_mean_ms: Option<f64>,
    /// Mean end-to-end latency as the server measured it, from
    /// `vllm:e2e_request_latency_seconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_e2el_mean_ms: Option<f64>,
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
    /// A merged run: what became of each part of the plan, in index order (docs/metrics.md,
    /// "Shards"), so that a lost host, a late start or a skewed clock is seen per part.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<super::Part>,
    /// A merged run: requests owned by lost or missing parts that no output mentions; counted
    /// in no other member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_lost: Option<u64>,
    /// A merged run: the latest part's `started_at` minus the earliest's, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_spread_ms: Option<f64>,
    /// A merged run: the spread of the parts' clock offsets to the server's, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_skew_ms: Option<f64>,
    /// The error of `clock_skew_ms`: the skew lies within `clock_skew_ms` ± this, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_skew_error_ms: Option<f64>,
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
/// readable by its Java, C, Go, Python and Rust libraries). Values are in the metric's histogram
/// unit: nanoseconds for `ms` metrics, milli-tokens per second for `tps` metrics, millionths for
/// `ratio` metrics; the `_ns` names are those of format 1.0.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct MetricState {
    /// The histogram of the samples, in the histogram unit.
    pub hdr: String,
    /// Number of samples.
    pub count: u64,
    /// Sum of the samples (the exact mean is `sum_ns / count`).
    pub sum_ns: f64,
    /// Sum of squared deviations from the mean, in the unit squared (the population variance is
    /// `m2_ns2 / count`); merged with Chan's formula.
    pub m2_ns2: f64,
    /// The smallest sample.
    pub min_ns: f64,
    /// The largest sample.
    pub max_ns: f64,
}

/// A statistic of one metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StatName {
    /// Arithmetic mean.
    Mean,
    /// Population standard deviation (divides by n, as numpy's default and vLLM do).
    Std,
    /// Sample standard deviation (divides by n − 1); null for fewer than 2 values.
    SampleStd,
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
            StatName::SampleStd => "sstd".into(),
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
            "sstd" => StatName::SampleStd,
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
/// `tps` is tokens per second (per-request rates), `ratio` a dimensionless quotient.
pub const UNITS: &[&str] = &["ms", "s", "tokens", "tps", "ratio"];

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
            "description": "Statistics of latency metrics, one member each, named {metric}_{stat}_{unit}: stat is mean, std (population), sstd (sample), min, max or p<percentile> (p50, p99.9); unit is ms, s, tokens, tps (tokens per second) or ratio.",
            "patternProperties": {
                "^[a-z][a-z0-9_]*_(mean|std|sstd|min|max|p[0-9.]+)_(ms|s|tokens|tps|ratio)$": {"type": ["number", "null"]}
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

    /// The statistic `stat` of `metric` in `unit` (`"tps"` for `user_tps`, `"ratio"` for
    /// `itl_cv`), for the metrics that are not milliseconds.
    pub fn stat_in(&self, metric: &str, stat: StatName, unit: &str) -> Option<f64> {
        self.stats
            .0
            .get(&stat_key(metric, stat, unit))
            .copied()
            .flatten()
    }

    /// Sets the statistic `stat` of `metric` in `unit` (null when `value` is `None`).
    pub fn set_stat_in(&mut self, metric: &str, stat: StatName, unit: &str, value: Option<f64>) {
        self.stats.0.insert(stat_key(metric, stat, unit), value);
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
            ("e2el", StatName::SampleStd, "e2el_sstd_ms"),
            ("user_tps", StatName::Percentile(50.0), "user_tps_p50_tps"),
            ("itl_cv", StatName::Mean, "itl_cv_mean_ratio"),
        ] {
            let unit = key.rsplit_once('_').map_or("", |(_, u)| u);
            assert_eq!(stat_key(metric, stat, unit), key);
            assert_eq!(parse_stat_key(key), Some((metric, stat, unit)));
        }
        for not_stat in [
            "request_throughput_per_s",
            "duration_s",
            "itl_jitter",
            "ttft_p_ms",
            "ttft_p101_ms",
            "Ttft_mean_ms",
            "_mean_ms",
            "goodput_per_s",
            "good_fraction",
            "ttft_sstdx_ms",
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
