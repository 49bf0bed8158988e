//! The flags that say when requests go: the arrival process, its bounds, phases and shards.

use crate::process::RampShape;
use crate::shard::ShardSpec;
use clap::Args;
use std::time::Duration;
use tokenpipe_format::MAX_IN_FLIGHT;

/// When requests go.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "When requests go")]
pub struct Pacing {
    /// Mean request rate in requests per second (from 0.000001, one request in 11.6 days, to
    /// 1000000000, one a nanosecond), or `inf` to send all requests at once.
    #[arg(long, default_value = "inf", value_parser = parse_rate,
          conflicts_with_all = ["concurrency", "batch"])]
    pub rate: f64,

    /// Gamma shape of the gaps between arrivals: 1 is Poisson, <1 burstier, >1 more regular
    /// (from 0.000001 to 1000000).
    #[arg(long, default_value_t = 1.0, value_parser = parse_burstiness, conflicts_with_all = ["concurrency", "batch"])]
    pub burstiness: f64,

    /// Gamma-distributed gaps, or every gap exactly 1/RATE.
    #[arg(long, value_enum, default_value_t = ArrivalKind::Gamma)]
    pub arrival: ArrivalKind,

    /// Reproduce `vllm bench serve`'s schedule: the first request waits its own gap, and the
    /// offsets are rescaled so that the last lands at NUM_PROMPTS/RATE. Gaps and uniform
    /// lengths are drawn from numpy's generators as vLLM draws them, so the same --seed gives
    /// vLLM's requests at vLLM's instants.
    #[arg(long, conflicts_with_all = ["concurrency", "batch", "duration"])]
    pub vllm_compatible: bool,

    /// Ramp the rate from --ramp-from to --ramp-to: over a time (`30s`), or over the requests
    /// by index (`requests`, vLLM's --ramp-up-strategy).
    #[arg(long, value_name = "DURATION|requests", value_parser = parse_ramp,
          requires_all = ["ramp_from", "ramp_to"], conflicts_with_all = ["rate", "concurrency", "batch"])]
    pub ramp: Option<RampOver>,

    /// Rate at the start of the ramp, requests per second (0, or a --rate).
    #[arg(long, value_name = "RATE", value_parser = parse_ramp_rate, requires = "ramp")]
    pub ramp_from: Option<f64>,

    /// Rate at the end of the ramp, requests per second (held after a ramp over time; 0, or a
    /// --rate).
    #[arg(long, value_name = "RATE", value_parser = parse_ramp_rate, requires = "ramp")]
    pub ramp_to: Option<f64>,

    /// How the ramp moves between its rates.
    #[arg(long, value_enum, default_value_t = RampKind::Linear, requires = "ramp")]
    pub ramp_shape: RampKind,

    /// Closed loop: keep exactly N requests in flight instead of following a timetable (at
    /// most 1,000,000).
    #[arg(long, value_name = "N", value_parser = in_flight,
          conflicts_with = "batch")]
    pub concurrency: Option<u64>,

    /// Closed loop: start the first N requests one by one at this pace (`1/s`, or a gap such
    /// as `500ms`) instead of all at once: the fill phase.
    #[arg(long, value_name = "RATE|GAP", value_parser = parse_fill, requires = "concurrency")]
    pub fill: Option<Duration>,

    /// Batch mode (llama-benchy's --concurrency N): send N requests together, wait for all,
    /// repeat --runs times, after one warm-up batch that `reduce` leaves out (see
    /// --no-warmup). Our --concurrency is a closed loop, not llama-benchy's batches. At most
    /// 1,000,000.
    #[arg(long, value_name = "N", value_parser = in_flight)]
    pub batch: Option<u64>,

    /// Batch mode: how many measured batches [default: 3, llama-benchy's].
    #[arg(long, value_name = "R", value_parser = clap::value_parser!(u64).range(1..),
          requires = "batch")]
    pub runs: Option<u64>,

    /// Batch mode: no warm-up batch. By default one more batch goes first, marked in the
    /// schedule (`warmup_batches: 1`) and left out of every figure, as llama-benchy discards
    /// its run 0 (llama-benchy's --no-warmup).
    #[arg(long, requires = "batch")]
    pub no_warmup: bool,

    /// Open loop: at most N requests in flight; a request due while all are busy waits for a
    /// slot, and `fire` records the wait. At most 1,000,000.
    #[arg(long, value_name = "N", value_parser = in_flight,
          conflicts_with_all = ["concurrency", "batch"])]
    pub max_concurrency: Option<u64>,

    /// Stop sending new requests this long after the start (`120s`, `5m`).
    #[arg(long, value_name = "DURATION", value_parser = tokenpipe_cli::parse_duration,
          conflicts_with = "batch")]
    pub duration: Option<Duration>,

    /// Mark a warm-up phase of this length (after the fill) whose requests `reduce` can leave
    /// out.
    #[arg(long, value_name = "DURATION", value_parser = tokenpipe_cli::parse_duration,
          requires = "measure", conflicts_with_all = ["duration", "batch"])]
    pub stabilize: Option<Duration>,

    /// Mark the measured phase (after the fill and --stabilize); no request is sent after it,
    /// and those in flight drain.
    #[arg(long, value_name = "DURATION", value_parser = tokenpipe_cli::parse_duration,
          conflicts_with_all = ["duration", "batch"])]
    pub measure: Option<Duration>,

    /// Write only part I of N of the schedule (from 0): run one `fire` per part and merge.
    /// `auto` takes I and N from the launcher's environment: TOKENPIPE_SHARD=I/N, GNU
    /// parallel's PARALLEL_SEQ or a Kubernetes Indexed Job's JOB_COMPLETION_INDEX (each with
    /// TOKENPIPE_SHARDS=N), or Slurm's SLURM_PROCID and SLURM_NTASKS, the first set in that
    /// order; none set is an error naming them.
    #[arg(long, value_name = "I/N|auto", value_parser = parse_shard)]
    pub shard: Option<ShardSpec>,
}

/// `--shard`: `I/N`, or `auto` for the launcher's environment.
fn parse_shard(text: &str) -> Result<ShardSpec, String> {
    if text == "auto" {
        let env = |name: &str| std::env::var(name).ok();
        crate::shard_env::from_env(&env)
            .map(|(spec, _)| spec)
            .map_err(|e| e.to_string())
    } else {
        text.parse()
            .map_err(|e: crate::shard::ShardError| e.to_string())
    }
}

/// The gaps of an open loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ArrivalKind {
    /// Gamma-distributed gaps of shape --burstiness (Poisson at 1).
    Gamma,
    /// Every gap exactly 1/RATE.
    Constant,
}

/// The shape of a ramp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RampKind {
    /// Equal steps.
    Linear,
    /// Equal ratios.
    Exponential,
}

impl From<RampKind> for RampShape {
    fn from(k: RampKind) -> Self {
        match k {
            RampKind::Linear => RampShape::Linear,
            RampKind::Exponential => RampShape::Exponential,
        }
    }
}

/// What a ramp spans.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RampOver {
    /// This many seconds.
    Time(f64),
    /// The requests, by index.
    Requests,
}

fn parse_ramp(s: &str) -> Result<RampOver, String> {
    if s == "requests" {
        return Ok(RampOver::Requests);
    }
    let d = tokenpipe_cli::parse_duration(s)
        .map_err(|e| format!("{e}, or `requests` to ramp by request index"))?;
    if d.is_zero() {
        return Err("a ramp must last longer than 0".into());
    }
    Ok(RampOver::Time(d.as_secs_f64()))
}

/// The slowest finite rate a flag takes, in requests per second: one request in 11.6 days.
/// Slower rates are typos or probes (`5e-324`), whose gaps no schedule can hold and whose
/// digits no message should print.
pub const MIN_RATE_PER_S: f64 = 1e-6;

/// The fastest finite rate a flag takes: one request a nanosecond, the schedule's resolution;
/// anything faster is `inf`.
pub const MAX_RATE_PER_S: f64 = 1e9;

/// The range of `--burstiness`, the gamma shape: far past any real arrival pattern on both
/// sides, and near enough to 1 that the gamma draw's scale stays a finite float at every rate.
const BURSTINESS_RANGE: (f64, f64) = (1e-6, 1e6);

/// A number of the flag's kind in `[min, max]`, or the message naming the range.
fn bounded(s: &str, what: &str, min: f64, max: f64, also: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("expected {what}{also}, got `{s}`"))?;
    if !(min..=max).contains(&v) {
        return Err(format!("must be from {min} to {max}{also}, got `{s}`"));
    }
    Ok(v)
}

/// Parses a rate in requests per second (from [`MIN_RATE_PER_S`] to [`MAX_RATE_PER_S`]), or
/// `inf`.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    if s.trim().parse::<f64>() == Ok(f64::INFINITY) {
        return Ok(f64::INFINITY);
    }
    bounded(
        s,
        "a number of requests per second",
        MIN_RATE_PER_S,
        MAX_RATE_PER_S,
        " requests per second, or `inf`",
    )
}

/// A ramp's rate: 0 (a linear ramp may start from nothing) or a finite `--rate`.
fn parse_ramp_rate(s: &str) -> Result<f64, String> {
    if s.trim().parse::<f64>() == Ok(0.0) {
        return Ok(0.0);
    }
    let also = " requests per second, or 0";
    bounded(
        s,
        "a number of requests per second",
        MIN_RATE_PER_S,
        MAX_RATE_PER_S,
        also,
    )
}

/// The gamma shape, within [`BURSTINESS_RANGE`].
fn parse_burstiness(s: &str) -> Result<f64, String> {
    let (min, max) = BURSTINESS_RANGE;
    bounded(s, "a positive number", min, max, "")
}

/// `N/s` (N starts per second) or a gap between starts.
fn parse_fill(s: &str) -> Result<Duration, String> {
    if let Some(per) = s.strip_suffix("/s") {
        let r: f64 = per
            .parse()
            .map_err(|_| format!("expected N/s or a gap such as 500ms, got `{s}`"))?;
        if !(MIN_RATE_PER_S..=MAX_RATE_PER_S).contains(&r) {
            return Err(format!(
                "the fill rate must be from {MIN_RATE_PER_S}/s to {MAX_RATE_PER_S}/s, got `{s}`"
            ));
        }
        return Ok(Duration::from_secs_f64(1.0 / r));
    }
    tokenpipe_cli::parse_duration(s)
}

/// A count of requests in flight (`--concurrency`, `--batch`, `--max-concurrency`): from 1 to
/// [`MAX_IN_FLIGHT`], since `fire` would reserve slots and connections for a larger one that no
/// server could serve, and a typo such as 4000000000 would otherwise surface as an
/// out-of-memory kill.
fn in_flight(s: &str) -> Result<u64, String> {
    let n: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("expected a whole number of requests, got `{s}`"))?;
    if n == 0 {
        return Err("must be at least 1".into());
    }
    if n > MAX_IN_FLIGHT {
        return Err(format!(
            "{n} requests in flight is more than fire keeps (at most {MAX_IN_FLIGHT})"
        ));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_flight_counts_are_bounded() {
        assert_eq!(in_flight("1"), Ok(1));
        assert_eq!(in_flight("1000000"), Ok(MAX_IN_FLIGHT));
        assert!(in_flight("0").is_err());
        assert!(in_flight("many").is_err());
        let err = in_flight("4000000000").unwrap_err();
        assert!(
            err.contains("4000000000") && err.contains("1000000"),
            "{err}"
        );
    }

    #[test]
    fn fill_takes_a_rate_or_a_gap() {
        assert_eq!(parse_fill("1/s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_fill("4/s"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_fill("500ms"), Ok(Duration::from_millis(500)));
        assert!(parse_fill("0/s").is_err());
        assert!(parse_fill("fast").is_err());
        // Once a panic: 1 / 5e-324 is no Duration.
        assert!(parse_fill("5e-324/s").unwrap_err().contains("0.000001/s"));
    }

    #[test]
    fn rates_and_shapes_are_bounded_and_their_messages_short() {
        assert_eq!(parse_rate("inf"), Ok(f64::INFINITY));
        assert_eq!(parse_rate("0.000001"), Ok(1e-6));
        assert_eq!(parse_rate("1e9"), Ok(1e9));
        for bad in ["5e-324", "1e308", "0", "-1", "nan", "1e10"] {
            let err = parse_rate(bad).unwrap_err();
            assert!(
                err.contains("from 0.000001 to 1000000000") && err.len() < 120,
                "{bad}: {err}"
            );
        }
        assert_eq!(parse_ramp_rate("0"), Ok(0.0));
        assert!(parse_ramp_rate("inf").is_err());
        assert!(parse_ramp_rate("5e-324").is_err());
        assert_eq!(parse_burstiness("0.5"), Ok(0.5));
        for bad in ["5e-324", "1e308", "0", "nan"] {
            assert!(parse_burstiness(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ramps_span_time_or_requests() {
        assert_eq!(parse_ramp("requests"), Ok(RampOver::Requests));
        assert_eq!(parse_ramp("30s"), Ok(RampOver::Time(30.0)));
        assert!(parse_ramp("0s").is_err());
        assert!(parse_ramp("soon").unwrap_err().contains("requests"));
    }
}
