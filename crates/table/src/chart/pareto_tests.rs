//! The Pareto chart's numbers from hand-built runs with known figures: the frontier, repeats
//! at their mean, per GPU from `meta gpus` (a group's from its pooled runs), the notes for runs
//! it leaves out, and the small multiples' split of many series.

use super::load::series_groups;
use super::pareto::{frontier, load_text, pareto};
use super::*;
use crate::report::RunReport;
use tokenpipe_format::{Header, StatName, Summary};

/// A run of `label` at `concurrency`, with total output tok/s `tps` and user_tps p50 `user`.
fn run(label: &str, concurrency: u64, tps: f64, user: f64, id: &str) -> RunReport {
    let mut h = Header::new("reduce", format!("r-{id}"), vec![]);
    let mut up = Header::new("arrivals", "a".into(), vec![]);
    up.params.insert("concurrency".into(), concurrency.into());
    h.upstream.push(up);
    let mut summary = Summary {
        label: label.into(),
        run_id: id.into(),
        output_throughput_tokens_per_s: tps,
        ..Summary::default()
    };
    summary.set_stat_in("user_tps", StatName::Percentile(50.0), "tps", Some(user));
    RunReport::new(Some(h), summary)
}

fn with_gpus(mut r: RunReport, gpus: &str) -> RunReport {
    r.summary.meta.insert("gpus".into(), gpus.into());
    r
}

#[test]
fn the_frontier_is_the_points_nothing_beats_on_both_axes() {
    let points = [
        (10.0, 50.0),
        (20.0, 40.0),
        (15.0, 30.0), // beaten by (20, 40)
        (30.0, 10.0),
        (30.0, 5.0),  // beaten by (30, 10): as fast in all, slower per user
        (5.0, 50.0),  // beaten by (10, 50)
        (20.0, 40.0), // the same as a frontier point: drawn once
    ];
    assert_eq!(frontier(&points), [0, 1, 3]);
    assert_eq!(frontier(&[]), Vec::<usize>::new());
    assert_eq!(frontier(&[(1.0, 1.0)]), [0]);
}

#[test]
fn points_follow_the_load_and_repeats_are_their_mean() {
    let report = Report {
        runs: vec![
            run("a", 4, 400.0, 20.0, "a4"),
            run("a", 1, 100.0, 50.0, "a1"),
            run("a", 4, 420.0, 18.0, "a4b"),
            run("b", 2, 150.0, 40.0, "b2"),
        ],
        ..Default::default()
    };
    let chart = pareto(&report).unwrap();
    assert_eq!(chart.param, "concurrency");
    assert!(!chart.per_gpu);
    assert_eq!(chart.series, ["a", "b"]);
    let xy: Vec<(&str, f64, f64, f64)> = chart
        .points
        .iter()
        .map(|p| (p.series.as_str(), p.load, p.x, p.y))
        .collect();
    assert_eq!(
        xy,
        [
            ("a", 1.0, 100.0, 50.0),
            ("a", 4.0, 410.0, 19.0),
            ("b", 2.0, 150.0, 40.0)
        ]
    );
    assert_eq!(load_text("concurrency", 16.0), "c16");
    assert_eq!(load_text("rate_per_s", 0.5), "0.5/s");
    assert_eq!(load_text("batch", 8.0), "b8");
    assert_eq!(ChartKind::Pareto.name(), "pareto", "the name --chart takes");
    assert!(with_data(&report).contains(&ChartKind::Pareto));
}

#[test]
fn with_meta_gpus_on_every_run_the_total_is_per_gpu() {
    let mut group = run("a", 4, 800.0, 20.0, "g");
    group.summary.runs = vec!["a4".into(), "a4b".into()];
    let report = Report {
        runs: vec![
            with_gpus(run("a", 1, 200.0, 50.0, "a1"), "2"),
            // A group has no meta of its own: its pooled runs' count stands in.
            with_gpus(run("a", 4, 790.0, 20.0, "a4"), "2"),
            with_gpus(run("a", 4, 810.0, 20.0, "a4b"), "2"),
            group,
        ],
        ..Default::default()
    };
    let chart = pareto(&report).unwrap();
    assert!(chart.per_gpu);
    let x: Vec<f64> = chart.points.iter().map(|p| p.x).collect();
    assert_eq!(
        x,
        [100.0, 400.0],
        "total over 2 GPUs; the user's speed is not divided"
    );
    assert_eq!(chart.points[1].y, 20.0);
    assert!(left_out(&report, ChartKind::Pareto).is_empty());
    let svg = render_svg(&report, ChartKind::Pareto).unwrap();
    assert!(
        svg.contains("per GPU (tok/s/GPU)") && svg.contains("c4"),
        "{svg}"
    );
}

#[test]
fn a_run_without_gpus_or_per_user_speed_is_named() {
    let mut no_user = run("c", 2, 300.0, 1.0, "c2");
    no_user.summary.stats.0.clear();
    let report = Report {
        runs: vec![
            with_gpus(run("a", 1, 200.0, 50.0, "a1"), "8"),
            run("a", 4, 800.0, 20.0, "a4"),
            with_gpus(run("b", 1, 200.0, 50.0, "b1"), "two"),
            no_user,
        ],
        ..Default::default()
    };
    let chart = pareto(&report).unwrap();
    assert!(!chart.per_gpu, "not every run has a GPU count");
    let notes = left_out(&report, ChartKind::Pareto);
    let text = notes.join("\n");
    assert!(text.contains("run c has no user_tps p50"), "{text}");
    assert!(
        text.contains("meta gpus=\"two\" is not a positive number"),
        "{text}"
    );
    assert!(text.contains("total throughput is not per GPU"), "{text}");
    assert_eq!(notes.len(), 3, "{notes:?}");

    let err = render_svg(
        &Report {
            runs: vec![{
                let mut r = run("a", 1, 1.0, 1.0, "x");
                r.summary.stats.0.clear();
                r
            }],
            ..Default::default()
        },
        ChartKind::Pareto,
    )
    .unwrap_err();
    assert!(
        matches!(&err, ChartError::NoData(m) if m.contains("user_tps")),
        "{err}"
    );
}

#[test]
fn many_series_are_split_evenly_at_eight_a_panel() {
    let one = |n: usize| {
        series_groups(n)
            .into_iter()
            .map(|r| (r.start, r.end))
            .collect::<Vec<_>>()
    };
    assert_eq!(one(0), [(0, 0)]);
    assert_eq!(one(8), [(0, 8)]);
    assert_eq!(series_groups(9), [0..5, 5..9]);
    assert_eq!(series_groups(10), [0..5, 5..10]);
    assert_eq!(series_groups(17), [0..6, 6..12, 12..17]);
    let runs = (0..10)
        .flat_map(|s| {
            [1u64, 2, 4, 8].map(|c| {
                run(
                    &format!("s{s}"),
                    c,
                    c as f64 * 10.0,
                    50.0 / c as f64,
                    &format!("{s}-{c}"),
                )
            })
        })
        .collect();
    let svg = render_svg(
        &Report {
            runs,
            ..Default::default()
        },
        ChartKind::Load,
    )
    .unwrap();
    assert!(svg.contains("Series 1–5 of 10"), "{svg}");
    assert!(svg.contains("Series 6–10 of 10"));
    // Three panels per group; a log₂ axis labelled with the loads themselves.
    assert_eq!(svg.matches("Time per output token").count(), 2);
    assert!(svg.contains("\n8\n") && !svg.contains("\n2.5\n"), "{svg}");
}
