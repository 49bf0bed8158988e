//! What can go wrong in a reduction, in reduce's own words, and the one place where each kind
//! of fault is given its [`Ending`]. The crate's top-level modules all report through
//! [`Error`]; the faults a part of the work finds on its own ([`RequestError`] for a request's
//! result, [`WindowError`] for a run's window, [`ShardError`] for the parts of a plan,
//! [`ImportError`] for a vLLM result file) are its sources, so that each message reads
//! `where: what` as `tokenpipe_cli::run` prints the chain. This module names no other module of
//! the crate: every other one may use it.

use std::io;
use std::path::PathBuf;
use tokenpipe_cli::{Ending, OpenError, ToolError};
use tokenpipe_format::histogram::HistogramError;
use tokenpipe_format::{ReadError, TrackError};

/// Why a reduction stopped. Every variant but [`Error::Io`] (and a [`ReadError`] that is not
/// the input's fault) is bad input: running reduce again on the same input fails the same way.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The flags contradict each other or say twice what may be said once (a metric bounded
    /// twice by `--slo`, a `--meta` key given twice, an `--slo` bound that vLLM's goodput has
    /// no counterpart for under `--vllm-compatible`).
    #[error("{0}")]
    Flags(String),
    /// An input file cannot be opened.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// An input stream cannot be read, or a line of it is not a record reduce reads.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// Writing the output or a warning failed (a closed stdout is told apart by the caller).
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A `--from-vllm` file can be opened but not read.
    #[error("cannot read {}", path.display())]
    ImportRead {
        /// The file as given.
        path: PathBuf,
        /// Why the system refused.
        source: io::Error,
    },
    /// A `--from-vllm` file is not a detailed vLLM result that can become a run.
    #[error("{file}")]
    Import {
        /// The file as given.
        file: String,
        /// What is wrong with its content.
        source: ImportError,
    },
    /// A record breaks the ordering rules of a run's events (format's `RequestTracker`): a
    /// token after its request's `done`, a second `sent`, time going back.
    #[error("{input}: line {line}")]
    Order {
        /// The input's name.
        input: String,
        /// The record's line.
        line: usize,
        /// The rule it breaks.
        source: TrackError,
    },
    /// The request that a record adds to or ends cannot be counted in its run.
    #[error("{input}: line {line}")]
    Request {
        /// The input's name.
        input: String,
        /// The record's line.
        line: usize,
        /// Why the request cannot be counted.
        source: RequestError,
    },
    /// A request still in flight when its run ended cannot be counted in it (no line to name:
    /// the end of the run is where it is found).
    #[error(transparent)]
    Unfinished(RequestError),
    /// A time or a count that no real run can hold (docs/format.md, "Plausible values").
    #[error("{input}: line {}: field \"{}\"", source.line, source.field)]
    Implausible {
        /// The input's name.
        input: String,
        /// Where, and what is wrong.
        source: Implausible,
    },
    /// A run holds no request at all: the input is not fire's events.
    #[error(
        "{input}: run {run} (from {tool}) has no sent or done records; reduce reads the output of fire"
    )]
    NoRequests {
        /// The input's name.
        input: String,
        /// The run's id.
        run: String,
        /// The tool whose header starts the run.
        tool: String,
    },
    /// An input is a `vllm bench serve` result file, which reduce reads only through
    /// `--from-vllm`: said at once rather than as a JSON error on line 1.
    #[error(
        "{input} is a `vllm bench serve` result file, not a tokenpipe stream: read it with `reduce --from-vllm {}`, or give it to `table` as it is",
        if input == "<stdin>" { "FILE" } else { input.as_str() }
    )]
    VllmResultFile {
        /// The input's name.
        input: String,
    },
    /// The measured window the options ask for does not exist in a run.
    #[error("{input}: run {run}")]
    Window {
        /// The input's name.
        input: String,
        /// The run's id.
        run: String,
        /// Why the window cannot be found.
        source: WindowError,
    },
    /// A part of a sharded plan cannot be merged with the others.
    #[error("{input}: run {run}")]
    Shard {
        /// The input's name.
        input: String,
        /// The part's run id.
        run: String,
        /// Why it cannot be merged.
        source: ShardError,
    },
    /// A run's saved histogram cannot be read back to pool the runs of its group.
    #[error("run {run}: histogram of {metric}")]
    Histogram {
        /// The run's id.
        run: String,
        /// The metric the histogram is of.
        metric: String,
        /// What is wrong with it.
        source: HistogramError,
    },
    /// A run's summary cannot be read as JSON to spread its figures over its group.
    #[error("run {run}")]
    Figures {
        /// The run's id.
        run: String,
        /// Why serde refused it.
        source: serde_json::Error,
    },
}

impl ToolError for Error {
    fn ending(&self) -> Ending {
        match self {
            Error::Io(e) => e.ending(),
            Error::Read(e) => e.ending(),
            Error::Flags(_)
            | Error::Open(_)
            | Error::ImportRead { .. }
            | Error::Import { .. }
            | Error::Order { .. }
            | Error::Request { .. }
            | Error::Implausible { .. }
            | Error::Unfinished(_)
            | Error::NoRequests { .. }
            | Error::VllmResultFile { .. }
            | Error::Window { .. }
            | Error::Shard { .. }
            | Error::Histogram { .. }
            | Error::Figures { .. } => Ending::BadInput,
        }
    }
}

/// Why one request's result cannot be counted in its run: the aggregators' error
/// ([`crate::Aggregator::add`]), and a request's own token count.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// A sum of the run's token counts would pass 2^64.
    #[error(
        "request {request}: the run's {tokens} token total passes 2^64 (corrupt usage counts?)"
    )]
    RunTotal {
        /// The request whose count overflowed it.
        request: u64,
        /// Which total: `input` or `output`.
        tokens: &'static str,
    },
    /// A sum of a llama-benchy batch's token counts would pass 2^64.
    #[error(
        "request {request}: its batch's {tokens} token total passes 2^64 (corrupt usage counts?)"
    )]
    BatchTotal {
        /// The request whose count overflowed it.
        request: u64,
        /// Which total: `prompt` or `output`.
        tokens: &'static str,
    },
    /// The tokens of one request's events would pass 2^64.
    #[error("request {request}: its token counts pass 2^64")]
    TokenCount {
        /// The request.
        request: u64,
    },
    /// vLLM's figures were asked for, but the run was read without every event's time
    /// (`FoldOptions::keep_events`): a caller's mistake, not a fault of the input.
    #[error("request {request}: vLLM's figures need every event; the run was read without them")]
    EventsNotKept {
        /// The first request without them.
        request: u64,
    },
    /// Two parts of one sharded plan hold the same request.
    #[error("request {request} is also in another shard of this plan; the parts of one plan hold disjoint requests")]
    InAnotherShard {
        /// The request's id.
        request: u64,
    },
}

/// A value that no real run can hold: a time past the run's end by more than the run itself, a
/// count of more than a billion tokens a second (the `plausible` module's rules).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{problem}")]
pub struct Implausible {
    /// The record's line.
    pub line: usize,
    /// The record's type and field (`done.at_ns`).
    pub field: &'static str,
    /// What is wrong with its value, with the bound it passes.
    pub problem: String,
}

/// Why the window a run is to be measured over cannot be found in it.
#[derive(Debug, thiserror::Error)]
pub enum WindowError {
    /// `--phase` names a phase, but the run marks none.
    #[error(
        "--phase {phase}: the run marks no phases (arrivals marks them with --fill, --stabilize and --measure); use --phase all or --warmup/--measure"
    )]
    NoPhases {
        /// The phase asked for.
        phase: String,
    },
    /// `--phase` names a phase the run does not mark.
    #[error("--phase {phase}: the run marks no such phase; it has {} (or use all)", marked.join(", "))]
    NoSuchPhase {
        /// The phase asked for.
        phase: String,
        /// The phases the run marks, in order.
        marked: Vec<String>,
    },
    /// The phases in the run's header cannot be read.
    #[error("header: field \"phases\"")]
    Phases(#[source] serde_json::Error),
}

/// Why a part of a sharded plan cannot be lined up with the other parts.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    /// The run names no shard, so it belongs to no plan.
    #[error("run {run} is not a shard")]
    NotAShard {
        /// The run's id.
        run: String,
    },
    /// The part's header has no `started_at`.
    #[error(
        "a shard's header has no started_at, so its times cannot be lined up with the other parts"
    )]
    NoStart,
    /// The part's `started_at` is not an RFC 3339 time.
    #[error("started_at")]
    BadStart(#[source] tokenpipe_format::clock::TimeError),
    /// The part started too long before the first part read.
    #[error("this shard started {early_s:.3} s before shard {first} of its plan; parts more than {apart_s} s apart are not merged")]
    TooEarly {
        /// How much earlier, in seconds.
        early_s: f64,
        /// The index of the first part read.
        first: u32,
        /// How far apart parts may start, in seconds.
        apart_s: i128,
    },
}

/// Why a vLLM result file cannot become a run. Lines and columns count from 1; a field's
/// index, from 0.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file is not JSON.
    #[error("line {line}: column {column}: not a vLLM result file (JSON)")]
    NotJson {
        /// Where the parser stopped.
        line: usize,
        /// The column there.
        column: usize,
        /// What the parser says.
        source: serde_json::Error,
    },
    /// The file is JSON but not one object.
    #[error("line 1: not a vLLM result file: expected one JSON object")]
    NotObject,
    /// A vLLM result saved without `--save-detailed`: figures, but no request.
    #[error("a vLLM result without its per-request arrays (ttfts, itls); rerun `vllm bench serve` with --save-result --save-detailed")]
    NotDetailed,
    /// A JSON object with neither `ttfts` nor `itls`.
    #[error("not a vLLM result file (no ttfts or itls arrays); rerun `vllm bench serve` with --save-result --save-detailed")]
    NoArrays,
    /// A per-request array is missing.
    #[error("field \"{field}\" is missing")]
    Missing {
        /// The array's key.
        field: String,
    },
    /// A per-request field is not an array.
    #[error("field \"{field}\": expected an array")]
    NotArray {
        /// The field's key.
        field: String,
    },
    /// An entry of a per-request array is not what the array holds.
    #[error("field \"{field}\"[{index}]: {expected}")]
    Entry {
        /// The array's key.
        field: String,
        /// The entry's index.
        index: usize,
        /// What was expected, and what was found where that helps.
        expected: String,
    },
    /// A per-request array has a different length than `ttfts`.
    #[error("field \"{field}\": {len} entries, but \"ttfts\" has {requests}")]
    Length {
        /// The array's key.
        field: String,
        /// Its length.
        len: usize,
        /// The length of `ttfts`: the number of requests.
        requests: usize,
    },
    /// A request's times put an event before the run start or absurdly far after it.
    #[error("request {request}: field \"{field}\" puts an event at {} s from the run start", tokenpipe_format::number::shortest(*at_s))]
    Time {
        /// The request's index.
        request: usize,
        /// The field the time comes from.
        field: String,
        /// The event's time, in seconds from the run start.
        at_s: f64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_writing_fails_the_run_every_fault_of_the_input_is_bad_input() {
        let io = Error::from(io::Error::other("disk full"));
        assert_eq!(io.ending(), Ending::Failure);
        let bad = [
            Error::VllmResultFile {
                input: "r.json".into(),
            },
            Error::Flags("--slo: `ttft` is bounded twice".into()),
            Error::Unfinished(RequestError::InAnotherShard { request: 1 }),
            Error::NoRequests {
                input: "<stdin>".into(),
                run: "r".into(),
                tool: "arrivals".into(),
            },
            Error::Shard {
                input: "<stdin>".into(),
                run: "r".into(),
                source: ShardError::NoStart,
            },
            Error::Import {
                file: "r.json".into(),
                source: ImportError::NotObject,
            },
            Error::Implausible {
                input: "<stdin>".into(),
                source: Implausible {
                    line: 3,
                    field: "done.at_ns",
                    problem: "too late".into(),
                },
            },
        ];
        for e in bad {
            assert_eq!(e.ending(), Ending::BadInput, "{e}");
        }
    }

    #[test]
    fn a_closed_stdout_is_told_apart_from_a_failed_write() {
        let closed = Error::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert_eq!(closed.ending(), Ending::ClosedPipe);
        let full = Error::from(io::Error::from(io::ErrorKind::StorageFull));
        assert_eq!(full.ending(), Ending::Failure);
    }

    #[test]
    fn a_fault_reads_where_then_what() {
        let e = Error::Request {
            input: "<stdin>".into(),
            line: 4,
            source: RequestError::TokenCount { request: 7 },
        };
        assert_eq!(e.to_string(), "<stdin>: line 4");
        assert_eq!(
            tokenpipe_cli::message(&e),
            "<stdin>: line 4: request 7: its token counts pass 2^64"
        );
        let start = tokenpipe_format::clock::parse_rfc3339_ns("2026-13-01T00:00:00Z")
            .expect_err("month 13");
        let e = Error::Shard {
            input: "a.ndjson".into(),
            run: "fire-1".into(),
            source: ShardError::BadStart(start),
        };
        assert_eq!(
            tokenpipe_cli::message(&e),
            "a.ndjson: run fire-1: started_at: `2026-13-01T00:00:00Z` is not an RFC 3339 time: a field is out of range"
        );
    }
}
