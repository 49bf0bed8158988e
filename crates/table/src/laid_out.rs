//! What a layout hands a renderer: the report laid out, before it is written. Layouts
//! ([`crate::layout`], [`crate::style`]) fill in the part their renderer reads; renderers
//! ([`crate::export`]) read it and nothing else of the flags, so neither side knows the other.

use crate::chart::ChartKind;
use crate::grid::{Grid, SpreadMode};
use crate::machine::MachineTable;

/// One layout of the report, ready to be written.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct LaidOut {
    /// Tables for people (terminal, Markdown, HTML), in order: one for this tool's layouts, two
    /// for llama-benchy's, one preformatted block for vLLM's.
    pub grids: Vec<Grid>,
    /// The same figures for machines (CSV, JSON): named columns of raw values.
    pub machine: MachineTable,
    /// Bar and line charts of one field (Mermaid).
    pub plots: Vec<Plot>,
    /// Charts drawn from the report's summaries (SVG: one; HTML: every one with data).
    pub charts: Vec<ChartKind>,
    /// How the cells' spreads read (`--spread`).
    pub spread: SpreadMode,
    /// Lines for stderr: what was left out, and why.
    pub notes: Vec<String>,
}

impl LaidOut {
    /// One table for people and its figures for machines, with notes for stderr.
    pub fn table(
        grid: Grid,
        machine: MachineTable,
        spread: SpreadMode,
        notes: Vec<String>,
    ) -> Self {
        Self {
            grids: vec![grid],
            machine,
            spread,
            notes,
            ..Self::default()
        }
    }
}

/// How a series of a [`Plot`] is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    /// One bar per x value.
    Bar,
    /// A line through the x values.
    Line,
}

/// One bar or line chart of one field, before it is written: categories on the x axis, one or
/// more series of values over them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plot {
    /// What the chart shows, with which way is better.
    pub title: String,
    /// The x-axis title (line charts: the load setting).
    pub x_title: Option<String>,
    /// The categories, in order.
    pub x: Vec<String>,
    /// The y-axis title: the field's unit, else its heading.
    pub y_title: String,
    /// (mark, name, one value per category).
    pub series: Vec<(Mark, String, Vec<f64>)>,
}
