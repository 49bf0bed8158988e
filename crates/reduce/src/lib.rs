//! `reduce`: folds the events that `fire` writes into one `summary` record per run.
//!
//! Results first, then aggregates: [`run`] reads a run's records, checks their order with the
//! format's `RequestTracker` and their values with [`plausible`] (no time past the run's end by
//! more than the run, no count past a billion tokens a second), and turns each request into a
//! [`request::RequestResult`];
//! [`aggregate`] folds those results: the summary and every extra figure (per-request records,
//! goodput, windows, intervals, llama-benchy's and vLLM's figures). Across runs, [`sink`]
//! writes each run's summary, merges the parts of a sharded plan ([`shard`]) and writes the
//! group summaries of repeated runs ([`group`]); [`vllm_import`] reads `vllm bench serve`
//! results as runs. The accumulators: [`running`] (exact mergeable moments), [`stat`] (moments
//! plus an HDR histogram), [`sparse`] (a request's gaps by bucket, so a long answer costs
//! buckets, not tokens), [`exact`] (numpy's statistics over held samples). [`driver`] is the
//! library's entry point, taking a plain [`Config`]; [`cli`] is the command line that builds it.
//! What can go wrong is [`Error`] (module `error`), whose `ending` is the kind of exit status.
//!
//! The modules are the crate's own; the public API is what is re-exported here: [`reduce`] with
//! its [`Config`] and the options it is made of, [`RunReducer`] with the [`Aggregator`] seam
//! for a caller that folds runs itself ([`fold_run`]), and the errors. docs/metrics.md defines
//! the metrics.

pub(crate) mod aggregate;
pub(crate) mod cli;
pub(crate) mod driver;
pub(crate) mod error;
pub(crate) mod exact;
pub(crate) mod group;
pub(crate) mod plausible;
pub(crate) mod request;
pub(crate) mod run;
pub(crate) mod running;
pub(crate) mod shard;
pub(crate) mod sink;
pub(crate) mod sparse;
pub(crate) mod stat;
pub(crate) mod vllm_import;

pub use aggregate::outcomes::slo::{SloBound, SloMetric};
pub use aggregate::outcomes::OutcomeOptions;
pub use aggregate::timing::window::WindowChoice;
pub use aggregate::vllm::VllmOptions;
pub use aggregate::{
    llama_benchy_prompt_tokens, Aggregator, LlamaBenchyAggregator, LlamaBenchyOptions, RunReducer,
    RunSpan, SummaryAggregator, SummaryOptions,
};
pub use cli::{main, parse_meta_pair, parse_slo_bound};
pub use driver::{reduce, Config};
pub use error::{Error, Implausible, ImportError, RequestError, ShardError, WindowError};
pub use group::summary_interval;
pub use request::RequestResult;
pub use run::{fold_run, Emit, FoldOptions, RunEnd};
pub use sink::{default_label, RunsOptions};
pub use vllm_import::import as import_vllm;

#[cfg(test)]
mod tests;
