//! Engine profiles: named sets of costs and limits for the continuous-batching engine, each
//! with its source, and the `fixed` timetable kept for tests. `--profile NAME` picks one; the
//! flags `--max-num-seqs`, `--max-num-batched-tokens`, `--kv-cache-tokens`, `--decode-step-ms`,
//! `--prefill-tps` and `--prefix-cache` change its fields (see [`Overrides`]).
//!
//! The table is text, parsed as a person would type the flags, so the docs, the flags and the
//! table read alike; a test parses every row.

use super::batching::curve::{Curve, CurveError};
use super::batching::model::Params;

/// The profile a command line without timing flags gets.
pub const DEFAULT_PROFILE: &str = "small-gpu";

/// The fixed timetable's name (`--ttft-ms`, `--itl-ms`).
pub const FIXED_PROFILE: &str = "fixed";

/// One row of the profile table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// What `--profile` takes.
    pub name: &'static str,
    /// What it simulates and where its numbers come from (shown in the docs).
    pub source: &'static str,
    /// Step time by sequences in the step, in ms (`A+B` or points).
    pub decode_ms: &'static str,
    /// Prefill tokens/s by prompt tokens in the step (a number or points).
    pub prefill_tps: &'static str,
    /// Most sequences running at once.
    pub max_num_seqs: usize,
    /// Tokens per step, decode and prefill together (chunked prefill).
    pub max_batched_tokens: u64,
    /// KV-cache capacity in tokens.
    pub kv_tokens: u64,
    /// The longest prompt + completion accepted.
    pub max_model_len: u64,
}

/// Every batching profile. The curves of `spark-gpt-oss-120b` were fitted so that our own
/// llama-benchy pipe measures seed 001's published figures (see `benches/simserve_calibration.rs`
/// and the test `spark_profile_reproduces_seed_001`), those of `multinode-tp4` so that vLLM's
/// own benchmark figures come out as seed 002 publishes them (`MULTINODE_PUBLISHED`, the test
/// `multinode_profile_reproduces_seed_002`).
pub const PROFILES: &[Profile] = &[
    // An 8B-class model on one mid-range GPU: a modest engine for `make demo` and for learning
    // the tools. Not calibrated: round numbers of the usual shape (about 100 t/s for one
    // stream, 2,800 t/s for 64, prefill 8,000 t/s).
    Profile {
        name: "small-gpu",
        source: "an 8B-class model on one mid-range GPU; round numbers, not calibrated",
        decode_ms: "10+0.2",
        prefill_tps: "8000",
        max_num_seqs: 256,
        max_batched_tokens: 8192,
        kv_tokens: 131_072,
        max_model_len: 32_768,
    },
    // gpt-oss-120b on one DGX Spark (vLLM), calibrated to seed 001's llama-benchy sweep:
    // decode t/s 57.2 … 452.5 at concurrency 1 … 64, prefill t/s 3,310 … 6,991 with
    // 1,024-token prompts, TTFR 311 ms alone. The KV capacity is an assumption.
    Profile {
        name: "spark-gpt-oss-120b",
        source: "gpt-oss-120b on one DGX Spark, vLLM: seed 001's llama-benchy sweep (c = 1 … 64)",
        decode_ms: SPARK_DECODE_MS,
        prefill_tps: SPARK_PREFILL_TPS,
        max_num_seqs: 256,
        max_batched_tokens: 8192,
        kv_tokens: 500_000,
        max_model_len: 131_072,
    },
    // Qwen3-VL-235B-A22B-Instruct-FP8 served by vLLM with tensor parallelism over 4 DGX Sparks,
    // calibrated to seed 002's three `vllm bench serve` blocks of that model (1, 10 and 100
    // prompts sent at once, 1,024 tokens in, 128 out; see `MULTINODE_PUBLISHED` and the test
    // `multinode_profile_reproduces_seed_002`). One request alone: 44.3 ms a step, its prompt
    // in 83 ms. Together: 8,192-token prefill steps at 3,360 t/s beside the decodes; every one of
    // 100 requests fits in the KV cache at once (the capacity is an assumption: any above
    // 115,200 tokens gives the same figures).
    Profile {
        name: "multinode-tp4",
        source: "Qwen3-VL-235B-A22B-Instruct-FP8, tensor parallel over 4 DGX Sparks, vLLM: seed 002's vllm bench serve blocks (1, 10, 100 prompts)",
        decode_ms: MULTINODE_DECODE_MS,
        prefill_tps: MULTINODE_PREFILL_TPS,
        max_num_seqs: 256,
        max_batched_tokens: 8192,
        kv_tokens: 400_000,
        max_model_len: 32_768,
    },
];

/// What `spark-gpt-oss-120b` is calibrated to: seed 001's published llama-benchy sweep of
/// gpt-oss-120b on one DGX Spark, as (concurrency, decode t/s total, prefill t/s total with
/// 1,024-token prompts; `None` where none was published). The calibration test and benchmark
/// both check against it.
pub const SPARK_PUBLISHED: &[(u64, f64, Option<f64>)] = &[
    (1, 57.22, Some(3310.0)),
    (2, 77.81, None),
    (4, 107.40, Some(4579.0)),
    (8, 150.62, None),
    (16, 214.47, Some(6918.0)),
    (32, 314.36, Some(6991.0)),
    (64, 452.54, Some(6809.0)),
];

/// One published `vllm bench serve` result block: its prompts were all sent at once (request
/// rate inf), each `prompt_tokens` long and generating `output_tokens`. The figures are vLLM's:
/// TTFT from the request's start to its first token, TPOT `(last − first) / (tokens − 1)` per
/// request, the median numpy's (linear interpolation), the duration from the first start to
/// the last token, and the throughput output tokens over the duration. Kept as published so that
/// a calibration test compares against the source, not against a copy worked over by hand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServeBlock {
    /// Prompts sent at once (`--num-prompts`).
    pub prompts: u64,
    /// Prompt tokens of each request.
    pub prompt_tokens: u64,
    /// Tokens each request generates.
    pub output_tokens: u64,
    /// `Mean TTFT (ms)`.
    pub mean_ttft_ms: f64,
    /// `Median TTFT (ms)`.
    pub median_ttft_ms: f64,
    /// `Mean TPOT (ms)`.
    pub mean_tpot_ms: f64,
    /// `Benchmark duration (s)`.
    pub duration_s: f64,
    /// `Output token throughput (tok/s)`.
    pub output_tps: f64,
}

/// What `multinode-tp4` is calibrated to: seed 002's "4 node (tp)" blocks of
/// Qwen/Qwen3-VL-235B-A22B-Instruct-FP8 (`vllm bench serve`, `/v1/completions`, 1, 10 and 100
/// prompts of 1,024 tokens, 128 out). The calibration test checks every figure against it.
pub const MULTINODE_PUBLISHED: &[ServeBlock] = &[
    ServeBlock {
        prompts: 1,
        prompt_tokens: 1024,
        output_tokens: 128,
        mean_ttft_ms: 127.74,
        median_ttft_ms: 127.74,
        mean_tpot_ms: 44.34,
        duration_s: 5.76,
        output_tps: 22.23,
    },
    ServeBlock {
        prompts: 10,
        prompt_tokens: 1024,
        output_tokens: 128,
        mean_ttft_ms: 2665.94,
        median_ttft_ms: 2717.83,
        mean_tpot_ms: 168.49,
        duration_s: 24.28,
        output_tps: 52.72,
    },
    ServeBlock {
        prompts: 100,
        prompt_tokens: 1024,
        output_tokens: 128,
        mean_ttft_ms: 17847.62,
        median_ttft_ms: 17271.93,
        mean_tpot_ms: 401.05,
        duration_s: 74.38,
        output_tps: 172.08,
    },
];

/// Seed 002's decode step times by batch, fitted: 44.3 ms alone (the 1-prompt TPOT), 175 ms
/// for 10 (the 10-prompt TPOT). Flat up to 50 so that the 100-prompt run's first prefill steps
/// stay cheap: vLLM carries the decodes of a prefill step nearly free, which a step cost of
/// decode plus prefill cannot otherwise express (see docs/simserve.md).
const MULTINODE_DECODE_MS: &str = "1:44.3,10:175,50:175,100:323";
/// Seed 002's prefill rates, fitted: a lone 1,024-token prompt in 83 ms (the 1-prompt TTFT),
/// the 8,192-token steps of 10 and 100 prompts at 3,360 t/s.
const MULTINODE_PREFILL_TPS: &str = "1024:12280,8192:3360";

/// Seed 001's decode step times, fitted (see [`PROFILES`]).
const SPARK_DECODE_MS: &str = "1:17.5,2:23.3,4:32.7,8:45.4,16:58.5,32:68.9,64:74.7";
/// Seed 001's prefill rates by tokens in a step, fitted.
const SPARK_PREFILL_TPS: &str = "1024:3508,3072:5560,8192:7785";

/// Which engine serves, with what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineSettings {
    /// The fixed timetable of `--ttft-ms` and `--itl-ms`.
    Fixed,
    /// The continuous-batching engine.
    Batching(BatchingSettings),
}

/// A batching profile with its overrides applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchingSettings {
    /// The profile it started from.
    pub profile: String,
    /// The model's costs and limits.
    pub params: Params,
    /// The longest prompt + completion accepted; longer requests get a 400.
    pub max_model_len: u64,
}

/// What the command line changes in a profile; each `None` keeps the profile's value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `--max-num-seqs`.
    pub max_num_seqs: Option<usize>,
    /// `--max-num-batched-tokens`.
    pub max_batched_tokens: Option<u64>,
    /// `--kv-cache-tokens`.
    pub kv_tokens: Option<u64>,
    /// `--decode-step-ms`.
    pub decode_ms: Option<Curve>,
    /// `--prefill-tps`.
    pub prefill_tps: Option<Curve>,
    /// `--prefix-cache`.
    pub prefix_cache: Option<bool>,
}

impl Overrides {
    /// The first flag set, for an error that names it.
    fn first_set(&self) -> Option<&'static str> {
        [
            (self.max_num_seqs.is_some(), "--max-num-seqs"),
            (
                self.max_batched_tokens.is_some(),
                "--max-num-batched-tokens",
            ),
            (self.kv_tokens.is_some(), "--kv-cache-tokens"),
            (self.decode_ms.is_some(), "--decode-step-ms"),
            (self.prefill_tps.is_some(), "--prefill-tps"),
            (self.prefix_cache.is_some(), "--prefix-cache"),
        ]
        .into_iter()
        .find_map(|(set, name)| set.then_some(name))
    }
}

/// The profile called `name`, if there is one.
pub fn find(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// Every name `--profile` takes, `fixed` included.
pub fn names() -> Vec<&'static str> {
    PROFILES
        .iter()
        .map(|p| p.name)
        .chain([FIXED_PROFILE])
        .collect()
}

/// Why the engine flags describe no engine: each message names the flags to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// A batching override (`flag`) given with the fixed timetable.
    #[error(
        "{flag} applies to a batching profile, not to the fixed timetable ({fix}, or drop {flag})"
    )]
    NotBatching {
        /// The first override given.
        flag: &'static str,
        /// How to choose a batching profile instead.
        fix: &'static str,
    },
    /// `--ttft-ms` or `--itl-ms` given with a batching profile.
    #[error("--ttft-ms and --itl-ms apply to --profile fixed, not to {profile}")]
    NotFixed {
        /// The batching profile named.
        profile: String,
    },
    /// No profile has this name.
    #[error("--profile: unknown profile `{name}`; known: {}", names().join(", "))]
    Unknown {
        /// The name as given.
        name: String,
    },
    /// A row of [`PROFILES`] does not parse: a mistake in this file, which a test catches.
    #[error("profile {profile}: {part}")]
    Curve {
        /// The row's name.
        profile: &'static str,
        /// `decode` or `prefill`.
        part: &'static str,
        /// What is wrong with its text.
        source: CurveError,
    },
}

impl Profile {
    /// The profile's settings, before any override.
    pub fn settings(&self) -> Result<BatchingSettings, EngineError> {
        let bad = |part: &'static str| {
            move |source| EngineError::Curve {
                profile: self.name,
                part,
                source,
            }
        };
        Ok(BatchingSettings {
            profile: self.name.to_owned(),
            params: Params {
                decode_ms: Curve::parse_cost(self.decode_ms).map_err(bad("decode"))?,
                prefill_tps: Curve::parse_rate(self.prefill_tps).map_err(bad("prefill"))?,
                max_num_seqs: self.max_num_seqs,
                max_batched_tokens: self.max_batched_tokens,
                kv_tokens: self.kv_tokens,
                prefix_cache: true,
            },
            max_model_len: self.max_model_len,
        })
    }
}

/// The engine a command line asks for. `profile` is `--profile`; `timing_flags` is whether
/// `--ttft-ms` or `--itl-ms` was given. The rule: `--profile fixed`, or timing flags without a
/// profile, select the fixed timetable; otherwise the named (or default) batching profile with
/// `overrides` applied. Mixing the two kinds of flags is refused.
pub fn choose(
    profile: Option<&str>,
    timing_flags: bool,
    overrides: &Overrides,
) -> Result<EngineSettings, EngineError> {
    let name = match profile {
        Some(name) => name,
        None if timing_flags => FIXED_PROFILE,
        None => DEFAULT_PROFILE,
    };
    if name == FIXED_PROFILE {
        if let Some(flag) = overrides.first_set() {
            let fix = if timing_flags {
                "drop --ttft-ms/--itl-ms, or name a batching --profile"
            } else {
                "name a batching --profile"
            };
            return Err(EngineError::NotBatching { flag, fix });
        }
        return Ok(EngineSettings::Fixed);
    }
    if timing_flags {
        return Err(EngineError::NotFixed {
            profile: name.to_owned(),
        });
    }
    let Some(found) = find(name) else {
        return Err(EngineError::Unknown {
            name: name.to_owned(),
        });
    };
    let mut settings = found.settings()?;
    let params = &mut settings.params;
    let o = overrides.clone();
    params.max_num_seqs = o.max_num_seqs.unwrap_or(params.max_num_seqs);
    params.max_batched_tokens = o.max_batched_tokens.unwrap_or(params.max_batched_tokens);
    params.kv_tokens = o.kv_tokens.unwrap_or(params.kv_tokens);
    params.prefix_cache = o.prefix_cache.unwrap_or(params.prefix_cache);
    if let Some(curve) = o.decode_ms {
        params.decode_ms = curve;
    }
    if let Some(curve) = o.prefill_tps {
        params.prefill_tps = curve;
    }
    Ok(EngineSettings::Batching(settings))
}

#[cfg(test)]
mod tests;
