//! Arrival processes: when each request (or each session's first turn) of a schedule is sent.
//!
//! Every process implements [`ArrivalProcess`], one file each; [`build`] maps a [`ProcessSpec`]
//! (what the command line or a library caller chose) to the boxed process. Adding a process is
//! one new file, one `ProcessSpec` variant and one match arm in [`build`]; the writer loop does
//! not change. Open-loop processes give every arrival an offset from the run start; closed-loop
//! and batch ones give none and tell `fire` how many requests to keep in flight instead. A
//! process may also end the schedule (a trace's last row) and carry each arrival's lengths (a
//! trace's token counts).

mod batch;
mod closed;

mod open;
mod rate;
mod trace;
mod vllm;

pub use batch::Batch;
pub use closed::ClosedLoop;
pub use open::{OpenLoop, UnitGaps};
pub use rate::{Ramp, RampShape, RateShape};
pub use trace::{parse_columns, Columns, TimeUnit, TraceFormat, TraceReplay, TraceSpec};
pub use vllm::VllmCompatible;

use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use std::collections::BTreeMap;
use tokenpipe_format::LoopMode;

/// One arrival: when it goes and, where the process knows them, its lengths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Arrival {
    /// Send time in ns from the run start (open loop); `None` where the client decides.
    pub offset_ns: Option<u64>,
    /// Prompt length this arrival asks for (a trace's row), overriding the prompt flags.
    pub input_tokens: Option<u64>,
    /// Answer length this arrival asks for, overriding the prompt flags.
    pub output_tokens: Option<u64>,
}

impl Arrival {
    /// An arrival at `offset_ns` with the prompt flags' lengths.
    pub fn at(offset_ns: Option<u64>) -> Self {
        Self {
            offset_ns,
            ..Self::default()
        }
    }
}

/// Decides when each arrival goes, so that the writer loop is the same for every pacing.
pub trait ArrivalProcess {
    /// Open loop (`fire` follows the offsets), closed loop (`fire` keeps requests in flight)
    /// or batch; written to the `schedule` record.
    fn mode(&self) -> LoopMode;

    /// Requests `fire` keeps in flight (closed loop) or sends together (batch), for the
    /// `schedule` record; `None` in open loop.
    fn concurrency(&self) -> Option<u64> {
        None
    }

    /// The most arrivals the process can give, where it has a limit of its own (a batch
    /// schedule's size × runs); `None` when the request count decides.
    fn limit(&self) -> Option<u64> {
        None
    }

    /// The next arrival, with offsets non-decreasing from one call to the next; `Ok(None)`
    /// once the process has no more (a trace's end). An error once the schedule runs past
    /// what a `u64` of nanoseconds holds, or on a malformed input.
    fn next_arrival(&mut self) -> Result<Option<Arrival>, ProcessError>;

    /// The batch the arrival just given belongs to, in batch mode.
    fn batch(&self) -> Option<u64> {
        None
    }

    /// Settings the process resolved itself (a trace's detected layout), for the header's
    /// `params`; the command line's own settings are recorded by the caller.
    fn header_params(&self) -> BTreeMap<String, Value> {
        BTreeMap::new()
    }
}

/// Which process to run, with its parameters: the library-level form of the pacing flags.
#[derive(Debug, Clone, PartialEq)]
pub enum ProcessSpec {
    /// Every request at offset 0 (`--rate inf`).
    AllAtOnce,
    /// Renewal process: unit-mean gaps (gamma of shape `burstiness`, or constant) scaled by a
    /// rate that is fixed or ramps; the first request at offset 0.
    Open {
        /// The shape of the gaps.
        gaps: UnitGaps,
        /// The rate over the run.
        rate: RateShape,
    },
    /// vLLM's schedule (`--vllm-compatible`): the first request delayed by its own gap, and
    /// without a ramp every offset rescaled so that the last lands at `requests / rate`.
    Vllm {
        /// The shape of the gaps.
        gaps: UnitGaps,
        /// The rate; only a fixed rate is rescaled, as in vLLM.
        rate: RateShape,
        /// How many requests the schedule has (the rescaling needs it).
        requests: u64,
        /// numpy's seed, as `vllm bench serve --seed`.
        seed: u32,
    },
    /// No timetable: `fire` keeps `concurrency` requests in flight (`--concurrency`).
    Closed {
        /// Requests in flight.
        concurrency: u64,
    },
    /// `size` requests at once, `runs` times, each batch after the last has ended.
    Batch {
        /// Requests per batch.
        size: u64,
        /// Number of batches.
        runs: u64,
    },
    /// Replays a trace file's rows: their times and lengths (`--trace`).
    Trace(TraceSpec),
}

/// Starts the process `spec` describes. `rng` is the seed's arrival stream; a process that
/// draws nothing ignores it. Fails when the parameters do not describe a process, or when a
/// trace cannot be opened or its layout told.
pub fn build(spec: ProcessSpec, rng: ChaCha8Rng) -> Result<Box<dyn ArrivalProcess>, ProcessError> {
    Ok(match spec {
        ProcessSpec::AllAtOnce => Box::new(OpenLoop::all_at_once()),
        ProcessSpec::Open { gaps, rate } => Box::new(OpenLoop::new(gaps, rate, rng)?),
        ProcessSpec::Vllm {
            gaps,
            rate,
            requests,
            seed,
        } => Box::new(VllmCompatible::new(gaps, rate, requests, seed)?),
        ProcessSpec::Closed { concurrency } => Box::new(ClosedLoop::new(concurrency)),
        ProcessSpec::Batch { size, runs } => Box::new(Batch::new(size, runs)),
        ProcessSpec::Trace(spec) => Box::new(TraceReplay::open(&spec)?),
    })
}

/// Why a process cannot give (more) arrivals; all are bad input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProcessError {
    /// The parameters do not describe a process; the message names the flags.
    #[error("{0}")]
    Parameters(String),
    /// The schedule passes 2^64 ns, at `at_s` seconds from the start.
    #[error("the schedule passes 2^64 ns (about 584 years) at {at_s:.3e} s; use a higher --rate or fewer --num-prompts")]
    Overflow {
        /// Where the schedule had got to, in seconds.
        at_s: f64,
    },
    /// An input the process reads (a trace) is malformed; the message names file, line and
    /// field.
    #[error("{0}")]
    Input(String),
}

/// Converts an offset in seconds to whole nanoseconds (rounded to nearest), or the overflow
/// error: the one place where every process turns its float clock into the wire's integer.
pub fn seconds_to_ns(at_s: f64) -> Result<u64, ProcessError> {
    let ns = (at_s * 1e9).round();
    // u64::MAX as f64 rounds up to 2^64, so `<` keeps the cast exact and in range.
    if ns < u64::MAX as f64 && ns >= 0.0 {
        Ok(ns as u64)
    } else {
        Err(ProcessError::Overflow { at_s })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn seconds_convert_to_rounded_nanoseconds_until_overflow() {
        assert_eq!(seconds_to_ns(0.0), Ok(0));
        assert_eq!(seconds_to_ns(1.5e-9), Ok(2));
        assert_eq!(seconds_to_ns(3.0), Ok(3_000_000_000));
        assert!(seconds_to_ns(1.9e10).is_err());
        assert!(seconds_to_ns(f64::INFINITY).is_err());
    }

    #[test]
    fn build_gives_each_spec_its_mode() {
        let rng = || ChaCha8Rng::seed_from_u64(0);
        let open = build(ProcessSpec::AllAtOnce, rng()).unwrap();
        assert_eq!((open.mode(), open.concurrency()), (LoopMode::Open, None));
        let gamma = ProcessSpec::Open {
            gaps: UnitGaps::Gamma { burstiness: 1.0 },
            rate: RateShape::Fixed(1.0),
        };
        assert_eq!(build(gamma, rng()).unwrap().mode(), LoopMode::Open);
        let closed = build(ProcessSpec::Closed { concurrency: 3 }, rng()).unwrap();
        assert_eq!(
            (closed.mode(), closed.concurrency()),
            (LoopMode::Closed, Some(3))
        );
        let batch = build(ProcessSpec::Batch { size: 4, runs: 2 }, rng()).unwrap();
        assert_eq!(
            (batch.mode(), batch.concurrency(), batch.limit()),
            (LoopMode::Batch, Some(4), Some(8))
        );
    }
}
