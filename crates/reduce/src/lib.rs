//! `reduce`: folds the events that `fire` writes into one `summary` record per run.
//!
//! The pieces, each with one job: [`stat`] accumulates one metric (Welford moments, an HDR
//! histogram, the max); [`run`] follows each
//! request from `sent` to `done` and checks the stream's rules; [`summary`] turns a run's
//! accumulators into the record; [`cli`] is the command line. docs/metrics.md defines the
//! metrics.

pub mod cli;
pub mod run;
pub mod stat;
pub mod summary;

pub use cli::{main, reduce_inputs};
pub use run::{reduce_run, Reducer, RunOutcome, RunStats};
pub use summary::{default_label, summarize};

#[cfg(test)]
mod tests;
