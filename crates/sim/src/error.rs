//! What can stop simserve before or while it serves, and which exit status each means. A
//! request the server refuses is not among them: that is an HTTP answer (`api::ApiError`).

use crate::engine::profile::EngineError;
use crate::fault::select::FractionsError;
use crate::prompt_count::TokenizerError;
use crate::transport::TlsError;
use std::io;
use std::path::PathBuf;
use tokenpipe_cli::{Ending, ToolError};

/// Why simserve could not start, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A delay (`--ttft-ms`, `--itl-ms`, `--headers-delay-ms`) is negative, not finite or
    /// longer than an hour.
    #[error("{flag} {problem}")]
    Delay {
        /// The flag that gave it.
        flag: &'static str,
        /// What is wrong with it.
        problem: DelayError,
    },
    /// The `--fault` fractions add up to more than 1.
    #[error(transparent)]
    Faults(#[from] FractionsError),
    /// The engine flags name no profile, or mix the fixed timetable with a batching profile.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The `--tokenizer` file cannot be read or is not a tokenizer.json.
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
    /// The TLS certificate or key cannot be read or used.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// A file the server writes (`--stamps`, `--log-requests`) cannot be created.
    #[error("cannot create {}", path.display())]
    Create {
        /// The path as given.
        path: PathBuf,
        /// Why the system refused.
        source: io::Error,
    },
    /// The async runtime could not start (no threads, no timer).
    #[error("cannot start the tokio runtime")]
    Runtime(#[source] io::Error),
    /// The address cannot be listened on (taken, not local, not resolved).
    #[error("cannot listen on {addr}")]
    Listen {
        /// `HOST:PORT` as given.
        addr: String,
        /// Why binding failed.
        source: io::Error,
    },
    /// The handler of a stop signal cannot be installed.
    #[error("cannot handle {signal}")]
    Signal {
        /// `SIGINT` or `SIGTERM`.
        signal: &'static str,
        /// Why installing it failed.
        source: io::Error,
    },
    /// The base URL cannot be written on stdout (a reader that went away is not this).
    #[error("cannot write the URL on stdout")]
    Announce(#[source] io::Error),
    /// The stamps file cannot be written at the end.
    #[error("cannot write the stamps file")]
    Stamps(#[source] io::Error),
    /// Any other I/O failure: the listener's address, a generated file written on stdout.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// What is wrong with a delay in milliseconds; [`Error::Delay`] names the flag before it.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum DelayError {
    /// Negative, NaN or infinite.
    #[error("must be a finite, non-negative number of milliseconds, got `{ms}`")]
    Negative {
        /// The value given.
        ms: f64,
    },
    /// Longer than the longest delay accepted.
    #[error("must be at most {max} ms (one hour), got `{ms}`")]
    TooLong {
        /// The value given.
        ms: f64,
        /// The longest accepted.
        max: f64,
    },
}

impl ToolError for Error {
    fn ending(&self) -> Ending {
        match self {
            Error::Delay { .. }
            | Error::Faults(_)
            | Error::Engine(_)
            | Error::Tls(_)
            | Error::Tokenizer(_)
            | Error::Create { .. } => Ending::BadInput,
            Error::Runtime(_)
            | Error::Listen { .. }
            | Error::Signal { .. }
            | Error::Announce(_)
            | Error::Stamps(_) => Ending::Failure,
            Error::Io(e) => e.ending(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_files_are_bad_input_and_the_system_a_failure() {
        let create = Error::Create {
            path: "/nonexistent/x".into(),
            source: io::ErrorKind::NotFound.into(),
        };
        assert_eq!(create.ending(), Ending::BadInput);
        assert_eq!(
            tokenpipe_cli::message(&create),
            "cannot create /nonexistent/x: entity not found"
        );
        let listen = Error::Listen {
            addr: "1.2.3.4:0".into(),
            source: io::ErrorKind::AddrNotAvailable.into(),
        };
        assert_eq!(listen.ending(), Ending::Failure);
        assert!(tokenpipe_cli::message(&listen).starts_with("cannot listen on 1.2.3.4:0: "));
        let stamps = Error::Stamps(io::ErrorKind::StorageFull.into());
        assert_eq!(stamps.ending(), Ending::Failure);
        let closed = Error::Io(io::ErrorKind::BrokenPipe.into());
        assert_eq!(closed.ending(), Ending::ClosedPipe);
    }
}
