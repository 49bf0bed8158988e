//! The exit-status contract, in one place. Libraries say what kind of ending an error is
//! ([`ToolError::ending`]); only [`run`] turns that into a number and prints the message.

use std::io::{self, Write};

/// Exit status: success.
pub const EXIT_OK: i32 = 0;
/// Exit status: a runtime failure (I/O, network set-up, a server that cannot be used).
pub const EXIT_FAILURE: i32 = 1;
/// Exit status: bad usage or bad input; clap uses the same for flag errors.
pub const EXIT_BAD_INPUT: i32 = 2;
/// Exit status after Ctrl-C, as shells expect (128 + SIGINT).
pub const EXIT_INTERRUPTED: i32 = 130;
/// Exit status after SIGTERM (128 + SIGTERM).
pub const EXIT_TERMINATED: i32 = 143;

/// How a tool that stopped on an error ended, in the words the exit status speaks. A library
/// chooses one per error; scripts read the number [`Ending::code`] gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The reader of the output went away (`tool | head`): a normal end, silent, status 0.
    ClosedPipe,
    /// The user's flags or input are wrong; rerunning the same command fails the same way.
    BadInput,
    /// Something outside the input failed: I/O, the network, a server that cannot be used.
    Failure,
    /// Stopped by Ctrl-C after writing what was measured.
    Interrupted,
    /// Stopped by SIGTERM after writing what was measured.
    Terminated,
}

impl Ending {
    /// The exit status this ending means.
    pub fn code(self) -> i32 {
        match self {
            Ending::ClosedPipe => EXIT_OK,
            Ending::BadInput => EXIT_BAD_INPUT,
            Ending::Failure => EXIT_FAILURE,
            Ending::Interrupted => EXIT_INTERRUPTED,
            Ending::Terminated => EXIT_TERMINATED,
        }
    }
}

/// An error a tool can end with. Its `Display` says what went wrong without its source;
/// [`run`] prints the chain of sources after it, `: `-separated, the way `anyhow` does.
pub trait ToolError: std::error::Error {
    /// Which exit status the error means.
    fn ending(&self) -> Ending;
}

impl ToolError for io::Error {
    fn ending(&self) -> Ending {
        if self.kind() == io::ErrorKind::BrokenPipe {
            Ending::ClosedPipe
        } else {
            Ending::Failure
        }
    }
}

impl ToolError for tokenpipe_format::ReadError {
    fn ending(&self) -> Ending {
        if self.is_bad_input() {
            Ending::BadInput
        } else {
            Ending::Failure
        }
    }
}

/// Runs a tool's main body and exits with the status its outcome means: 0 on success or when
/// stdout was closed by the reader (`| head`: [`Ending::ClosedPipe`], or a broken pipe anywhere
/// in the error's chain), otherwise the status of the error's [`Ending`]. A tool that outlived
/// a Ctrl-C or SIGTERM to write its output ([`crate::outlast_first_interrupt`]) ends with 130
/// or 143 even so.
/// Errors are printed on stderr as `tool: message: cause: cause`.
pub fn run<E: ToolError + 'static>(tool: &str, body: impl FnOnce() -> Result<(), E>) -> ! {
    let code = match body() {
        Ok(()) => crate::interruption().map_or(EXIT_OK, Ending::code),
        Err(err) if err.ending() == Ending::ClosedPipe || closed_pipe(&err) => EXIT_OK,
        Err(err) => {
            report(tool, &err);
            err.ending().code()
        }
    };
    std::process::exit(code)
}

/// Whether the error is, somewhere in its chain of sources, a write to a pipe whose reader has
/// gone: the normal end of `tool | head`, not a failure. (An `#[error(transparent)]` variant
/// hides its io::Error from the chain; its `ending` says [`Ending::ClosedPipe`] instead.)
pub fn closed_pipe(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(err);
    while let Some(e) = cur {
        if let Some(io) = e.downcast_ref::<io::Error>() {
            if io.kind() == io::ErrorKind::BrokenPipe {
                return true;
            }
        }
        cur = e.source();
    }
    false
}

/// The message [`run`] prints after `tool: `: the error and each of its sources.
pub fn message(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut cur = err.source();
    while let Some(cause) = cur {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        cur = cause.source();
    }
    text
}

fn report(tool: &str, err: &dyn std::error::Error) {
    let mut stderr = io::stderr().lock();
    let _ = writeln!(stderr, "{tool}: {}", message(err));
}

/// An input file that cannot be opened: bad input, named by its path.
#[derive(Debug, thiserror::Error)]
#[error("cannot open {}", path.display())]
pub struct OpenError {
    /// The path as given.
    pub path: std::path::PathBuf,
    /// Why the system refused.
    pub source: io::Error,
}

impl ToolError for OpenError {
    fn ending(&self) -> Ending {
        Ending::BadInput
    }
}
