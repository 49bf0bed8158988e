//! `table`: turns `summary` records into the tables and charts results are published with.
//!
//! The way through, and the modules in order:
//! - reading: [`input`] reads the runs (and, by [`vllm_file`], vLLM result files) into a
//!   [`Report`] of whole summaries with their headers; [`labels`] names the runs and
//!   [`workload`] describes what each asked of the server; [`verdict`] says whether each is
//!   comparable (and leaves out those that are not, under `--only-comparable`);
//! - naming and ordering what is shown: [`field`] resolves field names (`ttft.p99`) against the
//!   runs, [`member`] reads summary members, [`order`] orders runs, [`baseline`] pairs runs with
//!   their baseline;
//! - laying out (what is shown): [`layout`] holds this tool's layouts (runs as columns or rows,
//!   pivots, rankings, the plots of one field, which charts to draw), [`style`] other tools'
//!   (vLLM's result blocks, llama-benchy's tables); each gives a [`laid_out::LaidOut`] of
//!   [`grid::Grid`]s (with [`rows`] for the metric rows of runs as columns) and a
//!   [`machine::MachineTable`];
//! - writing (how): [`export`] has one renderer per format, and [`chart`] draws the SVG charts;
//! - the edge: [`render`] lets the flags ([`options`], `--style`, `--format`) choose one layout
//!   and one renderer, and [`cli`] is the command line ([`colour`] on a terminal).

pub(crate) mod baseline;
pub(crate) mod chart;
pub(crate) mod cli;
pub(crate) mod colour;
pub(crate) mod error;
pub(crate) mod export;
pub(crate) mod field;
pub(crate) mod grid;
pub(crate) mod input;
pub(crate) mod labels;
pub(crate) mod laid_out;
pub(crate) mod layout;
pub(crate) mod machine;
pub(crate) mod member;
pub(crate) mod options;
pub(crate) mod order;
pub(crate) mod render;
pub(crate) mod report;
pub(crate) mod rows;
pub(crate) mod style;
pub(crate) mod verdict;
pub(crate) mod vllm_file;
pub(crate) mod workload;

pub use chart::{ChartError, ChartKind};
pub use cli::main;
pub use error::Error;
pub use export::Format;
pub use grid::SpreadMode;
pub use input::read_report;
pub use options::{Layout, Options, PartsBy};
pub use render::{Rendered, Style, Svg};
pub use report::{Report, RunReport};

#[cfg(test)]
mod tests;
