//! Snapshot tests of the chart formats: `--format svg` of every chart kind and `--format html`,
//! from summaries checked in under `tests/fixtures/table/`, compared byte for byte with the
//! files in `tests/fixtures/table/snapshots/`. plotters is built without a font backend, so the
//! SVG does not depend on the machine's fonts and the snapshots hold everywhere.
//!
//! After an intended change of the output, regenerate the snapshots and review the diff:
//!
//! ```sh
//! UPDATE_SNAPSHOTS=1 cargo test --test it table_snapshots::
//! ```
//!
//! The fixtures were made once with the real pipe against simserve (`--ttft-ms 30 --itl-ms 10`):
//! `sweep.ndjson` is `for c in 1 2 4; do for s in 1 2; do arrivals --concurrency $c -n 8
//! --output-tokens 10 --seed $s | fire --url $URL; done | reduce --label sim; done`, and
//! `timeline.ndjson` is `arrivals --rate 20 -n 40 --output-tokens 20 --seed 1 | fire --url $URL |
//! reduce --label sim --every 500ms`. To keep them small, the single runs a group summary pools
//! were dropped (the group stands for them), and of each summary only the `ttft` and `itl`
//! histograms, and the `across_runs` members the load chart plots and the counts (requests and
//! tokens; every run of a group had the same, so their mean is the pooled count over the runs
//! and their sd 0), were kept.

use std::io::BufReader;
use std::path::{Path, PathBuf};
use tokenpipe_cli::Input;
use tokenpipe_table::{read_report, ChartKind, Format, Report, Svg};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/table")
}

/// The report of fixture files, each named by its file name (not its path) so that output
/// does not depend on where the repository lies.
fn report(names: &[&str]) -> Report {
    let inputs = names
        .iter()
        .map(|name| {
            let file = std::fs::File::open(fixtures().join(name)).unwrap();
            Input {
                reader: Box::new(BufReader::new(file)),
                name: name.to_string(),
            }
        })
        .collect();
    read_report(inputs).unwrap()
}

/// Compares `actual` with the snapshot `name`, or writes it under `UPDATE_SNAPSHOTS=1`.
fn check(name: &str, actual: &str) {
    let path = fixtures().join("snapshots").join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; run with UPDATE_SNAPSHOTS=1", path.display()));
    assert!(
        expected == actual,
        "{name} differs from its snapshot; if the change is intended, rerun with \
         UPDATE_SNAPSHOTS=1 and review the diff"
    );
}

fn svg(report: &Report, chart: ChartKind) -> String {
    Svg { chart: Some(chart) }.export(report).unwrap()
}

#[test]
fn load_chart_of_a_concurrency_sweep() {
    let r = report(&["sweep.ndjson"]);
    let out = svg(&r, ChartKind::Load);
    assert!(out.starts_with("<svg") && out.ends_with("</svg>"));
    assert!(out.contains("concurrency (requests in flight)"));
    for panel in [
        "Output throughput",
        "Time to first token",
        "Time per output token",
    ] {
        assert!(out.contains(panel), "a panel per metric: {panel}");
    }
    assert_eq!(
        Svg::default().export(&r).unwrap(),
        out,
        "a sweep defaults to the load chart"
    );
    check("load.svg", &out);
}

#[test]
fn pareto_chart_of_a_concurrency_sweep() {
    let r = report(&["sweep.ndjson"]);
    let out = svg(&r, ChartKind::Pareto);
    assert!(
        out.contains("total output throughput (tok/s)"),
        "no meta gpus: not per GPU"
    );
    assert!(out.contains("Pareto frontier (ringed)"));
    for load in ["c1", "c2", "c4"] {
        assert!(
            out.contains(&format!("\n{load}\n")),
            "the point at {load} is labelled"
        );
    }
    check("pareto.svg", &out);
}

#[test]
fn ttft_and_itl_distributions() {
    let r = report(&["sweep.ndjson"]);
    check("ttft-cdf.svg", &svg(&r, ChartKind::TtftCdf));
    check("itl-cdf.svg", &svg(&r, ChartKind::ItlCdf));
}

#[test]
fn timeline_of_a_run() {
    check(
        "timeline.svg",
        &svg(&report(&["timeline.ndjson"]), ChartKind::Timeline),
    );
}

#[test]
fn html_page_with_tables_and_every_chart() {
    let r = report(&["sweep.ndjson", "timeline.ndjson"]);
    let html = tokenpipe_table::Style::Default
        .render(&r, Format::Html, &Default::default())
        .unwrap()
        .text;
    assert_eq!(
        html.matches("<svg").count(),
        5,
        "load, pareto, two CDFs, timeline"
    );
    assert_eq!(html.matches("<figcaption>").count(), 5);
    assert!(html.contains("<td class=\"num\">"));
    for external in ["src=", "href=", "@import", "<script", "url("] {
        assert!(
            !html.contains(external),
            "the page refers outside: {external}"
        );
    }
    check("report.html", &html);
}
