//! `--by host` / `--by shard`: the parts of each merged run (a plan sharded over several
//! `fire` processes or hosts, docs/metrics.md "Shards") as rows: which host ran which part,
//! whether it reported (`ok`, `lost`, `missing`), how late it started, what it lost and how
//! far its clock is from the server's; a line per run under the table gives the start spread,
//! the clock skew and the verdict on the parts.

use crate::error::Error;
use crate::grid::{Align, Cell, Grid, Kind, Num, SpreadMode};
use crate::laid_out::LaidOut;
use crate::machine::MachineTable;
use crate::options::PartsBy;
use crate::report::Report;
use tokenpipe_format::{Part, PartStatus};

/// The columns: heading, machine name, alignment.
const COLUMNS: &[(&str, &str, Align)] = &[
    ("Run", "label", Align::Left),
    ("Shard", "shard", Align::Right),
    ("Host", "host", Align::Left),
    ("Status", "status", Align::Left),
    ("Start [+ms]", "start_offset_ms", Align::Right),
    ("Late [ms]", "start_late_ms", Align::Right),
    ("Planned", "requests_planned", Align::Right),
    ("Seen", "requests_seen", Align::Right),
    ("Lost", "requests_lost", Align::Right),
    ("Kept up", "kept_up", Align::Left),
    ("Clock offset [ms]", "server_clock_offset_ms", Align::Right),
];

/// The parts of every merged run shown, a row each, ordered `by`; bad input when no run was
/// merged from parts.
pub(crate) fn lay_out(report: &Report, by: PartsBy) -> Result<LaidOut, Error> {
    let labels = crate::labels::column_labels(report);
    let mut rows: Vec<(String, usize, u32, Vec<Cell>)> = Vec::new();
    let mut notes = Vec::new();
    for (n, &i) in report.shown().iter().enumerate() {
        let s = &report.runs[i].summary;
        if s.parts.is_empty() {
            continue;
        }
        let label = labels.get(i).cloned().unwrap_or_else(|| s.run_id.clone());
        for p in &s.parts {
            let host = p.host.clone().unwrap_or_default();
            rows.push((host, n, p.index, row(&label, p)));
        }
        notes.push(run_note(&label, s));
    }
    if rows.is_empty() {
        return Err(Error::NothingToShow(format!(
            "--by {} shows the parts of runs merged from shards (reduce of `arrivals --shard` parts); no run here was",
            by.name()
        )));
    }
    match by {
        PartsBy::Host => rows.sort_by(|a, b| (&a.0, a.1, a.2).cmp(&(&b.0, b.1, b.2))),
        PartsBy::Shard => rows.sort_by_key(|r| (r.1, r.2)),
    }
    let mut grid = Grid {
        headings: COLUMNS.iter().map(|c| c.0.to_string()).collect(),
        align: COLUMNS.iter().map(|c| c.2).collect(),
        rows: rows.into_iter().map(|r| r.3).collect(),
        ..Grid::default()
    };
    let names: Vec<String> = COLUMNS.iter().map(|c| c.1.to_string()).collect();
    let machine = MachineTable::from_grid(&grid, &names, SpreadMode::None);
    grid.unit_lines = true;
    Ok(LaidOut::table(grid, machine, SpreadMode::None, notes))
}

fn num(value: Option<f64>, kind: Kind) -> Cell {
    value.map_or(Cell::Missing, |value| {
        Cell::Num(Num {
            value,
            kind,
            spread: None,
        })
    })
}

fn count(value: Option<u64>) -> Cell {
    num(value.map(|v| v as f64), Kind::Count)
}

/// One part's row.
fn row(label: &str, p: &Part) -> Vec<Cell> {
    let status = match p.status {
        PartStatus::Ok => "ok",
        PartStatus::Lost => "lost",
        PartStatus::Missing => "missing",
    };
    let kept_up = match (p.kept_up, &p.client_reason) {
        (Some(true), None) => "yes".to_string(),
        (Some(true), Some(_)) => "not judged".to_string(),
        (Some(false), Some(why)) => format!("no: {why}"),
        (Some(false), None) => "no".to_string(),
        (None, _) => "-".to_string(),
    };
    vec![
        Cell::text(label),
        count(Some(u64::from(p.index))),
        p.host.as_deref().map_or(Cell::Missing, Cell::text),
        Cell::text(status),
        num(p.start_offset_ms, Kind::Value),
        num(p.start_late_ms, Kind::Value),
        count(p.requests_planned),
        count(p.requests_seen),
        count(p.requests_lost),
        Cell::text(kept_up),
        // The estimate: the middle of the bounds.
        num(
            p.server_clock_offset_ms.map(|[lo, hi]| (lo + hi) / 2.0),
            Kind::Value,
        ),
    ]
}

/// The line under the table for one merged run: spread, skew and the verdict on its parts.
fn run_note(label: &str, s: &tokenpipe_format::Summary) -> String {
    let mut parts = vec![format!("{label}: {} parts", s.parts.len())];
    if let Some(spread) = s.start_spread_ms {
        parts.push(format!("start spread {spread:.2} ms"));
    }
    if let (Some(skew), Some(err)) = (s.clock_skew_ms, s.clock_skew_error_ms) {
        parts.push(format!("clock skew {skew:.1} ± {err:.1} ms"));
    }
    if let Some(lost) = s.requests_lost.filter(|n| *n > 0) {
        parts.push(format!("{lost} requests lost"));
    }
    let verdict = tokenpipe_format::vocab::verdict_of(s);
    match verdict.parts {
        Some(check) if check.failed() => parts.push(format!("not comparable: {}", check.reason)),
        Some(_) => parts.push("parts comparable".into()),
        None => {}
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::RunReport;
    use tokenpipe_format::Summary;

    fn merged(label: &str, hosts: &[&str]) -> RunReport {
        let parts = hosts
            .iter()
            .enumerate()
            .map(|(i, h)| Part {
                index: i as u32,
                host: Some(h.to_string()),
                start_offset_ms: Some(i as f64),
                kept_up: Some(true),
                ..Part::default()
            })
            .collect();
        RunReport {
            summary: Summary {
                label: label.into(),
                run_id: label.into(),
                parts,
                start_spread_ms: Some(2.0),
                ..Summary::default()
            },
            ..RunReport::default()
        }
    }

    #[test]
    fn parts_by_shard_or_host_and_none_is_refused() {
        let report = Report {
            runs: vec![merged("a", &["h2", "h1"]), merged("b", &["h1", "h2"])],
            ..Report::default()
        };
        let order = |by| {
            let laid = lay_out(&report, by).unwrap();
            laid.grids[0]
                .text_rows(SpreadMode::None)
                .into_iter()
                .map(|r| format!("{} {} {}", r[0], r[1], r[2]))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            order(PartsBy::Shard),
            ["a 0 h2", "a 1 h1", "b 0 h1", "b 1 h2"]
        );
        assert_eq!(
            order(PartsBy::Host),
            ["a 1 h1", "b 0 h1", "a 0 h2", "b 1 h2"]
        );
        let laid = lay_out(&report, PartsBy::Shard).unwrap();
        assert!(
            laid.notes[0].starts_with("a: 2 parts; start spread 2.00 ms"),
            "{:?}",
            laid.notes
        );
        let plain = Report {
            runs: vec![RunReport::default()],
            ..Report::default()
        };
        assert!(lay_out(&plain, PartsBy::Host).is_err());
    }
}
