//! Goodput: the requests that were ok and met every SLO bound, per second of the run and as a
//! share of the requests the server answered (ok, or failed by the server or the network): the
//! requests the run itself cancelled, never sent or left unfinished are not the server's to serve
//! well, so a stopped run's share is not dragged down by its own end.

use super::slo::SloBound;
use crate::aggregate::{Aggregator, RunSpan};
use crate::error::RequestError;
use crate::request::RequestResult;
use tokenpipe_format::{Record, Summary};

/// Counts the good requests of a run against `bounds`.
#[derive(Debug)]
pub struct Goodput {
    bounds: Vec<SloBound>,
    good: u64,
    /// Requests the server answered: ok, or failed by the server or the network.
    answered: u64,
}

impl Goodput {
    /// A count against `bounds` (at least one).
    pub fn new(bounds: Vec<SloBound>) -> Self {
        Goodput {
            bounds,
            good: 0,
            answered: 0,
        }
    }

    /// Whether `r` is good: ok, and within every bound.
    pub fn is_good(&self, r: &RequestResult) -> bool {
        r.ok && self.bounds.iter().all(|b| b.met_by(r))
    }
}

impl Aggregator for Goodput {
    fn add(&mut self, r: &RequestResult) -> Result<(), RequestError> {
        if r.ok || super::counts::caused_by_server(r) {
            self.answered += 1;
        }
        if self.is_good(r) {
            self.good += 1;
        }
        Ok(())
    }

    fn finish(&mut self, _span: &RunSpan, summary: &mut Summary, _out: &mut Vec<Record>) {
        summary.slo = self
            .bounds
            .iter()
            .map(|b| (b.metric.name().to_string(), b.bound_ns / 1e6))
            .collect();
        summary.good_requests = Some(self.good);
        // The same duration, and the same 0 for a run without one, as request_throughput_per_s.
        summary.goodput_per_s = Some(if summary.duration_s > 0.0 {
            self.good as f64 / summary.duration_s
        } else {
            0.0
        });
        summary.good_fraction =
            (self.answered > 0).then(|| self.good as f64 / self.answered as f64);
    }
}
