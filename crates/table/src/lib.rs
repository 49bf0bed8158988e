//! `table`: turns `summary` records into the tables and charts results are published with.
//!
//! [`input`] reads the runs into a [`Report`] (whole summaries with their headers), [`field`]
//! names what a table shows, [`layout`] picks the layout the flags ask for ([`wide`], [`long`],
//! [`pivot`], [`top`]), each giving a [`grid::Grid`] of cells, [`export`] writes grids and charts
//! ([`chart`]) in each [`Format`], [`style`] holds the layouts of other tools (`--style vllm`),
//! [`vllm_file`] reads `vllm bench serve` result files as runs, and [`cli`] is the command line.

pub mod baseline;
pub mod chart;
pub mod cli;
pub mod colour;
pub mod export;
pub mod field;
pub mod grid;
pub mod grid_machine;
pub mod input;
pub mod labels;
pub mod layout;
pub mod llama_bench;
pub mod long;
pub mod machine;
pub mod member;
pub mod options;
pub mod order;
pub mod pivot;
pub mod report;
pub mod rows;
pub mod style;
pub mod top;
pub mod vllm_file;
pub mod wide;
pub mod workload;

pub use cli::main;
pub use export::{Exporter, Format};
pub use input::read_report;
pub use report::{Report, RunReport};
pub use rows::MetricTable;
pub use style::Style;

#[cfg(test)]
mod field_tests;
#[cfg(test)]
mod layout_tests;
#[cfg(test)]
mod llama_bench_tests;
#[cfg(test)]
mod machine_tests;
#[cfg(test)]
mod pivot_tests;
#[cfg(test)]
mod tests;
