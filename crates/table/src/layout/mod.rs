//! This tool's own layouts (`--style default`): what a table or chart of the report shows.
//! Each is one file with a `lay_out(report, opts)` that gives a [`crate::laid_out::LaidOut`]
//! (grids for people, the same figures for machines, plots, notes for stderr) and knows
//! nothing of the format it will be written in: [`wide`] (runs as columns), [`long`] (runs as
//! rows), [`pivot`] (`--rows` by `--cols`), [`top`] (`--top` rankings), [`plots`] (the bar and
//! line charts of `--format mermaid`) and [`charts`] (the drawn charts of SVG and HTML). The
//! machine table of every member of every run is [`crate::machine::MachineTable::from_report`].
//! Which layout a command line asks for is decided in [`crate::render`].

use crate::baseline::Baseline;
use crate::error::Error;
use crate::options::Options;
use crate::order::ordered_runs;
use crate::report::Report;

pub(crate) mod charts;
pub(crate) mod long;
pub(crate) mod parts;
pub(crate) mod pivot;
pub(crate) mod plots;
pub(crate) mod top;
pub(crate) mod wide;

/// The runs a table of runs (as columns or as rows) shows: in order, with their labels and the
/// baseline they are compared with.
struct Runs {
    /// The shown runs, as indices into `report.runs`, in the order of `--sort` or the default.
    order: Vec<usize>,
    /// Every run's column label, indexed by run.
    labels: Vec<String>,
    /// `--baseline`: the runs that ratios are taken against.
    baseline: Option<Baseline>,
}

impl Runs {
    /// The runs `opts` asks for (`--sort`, `--baseline`); an unknown sort field or baseline
    /// label is bad input.
    fn of(report: &Report, opts: &Options) -> Result<Self, Error> {
        let labels = crate::labels::column_labels(report);
        let order = ordered_runs(report, &opts.sort, &labels)?;
        let baseline = opts
            .baseline
            .as_deref()
            .map(|label| Baseline::find(report, &order, &labels, label))
            .transpose()?;
        Ok(Self {
            order,
            labels,
            baseline,
        })
    }

    /// One line for stderr per run whose ratios are `-`.
    fn notes(&self, report: &Report) -> Vec<String> {
        self.baseline
            .as_ref()
            .map(|b| b.notes(report, &self.order, &self.labels))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
