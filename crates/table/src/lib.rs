//! `table`: turns `summary` records into a table for people, one column per run.
//!
//! [`input`] reads the runs into a [`Report`] (whole summaries with their headers), [`rows`]
//! decides which metrics show and how a number reads, [`export`] holds one [`Exporter`] per
//! [`Format`], [`style`] the layouts of other tools (`--style vllm`), [`vllm_file`] reads
//! `vllm bench serve` result files as runs, and [`cli`] is the command line.

pub mod chart;
pub mod cli;
pub mod export;
pub mod grid;
pub mod input;
pub mod llama_bench;
pub mod machine;
pub mod member;
pub mod report;
pub mod rows;
pub mod style;
pub mod vllm_file;

pub use cli::main;
pub use export::{Exporter, Format};
pub use input::read_report;
pub use report::{Report, RunReport};
pub use rows::MetricTable;
pub use style::Style;

#[cfg(test)]
mod llama_bench_tests;
#[cfg(test)]
mod machine_tests;
#[cfg(test)]
mod tests;
