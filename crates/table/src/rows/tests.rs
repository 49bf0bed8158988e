use super::*;

#[test]
fn failure_kinds_and_the_run_s_own_ends_are_rows_a_group_reads_per_run() {
    let run = |id: &str, runs: usize, errors: &[(&str, u64)]| crate::RunReport {
        header: None,
        summary: Summary {
            run_id: id.into(),
            runs: (0..runs).map(|i| format!("{id}-{i}")).collect(),
            errors: errors.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
            requests_failed_server: Some(
                errors
                    .iter()
                    .filter(|(k, _)| *k == "http")
                    .map(|(_, n)| n)
                    .sum(),
            ),
            ..Summary::default()
        },
        ..Default::default()
    };
    let t = MetricTable::from_report(&Report {
        runs: vec![
            run("one", 0, &[("http", 2), ("cancelled", 1)]),
            run("group", 2, &[("http", 3), ("not_sent", 4)]),
        ],
        ..Default::default()
    });
    let cells = t.to_grid().text_rows(crate::grid::SpreadMode::Cv);
    let names: Vec<&str> = cells.iter().map(|r| r[0].as_str()).take(6).collect();
    assert_eq!(
        names,
        [
            "Successful requests",
            "Failed requests",
            "Failed: http",
            "Cancelled requests",
            "Requests not sent",
            "Duration (s)"
        ]
    );
    assert_eq!(
        cells[2][1..],
        ["2", "1.50"],
        "the group's mean over its 2 runs"
    );
    assert_eq!(cells[3][1..], ["1", "0"]);
    assert_eq!(cells[4][1..], ["0", "2"]);
}

#[test]
fn a_client_that_did_not_keep_up_is_marked() {
    let run = |kept_up: Option<bool>| crate::RunReport {
        header: None,
        summary: Summary {
            run_id: format!("{kept_up:?}"),
            client_kept_up: kept_up,
            ..Summary::default()
        },
        ..Default::default()
    };
    let all_fine = MetricTable::from_report(&Report {
        runs: vec![run(Some(true)), run(None)],
        ..Default::default()
    });
    assert!(!all_fine.rows.iter().any(|r| r.name == "Client kept up"));
    let t = MetricTable::from_report(&Report {
        runs: vec![run(Some(true)), run(Some(false)), run(None)],
        ..Default::default()
    });
    let cells = t.to_grid().text_rows(crate::grid::SpreadMode::Cv);
    let row = cells.iter().find(|r| r[0] == "Client kept up").unwrap();
    assert_eq!(row[1..], ["yes", "no", "-"]);
}

#[test]
fn empty_label_shows_run_id_and_percentile_rows_follow_the_summaries() {
    let mut s = Summary {
        run_id: "r1".into(),
        ..Summary::default()
    };
    let t = MetricTable::from_report(&Report {
        runs: vec![crate::RunReport {
            header: None,
            summary: s.clone(),
            ..Default::default()
        }],
        ..Default::default()
    });
    assert_eq!(t.labels, ["r1"]);
    let names: Vec<&str> = t.rows.iter().map(|r| r.name.as_str()).collect();
    assert!(names.contains(&"P90 TTFT (ms)"), "{names:?}");
    assert_eq!(t.rows[6].cells, [Cell::Missing]);
    s.percentiles = vec![50.0, 99.9];
    s.set_stat("ttft", StatName::Percentile(99.9), Some(7.5));
    let t = MetricTable::from_report(&Report {
        runs: vec![crate::RunReport {
            header: None,
            summary: s,
            ..Default::default()
        }],
        ..Default::default()
    });
    let row = t.rows.iter().find(|r| r.name == "P99.9 TTFT (ms)").unwrap();
    assert_eq!(row.cells, [Cell::Num(Num::value(7.5))]);
    assert!(!t.rows.iter().any(|r| r.name == "P90 TTFT (ms)"));
}

#[test]
fn reasoning_and_cache_rows_appear_only_when_a_run_has_them() {
    let run = |id: &str, thinking: bool| {
        let mut summary = Summary {
            run_id: id.into(),
            ..Summary::default()
        };
        if thinking {
            summary.set_stat("ttfa", StatName::Mean, Some(80.0));
            summary.set_stat("ttfa", StatName::Percentile(99.0), Some(90.0));
            summary.reasoning_tokens = Some(25);
            summary.cache_hit_ratio = Some(0.75);
        }
        crate::RunReport {
            header: None,
            summary,
            ..Default::default()
        }
    };
    let plain = MetricTable::from_report(&Report {
        runs: vec![run("a", false)],
        ..Default::default()
    });
    let names =
        |t: &MetricTable| -> Vec<String> { t.rows.iter().map(|r| r.name.clone()).collect() };
    for name in names(&plain) {
        assert!(
            !name.contains("TTFA") && !name.contains("Reasoning") && !name.contains("Cache"),
            "{name}"
        );
    }
    let t = MetricTable::from_report(&Report {
        runs: vec![run("a", false), run("b", true)],
        ..Default::default()
    });
    let cells = t.to_grid().text_rows(crate::grid::SpreadMode::Cv);
    let row = |name: &str| {
        cells
            .iter()
            .find(|r| r[0] == name)
            .unwrap_or_else(|| panic!("no {name}: {:?}", names(&t)))[1..]
            .to_vec()
    };
    assert_eq!(row("Mean TTFA (ms)"), ["-", "80.00"]);
    assert_eq!(row("P99 TTFA (ms)"), ["-", "90.00"]);
    assert_eq!(row("Reasoning tokens"), ["-", "25"]);
    assert_eq!(row("Cache hit ratio"), ["-", "0.75"]);
    assert!(!names(&t).iter().any(|n| n == "Answer tokens"));
}

#[test]
fn the_server_s_figures_are_rows_only_where_a_run_has_them() {
    let run = |spec: Option<f64>, power: Option<f64>| crate::RunReport {
        header: None,
        summary: Summary {
            spec_acceptance_rate: spec,
            spec_acceptance_length: spec.map(|r| 1.0 + 3.0 * r),
            power_w_mean: power,
            gauges: power
                .map(|_| {
                    let g = tokenpipe_format::GaugeSummary {
                        mean: 0.25,
                        max: 0.5,
                    };
                    ("kv_cache_usage".to_string(), g)
                })
                .into_iter()
                .collect(),
            ..Summary::default()
        },
        ..Default::default()
    };
    let names =
        |t: &MetricTable| -> Vec<String> { t.rows.iter().map(|r| r.name.clone()).collect() };
    let plain = MetricTable::from_report(&Report {
        runs: vec![run(None, None)],
        ..Default::default()
    });
    for figure in vocab::SERVER_FIGURES {
        assert!(
            !names(&plain).contains(&figure.heading.to_string()),
            "{figure:?}"
        );
    }
    let t = MetricTable::from_report(&Report {
        runs: vec![run(Some(0.5), None), run(None, Some(210.0))],
        ..Default::default()
    });
    let shown = names(&t);
    let tail: Vec<&str> = shown
        .iter()
        .rev()
        .take(5)
        .rev()
        .map(String::as_str)
        .collect();
    assert_eq!(
        tail,
        [
            "Draft acceptance rate",
            "Mean acceptance length",
            "Mean KV-cache usage",
            "Peak KV-cache usage",
            "Mean GPU power [W]"
        ]
    );
    let cells = t.to_grid().text_rows(crate::grid::SpreadMode::Cv);
    let row = |name: &str| cells.iter().find(|r| r[0] == name).unwrap()[1..].to_vec();
    assert_eq!(row("Mean acceptance length"), ["2.50", "-"]);
    assert_eq!(row("Mean GPU power [W]"), ["-", "210.00"]);
}
