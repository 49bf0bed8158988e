//! `table`: turns `summary` records into a table for people, one column per run.
//!
//! [`input`] collects the summaries, [`rows`] decides which metrics show and how a number reads,
//! [`render`] lays the table out in one of the [`Format`]s, and [`cli`] is the command line.

pub mod cli;
pub mod input;
pub mod render;
pub mod rows;

pub use cli::main;
pub use input::read_summaries;
pub use render::Format;
pub use rows::MetricTable;

#[cfg(test)]
mod tests;
