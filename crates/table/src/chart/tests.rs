//! Chart data from hand-built runs with known figures: load lines, CDF points, timelines, and
//! the error that says what to run when a chart has no data.

use super::cdf::{cdf_points, wants_log, Metric};
use super::load::{load_lines, load_param, panel_specs, throughput_series};
use super::timeline::timelines;
use super::*;
use crate::report::RunReport;
use tokenpipe_format::MetricState;
use tokenpipe_format::{AcrossRuns, Header, Interval, StatName, Summary};

fn run(label: &str, concurrency: u64, tps: f64, ttft_p50: f64) -> RunReport {
    let mut h = Header::new("reduce", format!("r-{label}-{concurrency}"), vec![]);
    let mut up = Header::new("arrivals", "a".into(), vec![]);
    up.params.insert("concurrency".into(), concurrency.into());
    h.upstream.push(up);
    let mut summary = Summary {
        label: label.into(),
        run_id: format!("{label}-{concurrency}"),
        output_throughput_tokens_per_s: tps,
        ..Summary::default()
    };
    summary.set_stat("ttft", StatName::Percentile(50.0), Some(ttft_p50));
    RunReport::new(Some(h), summary)
}

#[test]
fn load_lines_follow_the_differing_setting_sorted_by_load() {
    let report = Report {
        runs: vec![
            run("a", 4, 400.0, 40.0),
            run("a", 1, 100.0, 10.0),
            run("b", 2, 150.0, 20.0),
        ],
        ..Default::default()
    };
    assert_eq!(load_param(&report), Some("concurrency"));
    assert_eq!(ChartKind::default_for(&report), ChartKind::Load);
    let lines = load_lines(&report, "concurrency", &throughput_series());
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0].label, "a");
    let xy: Vec<(f64, f64)> = lines[0].points.iter().map(|p| (p.x, p.y)).collect();
    assert_eq!(xy, [(1.0, 100.0), (4.0, 400.0)]);
    assert_eq!(
        (lines[1].label.as_str(), lines[1].points[0].y),
        ("b", 150.0)
    );
    // Only TTFT p50 is in these summaries: the other latency series have no points.
    let specs = panel_specs();
    assert_eq!(specs[1].y_name, "TTFT (ms)");
    let latency = load_lines(&report, "concurrency", &specs[1].series);
    assert_eq!(latency.len(), 2);
    assert!(latency.iter().all(|l| l.metric == "p50"));
    assert_eq!(latency[0].points[1].y, 40.0);
    assert!(load_lines(&report, "concurrency", &specs[2].series).is_empty());
}

#[test]
fn runs_of_one_label_that_differ_in_more_than_the_load_get_lines_of_their_own() {
    let with_osl = |c: u64, osl: u64, tps: f64| {
        let mut r = run("sim", c, tps, 10.0);
        if let Some(h) = r.header.as_mut() {
            h.upstream[0]
                .params
                .insert("output_tokens".into(), osl.into());
        }
        r
    };
    let report = Report {
        runs: vec![
            with_osl(1, 8, 100.0),
            with_osl(1, 64, 40.0),
            with_osl(4, 8, 400.0),
            with_osl(4, 64, 160.0),
            // A repeat at c=4, osl=8 that no group pools: averaged with the first.
            with_osl(4, 8, 420.0),
        ],
        ..Default::default()
    };
    let lines = load_lines(&report, "concurrency", &throughput_series());
    let names: Vec<&str> = lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(names, ["sim osl=8", "sim osl=64"]);
    let xy: Vec<(f64, f64)> = lines[0].points.iter().map(|p| (p.x, p.y)).collect();
    assert_eq!(xy, [(1.0, 100.0), (4.0, 410.0)]);
    let sd = lines[0].points[1].sd.unwrap();
    assert!((sd - 200f64.sqrt()).abs() < 1e-9, "{sd}");
    assert_eq!(lines[1].points.len(), 2);
}

#[test]
fn a_group_is_plotted_at_its_mean_with_its_sd() {
    let mut group = run("a", 2, 200.0, 20.0);
    group.summary.runs = vec!["x".into(), "y".into()];
    group.summary.across_runs.insert(
        "output_throughput_tokens_per_s".into(),
        AcrossRuns {
            n: 2,
            mean: 190.0,
            sd: 10.0,
            cv_pct: Some(5.3),
            ci95: [100.0, 280.0],
        },
    );
    let report = Report {
        runs: vec![run("a", 1, 100.0, 10.0), group],
        ..Default::default()
    };
    let lines = load_lines(&report, "concurrency", &throughput_series());
    let p = &lines[0].points[1];
    assert_eq!((p.x, p.y, p.sd), (2.0, 190.0, Some(10.0)));
    assert_eq!(lines[0].points[0].sd, None);
}

#[test]
fn runs_at_one_load_default_to_the_ttft_distribution() {
    let report = Report {
        runs: vec![run("a", 4, 1.0, 1.0), run("b", 4, 2.0, 2.0)],
        ..Default::default()
    };
    assert_eq!(load_param(&report), None);
    assert_eq!(ChartKind::default_for(&report), ChartKind::TtftCdf);
}

#[test]
fn cdf_points_climb_to_one_over_the_recorded_values() {
    let state = MetricState::of_samples(&[1_000_000, 2_000_000, 2_000_000, 10_000_000]);
    let points = cdf_points(&state).unwrap();
    let fractions: Vec<f64> = points.iter().map(|p| p.1).collect();
    assert_eq!(fractions, [0.0, 0.25, 0.75, 1.0]);
    let expected_ms = [1.0, 1.0, 2.0, 10.0];
    for ((ms, _), want) in points.iter().zip(expected_ms) {
        assert!((ms - want).abs() / want < 2e-3, "{ms} ms, want {want}");
    }
    assert!(wants_log(0.5, 60.0));
    assert!(!wants_log(1.0, 100.0));
}

#[test]
fn charts_without_data_say_what_to_run() {
    let report = Report {
        runs: vec![run("a", 1, 1.0, 1.0)],
        ..Default::default()
    };
    let err = render_svg(&report, ChartKind::TtftCdf).unwrap_err();
    assert!(matches!(&err, ChartError::NoData(m) if m.contains("--no-histograms")));
    let err = render_svg(&report, ChartKind::Timeline).unwrap_err();
    assert!(matches!(&err, ChartError::NoData(m) if m.contains("reduce --every 1s")));
    let err = render_svg(&Report::default(), ChartKind::Load).unwrap_err();
    assert!(matches!(err, ChartError::NoData(_)));
}

#[test]
fn a_timeline_puts_rates_mid_slice_and_in_flight_at_its_end() {
    let mut r = run("a", 1, 1.0, 1.0);
    r.intervals = vec![
        Interval {
            start_s: 0.0,
            end_s: 1.0,
            output_tps: 50.0,
            in_flight: 3,
            ..Interval::default()
        },
        Interval {
            start_s: 1.0,
            end_s: 1.5,
            output_tps: 20.0,
            in_flight: 0,
            ..Interval::default()
        },
    ];
    let report = Report {
        runs: vec![run("b", 2, 1.0, 1.0), r],
        ..Default::default()
    };
    let t = timelines(&report);
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].label, "a");
    assert_eq!(t[0].tokens_per_s, [(0.5, 50.0), (1.25, 20.0)]);
    assert_eq!(t[0].in_flight, [(1.0, 3.0), (1.5, 0.0)]);
    let svg = render_svg(&report, ChartKind::Timeline).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("Requests in flight"));
    assert!(!svg.contains("KV-cache usage"), "no gauges, no gauge panel");
}

#[test]
fn a_timeline_draws_a_panel_per_gauge_the_intervals_carry() {
    let mut r = run("a", 1, 1.0, 1.0);
    let slice = |start_s: f64, kv: f64, power: Option<f64>| {
        let mut gauges = std::collections::BTreeMap::from([("kv_cache_usage".to_string(), kv)]);
        if let Some(p) = power {
            gauges.insert("power_w".to_string(), p);
        }
        Interval {
            start_s,
            end_s: start_s + 1.0,
            output_tps: 10.0,
            gauges,
            ..Interval::default()
        }
    };
    r.intervals = vec![slice(0.0, 0.25, None), slice(1.0, 0.5, Some(240.0))];
    let report = Report {
        runs: vec![r],
        ..Default::default()
    };
    let t = timelines(&report);
    assert_eq!(t[0].gauges["kv_cache_usage"], [(0.5, 0.25), (1.5, 0.5)]);
    assert_eq!(t[0].gauges["power_w"], [(1.5, 240.0)]);
    let svg = render_svg(&report, ChartKind::Timeline).unwrap();
    assert!(
        svg.contains("KV-cache usage") && svg.contains("GPU power"),
        "{svg}"
    );
    assert!(svg.contains("height=\"1600\""), "four panels of 400");
}

#[test]
fn tick_labels_drop_trailing_zeros() {
    assert_eq!(draw::tick(2.0), "2");
    assert_eq!(draw::tick(0.25), "0.25");
    assert_eq!(draw::tick(1500.0), "1500");
    assert_eq!(draw::tick(12.5), "12.5");
    assert_eq!(draw::tick(-0.0001), "0");
}

#[test]
fn metric_keys_name_the_summary_histograms() {
    assert_eq!((Metric::Ttft.key(), Metric::Itl.key()), ("ttft", "itl"));
}

#[test]
fn a_distribution_over_three_decades_is_drawn_on_a_log_axis() {
    let samples: Vec<u64> = [1u64, 3, 10, 30, 100, 1000]
        .iter()
        .map(|ms| ms * 1_000_000)
        .collect();
    let mut r = run("wide", 1, 1.0, 1.0);
    r.summary
        .histograms
        .insert("ttft".into(), MetricState::of_samples(&samples));
    let report = Report {
        runs: vec![r],
        ..Default::default()
    };
    let svg = render_svg(&report, ChartKind::TtftCdf).unwrap();
    // A log axis puts its ticks on powers of ten; a linear one over 0.8..1200 would not.
    assert!(svg.contains("\n100\n") && svg.contains("\n1000\n"), "{svg}");
    assert!(svg.contains("TTFT (ms)"));
}

#[test]
fn other_layouts_refuse_the_chart_formats() {
    use crate::{Format, Style};
    let report = Report {
        runs: vec![run("a", 1, 1.0, 1.0)],
        ..Default::default()
    };
    for format in [Format::Svg, Format::Html] {
        assert!(Style::Vllm
            .render(&report, format, &Default::default())
            .is_err());
        assert!(Style::LlamaBench
            .render(&report, format, &Default::default())
            .is_err());
    }
    let html = Style::Default
        .render(&report, Format::Html, &Default::default())
        .unwrap()
        .text;
    assert_eq!(
        html.matches("<svg").count(),
        0,
        "no histograms, no intervals"
    );
}

#[test]
fn runs_a_chart_leaves_out_are_named() {
    let mut no_load = run("c", 1, 50.0, 5.0);
    no_load.header = None;
    let report = Report {
        runs: vec![run("a", 1, 100.0, 10.0), run("a", 4, 400.0, 40.0), no_load],
        ..Default::default()
    };
    let notes = left_out(&report, ChartKind::Load);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("run c has no concurrency"), "{notes:?}");
    let notes = left_out(&report, ChartKind::TtftCdf);
    assert_eq!(notes.len(), 3, "no run has histograms: {notes:?}");
    assert!(left_out(&report, ChartKind::Timeline).is_empty());
}
