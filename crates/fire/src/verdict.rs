//! How a run ends: the early stop when the server cannot be reached, and the exit status.
//!
//! Rules (documented in docs/fire/protocol.md and `fire --help`):
//! - **Early stop**: when the first [`EARLY_STOP_AFTER`] requests to end all failed to connect
//!   (`connect` or `connect_timeout`) and none succeeded, the run stops (requests in flight end
//!   as `cancelled`, the rest as `not_sent`) and fire exits 1, unless `--keep-going`. A run of
//!   fewer requests than that, all failing to connect, ends by the next rule anyway.
//! - **Exit 1** when at least one request was sent and none succeeded; 0 otherwise. Requests
//!   the run itself ended (`cancelled`, `not_sent`) count as neither.

use crate::error::Error;
use crate::sync::lock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use tokenpipe_format::ErrorKind;

/// How many requests must end, all failing to connect, before the run stops early.
pub const EARLY_STOP_AFTER: u64 = 8;

/// What the requests that ended so far say about the run.
#[derive(Debug, Default)]
pub struct Verdict {
    keep_going: bool,
    /// Requests that ended as a success or a failure of the server or network.
    ended: AtomicU64,
    ok: AtomicU64,
    /// Of the first [`EARLY_STOP_AFTER`] to end, those that failed to connect.
    unreachable: AtomicU64,
    /// The first connection error seen, for the message.
    connect_error: Mutex<Option<String>>,
    /// Some request was answered 404.
    not_found: AtomicBool,
}

impl Verdict {
    /// A verdict for a run; `keep_going` turns the early stop off.
    pub fn new(keep_going: bool) -> Self {
        Self {
            keep_going,
            ..Self::default()
        }
    }

    /// Notes one request's end; true when the run should stop early now (once).
    pub fn record(
        &self,
        kind: Option<ErrorKind>,
        status: Option<u16>,
        error: Option<&str>,
    ) -> bool {
        let Some(kind) = kind else {
            self.ended.fetch_add(1, Ordering::SeqCst);
            self.ok.fetch_add(1, Ordering::SeqCst);
            return false;
        };
        if !kind.is_failure() {
            return false;
        }
        if status == Some(404) {
            self.not_found.store(true, Ordering::Relaxed);
        }
        let n = self.ended.fetch_add(1, Ordering::SeqCst) + 1;
        if !matches!(kind, ErrorKind::Connect | ErrorKind::ConnectTimeout) {
            return false;
        }
        if let Some(e) = error {
            let mut first = lock(&self.connect_error);
            first.get_or_insert_with(|| e.to_string());
        }
        if n > EARLY_STOP_AFTER {
            return false;
        }
        let unreachable = self.unreachable.fetch_add(1, Ordering::SeqCst) + 1;
        unreachable == EARLY_STOP_AFTER && self.ok.load(Ordering::SeqCst) == 0 && !self.keep_going
    }

    /// Why the run stopped early: its error, with the first connection error seen.
    pub fn early_stop(&self, uri: &str) -> Error {
        let first = lock(&self.connect_error);
        Error::EarlyStop {
            after: EARLY_STOP_AFTER,
            uri: uri.to_string(),
            first_error: first.clone().unwrap_or_else(|| "no connection".into()),
        }
    }

    /// True when some request was answered 404 (a wrong --url or --endpoint, usually).
    pub fn saw_not_found(&self) -> bool {
        self.not_found.load(Ordering::Relaxed)
    }

    /// `Err` when requests were sent and none succeeded.
    pub fn outcome(&self) -> Result<(), Error> {
        let ended = self.ended.load(Ordering::SeqCst);
        if ended == 0 || self.ok.load(Ordering::SeqCst) > 0 {
            return Ok(());
        }
        Err(Error::NoneSucceeded { ended })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_cli::{Ending, ToolError};

    #[test]
    fn the_run_stops_once_the_first_requests_all_fail_to_connect() {
        let v = Verdict::new(false);
        for i in 1..EARLY_STOP_AFTER {
            assert!(!v.record(
                Some(ErrorKind::Connect),
                None,
                Some(&format!("refused {i}"))
            ));
        }
        assert!(v.record(Some(ErrorKind::ConnectTimeout), None, None));
        assert!(!v.record(Some(ErrorKind::Connect), None, None), "only once");
        let stop = v.early_stop("http://h/v1/completions");
        assert!(stop.to_string().contains("refused 1"), "{stop}");
        assert_eq!(stop.ending(), Ending::Failure);
        let none = v.outcome().unwrap_err();
        assert_eq!(none.to_string(), "none of the 9 requests sent succeeded");
        assert_eq!(none.ending(), Ending::Failure);
    }

    #[test]
    fn one_success_or_another_failure_or_keep_going_prevents_it() {
        let v = Verdict::new(false);
        assert!(!v.record(None, Some(200), None));
        for _ in 0..20 {
            assert!(!v.record(Some(ErrorKind::Connect), None, None));
        }
        assert!(v.outcome().is_ok());
        let v = Verdict::new(false);
        assert!(!v.record(Some(ErrorKind::Http), Some(404), None));
        for _ in 0..20 {
            assert!(!v.record(Some(ErrorKind::Connect), None, None));
        }
        assert!(v.saw_not_found());
        let v = Verdict::new(true);
        for _ in 0..20 {
            assert!(!v.record(Some(ErrorKind::Connect), None, None));
        }
        let v = Verdict::new(false);
        assert!(!v.record(Some(ErrorKind::Cancelled), None, None));
        assert!(v.outcome().is_ok(), "nothing the server did");
    }
}
