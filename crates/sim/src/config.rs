//! The validated settings simserve runs with, as plain values: [`Config`], what the server needs
//! to answer requests, and [`Settings`], where and how the process serves it. The command line
//! builds them in [`crate::cli`]; a library caller builds them itself.
//!
//! `Config` holds the millisecond floats of the flags as whole nanoseconds, turned once, so
//! every deadline is computed in exact integer arithmetic.

use crate::access::Access;
use crate::engine::profile::EngineSettings;
use crate::error::{DelayError, Error};
use crate::fault::select::FaultPlan;
use crate::prompt_count::PromptCount;
use crate::spec_decode::SpecDecode;
use crate::transport::TransportOptions;
use std::path::PathBuf;
use std::time::Duration;

/// The longest TTFT or inter-token latency accepted: one hour. Anything longer is a typo, and the
/// bound keeps every deadline far from overflow.
const MAX_DELAY_MS: f64 = 3_600_000.0;

/// What the server needs to answer requests: the model name, the two delays (in whole
/// nanoseconds so that deadlines are exact sums) and which requests fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The one model served.
    pub model: String,
    /// From the end of a request body to its first token (the fixed engine's).
    pub ttft: Duration,
    /// Between consecutive tokens.
    pub itl: Duration,
    /// Which requests fail, and how (`--fault`); empty by default.
    pub faults: FaultPlan,
    /// The API key required and the delay of response heads (`--api-key`,
    /// `--headers-delay-ms`); none by default.
    pub access: Access,
    /// Which engine times the tokens (`--profile` and its overrides): the fixed timetable for
    /// a `Config` built by [`Config::from_ms`], the default batching profile on a command line
    /// without timing flags.
    pub engine: EngineSettings,
    /// How prompt tokens are counted (`--tokenizer`, `--template-tokens`): words by default.
    pub prompt_count: PromptCount,
    /// `--spec-decode K:P`: several tokens per decode step; none by default.
    pub spec_decode: Option<SpecDecode>,
    /// `--gpus N`: modelled DCGM power and energy series for N GPUs on `/metrics`; 0 (none) by
    /// default.
    pub gpus: u32,
    /// The reasoning share of chat answers (`--reasoning-share`); none by default.
    pub reasoning: Option<crate::reasoning::Reasoning>,
    /// Report `usage.prompt_tokens_details.cached_tokens` (`--prefix-cache on` given: vLLM
    /// sends it only with `--enable-prompt-tokens-details`, so a default profile's cache stays
    /// out of the usage).
    pub cache_details: bool,
}

impl Config {
    /// Builds the settings from milliseconds, rounding to the nanosecond; rejects negative,
    /// non-finite or absurd (over an hour) delays.
    pub fn from_ms(model: impl Into<String>, ttft_ms: f64, itl_ms: f64) -> Result<Self, Error> {
        Ok(Self {
            model: model.into(),
            ttft: delay("--ttft-ms", ttft_ms)?,
            itl: delay("--itl-ms", itl_ms)?,
            faults: FaultPlan::default(),
            access: Access::default(),
            engine: EngineSettings::Fixed,
            prompt_count: PromptCount::default(),
            spec_decode: None,
            gpus: 0,
            reasoning: None,
            cache_details: false,
        })
    }
}

/// Everything [`crate::run`] needs: the server's [`Config`], and where and how the process
/// serves it, so that a caller runs a whole simserve without a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// How requests are answered.
    pub config: Config,
    /// The address to listen on.
    pub host: String,
    /// The port; 0 picks a free one (the printed URL says which).
    pub port: u16,
    /// Tokio worker threads, at least 1.
    pub workers: u16,
    /// Where to write the server's own send stamps, if anywhere.
    pub stamps: Option<PathBuf>,
    /// Where to write every token's send instant as well (needs `stamps`), if anywhere.
    pub token_stamps: Option<PathBuf>,
    /// Where to write every generation request as it arrives, if anywhere.
    pub log_requests: Option<PathBuf>,
    /// TLS and the connection log.
    pub transport: TransportOptions,
}

/// The fixed timetable's TTFT when only --itl-ms is given.
pub const DEFAULT_TTFT_MS: f64 = 50.0;
/// The fixed timetable's ITL when only --ttft-ms is given.
pub const DEFAULT_ITL_MS: f64 = 10.0;

/// `ms` when it is a finite, non-negative number of milliseconds up to an hour.
pub(crate) fn check_delay_ms(ms: f64) -> Result<f64, DelayError> {
    if !ms.is_finite() || ms < 0.0 {
        return Err(DelayError::Negative { ms });
    }
    if ms > MAX_DELAY_MS {
        return Err(DelayError::TooLong {
            ms,
            max: MAX_DELAY_MS,
        });
    }
    Ok(ms)
}

/// The delay `flag` gives, in whole nanoseconds; bad input naming the flag when it is out of
/// range.
pub(crate) fn delay(flag: &'static str, ms: f64) -> Result<Duration, Error> {
    check_delay_ms(ms).map_err(|problem| Error::Delay { flag, problem })?;
    // Exact for every value a person types: 0.1 ms is 100_000 ns after rounding.
    Ok(Duration::from_nanos((ms * 1e6).round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_cli::{Ending, ToolError};

    #[test]
    fn fractional_milliseconds_are_exact_nanoseconds() {
        let config = Config::from_ms("m", 0.1, 2.5).unwrap();
        assert_eq!(config.ttft, Duration::from_nanos(100_000));
        assert_eq!(config.itl, Duration::from_micros(2_500));
    }

    #[test]
    fn bad_delays_are_bad_input_naming_the_flag() {
        let e = Config::from_ms("m", -1.0, 1.0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--ttft-ms must be a finite, non-negative number of milliseconds, got `-1`"
        );
        assert_eq!(e.ending(), Ending::BadInput);
        let e = Config::from_ms("m", 1.0, f64::NAN).unwrap_err();
        assert!(e.to_string().starts_with("--itl-ms "), "{e}");
        let e = Config::from_ms("m", 1.0, 5e6).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--itl-ms must be at most 3600000 ms (one hour), got `5000000`"
        );
    }
}
