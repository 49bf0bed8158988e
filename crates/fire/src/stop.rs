//! One way to end a run early, whatever the cause: Ctrl-C, SIGTERM, a reader that closed our
//! stdout, or a server that cannot be reached (at the start or mid-run, see `verdict`).
//! The dispatcher stops sending (remaining requests end as `not_sent`, their `error` saying why
//! when the stop gave a reason) and every request in flight ends as `cancelled`, so the stream
//! still holds one `done` per request.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;
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
    /// Requests kept failing to connect (see `verdict`): the server is not there.
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

/// The `error` of a request the run stopped before it was sent, when the stop gave no reason.
pub const NOT_SENT: &str = "run stopped before this request was sent";

/// A stop signal visible to threads (polling) and tasks (awaiting).
pub struct Stop {
    reason: AtomicU8,
    tx: watch::Sender<bool>,
    /// Why, in words, for the `error` of the requests it leaves unsent: with the code of the
    /// reason that gave it, so that words given by a reason that lost the race are not used.
    detail: OnceLock<(u8, String)>,
}

impl Default for Stop {
    fn default() -> Self {
        Self {
            reason: AtomicU8::new(0),
            tx: watch::Sender::new(false),
            detail: OnceLock::new(),
        }
    }
}

fn code_of(reason: StopReason) -> u8 {
    match reason {
        StopReason::Interrupted => 1,
        StopReason::OutputClosed => 2,
        StopReason::Terminated => 3,
        StopReason::Unreachable => 4,
    }
}

impl Stop {
    /// Stops the run; the first reason given is the one kept, except that a signal replaces
    /// a closed output: a terminal's Ctrl-C reaches the whole pipe, and when the reader dies of
    /// it a moment before `fire` sees the signal, the run still ends as interrupted.
    pub fn trigger(&self, reason: StopReason) {
        self.trigger_because(reason, None);
    }

    /// Stops the run as [`Stop::trigger`] does; `detail`, when the stop is the first, is what
    /// the `error` of every request left unsent says after [`NOT_SENT`].
    pub fn trigger_because(&self, reason: StopReason, detail: Option<String>) {
        let code = code_of(reason);
        if let Some(detail) = detail {
            // Set before the reason, so that no request is seen unsent without it.
            if self.reason.load(Ordering::SeqCst) == 0 {
                let _ = self.detail.set((code, detail));
            }
        }
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

    /// The `error` of a request this stop left unsent: [`NOT_SENT`], with the stop's reason
    /// in words when it gave one.
    pub fn not_sent_error(&self) -> String {
        match self.detail.get() {
            Some((code, detail)) if *code == self.reason.load(Ordering::SeqCst) => {
                format!("{NOT_SENT}: {detail}")
            }
            _ => NOT_SENT.to_string(),
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

    #[test]
    fn unsent_requests_name_the_reason_of_the_stop_that_won() {
        let s = Stop::default();
        assert_eq!(s.not_sent_error(), NOT_SENT);
        s.trigger_because(StopReason::Unreachable, Some("the server went away".into()));
        assert_eq!(
            s.not_sent_error(),
            "run stopped before this request was sent: the server went away"
        );
        let s = Stop::default();
        s.trigger(StopReason::Interrupted);
        s.trigger_because(StopReason::Unreachable, Some("the server went away".into()));
        assert_eq!(s.reason(), Some(StopReason::Interrupted));
        assert_eq!(s.not_sent_error(), NOT_SENT);
    }
}
