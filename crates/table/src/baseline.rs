//! `--baseline LABEL`: figures as ratios against one run. Each run is compared with the
//! baseline run of the same workload (the settings that differ between the runs shown, such as
//! concurrency or lengths, must match), or with the only baseline run when there is one; a run
//! with no such baseline run gets `-`.

use crate::grid::{Cell, Num};
use crate::labels::setting_text;
use crate::report::Report;
use crate::rows::Kind;

/// The settings that make a workload, which a baseline run must share with the run it is
/// compared with.
const WORKLOAD_SETTINGS: &[&str] = &[
    "concurrency",
    "rate_per_s",
    "burstiness",
    "batch",
    "max_concurrency",
    "input_tokens",
    "output_tokens",
    "num_prompts",
];

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

/// The ratio of two cells: the first's number over the second's, `-` when either has none.
pub fn ratio_cell(value: &Cell, base: &Cell) -> Cell {
    match (value.number(), base.number()) {
        (Some(v), Some(b)) => ratio(v, b),
        _ => Cell::Missing,
    }
}

/// The baseline runs of a table and the settings that pair them with the other runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    /// The label asked for.
    pub label: String,
    /// Indices (into `report.runs`) of the shown runs with that label.
    runs: Vec<usize>,
    /// Settings that differ between the shown runs: a baseline run must match on each.
    keys: Vec<&'static str>,
}

impl Baseline {
    /// Finds the runs labelled `label` (their own label or their column label) among `shown`;
    /// none is bad input that names the labels there are.
    pub fn find(
        report: &Report,
        shown: &[usize],
        labels: &[String],
        label: &str,
    ) -> anyhow::Result<Self> {
        let runs: Vec<usize> = shown
            .iter()
            .copied()
            .filter(|&i| {
                report.runs[i].summary.label == label || labels.get(i).is_some_and(|l| l == label)
            })
            .collect();
        if runs.is_empty() {
            let mut known: Vec<&str> = shown
                .iter()
                .map(|&i| report.runs[i].summary.label.as_str())
                .collect();
            known.dedup();
            return Err(tokenpipe_cli::bad_input(format!(
                "--baseline {label}: no run has that label (the labels are: {})",
                known.join(", ")
            )));
        }
        let setting = |i: usize, key: &str| report.runs[i].param(key).map(setting_text);
        let keys = WORKLOAD_SETTINGS
            .iter()
            .copied()
            .filter(|key| {
                shown
                    .iter()
                    .any(|&i| setting(i, key) != setting(shown[0], key))
            })
            .collect();
        Ok(Self {
            label: label.to_string(),
            runs,
            keys,
        })
    }

    /// The baseline run `run` is compared with, if any.
    pub fn base_of(&self, report: &Report, run: usize) -> Option<usize> {
        if let [only] = self.runs[..] {
            return Some(only);
        }
        let setting = |i: usize, key: &str| report.runs[i].param(key).map(setting_text);
        self.runs.iter().copied().find(|&b| {
            self.keys
                .iter()
                .all(|key| setting(b, key) == setting(run, key))
        })
    }

    /// Whether `run` is one of the baseline runs.
    pub fn is_base(&self, run: usize) -> bool {
        self.runs.contains(&run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::RunReport;
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
        };
        let shown = report.shown();
        let labels = report.column_labels();
        let b = Baseline::find(&report, &shown, &labels, "vllm").unwrap();
        assert_eq!(b.base_of(&report, 2), Some(1));
        assert_eq!(b.base_of(&report, 3), Some(0));
        assert_eq!(b.base_of(&report, 4), None, "no vllm run at c16");
        assert!(b.is_base(0) && !b.is_base(2));
        // A setting that is the same everywhere (the output length) does not stop a match, and
        // one baseline run serves all.
        let one = Report {
            runs: vec![run("vllm", 1, 8), run("sglang", 4, 8)],
        };
        let b = Baseline::find(&one, &one.shown(), &one.column_labels(), "vllm").unwrap();
        assert_eq!(b.base_of(&one, 1), Some(0));
        let e = Baseline::find(&report, &shown, &labels, "trt").unwrap_err();
        assert!(e.to_string().contains("vllm, sglang"), "{e}");
        assert_eq!(
            e.downcast_ref::<tokenpipe_cli::Failure>().map(|f| f.code),
            Some(tokenpipe_cli::EXIT_BAD_INPUT)
        );
    }
}
