//! Aggregators: each folds a run's [`RequestResult`]s (and its `stall` records) into one kind
//! of output. The summary is the one today; vLLM's result block, time windows, goodput against
//! SLOs and groups by session or tag are the next, each as one more file here.

mod summary;

pub use summary::{SummaryAggregator, SummaryOptions};

use crate::request::RequestResult;
use tokenpipe_format::{Client, Stall};

/// Folds the results of one run.
pub trait Aggregator {
    /// Adds one request's result, in the order requests ended.
    fn add(&mut self, result: &RequestResult) -> Result<(), String>;

    /// Notes that `fire`'s output was blocked for a while (its stamps may be late then).
    fn stall(&mut self, _stall: &Stall) {}

    /// Takes `fire`'s account of itself (its `client` record, last in a run).
    fn client(&mut self, _client: &Client) {}
}
