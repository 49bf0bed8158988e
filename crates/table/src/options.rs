//! What the layout flags ask for, gathered in one value that the layouts read: which runs go
//! where (`--layout`, `--columns`, `--sort`), pivots and rankings (`--rows`, `--cols`, `--cell`,
//! `--top`), ratios (`--baseline`), how spreads read (`--spread`) and which chart an SVG shows
//! (`--chart`), and the sections of vLLM's block (`--percentile-metrics`,
//! `--metric-percentiles`). Kept apart from clap so that the library can be called without a command line.

use crate::chart::ChartKind;
use crate::error::Error;
use crate::grid::SpreadMode;

/// Whether runs are columns or rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// Wide while it stays readable, long when `--columns` is given or there are many runs.
    #[default]
    Auto,
    /// One column per run, one row per metric (`vllm bench serve`'s block turned sideways).
    Wide,
    /// One row per run, one column per field.
    Long,
}

impl Layout {
    /// The layout's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Auto => "auto",
            Layout::Wide => "wide",
            Layout::Long => "long",
        }
    }
}

/// What `--by` orders the parts of merged runs by (docs/table.md, "Parts of a merged run").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartsBy {
    /// The host, then the run and the shard: what each machine did.
    Host,
    /// The run, then the shard: each plan's parts in order.
    Shard,
}

impl PartsBy {
    /// The value on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PartsBy::Host => "host",
            PartsBy::Shard => "shard",
        }
    }
}

/// The layout flags.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Options {
    /// `--layout`.
    pub layout: Layout,
    /// `--columns`: field names, in order (empty: the layout's own choice).
    pub columns: Vec<String>,
    /// `--sort`: field names, each optionally `:desc` (empty: natural order).
    pub sort: Vec<String>,
    /// `--spread`.
    pub spread: SpreadMode,
    /// `--baseline`: the label (or pivot column) the ratios are taken against.
    pub baseline: Option<String>,
    /// `--rows`: the field whose values become the pivot's rows.
    pub rows: Option<String>,
    /// `--cols`: the field whose values become the pivot's columns.
    pub cols: Option<String>,
    /// `--cell`: the field shown in each pivot cell (and charted by mermaid).
    pub cell: Option<String>,
    /// `--top`: the best N rows per pivot column, as a ranking.
    pub top: Option<usize>,
    /// `--chart`: the chart of `--format svg` (`None`: the one the runs suit).
    pub chart: Option<ChartKind>,
    /// `--only-comparable`: leave out the runs that are not comparable (docs/verdict.md), each
    /// named on stderr with its reason.
    pub only_comparable: bool,
    /// `--percentile-metrics`: the latency sections of `--style vllm`, by vLLM's metric names
    /// (`None`: vLLM's default, `ttft,tpot,itl`).
    pub percentile_metrics: Option<Vec<String>>,
    /// `--metric-percentiles`: the `P…` lines of each section of `--style vllm`, in the order
    /// given (`None`: vLLM's default, `99`).
    pub metric_percentiles: Option<Vec<f64>>,
    /// `--by`: a row per part of each merged run, ordered by host or shard, instead of a row or
    /// column per run.
    pub by: Option<PartsBy>,
}

impl Options {
    /// Whether a pivot or ranking was asked for.
    pub fn is_pivot(&self) -> bool {
        self.rows.is_some() || self.cols.is_some() || self.top.is_some()
    }

    /// The flags of `--style vllm`'s sections given, by name: what every other style refuses.
    pub fn vllm_sections_given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        if self.percentile_metrics.is_some() {
            given.push("--percentile-metrics");
        }
        if self.metric_percentiles.is_some() {
            given.push("--metric-percentiles");
        }
        given
    }

    /// The layout flags given, by name: what a fixed layout (another tool's style, a chart)
    /// must refuse rather than ignore. `--chart` is not among them: it is refused on its own.
    pub fn given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        if self.layout != Layout::Auto {
            given.push("--layout");
        }
        for (set, name) in [
            (!self.columns.is_empty(), "--columns"),
            (!self.sort.is_empty(), "--sort"),
            (self.baseline.is_some(), "--baseline"),
            (self.rows.is_some(), "--rows"),
            (self.cols.is_some(), "--cols"),
            (self.cell.is_some(), "--cell"),
            (self.top.is_some(), "--top"),
            (self.by.is_some(), "--by"),
        ] {
            if set {
                given.push(name);
            }
        }
        given
    }

    /// Refuses the layout flags given (bad input, exit 2) for `what`, which has a layout of its
    /// own.
    pub fn refuse_for(&self, what: &str) -> Result<(), Error> {
        let flags = self.given();
        if flags.is_empty() {
            return Ok(());
        }
        Err(Error::FixedLayout {
            flags,
            what: what.to_string(),
        })
    }
}
