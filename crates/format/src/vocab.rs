//! The words every tool shares: the run settings a header carries (what tells runs apart, what
//! loads the server, what differs between repeats by design), the distribution metrics a
//! summary carries (their unit, their histogram scale, which way is better, how people name
//! them) and its run-wide figures (with a reader that needs no serialisation). arrivals and fire
//! write these names, reduce computes and groups by them, table filters and renders them: a
//! setting, a metric or a figure is added here, once, and every list the tools use is a filter
//! over [`SETTINGS`], [`METRICS`] or [`FIGURES`].

use crate::Summary;
use serde_json::Value;

/// Which way a figure is better, for rankings and for a default sort.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Throughputs.
    Higher,
    /// Latencies, failures.
    Lower,
    /// Names and settings.
    Neither,
}

/// What kind of value a setting holds, for alignment and for telling runs apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// A whole number of things: requests, tokens, prompts.
    Count,
    /// A quantity: a rate, a shape parameter.
    Number,
    /// A name: a model, an API, a URL.
    Text,
}

/// What a setting says about a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// How hard the run loads the server; the x axis of a load sweep.
    Load,
    /// The rest of the workload: its shape and its size.
    Workload,
    /// What was measured: the model, the API, the server.
    Identity,
    /// Differs between repeats of one configuration by design (a fresh prompt salt, the date, a
    /// measured figure an imported run carries), so it never tells configurations apart.
    Provenance,
}

/// One run setting, as a header's `params` carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// The key in a header's `params`.
    pub key: &'static str,
    /// The names `table` accepts for it as a field (`rate` for `rate_per_s`); none for a
    /// setting that is not a field of its own.
    pub names: &'static [&'static str],
    /// Its short form in a default run label (`c` in `sim c=16`).
    pub short: &'static str,
    /// Its column heading, unit included.
    pub heading: &'static str,
    /// What kind of value it holds.
    pub kind: ValueKind,
    /// What it says about a run.
    pub role: Role,
    /// How a load chart's x axis names it (load settings only).
    pub axis: Option<&'static str>,
}

/// Closed loop: requests kept in flight.
pub const CONCURRENCY: Setting = Setting {
    key: "concurrency",
    names: &["concurrency"],
    short: "c",
    heading: "Concurrency",
    kind: ValueKind::Count,
    role: Role::Load,
    axis: Some("concurrency (requests in flight)"),
};

/// Open loop: the mean request rate.
pub const RATE: Setting = Setting {
    key: "rate_per_s",
    names: &["rate", "rate_per_s"],
    short: "rate",
    heading: "Rate [req/s]",
    kind: ValueKind::Number,
    role: Role::Load,
    axis: Some("request rate (req/s)"),
};

/// The gamma shape of an open loop's gaps (1 is Poisson).
pub const BURSTINESS: Setting = Setting {
    key: "burstiness",
    names: &["burstiness"],
    short: "b",
    heading: "Burstiness",
    kind: ValueKind::Number,
    role: Role::Workload,
    axis: None,
};

/// Requests sent at once, as llama-benchy's batches.
pub const BATCH: Setting = Setting {
    key: "batch",
    names: &["batch"],
    short: "batch",
    heading: "Batch",
    kind: ValueKind::Count,
    role: Role::Load,
    axis: Some("batch size"),
};

/// An open loop's cap on requests in flight.
pub const MAX_CONCURRENCY: Setting = Setting {
    key: "max_concurrency",
    names: &["max_concurrency"],
    short: "max",
    heading: "Max concurrency",
    kind: ValueKind::Count,
    role: Role::Workload,
    axis: None,
};

/// Prompt tokens asked for (ISL).
pub const INPUT_TOKENS: Setting = Setting {
    key: "input_tokens",
    names: &["isl"],
    short: "isl",
    heading: "ISL [tokens]",
    kind: ValueKind::Count,
    role: Role::Workload,
    axis: None,
};

/// Tokens of extra context ahead of the prompt, sent as a system message (llama-benchy's
/// `--depth`).
pub const DEPTH: Setting = Setting {
    key: "depth",
    names: &["depth"],
    short: "d",
    heading: "Depth [tokens]",
    kind: ValueKind::Count,
    role: Role::Workload,
    axis: None,
};

/// Output tokens asked for (OSL).
pub const OUTPUT_TOKENS: Setting = Setting {
    key: "output_tokens",
    names: &["osl"],
    short: "osl",
    heading: "OSL [tokens]",
    kind: ValueKind::Count,
    role: Role::Workload,
    axis: None,
};

/// Requests in the schedule.
pub const NUM_PROMPTS: Setting = Setting {
    key: "num_prompts",
    names: &["num_prompts"],
    short: "n",
    heading: "Prompts",
    kind: ValueKind::Count,
    role: Role::Workload,
    axis: None,
};

/// open or closed loop, batch.
pub const MODE: Setting = Setting {
    key: "mode",
    names: &["mode"],
    short: "mode",
    heading: "Mode",
    kind: ValueKind::Text,
    role: Role::Identity,
    axis: None,
};

/// chat or completions.
pub const API: Setting = Setting {
    key: "api",
    names: &["api"],
    short: "api",
    heading: "API",
    kind: ValueKind::Text,
    role: Role::Identity,
    axis: None,
};

/// The model served.
pub const MODEL: Setting = Setting {
    key: "model",
    names: &["model"],
    short: "model",
    heading: "Model",
    kind: ValueKind::Text,
    role: Role::Identity,
    axis: None,
};

/// The server's base URL.
pub const URL: Setting = Setting {
    key: "url",
    names: &[],
    short: "url",
    heading: "URL",
    kind: ValueKind::Text,
    role: Role::Identity,
    axis: None,
};

/// fire's per-run prompt salt, fresh for each repeat so repeats do not share a prefix cache.
pub const SALT: Setting = Setting {
    key: "salt",
    names: &[],
    short: "salt",
    heading: "Salt",
    kind: ValueKind::Text,
    role: Role::Provenance,
    axis: None,
};

/// The date an imported `vllm bench serve` run was written.
pub const DATE: Setting = Setting {
    key: "date",
    names: &[],
    short: "date",
    heading: "Date",
    kind: ValueKind::Text,
    role: Role::Provenance,
    axis: None,
};

/// arrivals' `--duration`, and the duration an imported `vllm bench serve` run measured. The
/// second differs on every import, so the key never tells configurations apart: two runs that
/// differ only in `--duration` are repeats of one configuration.
pub const DURATION: Setting = Setting {
    key: "duration_s",
    names: &[],
    short: "duration",
    heading: "Duration [s]",
    kind: ValueKind::Number,
    role: Role::Provenance,
    axis: None,
};

/// The peak output rate an imported `vllm bench serve` run measured.
pub const PEAK_OUTPUT_TPS: Setting = Setting {
    key: "max_output_tokens_per_s",
    names: &[],
    short: "peak",
    heading: "Peak output [tok/s]",
    kind: ValueKind::Number,
    role: Role::Provenance,
    axis: None,
};

/// The peak of requests in flight an imported `vllm bench serve` run measured.
pub const PEAK_CONCURRENT: Setting = Setting {
    key: "max_concurrent_requests",
    names: &[],
    short: "peak_concurrent",
    heading: "Peak concurrency",
    kind: ValueKind::Count,
    role: Role::Provenance,
    axis: None,
};

/// fire's header parameter: the network round trip it measured before the first request (the
/// mean of three `GET /models`, llama-benchy's method), in ms; llama-benchy's figures subtract it.
pub const NET_LATENCY_MS: &str = "net_latency_ms";

/// fire's header parameter: the tokens its adapt step took off each prompt (or, at a depth, off
/// each system context), llama-benchy's warm-up delta.
pub const ADAPT_TOKENS: &str = "adapt_tokens";

/// arrivals' header parameter repeating the schedule's `warmup_batches`, since fire's output
/// does not repeat the schedule and reduce must leave those batches out.
pub const WARMUP_BATCHES: &str = "warmup_batches";

/// The `reduce --meta` key that says how many GPUs served a run (`--meta gpus=8`): `table
/// --chart pareto` divides total throughput by it (tok/s per GPU, as vLLM's `plot_pareto`
/// does). A metadata key, not a [`Setting`]: it lives in the summary's `meta` (and the reduce
/// header's `params.meta`), and, as any `meta` key, already tells runs apart in labels.
pub const GPUS: &str = "gpus";

/// Every setting, in the order runs are told apart by (load first, then the workload, then
/// what was measured).
pub const SETTINGS: &[Setting] = &[
    CONCURRENCY,
    RATE,
    BURSTINESS,
    BATCH,
    MAX_CONCURRENCY,
    INPUT_TOKENS,
    DEPTH,
    OUTPUT_TOKENS,
    NUM_PROMPTS,
    MODE,
    API,
    MODEL,
    URL,
    SALT,
    DATE,
    DURATION,
    PEAK_OUTPUT_TPS,
    PEAK_CONCURRENT,
];

/// The settings with one of `roles`, in [`SETTINGS`] order.
pub fn settings_with(roles: &[Role]) -> impl Iterator<Item = &'static Setting> + '_ {
    SETTINGS.iter().filter(move |s| roles.contains(&s.role))
}

/// The setting a header key names.
pub fn setting(key: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.key == key)
}

/// The setting `table` knows by the field name `name`.
pub fn setting_named(name: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.names.contains(&name))
}

/// The unit a metric's statistics are written in (the suffix of its summary members) and its
/// histogram's scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Milliseconds; recorded in nanoseconds.
    Ms,
    /// Tokens per second; recorded in milli-tokens per second, so that 3 significant figures
    /// hold for rates below 1.
    Tps,
    /// A ratio; recorded in millionths.
    Ratio,
}

impl Unit {
    /// The suffix of the summary members (`ttft_p99_ms`).
    pub fn suffix(self) -> &'static str {
        match self {
            Unit::Ms => "ms",
            Unit::Tps => "tps",
            Unit::Ratio => "ratio",
        }
    }

    /// Histogram units per summary unit.
    pub fn per_unit(self) -> f64 {
        match self {
            Unit::Ms => 1e6,
            Unit::Tps => 1e3,
            Unit::Ratio => 1e6,
        }
    }
}

/// Which of reduce's accumulators writes a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// The request latencies every summary has and every table shows (vLLM's four).
    Latency,
    /// The client's own: how late it sent. In every summary, shown on request.
    Client,
    /// The metrics beyond vLLM's set, from the successful requests.
    Extra,
}

/// A distribution metric: the summary carries its statistics (`NAME_STAT_UNIT`), its sample
/// count and its histogram under its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric {
    /// The name in the summary's members, `samples`, `histograms` and `--slo`.
    pub name: &'static str,
    /// How people write it in a heading: `TTFT`, `User generation`.
    pub heading: &'static str,
    /// What it measures, in words, for chart titles.
    pub title: &'static str,
    /// Its statistics' unit.
    pub unit: Unit,
    /// Which way is better.
    pub better: Better,
    /// Which accumulator writes it.
    pub family: Family,
}

const fn metric(
    name: &'static str,
    heading: &'static str,
    title: &'static str,
    unit: Unit,
    better: Better,
    family: Family,
) -> Metric {
    Metric {
        name,
        heading,
        title,
        unit,
        better,
        family,
    }
}

/// Time to first token.
pub const TTFT: Metric = metric(
    "ttft",
    "TTFT",
    "Time to first token",
    Unit::Ms,
    Better::Lower,
    Family::Latency,
);
/// Time per output token after the first.
pub const TPOT: Metric = metric(
    "tpot",
    "TPOT",
    "Time per output token",
    Unit::Ms,
    Better::Lower,
    Family::Latency,
);
/// Inter-token latency.
pub const ITL: Metric = metric(
    "itl",
    "ITL",
    "Inter-token latency",
    Unit::Ms,
    Better::Lower,
    Family::Latency,
);
/// End-to-end latency.
pub const E2EL: Metric = metric(
    "e2el",
    "E2EL",
    "End-to-end latency",
    Unit::Ms,
    Better::Lower,
    Family::Latency,
);
/// How late the client sent each request after its scheduled instant.
pub const DISPATCH_LAG: Metric = metric(
    "dispatch_lag",
    "Dispatch lag",
    "Dispatch lag",
    Unit::Ms,
    Better::Lower,
    Family::Client,
);
/// Time to first response event, content or not.
pub const TTFR: Metric = metric(
    "ttfr",
    "TTFR",
    "Time to first response",
    Unit::Ms,
    Better::Lower,
    Family::Extra,
);
/// TTFT from the scheduled instant rather than the send.
pub const TTFT_SCHED: Metric = metric(
    "ttft_sched",
    "TTFT from schedule",
    "Time to first token from the schedule",
    Unit::Ms,
    Better::Lower,
    Family::Extra,
);
/// E2EL from the scheduled instant rather than the send.
pub const E2EL_SCHED: Metric = metric(
    "e2el_sched",
    "E2EL from schedule",
    "End-to-end latency from the schedule",
    Unit::Ms,
    Better::Lower,
    Family::Extra,
);
/// ITL per token of a chunk that carried several.
pub const ITL_TOKEN: Metric = metric(
    "itl_token",
    "ITL per token",
    "Inter-token latency per token",
    Unit::Ms,
    Better::Lower,
    Family::Extra,
);
/// Each request's output tokens over its whole time.
pub const USER_TPS: Metric = metric(
    "user_tps",
    "User",
    "Tokens per second a user sees",
    Unit::Tps,
    Better::Higher,
    Family::Extra,
);
/// Each request's output tokens over its time after the first token.
pub const USER_GEN_TPS: Metric = metric(
    "user_gen_tps",
    "User generation",
    "Generation tokens per second a user sees",
    Unit::Tps,
    Better::Higher,
    Family::Extra,
);
/// Each request's prompt tokens over its time to first token.
pub const PREFILL_TPS: Metric = metric(
    "prefill_tps",
    "Prefill",
    "Prefill tokens per second",
    Unit::Tps,
    Better::Higher,
    Family::Extra,
);
/// The coefficient of variation of each request's own gaps.
pub const ITL_CV: Metric = metric(
    "itl_cv",
    "ITL CV",
    "Variation of each request's inter-token gaps",
    Unit::Ratio,
    Better::Lower,
    Family::Extra,
);

/// Time to first answer token: the first token that was not reasoning (AIPerf's "time to first
/// output token"); TTFT stays the first token of either kind, as vLLM counts it.
pub const TTFA: Metric = metric(
    "ttfa",
    "TTFA",
    "Time to first answer token",
    Unit::Ms,
    Better::Lower,
    Family::Extra,
);
/// From the first reasoning token to the first answer token: how long the model thought.
pub const REASONING_DURATION: Metric = metric(
    "reasoning_duration",
    "Reasoning",
    "Reasoning duration",
    Unit::Ms,
    Better::Lower,
    Family::Extra,
);
/// Time per answer token after the first answer token, reasoning left out.
pub const ANSWER_TPOT: Metric = metric(
    "answer_tpot",
    "Answer TPOT",
    "Time per answer token",
    Unit::Ms,
    Better::Lower,
    Family::Extra,
);
/// Gaps between the answer's events, reasoning left out.
pub const ANSWER_ITL: Metric = metric(
    "answer_itl",
    "Answer ITL",
    "Inter-token latency of the answer",
    Unit::Ms,
    Better::Lower,
    Family::Extra,
);

/// Every metric, in the order a summary lists them.
pub const METRICS: &[Metric] = &[
    TTFT,
    TPOT,
    ITL,
    E2EL,
    DISPATCH_LAG,
    TTFR,
    TTFT_SCHED,
    E2EL_SCHED,
    ITL_TOKEN,
    USER_TPS,
    USER_GEN_TPS,
    PREFILL_TPS,
    ITL_CV,
    TTFA,
    REASONING_DURATION,
    ANSWER_TPOT,
    ANSWER_ITL,
];

/// The metrics of one family, in [`METRICS`] order.
pub fn metrics_of(family: Family) -> impl Iterator<Item = &'static Metric> {
    METRICS.iter().filter(move |m| m.family == family)
}

/// The metric a summary names `name`.
pub fn metric_named(name: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.name == name)
}

/// The unit of the metric a summary names `name`: milliseconds for a name this build does not
/// know, as every metric of format 1.0 was.
pub fn unit_of(name: &str) -> Unit {
    metric_named(name).map_or(Unit::Ms, |m| m.unit)
}

/// A run-wide figure of a summary: one number per run, read straight from the summary (no
/// serialisation), with the names and headings people see it under.
#[derive(Clone, Copy)]
pub struct Figure {
    /// The summary member.
    pub member: &'static str,
    /// Its short name as a `table` field.
    pub name: &'static str,
    /// Its column heading, unit included.
    pub heading: &'static str,
    /// Its row name where a run is shown as a column, as `vllm bench serve`'s block names it;
    /// for the figures that layout shows.
    pub row: Option<&'static str>,
    /// Whether it counts things.
    pub kind: ValueKind,
    /// Which way is better.
    pub better: Better,
    /// vLLM's key for the same figure, where it means the same thing.
    pub vllm: Option<&'static str>,
    /// The member's value as the summary's JSON has it (an integer for counts; null for a
    /// number that is not finite); `None` when the summary omits it or has none.
    pub get: fn(&Summary) -> Option<Value>,
}

impl std::fmt::Debug for Figure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Figure")
            .field("member", &self.member)
            .finish()
    }
}

/// Requests that succeeded.
pub const REQUESTS_OK: Figure = Figure {
    member: "requests_ok",
    name: "ok",
    heading: "OK",
    row: Some("Successful requests"),
    kind: ValueKind::Count,
    better: Better::Higher,
    vllm: Some(crate::vllm::key::COMPLETED),
    get: |s| Some(Value::from(s.requests_ok)),
};
/// Requests that were not ok, whatever the kind: the server's failures and the run's own ends
/// (cancelled, not sent, unfinished) together, as the summary counts them.
pub const REQUESTS_FAILED: Figure = Figure {
    member: "requests_failed",
    name: "not_ok",
    heading: "Not OK",
    row: None,
    kind: ValueKind::Count,
    better: Better::Lower,
    vllm: None,
    get: |s| Some(Value::from(s.requests_failed)),
};
/// Requests the server or the network failed: never the ones the run itself cancelled, did not
/// send or left unfinished, so a stopped run does not read as a failing server.
pub const FAILED: Figure = Figure {
    member: "requests_failed_server",
    name: "failed",
    heading: "Failed",
    row: Some("Failed requests"),
    kind: ValueKind::Count,
    better: Better::Lower,
    vllm: Some(crate::vllm::key::FAILED),
    get: |s| Some(Value::from(failed_by_server(s))),
};
/// Requests in flight when the run was stopped: the run's own end, not a failure.
pub const CANCELLED: Figure = Figure {
    member: "errors.cancelled",
    name: "cancelled",
    heading: "Cancelled",
    row: Some("Cancelled requests"),
    kind: ValueKind::Count,
    better: Better::Lower,
    vllm: None,
    get: |s| Some(Value::from(crate::ended_as(s, "cancelled"))),
};
/// Requests the stopped run never sent: the run's own end, not a failure.
pub const NOT_SENT: Figure = Figure {
    member: "errors.not_sent",
    name: "not_sent",
    heading: "Not sent",
    row: Some("Requests not sent"),
    kind: ValueKind::Count,
    better: Better::Lower,
    vllm: None,
    get: |s| Some(Value::from(crate::ended_as(s, "not_sent"))),
};
/// Requests without a `done` at all (a run cut off): neither ok nor the server's failure.
pub const UNFINISHED: Figure = Figure {
    member: "errors.unfinished",
    name: "unfinished",
    heading: "Unfinished",
    row: Some("Unfinished requests"),
    kind: ValueKind::Count,
    better: Better::Lower,
    vllm: None,
    get: |s| Some(Value::from(crate::ended_as(s, crate::UNFINISHED))),
};
/// Whether the run can be published beside others (docs/verdict.md): the summary's verdict, or
/// [`crate::Verdict::of`] for a summary written before format 1.7.
pub const COMPARABLE: Figure = Figure {
    member: "verdict.comparable",
    name: "comparable",
    heading: "Comparable",
    row: Some("Comparable"),
    kind: ValueKind::Text,
    better: Better::Neither,
    vllm: None,
    get: |s| Some(Value::Bool(verdict_of(s).comparable)),
};
/// Why the run is not comparable (or `comparable`), in one line.
pub const VERDICT: Figure = Figure {
    member: "verdict.reason",
    name: "verdict",
    heading: "Verdict",
    row: None,
    kind: ValueKind::Text,
    better: Better::Neither,
    vllm: None,
    get: |s| Some(Value::String(verdict_of(s).reason)),
};

/// The requests the server or the network failed: the summary's `requests_failed_server`, else
/// (an older summary) its `errors` less the run's own ends, else (a summary without `errors`,
/// a vLLM result file) every failed request.
pub fn failed_by_server(s: &Summary) -> u64 {
    match s.requests_failed_server {
        Some(n) => n,
        None if s.errors.is_empty() => s.requests_failed,
        None => crate::server_failures(s).map(|(_, n)| n).sum(),
    }
}

/// The summary's verdict, or the one [`crate::Verdict::of`] gives a summary written before
/// format 1.7.
pub fn verdict_of(s: &Summary) -> crate::Verdict {
    s.verdict.clone().unwrap_or_else(|| crate::Verdict::of(s))
}

/// The measured span, first send to last `done` (or the window's).
pub const DURATION_S: Figure = Figure {
    member: "duration_s",
    name: "duration",
    heading: "Duration [s]",
    row: Some("Duration (s)"),
    kind: ValueKind::Number,
    better: Better::Neither,
    vllm: Some(crate::vllm::key::DURATION),
    get: |s| Some(Value::from(s.duration_s)),
};
/// Output tokens per second.
pub const OUTPUT_TPS: Figure = Figure {
    member: "output_throughput_tokens_per_s",
    name: "output_tps",
    heading: "Output [tok/s]",
    row: Some("Output token throughput (tok/s)"),
    kind: ValueKind::Number,
    better: Better::Higher,
    vllm: Some(crate::vllm::key::OUTPUT_THROUGHPUT),
    get: |s| Some(Value::from(s.output_throughput_tokens_per_s)),
};
/// Prompt and output tokens per second.
pub const TOTAL_TPS: Figure = Figure {
    member: "total_throughput_tokens_per_s",
    name: "total_tps",
    heading: "Total [tok/s]",
    row: Some("Total token throughput (tok/s)"),
    kind: ValueKind::Number,
    better: Better::Higher,
    vllm: Some(crate::vllm::key::TOTAL_TOKEN_THROUGHPUT),
    get: |s| Some(Value::from(s.total_throughput_tokens_per_s)),
};
/// Successful requests per second.
pub const REQUEST_RATE: Figure = Figure {
    member: "request_throughput_per_s",
    name: "request_rate",
    heading: "Requests [req/s]",
    row: Some("Request throughput (req/s)"),
    kind: ValueKind::Number,
    better: Better::Higher,
    vllm: Some(crate::vllm::key::REQUEST_THROUGHPUT),
    get: |s| Some(Value::from(s.request_throughput_per_s)),
};
/// Prompt tokens of the successful requests.
pub const INPUT_TOKENS_TOTAL: Figure = Figure {
    member: "input_tokens",
    name: "input_tokens",
    heading: "Input tokens",
    row: None,
    kind: ValueKind::Count,
    better: Better::Neither,
    vllm: Some(crate::vllm::key::TOTAL_INPUT_TOKENS),
    get: |s| Some(Value::from(s.input_tokens)),
};
/// Output tokens of the successful requests.
pub const OUTPUT_TOKENS_TOTAL: Figure = Figure {
    member: "output_tokens",
    name: "output_tokens",
    heading: "Output tokens",
    row: None,
    kind: ValueKind::Count,
    better: Better::Neither,
    vllm: Some(crate::vllm::key::TOTAL_OUTPUT_TOKENS),
    get: |s| Some(Value::from(s.output_tokens)),
};
/// ITL p99 over p50.
pub const JITTER: Figure = Figure {
    member: "itl_jitter",
    name: "jitter",
    heading: "ITL jitter [p99/p50]",
    row: None,
    kind: ValueKind::Number,
    better: Better::Lower,
    vllm: None,
    get: |s| s.itl_jitter.map(Value::from),
};
/// Requests per second that met every `--slo`.
pub const GOODPUT: Figure = Figure {
    member: "goodput_per_s",
    name: "goodput",
    heading: "Goodput [req/s]",
    row: None,
    kind: ValueKind::Number,
    better: Better::Higher,
    vllm: Some(crate::vllm::key::REQUEST_GOODPUT),
    get: |s| s.goodput_per_s.map(Value::from),
};
/// The share of requests that met every `--slo`.
pub const GOOD_FRACTION: Figure = Figure {
    member: "good_fraction",
    name: "good_fraction",
    heading: "Good [fraction]",
    row: None,
    kind: ValueKind::Number,
    better: Better::Higher,
    vllm: None,
    get: |s| s.good_fraction.map(Value::from),
};
/// The most output tokens in one second.
pub const PEAK_TPS: Figure = Figure {
    member: "peak_output_tps",
    name: "peak_tps",
    heading: "Peak output [tok/s]",
    row: None,
    kind: ValueKind::Number,
    better: Better::Higher,
    vllm: Some(crate::vllm::key::MAX_OUTPUT_TOKENS_PER_S),
    get: |s| s.peak_output_tps.map(Value::from),
};
/// Requests in flight on average.
pub const MEAN_CONCURRENCY: Figure = Figure {
    member: "mean_concurrency",
    name: "mean_concurrency",
    heading: "Mean concurrency",
    row: None,
    kind: ValueKind::Number,
    better: Better::Neither,
    vllm: None,
    get: |s| s.mean_concurrency.map(Value::from),
};
/// The most requests in flight at once.
pub const PEAK_CONCURRENCY: Figure = Figure {
    member: "peak_concurrency",
    name: "peak_concurrency",
    heading: "Peak concurrency",
    row: None,
    kind: ValueKind::Count,
    better: Better::Neither,
    vllm: Some(crate::vllm::key::MAX_CONCURRENT_REQUESTS),
    get: |s| s.peak_concurrency.map(Value::from),
};
/// The server's throughput derived from the per-user rates.
pub const SERVER_TPS: Figure = Figure {
    member: "server_tps_from_users",
    name: "server_tps",
    heading: "Server from users [tok/s]",
    row: None,
    kind: ValueKind::Number,
    better: Better::Higher,
    vllm: None,
    get: |s| s.server_tps_from_users.map(Value::from),
};
/// Times fire's output was blocked; none when it never was, as the summary omits it then.
pub const STALLS: Figure = Figure {
    member: "output_stalls",
    name: "stalls",
    heading: "Output stalls",
    row: None,
    kind: ValueKind::Count,
    better: Better::Lower,
    vllm: None,
    get: |s| (s.output_stalls > 0).then(|| Value::from(s.output_stalls)),
};

// --- speculative decoding, the server's gauges and energy (docs/metrics.md) ---
/// Draft tokens accepted over those proposed, from the server's counters.
pub const SPEC_ACCEPTANCE_RATE: Figure = Figure {
    member: "spec_acceptance_rate",
    name: "spec_rate",
    heading: "Draft acceptance rate",
    row: None,
    kind: ValueKind::Number,
    better: Better::Higher,
    vllm: None,
    get: |s| s.spec_acceptance_rate.map(Value::from),
};
/// vLLM's mean acceptance length: the tokens a decode step emits.
pub const SPEC_ACCEPTANCE_LENGTH: Figure = Figure {
    member: "spec_acceptance_length",
    name: "spec_length",
    heading: "Mean acceptance length",
    row: None,
    kind: ValueKind::Number,
    better: Better::Higher,
    vllm: None,
    get: |s| s.spec_acceptance_length.map(Value::from),
};
/// Output tokens per streamed event, when an event carried several.
pub const TOKENS_PER_EVENT: Figure = Figure {
    member: "tokens_per_event",
    name: "tokens_per_event",
    heading: "Tokens per event",
    row: None,
    kind: ValueKind::Number,
    better: Better::Neither,
    vllm: None,
    get: |s| s.tokens_per_event.map(Value::from),
};
/// The server's KV-cache use over the measured span, mean of the scrapes.
pub const KV_CACHE_MEAN: Figure = Figure {
    member: "gauges.kv_cache_usage.mean",
    name: "kv_cache_mean",
    heading: "Mean KV-cache usage",
    row: None,
    kind: ValueKind::Number,
    better: Better::Neither,
    vllm: None,
    get: |s| gauge(s, "kv_cache_usage", false),
};
/// The server's largest KV-cache use scraped over the measured span.
pub const KV_CACHE_MAX: Figure = Figure {
    member: "gauges.kv_cache_usage.max",
    name: "kv_cache_max",
    heading: "Peak KV-cache usage",
    row: None,
    kind: ValueKind::Number,
    better: Better::Neither,
    vllm: None,
    get: |s| gauge(s, "kv_cache_usage", true),
};
/// Requests waiting in the server's queue, mean of the scrapes.
pub const WAITING_MEAN: Figure = Figure {
    member: "gauges.requests_waiting.mean",
    name: "waiting_mean",
    heading: "Mean requests waiting",
    row: None,
    kind: ValueKind::Number,
    better: Better::Lower,
    vllm: None,
    get: |s| gauge(s, "requests_waiting", false),
};
/// The GPUs' utilisation, mean of the scrapes.
pub const GPU_UTIL_MEAN: Figure = Figure {
    member: "gauges.gpu_util_pct.mean",
    name: "gpu_util",
    heading: "Mean GPU utilisation [%]",
    row: None,
    kind: ValueKind::Number,
    better: Better::Neither,
    vllm: None,
    get: |s| gauge(s, "gpu_util_pct", false),
};
/// The GPUs' mean power over the measured span.
pub const POWER_W_MEAN: Figure = Figure {
    member: "power_w_mean",
    name: "power_w",
    heading: "Mean GPU power [W]",
    row: None,
    kind: ValueKind::Number,
    better: Better::Lower,
    vllm: None,
    get: |s| s.power_w_mean.map(Value::from),
};
/// Joules of the GPUs per output token.
pub const ENERGY_PER_TOKEN: Figure = Figure {
    member: "energy_j_per_output_token",
    name: "j_per_token",
    heading: "Energy per output token [J]",
    row: None,
    kind: ValueKind::Number,
    better: Better::Lower,
    vllm: None,
    get: |s| s.energy_j_per_output_token.map(Value::from),
};

/// The server's figures `table` shows as rows when some run has them, in that order.
pub const SERVER_FIGURES: &[Figure] = &[
    SPEC_ACCEPTANCE_RATE,
    SPEC_ACCEPTANCE_LENGTH,
    TOKENS_PER_EVENT,
    KV_CACHE_MEAN,
    KV_CACHE_MAX,
    WAITING_MEAN,
    GPU_UTIL_MEAN,
    POWER_W_MEAN,
    ENERGY_PER_TOKEN,
];

/// The mean (or the largest, `max`) of the summary's gauge `name`.
fn gauge(s: &Summary, name: &str, max: bool) -> Option<Value> {
    let g = s.gauges.get(name)?;
    Some(Value::from(if max { g.max } else { g.mean }))
}

/// Output tokens spent reasoning, where the run had reasoning.
pub const REASONING_TOKENS: Figure = Figure {
    member: "reasoning_tokens",
    name: "reasoning_tokens",
    heading: "Reasoning tokens",
    row: Some("Reasoning tokens"),
    kind: ValueKind::Count,
    better: Better::Neither,
    vllm: None,
    get: |s| s.reasoning_tokens.map(Value::from),
};
/// Output tokens of the answers proper, where the run had reasoning.
pub const ANSWER_TOKENS: Figure = Figure {
    member: "answer_tokens",
    name: "answer_tokens",
    heading: "Answer tokens",
    row: Some("Answer tokens"),
    kind: ValueKind::Count,
    better: Better::Neither,
    vllm: None,
    get: |s| s.answer_tokens.map(Value::from),
};
/// Prompt tokens the server's prefix cache served, as its usage said.
pub const CACHED_PROMPT_TOKENS: Figure = Figure {
    member: "cached_prompt_tokens",
    name: "cached_prompt_tokens",
    heading: "Cached prompt tokens",
    row: Some("Cached prompt tokens"),
    kind: ValueKind::Count,
    better: Better::Neither,
    vllm: None,
    get: |s| s.cached_prompt_tokens.map(Value::from),
};
/// The share of prompt tokens the prefix cache served, from the usage.
pub const CACHE_HIT_RATIO: Figure = Figure {
    member: "cache_hit_ratio",
    name: "cache_hit_ratio",
    heading: "Cache hit ratio",
    row: Some("Cache hit ratio"),
    kind: ValueKind::Number,
    better: Better::Higher,
    vllm: None,
    get: |s| s.cache_hit_ratio.map(Value::from),
};
/// The server's own prefix-cache hit ratio over the run, from `/metrics`.
pub const SERVER_CACHE_HIT_RATIO: Figure = Figure {
    member: "server_prefix_cache_hit_ratio",
    name: "server_cache_hit_ratio",
    heading: "Server cache hit ratio",
    row: Some("Server prefix cache hit ratio"),
    kind: ValueKind::Number,
    better: Better::Higher,
    vllm: None,
    get: |s| s.server_prefix_cache_hit_ratio.map(Value::from),
};

/// Every run-wide figure with a short name, in the order `table --list-fields` lists them.
pub const FIGURES: &[Figure] = &[
    REQUESTS_OK,
    FAILED,
    CANCELLED,
    NOT_SENT,
    UNFINISHED,
    COMPARABLE,
    VERDICT,
    REQUESTS_FAILED,
    DURATION_S,
    OUTPUT_TPS,
    TOTAL_TPS,
    REQUEST_RATE,
    INPUT_TOKENS_TOTAL,
    OUTPUT_TOKENS_TOTAL,
    JITTER,
    GOODPUT,
    GOOD_FRACTION,
    PEAK_TPS,
    MEAN_CONCURRENCY,
    PEAK_CONCURRENCY,
    SERVER_TPS,
    STALLS,
    SPEC_ACCEPTANCE_RATE,
    SPEC_ACCEPTANCE_LENGTH,
    TOKENS_PER_EVENT,
    KV_CACHE_MEAN,
    KV_CACHE_MAX,
    WAITING_MEAN,
    GPU_UTIL_MEAN,
    POWER_W_MEAN,
    ENERGY_PER_TOKEN,
    REASONING_TOKENS,
    ANSWER_TOKENS,
    CACHED_PROMPT_TOKENS,
    CACHE_HIT_RATIO,
    SERVER_CACHE_HIT_RATIO,
];

/// The figure a summary member holds.
pub fn figure(member: &str) -> Option<&'static Figure> {
    FIGURES.iter().find(|f| f.member == member)
}

/// The figure `table` knows by the short name `name`.
pub fn figure_named(name: &str) -> Option<&'static Figure> {
    FIGURES.iter().find(|f| f.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_key_and_name_is_defined_once() {
        let keys: BTreeSet<&str> = SETTINGS.iter().map(|s| s.key).collect();
        assert_eq!(keys.len(), SETTINGS.len(), "a setting key twice");
        let names: Vec<&str> = SETTINGS
            .iter()
            .flat_map(|s| s.names.iter().copied())
            .collect();
        let unique: BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(unique.len(), names.len(), "a field name twice");
        let metrics: BTreeSet<&str> = METRICS.iter().map(|m| m.name).collect();
        assert_eq!(metrics.len(), METRICS.len(), "a metric twice");
        assert!(
            metrics.iter().all(|m| setting(m).is_none()),
            "a metric is also a setting"
        );
    }

    #[test]
    fn filters_keep_the_registry_order() {
        let load: Vec<&str> = settings_with(&[Role::Load]).map(|s| s.key).collect();
        assert_eq!(load, ["concurrency", "rate_per_s", "batch"]);
        assert!(settings_with(&[Role::Load]).all(|s| s.axis.is_some()));
        let latency: Vec<&str> = metrics_of(Family::Latency).map(|m| m.name).collect();
        assert_eq!(latency, ["ttft", "tpot", "itl", "e2el"]);
        assert_eq!(setting_named("rate"), Some(&RATE));
        assert_eq!(setting_named("isl").map(|s| s.key), Some("input_tokens"));
        assert_eq!(setting_named("url"), None);
    }

    /// The figures a summary may lack the member of, whose value is worked out from the rest.
    const DERIVED: &[&str] = &[
        "failed",
        "cancelled",
        "not_sent",
        "unfinished",
        "comparable",
        "verdict",
    ];

    #[test]
    fn a_figure_reads_what_the_summarys_json_holds() {
        let bare = Summary {
            requests_ok: 7,
            output_throughput_tokens_per_s: 12.5,
            ..Summary::default()
        };
        let full = Summary {
            duration_s: f64::NAN,
            output_stalls: 2,
            itl_jitter: Some(1.5),
            goodput_per_s: Some(3.0),
            good_fraction: Some(0.5),
            peak_output_tps: Some(40.0),
            mean_concurrency: Some(2.5),
            peak_concurrency: Some(3),
            server_tps_from_users: Some(99.0),
            reasoning_tokens: Some(25),
            answer_tokens: Some(75),
            cached_prompt_tokens: Some(96),
            cache_hit_ratio: Some(0.96),
            server_prefix_cache_hit_ratio: Some(0.5),
            requests_failed: 4,
            requests_failed_server: Some(1),
            errors: [
                ("http", 1),
                ("cancelled", 1),
                ("not_sent", 1),
                ("unfinished", 1),
            ]
            .into_iter()
            .map(|(k, n)| (k.to_string(), n))
            .collect(),
            ..bare.clone()
        };
        let full = Summary {
            verdict: Some(crate::Verdict::of(&full)),
            ..full
        };
        for summary in [&bare, &full] {
            let json = serde_json::to_value(summary).unwrap();
            for figure in FIGURES {
                // A null reads as no value, on both sides; a dotted member is a path.
                let want = figure
                    .member
                    .split('.')
                    .try_fold(&json, |v, part| v.get(part))
                    .filter(|v| !v.is_null())
                    .cloned();
                let got = (figure.get)(summary).filter(|v| !v.is_null());
                // The run's ends and the verdict are worked out for a summary without them.
                if want.is_some() || !DERIVED.contains(&figure.name) {
                    assert_eq!(got, want, "{}", figure.member);
                }
            }
        }
        // Worked out where the summary has no member: no failures, no run's ends, comparable.
        let get = |f: &Figure, s: &Summary| (f.get)(s).unwrap();
        assert_eq!(get(&FAILED, &bare), 0);
        assert_eq!(get(&CANCELLED, &bare), 0);
        assert_eq!(get(&COMPARABLE, &bare), true);
        assert_eq!(get(&VERDICT, &bare), "comparable");
        let names: BTreeSet<&str> = FIGURES.iter().map(|f| f.name).collect();
        assert_eq!(names.len(), FIGURES.len(), "a figure's name twice");
        assert!(
            FIGURES.iter().all(|f| setting_named(f.name).is_none()),
            "a figure's name is also a setting's"
        );
    }

    #[test]
    fn failed_means_the_server_s_failures_and_an_older_summary_is_judged_the_same_way() {
        let stopped = Summary {
            requests_ok: 11,
            requests_failed: 89,
            errors: [("cancelled", 2), ("not_sent", 87)]
                .into_iter()
                .map(|(k, n)| (k.to_string(), n))
                .collect(),
            ..Summary::default()
        };
        assert_eq!(
            failed_by_server(&stopped),
            0,
            "a stopped run failed nothing"
        );
        assert_eq!(
            verdict_of(&stopped).reason,
            "incomplete: 2 cancelled, 87 not sent"
        );
        let with_http = Summary {
            errors: [("http", 3), ("not_sent", 1)]
                .into_iter()
                .map(|(k, n)| (k.to_string(), n))
                .collect(),
            requests_failed: 4,
            ..stopped.clone()
        };
        assert_eq!(failed_by_server(&with_http), 3);
        // Failures without kinds (a vLLM result file, a summary before format 1.4) are the
        // server's, and make the run incomparable.
        let no_kinds = Summary {
            requests_ok: 0,
            requests_failed: 10,
            ..Summary::default()
        };
        assert_eq!(failed_by_server(&no_kinds), 10);
        assert!(!verdict_of(&no_kinds).comparable);
        assert_eq!(
            verdict_of(&no_kinds).reason,
            "incomplete: 10 of 10 failed (100.0 %: unknown: 10)"
        );
        // A written verdict is read as it is.
        let mut written = no_kinds.clone();
        written.verdict = Some(crate::Verdict::of(&stopped));
        assert_eq!(
            verdict_of(&written).reason,
            "incomplete: 2 cancelled, 87 not sent"
        );
    }

    #[test]
    fn units_say_how_histograms_scale() {
        assert_eq!(unit_of("ttft"), Unit::Ms);
        assert_eq!(unit_of("user_tps").suffix(), "tps");
        assert_eq!(unit_of("itl_cv").per_unit(), 1e6);
        assert_eq!(unit_of("a_metric_of_a_newer_minor"), Unit::Ms);
    }
}
