//! The command line of `arrivals`: its flags, its help, and `main`. Everything clap knows about
//! lives here; the rest of the crate is a library that takes a [`ProcessSpec`] and a
//! [`PromptSpec`], not a command line.

use crate::process::ProcessSpec;
use crate::prompts::PromptSpec;
use clap::Parser;

/// Write a reproducible schedule of LLM requests as NDJSON, for `fire` to execute.
///
/// Open loop (default): requests arrive on their own timetable, whatever the server is doing.
/// Gaps between arrivals are gamma distributed with mean 1/RATE and shape BURSTINESS (1 is a
/// Poisson process, below 1 is burstier, above 1 more even); `--rate inf` sends everything at
/// once. Closed loop (`--concurrency N`): `fire` keeps N requests in flight and sends the next
/// one as soon as one ends.
///
/// The same arguments and seed always give byte-identical output.
#[derive(Debug, Parser)]
#[command(name = "arrivals", version, after_help = EXAMPLES)]
pub struct Args {
    /// Mean request rate in requests per second, or `inf` to send all requests at once.
    #[arg(long, default_value = "inf", value_parser = parse_rate, conflicts_with = "concurrency")]
    pub rate: f64,

    /// Gamma shape of the inter-arrival gaps: 1 is Poisson, <1 burstier, >1 more regular.
    #[arg(long, default_value_t = 1.0, conflicts_with = "concurrency")]
    pub burstiness: f64,

    /// Closed loop: keep exactly N requests in flight instead of following a timetable.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub concurrency: Option<u64>,

    /// Number of requests to write.
    #[arg(long, short = 'n', default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    pub num_prompts: u64,

    /// Prompt length in tokens (at most 16,777,216).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(0..=MAX_TOKENS))]
    pub input_tokens: u64,

    /// Tokens to generate per request, `max_tokens` (at most 16,777,216).
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u64).range(1..=MAX_TOKENS))]
    pub output_tokens: u64,

    /// Random seed for arrival times and prompts.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// Longest prompt or answer accepted, 2^24 tokens: beyond any model's context today, and small
/// enough that a prompt of that many words stays in memory.
const MAX_TOKENS: u64 = 1 << 24;

const EXAMPLES: &str = "\
Examples:
  # 200 requests, 0.3 per second on average, bursty, against a local server
  arrivals --rate 0.3 --burstiness 0.7 --num-prompts 200 | fire --url http://127.0.0.1:8000/v1 | reduce | table

  # closed loop: always 8 in flight, 1000-token prompts, 256-token answers
  arrivals --concurrency 8 --num-prompts 64 --input-tokens 1000 --output-tokens 256 > closed.ndjson

  # look at the timetable
  arrivals --rate 5 --num-prompts 10 | jq -c 'select(.type==\"request\") | [.id, .offset_ns]'";

fn parse_rate(s: &str) -> Result<f64, String> {
    if s.eq_ignore_ascii_case("inf") {
        return Ok(f64::INFINITY);
    }
    let r: f64 = s
        .parse()
        .map_err(|_| format!("expected a number of requests per second or `inf`, got `{s}`"))?;
    if r.is_nan() || r <= 0.0 {
        return Err(format!("rate must be positive, got `{s}`"));
    }
    Ok(r)
}

impl Args {
    /// The prompt source these flags choose.
    pub fn prompt_spec(&self) -> PromptSpec {
        PromptSpec::Synthetic {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
        }
    }

    /// The arrival process these flags choose.
    pub fn process_spec(&self) -> ProcessSpec {
        match self.concurrency {
            Some(concurrency) => ProcessSpec::Closed { concurrency },
            None if self.rate.is_infinite() => ProcessSpec::AllAtOnce,
            None => ProcessSpec::Gamma {
                rate: self.rate,
                burstiness: self.burstiness,
            },
        }
    }
}

/// Parses the process arguments and writes the schedule to stdout. SIGINT and SIGTERM end it
/// after a whole line, with status 130 or 143.
pub fn main() -> anyhow::Result<()> {
    let Some(args) = tokenpipe_cli::parse_or_generate::<Args>()? else {
        return Ok(());
    };
    let plan = crate::Plan::from_args(&args, tokenpipe_cli::argv())?;
    if let Err(e) = crate::signals::install() {
        eprintln!(
            "arrivals: warning: cannot watch for SIGINT/SIGTERM ({e}); an interrupted run may end in half a line"
        );
    }
    plan.write_until(raw_stdout(), crate::signals::received)
}

/// Stdout as a plain file, so that each write is one `write(2)` whose interruption the writer
/// sees; std's stdout retries an interrupted write by itself. Where fd 1 cannot be duplicated
/// (it is closed), std's stdout, which discards the output as before.
fn raw_stdout() -> Box<dyn std::io::Write> {
    use std::os::fd::AsFd;
    match std::io::stdout().as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(std::fs::File::from(fd)),
        Err(_) => Box::new(std::io::stdout()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_definition_is_valid() {
        tokenpipe_cli::command::<Args>().debug_assert();
    }

    #[test]
    fn rejects_bad_rates() {
        for bad in ["0", "-1", "abc", "nan"] {
            assert!(
                Args::try_parse_from(["arrivals", "--rate", bad]).is_err(),
                "{bad}"
            );
        }
        assert!(Args::try_parse_from(["arrivals", "--rate", "1", "--concurrency", "2"]).is_err());
    }

    #[test]
    fn flags_choose_the_process() {
        let spec = |argv: &[&str]| Args::try_parse_from(argv).unwrap().process_spec();
        assert_eq!(spec(&["arrivals"]), ProcessSpec::AllAtOnce);
        assert_eq!(
            spec(&["arrivals", "--rate", "2", "--burstiness", "0.5"]),
            ProcessSpec::Gamma {
                rate: 2.0,
                burstiness: 0.5
            }
        );
        assert_eq!(
            spec(&["arrivals", "--concurrency", "3"]),
            ProcessSpec::Closed { concurrency: 3 }
        );
    }
}
