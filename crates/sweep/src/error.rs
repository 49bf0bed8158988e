//! What can stop a sweep, and which exit status each means.

use tokenpipe_cli::{Ending, ToolError};

/// An error of `sweep`. A point whose command failed is not an error of this kind until the
/// sweep record saying so has been written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A flag's value is wrong (`--scan`, `--find`, `--slo`, the command's `{NAME}`).
    #[error("{0}")]
    Flags(String),
    /// The command or `--between` failed; the sweep record was written first.
    #[error("{0}; the sweep record says what was measured before it")]
    Command(String),
    /// Ctrl-C or SIGTERM stopped the sweep; the sweep record was written first.
    #[error("{what} after {runs} run(s); the sweep record says what was measured")]
    Stopped {
        /// `interrupted` or `terminated`.
        what: &'static str,
        /// Measured runs by then.
        runs: u64,
        /// Which of the two.
        ending: Ending,
    },
    /// The command could not be started at all (no `sh`).
    #[error("cannot start `sh -c` for the command")]
    Spawn(#[source] std::io::Error),
    /// Writing the output failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl ToolError for Error {
    fn ending(&self) -> Ending {
        match self {
            Error::Flags(_) => Ending::BadInput,
            Error::Command(_) | Error::Spawn(_) => Ending::Failure,
            Error::Stopped { ending, .. } => *ending,
            Error::Io(e) => e.ending(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_has_its_ending() {
        let io = || std::io::Error::other("x");
        assert_eq!(Error::Flags("x".into()).ending(), Ending::BadInput);
        assert_eq!(Error::Command("x".into()).ending(), Ending::Failure);
        assert_eq!(Error::Spawn(io()).ending(), Ending::Failure);
        assert_eq!(Error::Io(io()).ending(), Ending::Failure);
        let pipe = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert_eq!(Error::Io(pipe).ending(), Ending::ClosedPipe);
        for ending in [Ending::Interrupted, Ending::Terminated] {
            let e = Error::Stopped {
                what: "interrupted",
                runs: 1,
                ending,
            };
            assert_eq!(e.ending(), ending);
        }
    }
}
