//! `arrivals`: writes a reproducible request schedule for `fire`.
//!
//! The output is a pure function of the arguments: a header (without a wall-clock time, so the
//! same seed gives byte-identical output), a `schedule` record saying how to pace, and one
//! `request` record per prompt. Arrival times and prompt text are drawn from two independent
//! ChaCha8 streams of the seed, so changing the prompt length does not move the arrival times.

pub mod process;
pub mod prompts;

use clap::Parser;
use process::{Offsets, Process};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::io::Write;
use tokenpipe_format::{Header, LoopMode, Record, RecordWriter, Request, Schedule};

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

/// Parses the process arguments and writes the schedule to stdout.
pub fn main() -> anyhow::Result<()> {
    let Some(args) = tokenpipe_cli::parse_or_generate::<Args>()? else {
        return Ok(());
    };
    let stdout = std::io::stdout().lock();
    write_schedule(&args, tokenpipe_cli::argv(), stdout)
}

/// Writes the whole schedule for `args` to `out`.
pub fn write_schedule(args: &Args, argv: Vec<String>, out: impl Write) -> anyhow::Result<()> {
    let mode = if args.concurrency.is_some() {
        LoopMode::Closed
    } else {
        LoopMode::Open
    };
    let process = if args.rate.is_infinite() {
        Process::AllAtOnce
    } else {
        Process::Gamma {
            rate: args.rate,
            burstiness: args.burstiness,
        }
    };
    let mut time_rng = ChaCha8Rng::seed_from_u64(args.seed);
    time_rng.set_stream(0);
    let mut prompt_rng = ChaCha8Rng::seed_from_u64(args.seed);
    prompt_rng.set_stream(1);
    let mut offsets = Offsets::new(process, time_rng).map_err(tokenpipe_cli::bad_input)?;

    let mut w = RecordWriter::new(out);
    w.write(&Record::Header(header(args, argv, mode)))?;
    w.write(&Record::Schedule(Schedule {
        mode: mode.into(),
        concurrency: args.concurrency,
        requests: Some(args.num_prompts),
    }))?;
    let mut prompt = String::new();
    for id in 0..args.num_prompts {
        prompt.clear();
        prompts::write_prompt(&mut prompt_rng, args.input_tokens, &mut prompt);
        let offset_ns = match mode {
            LoopMode::Open => offsets
                .next()
                .transpose()
                .map_err(tokenpipe_cli::bad_input)?,
            LoopMode::Closed => None,
        };
        w.write(&Record::Request(Request {
            id,
            offset_ns,
            prompt: Some(std::mem::take(&mut prompt)),
            prompt_tokens: Some(args.input_tokens),
            max_tokens: args.output_tokens,
            ..Request::default()
        }))?;
    }
    w.flush()?;
    Ok(())
}

fn header(args: &Args, argv: Vec<String>, mode: LoopMode) -> Header {
    let mut params = BTreeMap::new();
    let mut put = |k: &str, v: serde_json::Value| {
        params.insert(k.to_string(), v);
    };
    put("mode", serde_json::json!(mode));
    match mode {
        LoopMode::Open => {
            // JSON has no infinity: `inf` is written as a string.
            let rate = if args.rate.is_finite() {
                serde_json::json!(args.rate)
            } else {
                serde_json::json!("inf")
            };
            put("rate_per_s", rate);
            put("burstiness", serde_json::json!(args.burstiness));
        }
        LoopMode::Closed => put("concurrency", serde_json::json!(args.concurrency)),
    }
    put("num_prompts", serde_json::json!(args.num_prompts));
    put("input_tokens", serde_json::json!(args.input_tokens));
    put("output_tokens", serde_json::json!(args.output_tokens));
    let mut header = Header::new("arrivals", schedule_id(&argv), argv);
    header.seed = Some(args.seed);
    header.params = params;
    header
}

/// A stable id for a schedule: FNV-1a over the arguments after the program name, so the same
/// command gives the same id (and the same bytes) wherever the binary lives.
fn schedule_id(argv: &[String]) -> String {
    let h = tokenpipe_format::ids::fnv1a(argv.iter().skip(1).map(|a| a.as_bytes()));
    format!("arrivals-{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cmd: &[&str]) -> Vec<u8> {
        let args = Args::try_parse_from(cmd).unwrap();
        let mut out = vec![];
        write_schedule(&args, cmd.iter().map(|s| s.to_string()).collect(), &mut out).unwrap();
        out
    }

    #[test]
    fn clap_definition_is_valid() {
        tokenpipe_cli::command::<Args>().debug_assert();
    }

    #[test]
    fn same_seed_same_bytes_other_seed_other_bytes() {
        let a = run(&["arrivals", "--rate", "3", "-n", "50", "--seed", "9"]);
        let b = run(&["arrivals", "--rate", "3", "-n", "50", "--seed", "9"]);
        let c = run(&["arrivals", "--rate", "3", "-n", "50", "--seed", "10"]);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn prompt_length_does_not_move_arrivals() {
        let offsets = |out: Vec<u8>| -> Vec<u64> {
            let mut r = tokenpipe_format::RecordReader::new(&out[..], "t");
            let mut v = vec![];
            while let Some(rec) = r.next_record().unwrap() {
                if let Record::Request(q) = rec {
                    v.push(q.offset_ns.unwrap());
                }
            }
            v
        };
        let a = offsets(run(&[
            "arrivals",
            "--rate",
            "3",
            "-n",
            "20",
            "--input-tokens",
            "5",
        ]));
        let b = offsets(run(&[
            "arrivals",
            "--rate",
            "3",
            "-n",
            "20",
            "--input-tokens",
            "50",
        ]));
        assert_eq!(a, b);
    }

    #[test]
    fn closed_loop_has_no_offsets() {
        let out = run(&["arrivals", "--concurrency", "4", "-n", "3"]);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains(r#""mode":"closed","concurrency":4"#),
            "{text}"
        );
        assert_eq!(text.matches(r#""offset_ns":null"#).count(), 3);
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
}
