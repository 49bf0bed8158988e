//! Arrival processes: when each request of a schedule is sent.
//!
//! Every process implements [`ArrivalProcess`], one file each; [`build`] maps a [`ProcessSpec`]
//! (what the command line or a library caller chose) to the boxed process. Adding a process is
//! one new file, one `ProcessSpec` variant and one match arm in [`build`]; the writer loop does
//! not change. Open-loop processes give every request an offset from the run start; closed-loop
//! ones give none and tell `fire` how many requests to keep in flight instead.

mod all_at_once;
mod closed;
mod gamma;

pub use all_at_once::AllAtOnce;
pub use closed::ClosedLoop;
pub use gamma::Gamma;

use rand_chacha::ChaCha8Rng;
use tokenpipe_format::LoopMode;

/// Decides when each request goes, so that the writer loop is the same for every pacing.
pub trait ArrivalProcess {
    /// Open loop (`fire` follows the offsets) or closed loop (`fire` keeps requests in flight);
    /// written to the `schedule` record.
    fn mode(&self) -> LoopMode;

    /// Requests `fire` keeps in flight in closed loop, for the `schedule` record; `None` in
    /// open loop.
    fn concurrency(&self) -> Option<u64> {
        None
    }

    /// The next request's send time in nanoseconds from the run start, non-decreasing from one
    /// call to the next; `None` where the client decides (closed loop). An error once the
    /// schedule runs past what a `u64` of nanoseconds holds.
    fn next_offset_ns(&mut self) -> Result<Option<u64>, ProcessError>;
}

/// Which process to run, with its parameters: the library-level form of the pacing flags.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ProcessSpec {
    /// Every request at offset 0 (`--rate inf`).
    AllAtOnce,
    /// Gamma-distributed gaps with mean `1/rate` seconds and shape `burstiness`.
    Gamma {
        /// Requests per second on average.
        rate: f64,
        /// Gamma shape `k`; 1 is Poisson.
        burstiness: f64,
    },
    /// No timetable: `fire` keeps `concurrency` requests in flight (`--concurrency`).
    Closed {
        /// Requests in flight.
        concurrency: u64,
    },
}

/// Starts the process `spec` describes. `rng` is the seed's arrival stream; a process that
/// draws nothing ignores it. Fails when the parameters do not describe a process.
pub fn build(spec: ProcessSpec, rng: ChaCha8Rng) -> Result<Box<dyn ArrivalProcess>, ProcessError> {
    Ok(match spec {
        ProcessSpec::AllAtOnce => Box::new(AllAtOnce),
        ProcessSpec::Gamma { rate, burstiness } => Box::new(Gamma::new(rate, burstiness, rng)?),
        ProcessSpec::Closed { concurrency } => Box::new(ClosedLoop::new(concurrency)),
    })
}

/// Why a process cannot give (more) offsets; both are bad input.
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
}

/// Converts an offset in seconds to whole nanoseconds (rounded to nearest), or the overflow
/// error: the one place where every process turns its float clock into the wire's integer.
pub fn seconds_to_ns(at_s: f64) -> Result<u64, ProcessError> {
    let ns = (at_s * 1e9).round();
    // u64::MAX as f64 rounds up to 2^64, so `<` keeps the cast exact and in range.
    if ns < u64::MAX as f64 {
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
        let gamma = ProcessSpec::Gamma {
            rate: 1.0,
            burstiness: 1.0,
        };
        assert_eq!(build(gamma, rng()).unwrap().mode(), LoopMode::Open);
        let closed = build(ProcessSpec::Closed { concurrency: 3 }, rng()).unwrap();
        assert_eq!(
            (closed.mode(), closed.concurrency()),
            (LoopMode::Closed, Some(3))
        );
    }
}
