//! One way to end a run early, whatever the cause: Ctrl-C, SIGTERM, a reader that closed our
//! stdout, or a server that cannot be reached.
//! The dispatcher stops sending (remaining requests end as `not_sent`) and every request in
//! flight ends as `cancelled`, so the stream still holds one `done` per request.

use std::sync::atomic::{AtomicU8, Ordering};
use tokenpipe_cli::Ending;
use tokio::sync::watch;

/// Why the run was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// SIGINT (Ctrl-C).
    Interrupted,
    /// SIGTERM.
    Terminated,
    /// The consumer of stdout went away.
    OutputClosed,
    /// The first requests all failed to connect (see `verdict`).
    Unreachable,
}

impl StopReason {
    /// How the process should end, and its last words: as interrupted or terminated for a
    /// signal, `None` (success) for a reader that went away.
    pub fn exit(self) -> Option<(Ending, &'static str)> {
        match self {
            StopReason::Interrupted => Some((
                Ending::Interrupted,
                "interrupted; everything measured was written",
            )),
            StopReason::Terminated => Some((
                Ending::Terminated,
                "terminated; everything measured was written",
            )),
            StopReason::OutputClosed => None,
            StopReason::Unreachable => Some((
                Ending::Failure,
                "the server could not be reached; the run was stopped",
            )),
        }
    }
}

/// A stop signal visible to threads (polling) and tasks (awaiting).
pub struct Stop {
    reason: AtomicU8,
    tx: watch::Sender<bool>,
}

impl Default for Stop {
    fn default() -> Self {
        Self {
            reason: AtomicU8::new(0),
            tx: watch::Sender::new(false),
        }
    }
}

impl Stop {
    /// Stops the run; the first reason given is the one kept, except that a signal replaces
    /// a closed output: a terminal's Ctrl-C reaches the whole pipe, and when the reader dies of
    /// it a moment before `fire` sees the signal, the run still ends as interrupted.
    pub fn trigger(&self, reason: StopReason) {
        let code = match reason {
            StopReason::Interrupted => 1,
            StopReason::OutputClosed => 2,
            StopReason::Terminated => 3,
            StopReason::Unreachable => 4,
        };
        let replaced = self
            .reason
            .compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst);
        let signal = matches!(reason, StopReason::Interrupted | StopReason::Terminated);
        if replaced == Err(2) && signal {
            let _ = self
                .reason
                .compare_exchange(2, code, Ordering::SeqCst, Ordering::SeqCst);
        }
        self.tx.send_replace(true);
    }

    /// Why the run stopped, if it did.
    pub fn reason(&self) -> Option<StopReason> {
        match self.reason.load(Ordering::SeqCst) {
            1 => Some(StopReason::Interrupted),
            2 => Some(StopReason::OutputClosed),
            3 => Some(StopReason::Terminated),
            4 => Some(StopReason::Unreachable),
            _ => None,
        }
    }

    /// True once stopped (cheap enough to poll between sends).
    pub fn is_stopped(&self) -> bool {
        self.reason.load(Ordering::Relaxed) != 0
    }

    /// Completes when the run is stopped.
    pub async fn stopped(&self) {
        let mut rx = self.tx.subscribe();
        let _ = rx.wait_for(|s| *s).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_reason_kept_but_a_signal_outranks_a_closed_output() {
        let s = Stop::default();
        assert!(!s.is_stopped());
        s.trigger(StopReason::Terminated);
        s.trigger(StopReason::Interrupted);
        assert_eq!(s.reason(), Some(StopReason::Terminated));
        let s = Stop::default();
        s.trigger(StopReason::OutputClosed);
        assert!(s.is_stopped());
        s.trigger(StopReason::Interrupted);
        s.trigger(StopReason::OutputClosed);
        assert_eq!(s.reason(), Some(StopReason::Interrupted));
    }

    #[test]
    fn a_signal_ends_as_its_signal_and_a_closed_output_as_success() {
        assert_eq!(
            StopReason::Interrupted.exit().map(|(e, _)| e),
            Some(Ending::Interrupted)
        );
        assert_eq!(
            StopReason::Terminated.exit().map(|(e, _)| e),
            Some(Ending::Terminated)
        );
        assert_eq!(
            StopReason::Unreachable.exit().map(|(e, _)| e),
            Some(Ending::Failure)
        );
        assert_eq!(StopReason::OutputClosed.exit(), None);
    }
}
