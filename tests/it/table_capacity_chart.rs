//! `table --chart capacity` through the binary, on a fixture of two sweeps (two serving shapes
//! over concurrency 1 … 64, each with its summaries and its `sweep` record): the chart draws
//! each SLO bound's panel with both capacities, the HTML page includes it, and without a
//! `sweep` record the chart is refused with what to run.

use crate::common;

use common::{assert_ok, bin};
use std::process::Command;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/table/capacity.ndjson"
);

fn table(args: &[&str]) -> std::process::Output {
    Command::new(bin("table"))
        .args(args)
        .output()
        .expect("table runs")
}

#[test]
fn the_capacity_chart_draws_a_panel_per_bound_and_each_sweeps_capacity() {
    let out = table(&["--format", "svg", "--chart", "capacity", FIXTURE]);
    assert_ok(&out, "table");
    let svg = String::from_utf8(out.stdout).unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");
    for text in [
        "TTFT p99 (ms)",
        "TPOT p50 (ms)",
        "bound ≤ 2000",
        "bound ≤ 50",
        "8xH200: capacity 16",
        "16xH200: capacity 16",
    ] {
        assert!(svg.contains(text), "no {text:?} in the chart");
    }
    // The sweep records do not become rows: the table still has one column per run.
    let out = table(&["--format", "csv", FIXTURE]);
    assert_ok(&out, "table");
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 15);
    let out = table(&["--format", "html", FIXTURE]);
    assert_ok(&out, "table");
    let html = String::from_utf8(out.stdout).unwrap();
    assert!(html.contains("the bound and the capacity found"), "{html}");
}

#[test]
fn without_a_sweep_record_the_capacity_chart_says_what_to_run() {
    let summaries: String = std::fs::read_to_string(FIXTURE)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("\"type\": \"sweep\"") && !l.contains("\"type\":\"sweep\""))
        .map(|l| format!("{l}\n"))
        .collect();
    let path = common::temp_path("no-sweep.ndjson");
    std::fs::write(&path, summaries).unwrap();
    let out = table(&[
        "--format",
        "svg",
        "--chart",
        "capacity",
        path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sweep --find"), "{err}");
}
