//! `--baseline LABEL`: figures as ratios against one run. Each run is compared with the
//! baseline run of the same workload (equal on every workload setting both runs have: load,
//! lengths, prompts), a baseline run with itself (`1.00x`); a run with no such baseline run, or
//! with several, gets `-` and a note on stderr.

use crate::error::Error;
use crate::grid::Kind;
use crate::grid::{Cell, Num};
use crate::report::Report;
use crate::workload::setting_text;
use tokenpipe_format::vocab::{self, Role};

/// `value / base` as a ratio cell (`0.85x`); `-` when the base is zero or either is not finite.
pub fn ratio(value: f64, base: f64) -> Cell {
    let r = value / base;
    if base == 0.0 || !r.is_finite() {
        return Cell::Missing;
    }
    Cell::Num(Num {
        value: r,
        kind: Kind::Ratio,
        spread: None,
    })
}

/// The ratio of two cells: the first's number over the second's, `-` when either has none or is
/// a yes/no.
pub fn ratio_cell(value: &Cell, base: &Cell) -> Cell {
    let yes_no = |c: &Cell| matches!(c, Cell::Num(n) if n.kind == Kind::YesNo);
    if yes_no(value) || yes_no(base) {
        return Cell::Missing;
    }
    match (value.number(), base.number()) {
        (Some(v), Some(b)) => ratio(v, b),
        _ => Cell::Missing,
    }
}

/// The baseline runs of a table.
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    /// The label asked for.
    pub label: String,
    /// Indices (into `report.runs`) of the shown runs with that label.
    runs: Vec<usize>,
}

/// Whether runs `a` and `b` ran the same workload: equal on every workload setting that both
/// have. A setting only one of them has (a vLLM result file names no lengths; a closed loop has
/// no rate) does not tell them apart.
pub fn same_workload(report: &Report, a: usize, b: usize) -> bool {
    let setting = |i: usize, key: &str| report.runs[i].param(key).map(setting_text);
    vocab::settings_with(&[Role::Load, Role::Workload]).all(|s| {
        match (setting(a, s.key), setting(b, s.key)) {
            (Some(x), Some(y)) => x == y,
            _ => true,
        }
    })
}

impl Baseline {
    /// Finds the runs labelled `label` (their own label or their column label) among `shown`;
    /// none is bad input that names the labels there are.
    pub fn find(
        report: &Report,
        shown: &[usize],
        labels: &[String],
        label: &str,
    ) -> Result<Self, Error> {
        let runs: Vec<usize> = shown
            .iter()
            .copied()
            .filter(|&i| {
                report.runs[i].summary.label == label || labels.get(i).is_some_and(|l| l == label)
            })
            .collect();
        if runs.is_empty() {
            let mut known: Vec<&str> = Vec::new();
            for name in shown.iter().map(|&i| report.runs[i].name()) {
                if !known.contains(&name) {
                    known.push(name);
                }
            }
            return Err(Error::Baseline {
                label: label.to_string(),
                why: format!(
                    "no run has that label (the labels are: {}; a column's full label picks \
                     one run)",
                    known.join(", ")
                ),
            });
        }
        Ok(Self {
            label: label.to_string(),
            runs,
        })
    }

    /// The baseline run `run` is compared with: itself when it is a baseline run, else the one
    /// baseline run of the same workload ([`same_workload`]); `None` when there is none or
    /// more than one (say which with [`Baseline::notes`]).
    pub fn base_of(&self, report: &Report, run: usize) -> Option<usize> {
        if self.is_base(run) {
            return Some(run);
        }
        match self.candidates(report, run)[..] {
            [only] => Some(only),
            _ => None,
        }
    }

    fn candidates(&self, report: &Report, run: usize) -> Vec<usize> {
        self.runs
            .iter()
            .copied()
            .filter(|&b| same_workload(report, b, run))
            .collect()
    }

    /// Whether `run` is one of the baseline runs.
    pub fn is_base(&self, run: usize) -> bool {
        self.runs.contains(&run)
    }

    /// One line for stderr per run of `shown` whose ratios are `-`: no baseline run of its
    /// workload, or several.
    pub fn notes(&self, report: &Report, shown: &[usize], labels: &[String]) -> Vec<String> {
        let name = |i: usize| labels.get(i).cloned().unwrap_or_default();
        shown
            .iter()
            .filter(|&&i| !self.is_base(i))
            .filter_map(|&i| match self.candidates(report, i)[..] {
                [_] => None,
                [] => Some(format!(
                    "table: --baseline {}: no baseline run has the workload of {}; its ratios are -",
                    self.label,
                    name(i)
                )),
                ref several => Some(format!(
                    "table: --baseline {}: {} baseline runs ({}) have the workload of {}; its \
                     ratios are - (name one run by its column label)",
                    self.label,
                    several.len(),
                    several.iter().map(|&b| name(b)).collect::<Vec<_>>().join(", "),
                    name(i)
                )),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::RunReport;
    use tokenpipe_cli::{Ending, ToolError};
    use tokenpipe_format::{Header, Summary};

    fn run(label: &str, concurrency: u64, osl: u64) -> RunReport {
        let mut h = Header::new("reduce", "r".into(), vec![]);
        let mut up = Header::new("arrivals", "a".into(), vec![]);
        up.params.insert("concurrency".into(), concurrency.into());
        up.params.insert("output_tokens".into(), osl.into());
        up.params.insert("seed".into(), label.len().into());
        h.upstream.push(up);
        RunReport::new(
            Some(h),
            Summary {
                label: label.into(),
                run_id: format!("{label}{concurrency}"),
                ..Summary::default()
            },
        )
    }

    #[test]
    fn ratios_read_with_an_x() {
        assert_eq!(
            ratio(85.0, 100.0).render(crate::grid::SpreadMode::Cv),
            "0.85x"
        );
        assert_eq!(ratio(1.0, 0.0), Cell::Missing);
        assert_eq!(
            ratio_cell(&Cell::Missing, &Cell::Num(Num::value(1.0))),
            Cell::Missing
        );
    }

    #[test]
    fn each_run_is_compared_with_the_baseline_run_of_its_workload() {
        let report = Report {
            runs: vec![
                run("vllm", 1, 8),
                run("vllm", 4, 8),
                run("sglang", 4, 8),
                run("sglang", 1, 8),
                run("sglang", 16, 8),
            ],
            ..Default::default()
        };
        let shown = report.shown();
        let labels = crate::labels::column_labels(&report);
        let b = Baseline::find(&report, &shown, &labels, "vllm").unwrap();
        assert_eq!(b.base_of(&report, 2), Some(1));
        assert_eq!(b.base_of(&report, 3), Some(0));
        assert_eq!(b.base_of(&report, 4), None, "no vllm run at c16");
        assert!(b.is_base(0) && !b.is_base(2));
        assert_eq!(
            b.base_of(&report, 1),
            Some(1),
            "a baseline run is its own baseline"
        );
        let notes = b.notes(&report, &shown, &labels);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("c=16"), "{notes:?}");
        // One baseline run does not serve another workload.
        let one = Report {
            runs: vec![run("vllm", 1, 8), run("sglang", 4, 8)],
            ..Default::default()
        };
        let b = Baseline::find(
            &one,
            &one.shown(),
            &crate::labels::column_labels(&one),
            "vllm",
        )
        .unwrap();
        assert_eq!(b.base_of(&one, 1), None);
        // A setting only one run has (a vLLM result file names no lengths) does not stop a
        // match.
        let mut other_tool = run("vllm", 4, 8);
        if let Some(h) = other_tool.header.as_mut() {
            h.upstream[0].params.remove("output_tokens");
        }
        let mixed = Report {
            runs: vec![other_tool, run("sglang", 4, 8), run("sglang", 1, 8)],
            ..Default::default()
        };
        let b = Baseline::find(
            &mixed,
            &mixed.shown(),
            &crate::labels::column_labels(&mixed),
            "vllm",
        )
        .unwrap();
        assert_eq!(
            (b.base_of(&mixed, 1), b.base_of(&mixed, 2)),
            (Some(0), None)
        );
        // Two baseline runs of one workload: neither is picked, and a note says so.
        let twice = Report {
            runs: vec![run("vllm", 4, 8), run("vllm", 4, 8), run("sglang", 4, 8)],
            ..Default::default()
        };
        let (shown2, labels2) = (twice.shown(), crate::labels::column_labels(&twice));
        let b = Baseline::find(&twice, &shown2, &labels2, "vllm").unwrap();
        assert_eq!(b.base_of(&twice, 2), None);
        assert!(b.notes(&twice, &shown2, &labels2)[0].contains("2 baseline runs"));
        let e = Baseline::find(&report, &shown, &labels, "trt").unwrap_err();
        assert!(e.to_string().contains("vllm, sglang"), "{e}");
        assert_eq!(e.ending(), Ending::BadInput);
    }
}
