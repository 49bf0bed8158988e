//! The command line of `arrivals`: its flags, its help, `main`, and the step from flags to a
//! [`crate::Plan`] ([`setup`]). Everything clap knows about lives here (pacing flags in
//! [`pacing`], request flags in [`content`], trace flags in [`trace`], the dataset flag in
//! [`dataset`]); the rest of the crate is a library that takes a [`crate::Plan`], not a command
//! line.

pub(crate) mod content;
pub(crate) mod dataset;
pub(crate) mod pacing;
mod setup;
pub(crate) mod trace;

pub(crate) use setup::plan;

use crate::Error;
use clap::Parser;
use std::io::Write;

/// Write a reproducible schedule of LLM requests as NDJSON, for `fire` to execute.
///
/// Open loop (default): requests arrive on their own timetable, whatever the server is doing.
/// Gaps between arrivals are gamma distributed with mean 1/RATE and shape BURSTINESS (1 is a
/// Poisson process, below 1 is burstier, above 1 more even); `--rate inf` sends everything at
/// once; `--ramp` moves the rate; `--max-concurrency` caps what is in flight. Closed loop
/// (`--concurrency N`): `fire` keeps N requests in flight and sends the next one as soon as one
/// ends. Batch (`--batch N --runs R`, llama-benchy's mode): N together, then the next N, after
/// one warm-up batch that `reduce` leaves out (--no-warmup drops it). Trace replay (`--trace
/// FILE`): each row of a recorded trace at its own time, with its own lengths.
///
/// The same arguments and seed always give byte-identical output. Prompts are salted per run
/// by `fire` (see --no-salt), so the saved schedule stays the same while no run finds the last
/// one's prompts in a prefix cache.
#[derive(Debug, Parser)]
#[command(name = "arrivals", version, after_help = EXAMPLES)]
pub struct Args {
    /// Number of requests to write (sessions with --turns) [default: 100; no limit for a
    /// closed loop bounded by --duration or --measure, the whole file with --trace].
    #[arg(long, short = 'n', value_parser = clap::value_parser!(u64).range(1..),
          conflicts_with = "batch")]
    pub num_prompts: Option<u64>,

    /// Random seed for arrival times and prompts.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// When requests go.
    #[command(flatten)]
    pub pacing: pacing::Pacing,

    /// What each request asks.
    #[command(flatten)]
    pub content: content::Content,

    /// Trace replay.
    #[command(flatten)]
    pub trace: trace::TraceFlags,

    /// Prompts from a dataset file.
    #[command(flatten)]
    pub dataset: dataset::Datasets,
}

const EXAMPLES: &str = "\
Examples:
  # 200 requests, 0.3 per second on average, bursty, against a local server
  arrivals --rate 0.3 --burstiness 0.7 --num-prompts 200 | fire --url http://127.0.0.1:8000/v1 | reduce | table

  # closed loop: always 8 in flight, 1000-token prompts, 256-token answers
  arrivals --concurrency 8 --num-prompts 64 --input-tokens 1000 --output-tokens 256 > closed.ndjson

  # seed 004's study: fill at 1/s, 60 s to settle, 120 s measured, scenario C
  arrivals --concurrency 32 --fill 1/s --stabilize 60s --measure 120s --scenario C

  # llama-benchy: 8 requests together, 5 times (after a warm-up batch reduce leaves out)
  arrivals --batch 8 --runs 5 --input-tokens 1024 --output-tokens 128

  # llama-benchy --pp 2048 --tg 32 --depth 1024 --concurrency 4, its prompts cut from its book
  arrivals --batch 4 --pp 2048 --tg 32 --depth 1024 --tokenizer tokenizer.json --corpus 1661-0.txt

  # vLLM's ramp-up by request index
  arrivals --ramp requests --ramp-from 1 --ramp-to 10 -n 500

  # five-turn chats arriving at 0.5/s, 2-6 s think time, split over two fire processes
  arrivals --rate 0.5 --turns 5 --think-time 2s..6s -n 40 --shard 0/2

  # this host's part of one plan, from Slurm's (or a Kubernetes Indexed Job's) numbering
  arrivals --rate 30 -n 900 --seed 7 --shard auto

  # replay a Mooncake trace twice as fast, its first 500 rows
  arrivals --trace mooncake_trace.jsonl --time-scale 0.5 -n 500 > replay.ndjson

  # vLLM's ShareGPT sampling: 500 conversations shuffled by the seed, at 4 per second
  arrivals --rate 4 -n 500 --dataset sharegpt:ShareGPT_V3_unfiltered_cleaned_split.json

  # look at the timetable
  arrivals --rate 5 --num-prompts 10 | jq -c 'select(.type==\"request\") | [.id, .offset_ns]'";

/// arrivals' command line: parses the arguments and writes the schedule to stdout. SIGINT and
/// SIGTERM end it after a whole line, with status 130 or 143; a reader that closed stdout
/// (`arrivals | head`) is a normal end.
pub fn main() -> Result<(), Error> {
    let Some(args) = tokenpipe_cli::parse_or_generate::<Args>()? else {
        return Ok(());
    };
    let argv = tokenpipe_cli::argv();
    note_auto_shard(&argv);
    let plan = plan(&args, argv)?;
    if let Err(e) = crate::signals::install() {
        eprintln!(
            "arrivals: warning: cannot watch for SIGINT/SIGTERM ({e}); an interrupted run may end in half a line"
        );
    }
    plan.write_until(raw_stdout(), crate::signals::received)
}

/// Says on stderr which variables `--shard auto` took its part from, so that a launcher's log
/// shows which host ran which part.
fn note_auto_shard(argv: &[String]) {
    let auto = argv.windows(2).any(|w| w[0] == "--shard" && w[1] == "auto")
        || argv.iter().any(|a| a == "--shard=auto");
    let env = |name: &str| std::env::var(name).ok();
    if let (true, Ok((spec, from))) = (auto, crate::shard_env::from_env(&env)) {
        eprintln!(
            "arrivals: --shard auto: {}/{} from {from}",
            spec.index, spec.count
        );
    }
}

/// Writes the whole schedule that `args` (parsed from `argv`, which the header records)
/// describe to `out`, as `arrivals` would, without signals: for tests and callers that start
/// from the words of a command line.
pub fn write_schedule(args: &Args, argv: Vec<String>, out: impl Write) -> Result<(), Error> {
    plan(args, argv)?.write(out)
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
    fn rejects_bad_and_conflicting_flags() {
        for argv in [
            &["arrivals", "--rate", "0"][..],
            &["arrivals", "--rate", "-1"],
            &["arrivals", "--rate", "abc"],
            &["arrivals", "--rate", "nan"],
            &["arrivals", "--rate", "1", "--concurrency", "2"],
            &["arrivals", "--runs", "2"],
            &["arrivals", "--no-warmup"],
            &["arrivals", "--depth", "8", "--token-ids", "1..9"],
            &["arrivals", "--depth", "8", "--dataset", "jsonl:p.jsonl"],
            &["arrivals", "--corpus", "book.txt"],
            &[
                "arrivals",
                "--corpus",
                "book.txt",
                "--tokenizer",
                "t.json",
                "--same-prompt",
            ],
            &[
                "arrivals",
                "--batch",
                "2",
                "--runs",
                "3",
                "--concurrency",
                "2",
            ],
            &["arrivals", "--fill", "1/s"],
            &["arrivals", "--ramp", "10s", "--ramp-from", "1"],
            &["arrivals", "--stabilize", "10s"],
            &["arrivals", "--shard", "3/2"],
            &["arrivals", "--vllm-compatible", "--concurrency", "2"],
            &["arrivals", "--trace", "t.csv", "--rate", "2"],
            &["arrivals", "--trace", "t.csv", "--concurrency", "2"],
            &[
                "arrivals", "--trace", "t.csv", "--batch", "2", "--runs", "1",
            ],
            &["arrivals", "--trace", "t.csv", "--vllm-compatible"],
            &[
                "arrivals",
                "--trace",
                "t.csv",
                "--ramp",
                "10s",
                "--ramp-from",
                "1",
                "--ramp-to",
                "2",
            ],
            &["arrivals", "--time-scale", "2"],
            &["arrivals", "--trace-columns", "time=a"],
            &["arrivals", "--trace", "t.csv", "--time-scale", "0"],
            &["arrivals", "--dataset", "jsonl:p.jsonl", "--same-prompt"],
            &["arrivals", "--dataset", "jsonl:p.jsonl", "--scenario", "C"],
            &[
                "arrivals",
                "--dataset",
                "jsonl:p.jsonl",
                "--token-ids",
                "1..9",
            ],
            &[
                "arrivals",
                "--dataset",
                "jsonl:p.jsonl",
                "--prefix-tokens",
                "9",
            ],
            &[
                "arrivals",
                "--dataset",
                "jsonl:p.jsonl",
                "--input-tokens",
                "9",
            ],
            &["arrivals", "--dataset", "parquet:p"],
        ] {
            assert!(Args::try_parse_from(argv).is_err(), "{argv:?}");
        }
    }

    #[test]
    fn llama_benchys_names_and_defaults_are_taken() {
        let args = Args::try_parse_from([
            "arrivals", "--batch", "2", "--pp", "7", "--tg", "3", "--depth", "5",
        ])
        .unwrap();
        assert_eq!(args.content.input_tokens, Some(7));
        assert_eq!(args.content.output_tokens, Some(3));
        assert_eq!(args.content.depth, Some(5));
        assert_eq!((args.pacing.runs, args.pacing.no_warmup), (None, false));
    }

    #[test]
    fn a_trace_alone_takes_the_trace_defaults() {
        let args = Args::try_parse_from(["arrivals", "--trace", "t.jsonl"]).unwrap();
        assert_eq!(args.trace.time_scale, 1.0);
        assert_eq!(args.trace.trace_format, trace::TraceFormatArg::Auto);
        let args = Args::try_parse_from([
            "arrivals",
            "--trace",
            "t.csv",
            "--trace-columns",
            "time=ts,input=in,output=out",
            "--trace-time-unit",
            "us",
            "--duration",
            "10s",
            "-n",
            "5",
        ])
        .unwrap();
        assert_eq!(
            args.trace.trace_columns.unwrap().time.as_deref(),
            Some("ts")
        );
    }
}
