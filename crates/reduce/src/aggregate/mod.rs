//! Aggregators: each folds a run's [`RequestResult`]s (and, where it needs them, the raw `sent`
//! and `token` events) into one kind of output. [`SummaryAggregator`] builds the summary record;
//! every other aggregator adds its own fields to that record, or writes records of its own
//! while the run goes on, and [`RunReducer`] drives them together.

mod benchy;
pub mod outcomes;
mod reducer;
pub mod server_metrics;
mod summary;
pub mod telemetry;
pub mod timing;
pub mod vllm;

pub use benchy::{llama_benchy_prompt_tokens, LlamaBenchyAggregator, LlamaBenchyOptions};
pub use reducer::RunReducer;
pub use summary::{SummaryAggregator, SummaryOptions};

use crate::error::RequestError;
use crate::request::RequestResult;
pub use timing::span::RunSpan;
use tokenpipe_format::{Client, Record, Sent, ServerMetrics, Stall, Summary, Token};

/// Folds the results of one run.
pub trait Aggregator {
    /// Sees a `sent` record as it is read, before its request has a result. Only aggregators
    /// that follow the run in time (intervals, live views) need it.
    fn sent(&mut self, _sent: &Sent) {}

    /// Sees a `token` record as it is read, whatever becomes of its request.
    fn token(&mut self, _token: &Token) {}

    /// Adds one request's result, in the order requests ended. An error ends the reduction: the
    /// result holds what no run can (token totals past 2^64), or not what this aggregator needs.
    fn add(&mut self, result: &RequestResult) -> Result<(), RequestError>;

    /// True for aggregators that describe the run's clock (what was in flight, what streamed
    /// when) rather than a population of requests: they see every request, also those sent
    /// outside the measured window.
    fn sees_whole_run(&self) -> bool {
        false
    }

    /// Notes that `fire`'s output was blocked for a while (its stamps may be late then).
    fn stall(&mut self, _stall: &Stall) {}

    /// Takes `fire`'s account of itself (its `client` record, last in a run).
    fn client(&mut self, _client: &Client) {}

    /// Takes a scrape of the server's metrics (`fire --server-metrics`).
    fn server_metrics(&mut self, _scrape: &ServerMetrics) {}

    /// Moves records that are ready to be written now (per-request results, interval records)
    /// into `out`, in order. Called after every input record, so it must be cheap when empty.
    fn drain(&mut self, _out: &mut Vec<Record>) {}

    /// Called once at the end of the run: adds this aggregator's fields to the run's summary
    /// and moves any last records into `out`. `span` bounds the run in time, kept once for all.
    fn finish(&mut self, _span: &RunSpan, _summary: &mut Summary, _out: &mut Vec<Record>) {}
}
