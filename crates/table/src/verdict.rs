//! Whether each run shown is comparable (docs/verdict.md), as tables show it: a cell that reads
//! `yes` or `no: ` and what made it so in a few words (`no: 8/32 failed`), short enough for a
//! column of a terminal table; the note under the table with each run's full reason; and the
//! runs `--only-comparable` leaves out. A summary written before format 1.7 has no `verdict`
//! member: it is judged here by the same rule, [`tokenpipe_format::Verdict::of`].

use crate::grid::Cell;
use crate::report::{Report, RunReport};
use std::collections::HashSet;
use tokenpipe_format::vocab::{self, verdict_of};
use tokenpipe_format::{ended_as, Summary, Verdict, RUN_ENDS};

/// The mark a ranking or a pivot puts after the figure of a run that is not comparable.
pub const MARK: &str = "†";

/// Whether `run` is comparable.
pub fn comparable(run: &RunReport) -> bool {
    verdict_of(&run.summary).comparable
}

/// The run's verdict as a cell.
pub fn cell(run: &RunReport) -> Cell {
    let verdict = verdict_of(&run.summary);
    Cell::Verdict {
        comparable: verdict.comparable,
        text: short(&run.summary, &verdict),
    }
}

/// `yes`, or `no: ` and the failed checks in a few words each: the failed requests out of those
/// held, the run's own ends (cancelled, not sent, unfinished), missing shards, a client that
/// fell behind, a server that counted otherwise.
pub fn short(summary: &Summary, verdict: &Verdict) -> String {
    if verdict.comparable {
        return "yes".into();
    }
    let mut parts = Vec::new();
    if verdict.complete.failed() {
        let failed = vocab::failed_by_server(summary);
        let held = summary
            .requests_scheduled
            .unwrap_or(summary.requests_ok + summary.requests_failed);
        if held == 0 {
            parts.push("no requests".to_string());
        }
        if failed > 0 {
            parts.push(format!("{failed}/{held} failed"));
        }
        for &(kind, words) in RUN_ENDS {
            let n = ended_as(summary, kind);
            if n > 0 {
                parts.push(format!("{n} {words}"));
            }
        }
        if !summary.shards_missing.is_empty() {
            parts.push("shards missing".into());
        }
        if parts.is_empty() {
            parts.push("incomplete".into());
        }
    }
    if verdict.client.failed() {
        parts.push("client behind".into());
    }
    if verdict.server.as_ref().is_some_and(|c| c.failed()) {
        parts.push("server disagrees".into());
    }
    if parts.is_empty() {
        parts.push(verdict.reason.clone());
    }
    format!("no: {}", parts.join(", "))
}

/// The runs of `runs` (indices into `report.runs`) that are not comparable, each named by its
/// label in `labels` (indexed by run) with its full reason, in order.
pub fn not_comparable(report: &Report, runs: &[usize], labels: &[String]) -> Vec<(String, String)> {
    runs.iter()
        .filter_map(|&i| {
            let verdict = verdict_of(&report.runs[i].summary);
            (!verdict.comparable).then(|| (labels[i].clone(), verdict.reason))
        })
        .collect()
}

/// One note per run of `runs` that is not comparable, with its full reason: the lines under a
/// table whose cells say `no` in a few words (`Not comparable: LABEL: REASON`).
pub fn notes(report: &Report, runs: &[usize], labels: &[String]) -> Vec<String> {
    not_comparable(report, runs, labels)
        .into_iter()
        .map(|(label, reason)| format!("Not comparable: {label}: {reason}"))
        .collect()
}

/// `report` without the shown runs that are not comparable (and without the runs a left-out
/// group summary pools, which it stood for), with each run left out and its reason.
pub fn only_comparable(report: &Report) -> (Report, Vec<(String, String)>) {
    let labels = crate::labels::column_labels(report);
    let shown = report.shown();
    let left_out = not_comparable(report, &shown, &labels);
    let out: HashSet<usize> = shown
        .into_iter()
        .filter(|&i| !comparable(&report.runs[i]))
        .collect();
    let pooled_by_left_out: HashSet<&str> = out
        .iter()
        .flat_map(|&i| report.runs[i].summary.runs.iter().map(String::as_str))
        .collect();
    let runs = report
        .runs
        .iter()
        .enumerate()
        .filter(|(i, r)| {
            !out.contains(i) && !pooled_by_left_out.contains(r.summary.run_id.as_str())
        })
        .map(|(_, r)| r.clone())
        .collect();
    (
        Report {
            runs,
            ..Default::default()
        },
        left_out,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(label: &str, ok: u64, errors: &[(&str, u64)]) -> RunReport {
        let failed: u64 = errors.iter().map(|(_, n)| n).sum();
        RunReport::new(
            None,
            Summary {
                label: label.into(),
                run_id: format!("r-{label}"),
                requests_ok: ok,
                requests_failed: failed,
                requests_scheduled: Some(ok + failed),
                errors: errors.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
                ..Summary::default()
            },
        )
    }

    #[test]
    fn the_cell_says_yes_or_no_with_what_made_it_so() {
        assert_eq!(
            cell(&run("a", 32, &[])),
            Cell::Verdict {
                comparable: true,
                text: "yes".into()
            }
        );
        let failing = run("b", 22, &[("http", 8), ("timeout", 2)]);
        assert_eq!(
            cell(&failing).render(crate::grid::SpreadMode::Cv),
            "no: 10/32 failed"
        );
        let stopped = run("c", 11, &[("cancelled", 2), ("not_sent", 87)]);
        assert_eq!(
            short(&stopped.summary, &verdict_of(&stopped.summary)),
            "no: 2 cancelled, 87 not sent"
        );
        let mut behind = run("d", 10, &[]);
        behind.summary.client_kept_up = Some(false);
        assert_eq!(
            short(&behind.summary, &verdict_of(&behind.summary)),
            "no: client behind"
        );
        assert_eq!(
            short(&Summary::default(), &verdict_of(&Summary::default())),
            "no: no requests"
        );
    }

    #[test]
    fn a_written_verdict_is_read_as_it_is() {
        let mut r = run("a", 10, &[]);
        let mut v = Verdict::of(&r.summary);
        v.comparable = false;
        v.reason = "the server's counts disagree (requests: server 5, client 10)".into();
        v.server = Some(tokenpipe_format::Check {
            ok: Some(false),
            reason: v.reason.clone(),
        });
        r.summary.verdict = Some(v);
        assert!(!comparable(&r));
        assert_eq!(
            cell(&r).render(crate::grid::SpreadMode::Cv),
            "no: server disagrees"
        );
    }

    #[test]
    fn only_comparable_leaves_out_runs_and_what_a_left_out_group_pooled() {
        let mut group = run("g", 10, &[("http", 1)]);
        group.summary.runs = vec!["r-x".into(), "r-y".into()];
        let report = Report {
            runs: vec![
                run("a", 10, &[]),
                run("x", 5, &[]),
                run("y", 5, &[("http", 1)]),
                group,
                run("b", 3, &[("not_sent", 3)]),
            ],
            ..Default::default()
        };
        let (kept, left_out) = only_comparable(&report);
        let names: Vec<&str> = kept.runs.iter().map(RunReport::name).collect();
        assert_eq!(names, ["a"]);
        let left_out: Vec<String> = left_out
            .iter()
            .map(|(label, reason)| format!("{label}: {reason}"))
            .collect();
        assert_eq!(
            left_out,
            [
                "g: incomplete: 1 of 11 failed (9.1 %: http: 1)",
                "b: incomplete: 3 not sent",
            ]
        );
        let labels: Vec<String> = report.runs.iter().map(|r| r.name().to_string()).collect();
        assert_eq!(
            notes_for_all(&report, &labels),
            [
                "Not comparable: y: incomplete: 1 of 6 failed (16.7 %: http: 1)",
                "Not comparable: g: incomplete: 1 of 11 failed (9.1 %: http: 1)",
                "Not comparable: b: incomplete: 3 not sent",
            ]
        );
    }

    fn notes_for_all(report: &Report, labels: &[String]) -> Vec<String> {
        let all: Vec<usize> = (0..report.runs.len()).collect();
        notes(report, &all, labels)
    }
}
