//! Which runs a table shows and in which order. By default: labels in the order they first
//! appear, runs of one label by their load (concurrency, else rate, else batch size) from light
//! to heavy, then in input order. `--sort FIELD[:desc],...` replaces that order (a stable sort,
//! numbers by value, text in natural order, missing values last).

use crate::error::Error;
use crate::field::{compare_cells, Field};
use crate::report::Report;
use crate::workload::load;
use std::cmp::Ordering;

/// The shown runs of `report` (see [`Report::shown`]) as indices into `report.runs`, ordered by
/// `sort` (field names, each optionally `:desc`) or else by the default order. `labels` are the
/// runs' column labels, which `--sort label` orders by. A field no run has is bad input.
pub fn ordered_runs(
    report: &Report,
    sort: &[String],
    labels: &[String],
) -> Result<Vec<usize>, Error> {
    let mut shown = report.shown();
    shown.sort_by(|&a, &b| default_order(report, a, b));
    if sort.is_empty() {
        return Ok(shown);
    }
    let keys = sort
        .iter()
        .map(|spec| {
            let (name, desc) = match spec.trim().rsplit_once(':') {
                Some((name, "desc")) => (name, true),
                Some((name, "asc")) => (name, false),
                _ => (spec.trim(), false),
            };
            Ok((Field::parse(name, report)?, desc))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let label = |i: usize| labels.get(i).map_or("", String::as_str);
    shown.sort_by(|&a, &b| {
        keys.iter()
            .map(|(field, desc)| {
                let (ca, cb) = (
                    field.cell(&report.runs[a], label(a)),
                    field.cell(&report.runs[b], label(b)),
                );
                match (desc, &ca, &cb) {
                    // Missing values stay last either way.
                    (true, crate::grid::Cell::Missing, _)
                    | (true, _, crate::grid::Cell::Missing) => compare_cells(&ca, &cb),
                    (true, ..) => compare_cells(&cb, &ca),
                    (false, ..) => compare_cells(&ca, &cb),
                }
            })
            .find(|o| *o != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
    });
    Ok(shown)
}

/// Labels by first appearance, then load ascending (runs without one after), then input order.
fn default_order(report: &Report, a: usize, b: usize) -> Ordering {
    let first = |i: usize| {
        let label = &report.runs[i].summary.label;
        report
            .runs
            .iter()
            .position(|r| &r.summary.label == label)
            .unwrap_or(i)
    };
    let by_load = match (load(&report.runs[a]), load(&report.runs[b])) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    };
    first(a).cmp(&first(b)).then(by_load).then(a.cmp(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::RunReport;
    use tokenpipe_cli::{Ending, ToolError};
    use tokenpipe_format::{Header, Summary};

    fn run(label: &str, key: &str, load: f64, tps: f64) -> RunReport {
        let mut h = Header::new("reduce", "r".into(), vec![]);
        let mut up = Header::new("arrivals", "a".into(), vec![]);
        up.params.insert(key.into(), load.into());
        h.upstream.push(up);
        RunReport::new(
            Some(h),
            Summary {
                label: label.into(),
                run_id: format!("{label}-{load}"),
                output_throughput_tokens_per_s: tps,
                ..Summary::default()
            },
        )
    }

    fn report() -> Report {
        Report {
            runs: vec![
                run("b", "concurrency", 16.0, 50.0),
                run("a", "concurrency", 2.0, 40.0),
                run("b", "concurrency", 2.0, 30.0),
                run("a", "concurrency", 16.0, 70.0),
                run("b", "concurrency", 4.0, 30.0),
            ],
            ..Default::default()
        }
    }

    #[test]
    fn labels_keep_their_first_appearance_and_loads_go_up() {
        let r = report();
        let got = ordered_runs(&r, &[], &crate::labels::column_labels(&r)).unwrap();
        assert_eq!(got, [2, 4, 0, 1, 3]);
        let rates = Report {
            runs: vec![
                run("x", "rate_per_s", 1.5, 0.0),
                run("x", "rate_per_s", 0.3, 0.0),
            ],
            ..Default::default()
        };
        assert_eq!(ordered_runs(&rates, &[], &[]).unwrap(), [1, 0]);
    }

    #[test]
    fn sort_fields_replace_the_order_stably() {
        let r = report();
        let labels = crate::labels::column_labels(&r);
        let sort = |s: &[&str]| {
            let s: Vec<String> = s.iter().map(|x| x.to_string()).collect();
            ordered_runs(&r, &s, &labels)
        };
        assert_eq!(sort(&["output_tps:desc"]).unwrap(), [3, 0, 1, 2, 4]);
        assert_eq!(sort(&["output_tps"]).unwrap(), [2, 4, 1, 0, 3]);
        assert_eq!(sort(&["concurrency", "label"]).unwrap(), [1, 2, 4, 3, 0]);
        let e = sort(&["nope"]).unwrap_err();
        assert_eq!(e.ending(), Ending::BadInput);
    }
}
