use super::*;
use crate::report::RunReport;
use tokenpipe_format::{SloTerm, SloValue, Summary, Sweep, SweepPoint};

fn point(value: f64, y: Option<f64>, met: Option<bool>, run: &str) -> SweepPoint {
    SweepPoint {
        value,
        runs: 1,
        comparable_runs: 1,
        status: match met {
            Some(false) => PointStatus::Fail,
            _ => PointStatus::Pass,
        }
        .into(),
        sure: met.is_some(),
        slo: vec![SloValue {
            key: "ttft_p99_ms".into(),
            value: y,
            ci95: y.map(|y| [y * 0.9, y * 1.1]),
            bound: 2000.0,
            met,
        }],
        run_ids: vec![run.into()],
        ..SweepPoint::default()
    }
}

fn sweep(points: Vec<SweepPoint>, capacity: Option<f64>) -> Sweep {
    Sweep {
        variable: "concurrency".into(),
        slo: vec![SloTerm {
            key: "ttft_p99_ms".into(),
            bound: 2000.0,
        }],
        capacity,
        points,
        ..Sweep::default()
    }
}

fn run(label: &str, id: &str) -> RunReport {
    RunReport {
        summary: Summary {
            label: label.into(),
            run_id: id.into(),
            ..Summary::default()
        },
        ..RunReport::default()
    }
}

#[test]
fn one_panel_per_bounded_member_with_each_sweep_a_series_in_load_order() {
    let a = sweep(
        vec![
            point(8.0, Some(2500.0), Some(false), "a8"),
            point(1.0, Some(300.0), Some(true), "a1"),
            point(4.0, Some(1900.0), None, "a4"),
        ],
        Some(4.0),
    );
    let mut unusable = point(2.0, None, None, "b2");
    unusable.status = PointStatus::Unusable.into();
    let b = sweep(
        vec![point(1.0, Some(100.0), Some(true), "b1"), unusable],
        Some(1.0),
    );
    let report = Report {
        runs: vec![run("8xH200", "a1"), run("16xH200", "b1")],
        sweeps: vec![a, b],
    };
    let panels = capacity_panels(&report);
    assert_eq!(panels.len(), 1);
    let p = &panels[0];
    assert_eq!(p.title, "TTFT p99 (ms)");
    assert_eq!(p.bounds, [2000.0]);
    assert_eq!(p.series.len(), 2);
    assert_eq!(p.series[0].label, "8xH200");
    assert_eq!(p.series[1].label, "16xH200");
    let xs: Vec<f64> = p.series[0].points.iter().map(|p| p.x).collect();
    assert_eq!(xs, [1.0, 4.0, 8.0]);
    let judged: Vec<Judged> = p.series[0].points.iter().map(|p| p.judged).collect();
    assert_eq!(judged, [Judged::Met, Judged::NotSure, Judged::Missed]);
    assert_eq!(p.series[0].points[2].ci, Some([2250.0, 2750.0]));
    assert_eq!(p.series[0].capacity, Some(4.0));
    assert_eq!(p.series[1].points[1].judged, Judged::Unusable);
    assert_eq!(p.series[1].points[1].y, 0.0);
}

#[test]
fn sweeps_of_two_variables_get_panels_of_their_own() {
    let mut open = sweep(vec![point(0.5, Some(900.0), Some(true), "o")], Some(0.5));
    open.variable = "rate".into();
    let report = Report {
        runs: vec![],
        sweeps: vec![
            sweep(vec![point(1.0, Some(1.0), Some(true), "c")], None),
            open,
        ],
    };
    let panels = capacity_panels(&report);
    let keys: Vec<(&str, &str)> = panels
        .iter()
        .map(|p| (p.variable.as_str(), p.key.as_str()))
        .collect();
    assert_eq!(
        keys,
        [("concurrency", "ttft_p99_ms"), ("rate", "ttft_p99_ms")]
    );
    // Each sweep is the first of its variable: no "(2)".
    assert_eq!(panels[1].series[0].label, "sweep 2");
    assert_eq!(axis_name("rate"), "request rate (req/s)");
    assert_eq!(axis_name("concurrency"), "concurrency (requests in flight)");
    assert_eq!(axis_name("users"), "users");
}

#[test]
fn a_sweep_without_its_runs_is_numbered_and_twins_are_told_apart() {
    let s = || sweep(vec![point(1.0, Some(1.0), Some(true), "gone")], None);
    let report = Report {
        runs: vec![],
        sweeps: vec![s(), s()],
    };
    let labels: Vec<String> = capacity_panels(&report)[0]
        .series
        .iter()
        .map(|s| s.label.clone())
        .collect();
    assert_eq!(labels, ["sweep 1", "sweep 2"]);
    let report = Report {
        runs: vec![run("m", "gone")],
        sweeps: vec![s(), s()],
    };
    let labels: Vec<String> = capacity_panels(&report)[0]
        .series
        .iter()
        .map(|s| s.label.clone())
        .collect();
    assert_eq!(labels, ["m", "m (2)"]);
}

#[test]
fn no_sweep_with_an_slo_is_no_data_and_a_sweep_draws() {
    let err = draw(&Report::default()).unwrap_err();
    assert!(
        matches!(err, ChartError::NoData(ref m) if m.contains("sweep")),
        "{err}"
    );
    let report = Report {
        runs: vec![],
        sweeps: vec![sweep(
            vec![
                point(1.0, Some(300.0), Some(true), "x"),
                point(2.0, Some(2600.0), Some(false), "y"),
            ],
            Some(1.0),
        )],
    };
    let svg = draw(&report).unwrap();
    assert!(svg.contains("sweep 1: capacity 1"), "{svg}");
    assert!(svg.contains("TTFT p99 (ms)"));
    assert!(svg.contains("bound ≤ 2000"));
}
