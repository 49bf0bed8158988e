//! `arrivals`: writes a reproducible request schedule for `fire`.
//!
//! The output is a pure function of the arguments: a header (without a wall-clock time, so the
//! same seed gives byte-identical output), a `schedule` record saying how to pace, and one
//! `request` record per prompt. Arrival times and prompt text are drawn from two independent
//! ChaCha8 streams of the seed, so changing the prompt length does not move the arrival times.
//!
//! [`cli`] owns the flags and `main`; [`process`] decides when each request goes (one file per
//! arrival process); [`prompts`] says what each request asks (one file per prompt source);
//! [`signals`] and the private `sink` end an interrupted schedule after a whole line. This file
//! wires them together: [`Plan`] is a schedule described without a command line.

pub mod cli;
pub mod process;
pub mod prompts;
pub mod signals;
mod sink;

pub use cli::{main, Args};

use process::ArrivalProcess;
use prompts::PromptSource;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use signals::Signal;
use sink::{LineSink, SinkError};
use std::collections::BTreeMap;
use std::io::Write;
use tokenpipe_format::{Header, LoopMode, Record, Schedule};

/// The seed's stream for arrival times. Kept apart from [`prompt_rng`] so that a change to the
/// prompts never moves an arrival.
pub fn arrival_rng(seed: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(0);
    rng
}

/// The seed's stream for prompt content, independent of [`arrival_rng`].
pub fn prompt_rng(seed: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(1);
    rng
}

/// One schedule, described without a command line: what a library caller builds, and what
/// [`Plan::write`] writes.
pub struct Plan {
    /// The first record, saying how the schedule was made.
    pub header: Header,
    /// How many request records to write.
    pub requests: u64,
    /// When each request goes.
    pub process: Box<dyn ArrivalProcess>,
    /// What each request asks.
    pub prompts: Box<dyn PromptSource>,
    /// The stream prompts draw from, [`prompt_rng`] of the seed.
    pub prompt_rng: ChaCha8Rng,
}

impl Plan {
    /// The plan the command line describes; bad input when the flags describe no process or
    /// no prompt source.
    pub fn from_args(args: &Args, argv: Vec<String>) -> anyhow::Result<Plan> {
        let process = process::build(args.process_spec(), arrival_rng(args.seed))
            .map_err(|e| tokenpipe_cli::bad_input(e.to_string()))?;
        let prompts = prompts::build(&args.prompt_spec())
            .map_err(|e| tokenpipe_cli::bad_input(e.to_string()))?;
        Ok(Plan {
            header: header(args, argv, process.mode()),
            requests: args.num_prompts,
            process,
            prompts,
            prompt_rng: prompt_rng(args.seed),
        })
    }

    /// Writes the header, the `schedule` record and every request to `out`. When a process or
    /// a source fails part way, the records before the failure are still written.
    pub fn write(self, out: impl Write) -> anyhow::Result<()> {
        self.write_until(out, || None)
    }

    /// As [`Plan::write`], but ends early, after a whole line, once `stop` returns a signal
    /// (asked between records and after every `write` call); the error then carries the
    /// signal's exit status. `out` should be unbuffered, so that a `write` blocked on a full
    /// pipe is one system call that a signal interrupts.
    pub fn write_until(
        mut self,
        out: impl Write,
        stop: impl FnMut() -> Option<Signal>,
    ) -> anyhow::Result<()> {
        let mut sink = LineSink::new(out, stop);
        match self.write_records(&mut sink) {
            Ok(()) => sink.flush().map_err(SinkError::into_anyhow),
            // A stop drops the lines still buffered; a failed write has nowhere to put them.
            Err(Ended::Sink(e)) => Err(e.into_anyhow()),
            // The lines made before a failed input go out; the input's error is the one to
            // report, unless a signal came meanwhile.
            Err(Ended::Input(e)) => match sink.flush() {
                Err(SinkError::Stopped(signal)) => Err(signal.failure()),
                _ => Err(e),
            },
        }
    }

    fn write_records<W: Write, S: FnMut() -> Option<Signal>>(
        &mut self,
        sink: &mut LineSink<W, S>,
    ) -> Result<(), Ended> {
        sink.write(&Record::Header(self.header.clone()))?;
        sink.write(&Record::Schedule(Schedule {
            mode: self.process.mode().into(),
            concurrency: self.process.concurrency(),
            requests: Some(self.requests),
        }))?;
        for id in 0..self.requests {
            let prompt = self
                .prompts
                .next_prompt(id, &mut self.prompt_rng)
                .map_err(|e| Ended::Input(tokenpipe_cli::bad_input(e.to_string())))?;
            let offset_ns = self
                .process
                .next_offset_ns()
                .map_err(|e| Ended::Input(tokenpipe_cli::bad_input(e.to_string())))?;
            sink.write(&Record::Request(prompt.into_request(id, offset_ns)))?;
        }
        Ok(())
    }
}

/// What cut the writer loop short: the output (a stop, a closed pipe) or the input (a process
/// that overflowed, a source that failed), which still lets the lines before it out.
enum Ended {
    Sink(SinkError),
    Input(anyhow::Error),
}

impl From<SinkError> for Ended {
    fn from(e: SinkError) -> Self {
        Ended::Sink(e)
    }
}

/// Writes the whole schedule for `args` to `out`.
pub fn write_schedule(args: &Args, argv: Vec<String>, out: impl Write) -> anyhow::Result<()> {
    Plan::from_args(args, argv)?.write(out)
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
    use clap::Parser;

    fn run(cmd: &[&str]) -> Vec<u8> {
        let args = Args::try_parse_from(cmd).unwrap();
        let mut out = vec![];
        write_schedule(&args, cmd.iter().map(|s| s.to_string()).collect(), &mut out).unwrap();
        out
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

    /// FNV-1a (64-bit, the format's id hash) of `bytes`, with this build's version in the header blanked so that a
    /// release bump does not count as a change of output.
    fn output_hash(bytes: &[u8]) -> u64 {
        let text = String::from_utf8(bytes.to_vec()).unwrap();
        let version = format!(r#""tool_version":"{}""#, env!("CARGO_PKG_VERSION"));
        let text = text.replacen(&version, r#""tool_version":"""#, 1);
        tokenpipe_format::ids::fnv1a([text.as_bytes()])
    }

    /// The schedule is a pure function of the arguments, and saved schedules are compared
    /// across versions: these hashes pin the exact bytes of a few, so that any change to the
    /// draws, the prompt words or the record layout fails here rather than silently.
    #[test]
    fn output_bytes_are_pinned() {
        let cases: &[(&[&str], u64)] = &[
            (
                &["arrivals", "--rate", "3", "-n", "50", "--seed", "9"],
                0x0d97_c697_4e6d_085c,
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
                0x7a1b_2ed2_3eac_efc3,
            ),
            (&["arrivals", "-n", "5"], 0x60e9_9989_9ea5_588b),
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
                0xe39b_c9a9_17a5_ba51,
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

    fn plan(cmd: &[&str]) -> Plan {
        let args = Args::try_parse_from(cmd).unwrap();
        Plan::from_args(&args, cmd.iter().map(|s| s.to_string()).collect()).unwrap()
    }

    fn exit_code(e: &anyhow::Error) -> i32 {
        e.downcast_ref::<tokenpipe_cli::Failure>().unwrap().code
    }

    #[test]
    fn an_overflow_part_way_keeps_the_records_before_it() {
        let mut out = vec![];
        let err = plan(&["arrivals", "--rate", "1e-300", "-n", "3"])
            .write(&mut out)
            .unwrap_err();
        assert_eq!(exit_code(&err), tokenpipe_cli::EXIT_BAD_INPUT);
        assert!(err.to_string().contains("2^64 ns"), "{err}");
        let text = String::from_utf8(out).unwrap();
        let types: Vec<&str> = text
            .lines()
            .map(|l| {
                if l.contains(r#""type":"request""#) {
                    "request"
                } else {
                    "other"
                }
            })
            .collect();
        assert_eq!(types, ["other", "other", "request"], "{text}");
        assert!(text.ends_with('\n'));
    }

    #[test]
    fn a_stop_ends_the_schedule_with_the_signal_status_after_whole_lines() {
        // Enough requests to fill the buffer a few times; stop at the 500th check.
        let mut checks = 0;
        let stop = || {
            checks += 1;
            (checks >= 500).then_some(Signal::Interrupt)
        };
        let mut out = vec![];
        let err = plan(&[
            "arrivals",
            "--rate",
            "5",
            "-n",
            "5000",
            "--input-tokens",
            "30",
        ])
        .write_until(&mut out, stop)
        .unwrap_err();
        assert_eq!(exit_code(&err), tokenpipe_cli::EXIT_INTERRUPTED);
        assert_eq!(err.to_string(), "interrupted");
        assert!(!out.is_empty() && out.ends_with(b"\n"));
        let mut reader = tokenpipe_format::RecordReader::new(&out[..], "t");
        let mut requests = 0;
        while let Some(rec) = reader.next_record().unwrap() {
            requests += u64::from(matches!(rec, Record::Request(_)));
        }
        assert!(requests > 0 && requests < 500, "{requests}");
    }
}
