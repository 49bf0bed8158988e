//! `reduce`: folds the events that `fire` writes into one `summary` record per run.
//!
//! Results first, then aggregates: [`run`] reads a run's records, checks their order with the
//! format's `RequestTracker`, and turns each request into a [`request::RequestResult`];
//! [`aggregate`] folds those results: the summary and every extra figure (per-request records,
//! goodput, windows, intervals, llama-benchy's and vLLM's figures). Across runs, [`sink`]
//! writes each run's summary, merges the parts of a sharded plan ([`shard`]) and writes the
//! group summaries of repeated runs ([`group`]); [`vllm_import`] reads `vllm bench serve`
//! results as runs. The accumulators: [`running`] (exact mergeable moments), [`stat`] (moments
//! plus an HDR histogram), [`sparse`] (a request's gaps by bucket, so a long answer costs
//! buckets, not tokens), [`exact`] (numpy's statistics over held samples). [`driver`] is the
//! library's entry point, taking a plain [`Config`]; [`cli`] is the command line that builds it. docs/metrics.md defines the metrics.

pub mod aggregate;
pub mod cli;
pub mod driver;
pub mod exact;
pub mod group;
pub mod request;
pub mod run;
pub mod running;
pub mod shard;
pub mod sink;
pub mod sparse;
pub mod stat;
pub mod vllm_import;

pub use aggregate::{
    llama_benchy_prompt_tokens, Aggregator, LlamaBenchyAggregator, LlamaBenchyOptions, RunReducer,
    RunSpan, SummaryAggregator, SummaryOptions,
};
pub use cli::main;
pub use driver::{reduce, Config};
pub use run::{fold_run, Emit, FoldOptions, RunEnd};
pub use sink::{default_label, RunsOptions};

#[cfg(test)]
mod tests;
