//! What can go wrong in `table`, in its own words, and which exit status each means. Reading
//! the inputs, the flags that choose a layout, the names the flags give and what the runs have
//! to show each have their variants; [`tokenpipe_cli::ToolError::ending`] below is the one
//! place that decides which are the user's to fix (bad input) and which are failures.

use crate::chart::ChartError;
use std::io;
use tokenpipe_cli::{Ending, OpenError, ToolError};
use tokenpipe_format::ReadError;

/// Why `table` could not render its input.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An input file cannot be opened.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// An input is not a stream of records this tool reads (a malformed line, a newer format),
    /// or reading it failed.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// An input is another stage's stream (a schedule, fire's events); `next` says which tools
    /// to run first.
    #[error("{read}; {next}")]
    WrongStage {
        /// The reader's refusal, naming the input, the line and the record type found.
        read: ReadError,
        /// The pipe that turns it into summaries.
        next: &'static str,
    },
    /// A line of a `vllm bench serve` result file (told apart by its first line) is not JSON.
    #[error("{input}: line {line}: not a JSON object")]
    NotJson {
        /// The input's name.
        input: String,
        /// 1-based line number.
        line: usize,
        /// What the JSON parser found.
        source: serde_json::Error,
    },
    /// A JSON object is neither one of tokenpipe's records nor a `vllm bench serve` result.
    #[error(
        "{input}: line {line}: a JSON object that is neither one of tokenpipe's records (no \
         \"type\") nor a `vllm bench serve` result (no \"completed\" and \"duration\")"
    )]
    Unrecognised {
        /// The input's name.
        input: String,
        /// 1-based line number where the object starts.
        line: usize,
    },
    /// A field of a `vllm bench serve` result does not hold what vLLM writes there.
    #[error("{at}: field \"{key}\": expected {expected} (reading a `vllm bench serve` result)")]
    VllmResult {
        /// The input's name, and the line of an appended result.
        at: String,
        /// The result's key.
        key: String,
        /// What vLLM writes there, in words.
        expected: &'static str,
    },
    /// The inputs hold no summary at all: nothing to show.
    #[error("no summary records in input (pipe the output of reduce into table)")]
    NoSummaries,
    /// The inputs hold a `sweep` record but no summary: no point of the sweep gave a run.
    #[error("the sweep wrote no summary, so there is no run to show: {0}")]
    EmptySweep(String),
    /// Flags that do not go together, or a value a flag cannot take (`--top 0`).
    #[error("{0}")]
    Flags(String),
    /// Layout flags given to a layout of its own (another tool's style, a chart), which would
    /// ignore them.
    #[error(
        "{} {} not apply to {what}, which has a layout of its own",
        flags.join(", "),
        if flags.len() == 1 { "does" } else { "do" }
    )]
    FixedLayout {
        /// The layout flags given, by name.
        flags: Vec<&'static str>,
        /// What has its own layout, as the command line asked for it (`--style vllm`).
        what: String,
    },
    /// A field name (`--columns`, `--sort`, `--rows`, `--cols`, `--cell`) that no run has.
    #[error(
        "no run has a field `{name}`: fields look like ttft.p99, tpot.mean, output_tps, ok, \
         meta.KEY, concurrency, label (`table --list-fields` lists those of this input)"
    )]
    UnknownField {
        /// The name as given.
        name: String,
    },
    /// `--baseline` names no run (or no pivot column); `why` lists the ones there are.
    #[error("--baseline {label}: {why}")]
    Baseline {
        /// The label as given.
        label: String,
        /// What it was looked for among, and what is there.
        why: String,
    },
    /// Two runs fall in one cell of a pivot, which shows one run per cell.
    #[error(
        "runs {first} and {second} both fall in the cell {cell}: a pivot shows one run per cell; \
         choose keys that tell them apart (--rows/--cols with meta.KEY, concurrency, label, …){}",
        if *groups { "" } else { " or reduce repeats into a group summary" }
    )]
    SharedCell {
        /// The run that took the cell first.
        first: String,
        /// The run that fell in it too.
        second: String,
        /// The cell's keys: `model=m, profile=p`.
        cell: String,
        /// Whether one of them is a group summary already (then pooling is no way out).
        groups: bool,
    },
    /// The runs have nothing the chosen layout shows (no runs to pivot, no value to chart, no
    /// llama-benchy figures); the message says what and, where it can, what to run.
    #[error("{0}")]
    NothingToShow(String),
    /// A summary's `vllm` figure that `--style vllm` prints is not a number.
    #[error("run {run}: vLLM figure \"{key}\": expected a number, got {found}")]
    VllmFigure {
        /// The run's column label.
        run: String,
        /// The figure's key.
        key: String,
        /// What the summary holds instead.
        found: serde_json::Value,
    },
    /// A percentile `--style vllm` was asked to print (`--metric-percentiles`) that a run's
    /// figures do not carry.
    #[error(
        "run {run}: no vLLM figure \"{key}\" to print: a vLLM result holds the percentiles it \
         was run with, a summary those of reduce --percentiles; choose among them with \
         --metric-percentiles (default 99, as vLLM's)"
    )]
    VllmPercentile {
        /// The run's column label.
        run: String,
        /// The figure's key (`p90_ttft_ms`).
        key: String,
    },
    /// A chart cannot be drawn: the runs lack its data, or plotters failed.
    #[error(transparent)]
    Chart(#[from] ChartError),
    /// A summary or a table for machines could not be encoded as JSON or CSV: not expected,
    /// since both are built from values in memory.
    #[error(transparent)]
    Encode(Box<dyn std::error::Error + Send + Sync>),
    /// The SVG renderer got a layout without a chart: a mistake in [`crate::render`], not in
    /// the input.
    #[error("no chart was laid out for --format svg")]
    NoChartLaidOut,
    /// Reading an input or writing stdout failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl Error {
    /// A JSON or CSV encoding error, or a summary that does not encode as an object.
    pub(crate) fn encode(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Error::Encode(e.into())
    }
}

impl ToolError for Error {
    fn ending(&self) -> Ending {
        match self {
            Error::Open(e) => e.ending(),
            Error::Read(e) => e.ending(),
            Error::Chart(ChartError::NoData(_)) => Ending::BadInput,
            Error::Chart(ChartError::Draw(_)) => Ending::Failure,
            Error::WrongStage { .. }
            | Error::NotJson { .. }
            | Error::Unrecognised { .. }
            | Error::VllmResult { .. }
            | Error::NoSummaries
            | Error::EmptySweep(_)
            | Error::Flags(_)
            | Error::FixedLayout { .. }
            | Error::UnknownField { .. }
            | Error::Baseline { .. }
            | Error::SharedCell { .. }
            | Error::NothingToShow(_)
            | Error::VllmFigure { .. }
            | Error::VllmPercentile { .. } => Ending::BadInput,
            Error::Encode(_) | Error::NoChartLaidOut => Ending::Failure,
            Error::Io(e) => e.ending(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_cli::message;

    #[test]
    fn what_the_user_can_fix_is_bad_input() {
        let not_json = serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        for e in [
            Error::NotJson {
                input: "r.json".into(),
                line: 2,
                source: not_json,
            },
            Error::Unrecognised {
                input: "r.json".into(),
                line: 1,
            },
            Error::VllmResult {
                at: "r.json".into(),
                key: "completed".into(),
                expected: "a count",
            },
            Error::NoSummaries,
            Error::EmptySweep("its first command failed".into()),
            Error::Flags("--top needs at least 1".into()),
            Error::FixedLayout {
                flags: vec!["--sort"],
                what: "--style vllm".into(),
            },
            Error::UnknownField { name: "x".into() },
            Error::Baseline {
                label: "x".into(),
                why: "no run has that label".into(),
            },
            Error::SharedCell {
                first: "a".into(),
                second: "b".into(),
                cell: "label=a".into(),
                groups: false,
            },
            Error::NothingToShow("no runs to pivot: the input has none".into()),
            Error::VllmFigure {
                run: "a".into(),
                key: "completed".into(),
                found: "ten".into(),
            },
            Error::VllmPercentile {
                run: "a".into(),
                key: "p90_ttft_ms".into(),
            },
            Error::Chart(ChartError::NoData("no histograms".into())),
            Error::Open(OpenError {
                path: "gone.ndjson".into(),
                source: io::ErrorKind::NotFound.into(),
            }),
        ] {
            assert_eq!(e.ending(), Ending::BadInput, "{e}");
        }
    }

    #[test]
    fn what_fails_outside_the_input_is_a_failure() {
        for e in [
            Error::Io(io::ErrorKind::PermissionDenied.into()),
            Error::Chart(ChartError::Draw("backend".into())),
            Error::encode("a summary serialized as null, not an object"),
            Error::NoChartLaidOut,
            Error::Read(ReadError::Io {
                source_name: "<stdin>".into(),
                error: io::ErrorKind::Interrupted.into(),
            }),
        ] {
            assert_eq!(e.ending(), Ending::Failure, "{e}");
        }
        // `table | head`: the reader went away, a normal end.
        let closed = Error::Io(io::ErrorKind::BrokenPipe.into());
        assert_eq!(closed.ending(), Ending::ClosedPipe);
    }

    #[test]
    fn messages_name_the_cause_once() {
        let not_json = serde_json::from_str::<serde_json::Value>("nope").unwrap_err();
        let cause = not_json.to_string();
        let e = Error::NotJson {
            input: "r.json".into(),
            line: 3,
            source: not_json,
        };
        assert_eq!(
            message(&e),
            format!("r.json: line 3: not a JSON object: {cause}")
        );
        let e = Error::FixedLayout {
            flags: vec!["--sort", "--top"],
            what: "--style vllm".into(),
        };
        assert_eq!(
            message(&e),
            "--sort, --top do not apply to --style vllm, which has a layout of its own"
        );
        let e = Error::SharedCell {
            first: "a".into(),
            second: "b".into(),
            cell: "model=m, profile=p".into(),
            groups: true,
        };
        assert!(message(&e).ends_with("label, …)"), "{e}");
    }
}
