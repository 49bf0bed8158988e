//! A laid-out table before it is written: headings, cells that keep their numbers (and, for
//! group summaries, their spread over runs), column alignment, a caption and notes, or another
//! tool's preformatted text. Every layout (metrics by run, runs by metric, pivots, rankings,
//! other tools' tables) produces [`Grid`]s; every text format (terminal, Markdown, HTML) writes
//! any grid, so a new layout works in every format at once. How a number reads ([`Kind`],
//! [`SpreadMode`]) is decided here, once for every format.

use tokenpipe_format::number::{fixed, shortest, FIXED_LIMIT};
use tokenpipe_format::vocab::ValueKind;

/// How much of a group summary's spread a cell shows (`--spread`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpreadMode {
    /// `mean ± sd (CV %)`: the mean over runs, its sample standard deviation and coefficient of
    /// variation.
    #[default]
    Cv,
    /// `mean ± sd`, as the arena and hyperfine print it.
    Sd,
    /// `mean [lo, hi]`: the 95 % Student-t interval of the mean over runs.
    Ci,
    /// The mean alone.
    None,
}

impl SpreadMode {
    /// The mode's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SpreadMode::Cv => "cv",
            SpreadMode::Sd => "sd",
            SpreadMode::Ci => "ci",
            SpreadMode::None => "none",
        }
    }
}

/// How a number is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A count, written as a whole number.
    Count,
    /// A measurement, written with two decimals.
    Value,
    /// A yes or no, held as 1 or 0.
    YesNo,
    /// A ratio against a baseline, written `0.85x`.
    Ratio,
}

impl From<ValueKind> for Kind {
    /// How a setting's or a summary figure's values are written: counts as counts, the rest as
    /// measurements.
    fn from(kind: ValueKind) -> Kind {
        match kind {
            ValueKind::Count => Kind::Count,
            ValueKind::Number | ValueKind::Text => Kind::Value,
        }
    }
}

/// Written where a run has no value for a metric.
pub const MISSING: &str = "-";

/// Writes one value as people read it: counts whole, measurements with two decimals, `-` for
/// none. A count that is not whole (the mean of a count over repeated runs: 3.5 requests) keeps
/// its decimals, so that it never reads as a count it is not (`4 ± 0.71`). Past a thousand
/// trillion, numbers are written in scientific notation (`1.00e308`), never as 309 digits.
pub fn format_value(value: Option<f64>, kind: Kind) -> String {
    match (value, kind) {
        (None, _) => MISSING.to_string(),
        (Some(v), Kind::Count) if v.fract() != 0.0 => fixed(v, 2),
        (Some(v), Kind::Count) if v.abs() >= FIXED_LIMIT => shortest(v),
        (Some(v), Kind::Count) => fixed(v, 0),
        (Some(v), Kind::Value) => fixed(v, 2),
        (Some(v), Kind::YesNo) => if v != 0.0 { "yes" } else { "no" }.to_string(),
        (Some(v), Kind::Ratio) => format!("{}x", fixed(v, 2)),
    }
}

/// How one figure varied over the repeated runs a group summary pools (its `across_runs`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Runs that had the figure.
    pub n: u64,
    /// Sample standard deviation over the runs.
    pub sd: f64,
    /// `100 · sd / mean`; `None` when the mean is 0.
    pub cv_pct: Option<f64>,
    /// 95 % interval of the mean, where the source has one.
    pub ci95: Option<[f64; 2]>,
    /// Not over runs: llama-benchy's own population standard deviation over the batches or
    /// requests of one run (its `± stddev`), so the note under the table says so.
    pub within_run: bool,
}

/// A number in a cell: the value, how it is written, and its spread when it is a mean over runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Num {
    /// The value (for a group summary, the mean over its runs).
    pub value: f64,
    /// Whole number, two decimals, yes/no.
    pub kind: Kind,
    /// Spread over runs, for cells of group summaries.
    pub spread: Option<Spread>,
}

impl Num {
    /// The spread a cell shows: none for a yes/no, nor for a count that never varied (`12`,
    /// not `12 ± 0.00 (0.0%)`).
    pub fn shown_spread(&self) -> Option<Spread> {
        self.spread
            .filter(|s| self.kind != Kind::YesNo && !(self.kind == Kind::Count && s.sd == 0.0))
    }

    /// A plain measurement with two decimals (the tests' cells).
    #[cfg(test)]
    pub fn value(value: f64) -> Self {
        Self {
            value,
            kind: Kind::Value,
            spread: None,
        }
    }
}

/// One cell of a grid.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Words: a label, a metric name, a metadata value.
    Text(String),
    /// A number, written according to its kind and the spread mode.
    Num(Num),
    /// No value for this run (`-`).
    Missing,
    /// A run's verdict (docs/verdict.md): `yes`, or `no: ` and what made it so in a few words,
    /// for people; true or false for machines.
    Verdict {
        /// Whether the run is comparable.
        comparable: bool,
        /// The words people read.
        text: String,
    },
    /// A cell with a mark after it for people (`93.93 †`: a run that is not comparable); the
    /// cell alone for machines.
    Marked(Box<Cell>, &'static str),
}

impl Cell {
    /// A text cell.
    pub fn text(s: impl Into<String>) -> Self {
        Cell::Text(s.into())
    }

    /// The number in the cell, if any.
    pub fn number(&self) -> Option<f64> {
        match self {
            Cell::Num(n) => Some(n.value),
            Cell::Marked(cell, _) => cell.number(),
            _ => None,
        }
    }

    /// The cell as people read it.
    pub fn render(&self, mode: SpreadMode) -> String {
        match self {
            Cell::Text(s) | Cell::Verdict { text: s, .. } => s.clone(),
            Cell::Missing => MISSING.to_string(),
            Cell::Num(n) => render_num(n, mode),
            Cell::Marked(cell, mark) => format!("{} {mark}", cell.render(mode)),
        }
    }
}

/// Writes a number with its spread: `57.22 ± 0.15 (0.3%)`, `57.22 [56.9, 57.5]`.
fn render_num(n: &Num, mode: SpreadMode) -> String {
    let value = format_value(Some(n.value), n.kind);
    let Some(spread) = n.shown_spread() else {
        return value;
    };
    let f = |v: f64| format_value(Some(v), Kind::Value);
    match mode {
        SpreadMode::None => value,
        SpreadMode::Sd => format!("{value} ± {}", f(spread.sd)),
        SpreadMode::Cv => match spread.cv_pct {
            Some(cv) => format!("{value} ± {} ({}%)", f(spread.sd), fixed(cv, 1)),
            None => format!("{value} ± {}", f(spread.sd)),
        },
        SpreadMode::Ci => match spread.ci95 {
            Some([lo, hi]) => format!("{value} [{}, {}]", f(lo), f(hi)),
            None => format!("{value} ± {}", f(spread.sd)),
        },
    }
}

/// How a column lines up: text left, numbers right (Markdown `---:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Words.
    Left,
    /// Numbers.
    Right,
}

/// One table, laid out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Grid {
    /// A line above the table saying what it shows (`Top 3 by output throughput per profile`).
    pub caption: Option<String>,
    /// Column headings, units in brackets (`TTFT p99 [ms]`).
    pub headings: Vec<String>,
    /// Alignment per column; columns past its end align left.
    pub align: Vec<Align>,
    /// The rows, each as long as `headings`.
    pub rows: Vec<Vec<Cell>>,
    /// Lines under the table (what `±` means, runs left out).
    pub notes: Vec<String>,
    /// Whether a format that can break a heading over lines puts its unit on a second line
    /// (`TTFT p99` over `[ms]`): runs as rows have many columns, which would not fit a terminal
    /// otherwise.
    pub unit_lines: bool,
    /// Text written as it is, the same in every format, in place of the table: another tool's
    /// fixed layout (`--style vllm`'s result blocks).
    pub preformatted: Option<String>,
}

impl Grid {
    /// The alignment of column `i`.
    pub fn align_of(&self, i: usize) -> Align {
        self.align.get(i).copied().unwrap_or(Align::Left)
    }

    /// The body as text, row by row, as `mode` writes spreads.
    pub fn text_rows(&self, mode: SpreadMode) -> Vec<Vec<String>> {
        self.rows
            .iter()
            .map(|r| r.iter().map(|c| c.render(mode)).collect())
            .collect()
    }

    /// Whether any cell shows a spread (over runs, or llama-benchy's within a run).
    #[cfg(test)]
    pub fn has_spread(&self) -> bool {
        self.shows_spread(false) || self.shows_spread(true)
    }

    /// Whether any cell shows a spread of the kind `within_run` says.
    fn shows_spread(&self, within_run: bool) -> bool {
        self.rows.iter().flatten().any(|c| {
            matches!(c, Cell::Num(n) if n.shown_spread().is_some_and(|s| s.within_run == within_run))
        })
    }

    /// The notes that say what the spreads shown mean, as `mode` writes them: one for means
    /// over repeated runs, one for llama-benchy's figures.
    pub fn spread_notes(&self, mode: SpreadMode) -> Vec<String> {
        let mut notes = Vec::new();
        if mode == SpreadMode::None {
            return notes;
        }
        if self.shows_spread(false) {
            notes.extend(spread_note(mode).map(String::from));
        }
        if self.shows_spread(true) {
            notes.push(BENCHY_SPREAD_NOTE.to_string());
        }
        notes
    }
}

/// What `±` means on llama-benchy's figures (`tg_tps`, `pp_tps`, `ttfr`).
pub const BENCHY_SPREAD_NOTE: &str = "llama-benchy's figures: mean ± population standard \
     deviation over the batches (or requests) of one run, as llama-benchy prints them.";

/// The note that says what a spread in the cells means, for `mode`.
pub fn spread_note(mode: SpreadMode) -> Option<&'static str> {
    match mode {
        SpreadMode::Cv => Some(
            "Repeated runs: mean over runs ± sample standard deviation (coefficient of variation).",
        ),
        SpreadMode::Sd => Some("Repeated runs: mean over runs ± sample standard deviation."),
        SpreadMode::Ci => Some("Repeated runs: mean over runs [95 % confidence interval]."),
        SpreadMode::None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread_cell() -> Cell {
        Cell::Num(Num {
            value: 57.2249,
            kind: Kind::Value,
            spread: Some(Spread {
                n: 3,
                sd: 0.1512,
                cv_pct: Some(0.2642),
                ci95: Some([56.849, 57.600]),
                within_run: false,
            }),
        })
    }

    #[test]
    fn spreads_read_as_each_mode_says() {
        let c = spread_cell();
        assert_eq!(c.render(SpreadMode::Cv), "57.22 ± 0.15 (0.3%)");
        assert_eq!(c.render(SpreadMode::Sd), "57.22 ± 0.15");
        assert_eq!(c.render(SpreadMode::Ci), "57.22 [56.85, 57.60]");
        assert_eq!(c.render(SpreadMode::None), "57.22");
        assert_eq!(Cell::Missing.render(SpreadMode::Cv), "-");
        assert_eq!(
            Cell::Num(Num::value(3.0)).render(SpreadMode::Cv),
            "3.00",
            "a single run has no spread"
        );
        let steady_count = Cell::Num(Num {
            value: 12.0,
            kind: Kind::Count,
            spread: Some(Spread {
                n: 3,
                sd: 0.0,
                cv_pct: Some(0.0),
                ci95: Some([12.0, 12.0]),
                within_run: false,
            }),
        });
        assert_eq!(steady_count.render(SpreadMode::Cv), "12");
    }

    #[test]
    fn formats_values() {
        assert_eq!(format_value(None, Kind::Value), "-");
        assert_eq!(format_value(Some(12.0), Kind::Count), "12");
        assert_eq!(format_value(Some(3.5), Kind::Count), "3.50");
        let mean_count = Num {
            value: 3.5,
            kind: Kind::Count,
            spread: Some(Spread {
                n: 2,
                sd: 0.71,
                cv_pct: Some(20.2),
                ci95: None,
                within_run: false,
            }),
        };
        assert_eq!(render_num(&mean_count, SpreadMode::Sd), "3.50 ± 0.71");
        assert_eq!(format_value(Some(1.005), Kind::Value), "1.00");
        assert_eq!(format_value(Some(2623.256), Kind::Value), "2623.26");
        assert_eq!(format_value(Some(1.0), Kind::YesNo), "yes");
        assert_eq!(format_value(Some(0.0), Kind::YesNo), "no");
    }

    #[test]
    fn extreme_values_are_written_in_a_few_characters() {
        assert_eq!(format_value(Some(1e308), Kind::Value), "1.00e308");
        assert_eq!(format_value(Some(1e308), Kind::Ratio), "1.00e308x");
        assert_eq!(format_value(Some(5e-324), Kind::Value), "0.00");
        // A count keeps every digit a float holds, never a rounded 2e19.
        let max = u64::MAX as f64;
        assert_eq!(
            format_value(Some(max), Kind::Count),
            "1.8446744073709552e19"
        );
        assert_eq!(
            format_value(Some(999_999_999_999_999.0), Kind::Count),
            "999999999999999"
        );
        let huge = Num {
            value: 1e300,
            kind: Kind::Value,
            spread: Some(Spread {
                n: 2,
                sd: 1e299,
                cv_pct: Some(1e20),
                ci95: Some([-1e301, 1e301]),
                within_run: false,
            }),
        };
        assert_eq!(
            render_num(&huge, SpreadMode::Cv),
            "1.00e300 ± 1.00e299 (1.0e20%)"
        );
        assert_eq!(
            render_num(&huge, SpreadMode::Ci),
            "1.00e300 [-1.00e301, 1.00e301]"
        );
    }

    #[test]
    fn a_grid_knows_when_it_has_spread() {
        let mut g = Grid {
            headings: vec!["a".into()],
            rows: vec![vec![Cell::Num(Num::value(1.0))]],
            ..Grid::default()
        };
        assert!(!g.has_spread());
        g.rows.push(vec![spread_cell()]);
        assert!(g.has_spread());
        assert_eq!(g.align_of(5), Align::Left);
    }
}
