//! SIGINT and SIGTERM, turned into a flag that the writer reads between records and between
//! `write` calls.
//!
//! A terminal's Ctrl-C reaches every process of `arrivals | fire | reduce | table`. Dying at
//! once could leave half a record in the pipe, and `fire` would fail on it. Instead the handler
//! only records which signal came; the writer ends the schedule after a whole line and the
//! process exits 130 (SIGINT) or 143 (SIGTERM), as shells expect.
//!
//! The handler is installed without `SA_RESTART`, so that a `write` blocked on a full pipe
//! returns (`EINTR`, or a short count) and the writer sees the flag at once rather than when the
//! reader next makes room. It is installed with `SA_RESETHAND`, so that a second signal ends the
//! process the default way should the reader never take the rest of the line being written.

use std::io;
use std::sync::atomic::{AtomicI32, Ordering};
use tokenpipe_cli::Ending;

/// The first stop signal received, as its number; 0 until one arrives.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// A signal that asks `arrivals` to stop writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM.
    Terminate,
}

impl Signal {
    /// How a run stopped by this signal ends: the status shells expect, 128 plus its number.
    pub fn ending(self) -> Ending {
        match self {
            Signal::Interrupt => Ending::Interrupted,
            Signal::Terminate => Ending::Terminated,
        }
    }

    /// What to say on stderr after `arrivals: `.
    pub fn message(self) -> &'static str {
        match self {
            Signal::Interrupt => "interrupted",
            Signal::Terminate => "terminated",
        }
    }

    fn from_raw(signal: i32) -> Option<Signal> {
        match signal {
            libc::SIGINT => Some(Signal::Interrupt),
            libc::SIGTERM => Some(Signal::Terminate),
            _ => None,
        }
    }
}

/// Installs the handler for SIGINT and SIGTERM. A signal that was ignored when the process
/// started (a background job's SIGINT, `nohup`) stays ignored, as the shell meant.
pub fn install() -> io::Result<()> {
    tokenpipe_cli::handle_stop_signals(on_signal, libc::SA_RESETHAND)
}

/// The first stop signal received since [`install`], if any: cheap enough to call before
/// every record and after every `write`.
pub fn received() -> Option<Signal> {
    Signal::from_raw(RECEIVED.load(Ordering::Relaxed))
}

extern "C" fn on_signal(signal: libc::c_int) {
    // Keep the first: the status should name the signal that started the stop.
    let _ = RECEIVED.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_signal_has_the_shell_status() {
        assert_eq!(Signal::from_raw(libc::SIGINT), Some(Signal::Interrupt));
        assert_eq!(Signal::from_raw(libc::SIGTERM), Some(Signal::Terminate));
        assert_eq!(Signal::from_raw(0), None);
        assert_eq!(Signal::Interrupt.ending().code(), 128 + libc::SIGINT);
        assert_eq!(Signal::Terminate.ending().code(), 128 + libc::SIGTERM);
        assert_eq!(Signal::Interrupt.message(), "interrupted");
        assert_eq!(Signal::Terminate.message(), "terminated");
    }
}
