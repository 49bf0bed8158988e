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
use tokenpipe_format::{
    Header, LoopMode, Record, RecordWriter, Request, Schedule, FORMAT_MAJOR, FORMAT_MINOR,
};

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

    #[arg(long, hide = true, value_enum)]
    generate: Option<tokenpipe_cli::Generate>,
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
    let Some(args) = tokenpipe_cli::parse_or_generate(|a: &Args| a.generate)? else {
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
        mode,
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
            prompt_token_ids: None,
            prompt_tokens: args.input_tokens,
            max_tokens: args.output_tokens,
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
    Header {
        format_major: FORMAT_MAJOR,
        format_minor: FORMAT_MINOR,
        tool: "arrivals".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        run_id: schedule_id(&argv),
        argv,
        seed: Some(args.seed),
        started_at: None,
        monotonic_origin_ns: None,
        params,
        upstream: vec![],
    }
}

/// A stable id for a schedule: FNV-1a over the arguments after the program name, so the same
/// command gives the same id (and the same bytes) wherever the binary lives.
fn schedule_id(argv: &[String]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for arg in argv.iter().skip(1) {
        for b in arg.bytes().chain(std::iter::once(0)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
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
        <Args as clap::CommandFactory>::command().debug_assert();
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

    /// FNV-1a (64-bit) of `bytes`, with this build's version in the header blanked so that a
    /// release bump does not count as a change of output.
    fn output_hash(bytes: &[u8]) -> u64 {
        let text = String::from_utf8(bytes.to_vec()).unwrap();
        let version = format!(r#""tool_version":"{}""#, env!("CARGO_PKG_VERSION"));
        let text = text.replacen(&version, r#""tool_version":"""#, 1);
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in text.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h
    }

    /// The schedule is a pure function of the arguments, and saved schedules are compared
    /// across versions: these hashes pin the exact bytes of a few, so that any change to the
    /// draws, the prompt words or the record layout fails here rather than silently.
    #[test]
    fn output_bytes_are_pinned() {
        let cases: &[(&[&str], u64)] = &[
            (
                &["arrivals", "--rate", "3", "-n", "50", "--seed", "9"],
                0xd92b_c283_629b_3d09,
            ),
            (
                &[
                    "arrivals",
                    "--concurrency",
                    "4",
                    "-n",
                    "20",
                    "--input-tokens",
                    "7",
                ],
                0x5ee1_439b_57fd_6d0c,
            ),
            (&["arrivals", "-n", "5"], 0xa0b5_a80c_1fe4_6a1a),
            (
                &[
                    "arrivals",
                    "--rate",
                    "0.5",
                    "--burstiness",
                    "0.3",
                    "-n",
                    "30",
                    "--output-tokens",
                    "9",
                ],
                0x1646_2e71_d8e8_bf72,
            ),
        ];
        let mut drift = vec![];
        for (cmd, want) in cases {
            let got = output_hash(&run(cmd));
            if got != *want {
                drift.push(format!("{cmd:?}: 0x{got:016x}, pinned 0x{want:016x}"));
            }
        }
        assert!(drift.is_empty(), "output changed:\n{}", drift.join("\n"));
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
