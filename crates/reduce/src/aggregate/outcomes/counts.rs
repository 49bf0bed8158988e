//! The run's requests by outcome: how many it held, sent, and lost to each error kind, so
//! that a run stopped early is told apart from a server that fails.

use super::error_label;
use crate::aggregate::{Aggregator, RunSpan};
use crate::error::RequestError;
use crate::request::RequestResult;
use std::collections::BTreeMap;
use tokenpipe_format::{ErrorKind, Record, Summary};

/// Counts every request once, at its end (its `done`, or the end of its run).
#[derive(Debug, Default)]
pub struct Counts {
    scheduled: u64,
    sent: u64,
    failed_server: u64,
    errors: BTreeMap<String, u64>,
}

impl Aggregator for Counts {
    fn add(&mut self, r: &RequestResult) -> Result<(), RequestError> {
        self.scheduled += 1;
        if r.sent_ns.is_some() {
            self.sent += 1;
        }
        if let Some(label) = error_label(r) {
            *self.errors.entry(label.to_string()).or_insert(0) += 1;
            if caused_by_server(r) {
                self.failed_server += 1;
            }
        }
        Ok(())
    }

    fn finish(&mut self, _span: &RunSpan, summary: &mut Summary, _out: &mut Vec<Record>) {
        summary.requests_scheduled = Some(self.scheduled);
        summary.requests_sent = Some(self.sent);
        summary.requests_failed_server = Some(self.failed_server);
        summary.errors = std::mem::take(&mut self.errors);
    }
}

/// A failed request the server or the network is to blame for: a kind that `is_failure()`, or
/// one this build does not know, or none given; not a request the run cancelled, never sent,
/// or left unfinished.
pub(super) fn caused_by_server(r: &RequestResult) -> bool {
    match (&r.error_kind, r.done_ns) {
        (Some(kind), _) => kind.known().is_none_or(ErrorKind::is_failure),
        (None, None) => false,
        (None, Some(_)) => true,
    }
}
