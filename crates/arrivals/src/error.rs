//! What can stop `arrivals`, and which exit status each means: the one place the crate's errors
//! meet the exit-status contract.

use crate::process::ProcessError;
use crate::prompts::{LengthError, PromptError};
use crate::shard::ShardError;
use crate::signals::Signal;
use crate::sink::SinkError;
use std::io;
use tokenpipe_cli::{Ending, ToolError};

/// Why a schedule could not be (wholly) written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The flags do not describe a schedule: a ramp by index or vLLM's rescaling without a
    /// request count, a seed numpy cannot take.
    #[error("{0}")]
    Flags(&'static str),
    /// A spread of prompt or answer lengths is out of range; `flags` names the flags that set
    /// it.
    #[error("{flags}")]
    Lengths {
        /// `--input-range/--range-ratio` or `--output-range/--range-ratio`.
        flags: &'static str,
        /// What is wrong with the spread.
        source: LengthError,
    },
    /// A shard of the schedule would get no share of a limit.
    #[error(transparent)]
    Shard(#[from] ShardError),
    /// The arrival process cannot start or go on: its parameters, a trace that is missing or
    /// malformed, a schedule past 2^64 ns.
    #[error(transparent)]
    Process(#[from] ProcessError),
    /// The prompt source cannot start or go on: a dataset or tokenizer that is missing,
    /// short or malformed.
    #[error(transparent)]
    Prompts(#[from] PromptError),
    /// SIGINT or SIGTERM ended the schedule after a whole line.
    #[error("{}", .0.message())]
    Stopped(Signal),
    /// Writing the output failed (a reader that went away included).
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl ToolError for Error {
    fn ending(&self) -> Ending {
        match self {
            Error::Flags(_)
            | Error::Lengths { .. }
            | Error::Shard(_)
            | Error::Process(_)
            | Error::Prompts(_) => Ending::BadInput,
            Error::Stopped(signal) => signal.ending(),
            Error::Io(e) => e.ending(),
        }
    }
}

impl From<SinkError> for Error {
    fn from(e: SinkError) -> Self {
        match e {
            SinkError::Stopped(signal) => Error::Stopped(signal),
            SinkError::Io(e) => Error::Io(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_has_its_ending() {
        assert_eq!(
            Error::Flags("--ramp requests spans the requests").ending(),
            Ending::BadInput
        );
        let overflow = Error::from(ProcessError::Overflow { at_s: 1e300 });
        assert_eq!(overflow.ending(), Ending::BadInput);
        assert_eq!(
            Error::from(PromptError::new("p.jsonl: holds no prompts")).ending(),
            Ending::BadInput
        );
        let stopped = |s| Error::from(SinkError::Stopped(s));
        assert_eq!(stopped(Signal::Interrupt).ending(), Ending::Interrupted);
        assert_eq!(stopped(Signal::Interrupt).to_string(), "interrupted");
        assert_eq!(stopped(Signal::Terminate).ending(), Ending::Terminated);
        assert_eq!(stopped(Signal::Terminate).to_string(), "terminated");
        let full = Error::from(SinkError::Io(io::ErrorKind::StorageFull.into()));
        assert_eq!(full.ending(), Ending::Failure);
        let closed = Error::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert_eq!(closed.ending(), Ending::ClosedPipe);
    }

    #[test]
    fn a_spread_names_its_flags_before_the_cause() {
        let e = Error::Lengths {
            flags: "--input-range/--range-ratio",
            source: LengthError::UniformRatio(2.0),
        };
        assert_eq!(
            tokenpipe_cli::message(&e),
            "--input-range/--range-ratio: a uniform range ratio must be at most 1, got 2"
        );
        assert_eq!(e.ending(), Ending::BadInput);
    }
}
