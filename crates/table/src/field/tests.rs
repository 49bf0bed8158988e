//! Field names (`ttft.p99`, `output_tps`, `meta.KEY`, `tg_tps|output_tps`, …) resolved against a
//! hand-made run: headings, units, directions and cells.

use crate::field::*;
use crate::grid::Kind;
use crate::grid::{Cell, Num};
use crate::report::{Report, RunReport};
use std::cmp::Ordering;
use tokenpipe_cli::{Ending, ToolError};
use tokenpipe_format::StatName;
use tokenpipe_format::{Header, Summary};

fn report() -> Report {
    let mut s = Summary {
        label: "m".into(),
        run_id: "r1".into(),
        output_throughput_tokens_per_s: 120.5,
        requests_ok: 8,
        ..Summary::default()
    };
    s.set_stat("ttft", StatName::Percentile(99.0), Some(31.25));
    s.set_stat_in("user_tps", StatName::Percentile(50.0), "tps", Some(90.0));
    s.meta.insert("shape".into(), "8x H200".into());
    let mut h = Header::new("reduce", "r".into(), vec![]);
    let mut up = Header::new("arrivals", "a".into(), vec![]);
    up.params.insert("concurrency".into(), 16.into());
    up.params.insert("rate_per_s".into(), 0.3.into());
    h.upstream.push(up);
    Report {
        runs: vec![RunReport {
            header: Some(h),
            summary: s,
            source: "c16.ndjson".into(),
            ..RunReport::default()
        }],
        ..Default::default()
    }
}

fn cell(name: &str) -> (String, String) {
    let r = report();
    let f = Field::parse(name, &r).unwrap();
    let c = f.cell(&r.runs[0], "m").render(crate::grid::SpreadMode::Cv);
    (f.heading, c)
}

#[test]
fn names_resolve_to_headings_with_units_and_values() {
    assert_eq!(cell("ttft.p99"), ("TTFT p99 [ms]".into(), "31.25".into()));
    assert_eq!(
        cell("ttft_p99_ms"),
        ("TTFT p99 [ms]".into(), "31.25".into())
    );
    assert_eq!(
        cell("user_tps.p50"),
        ("User p50 [tok/s]".into(), "90.00".into())
    );
    assert_eq!(
        cell("output_tps"),
        ("Output [tok/s]".into(), "120.50".into())
    );
    assert_eq!(cell("ok"), ("OK".into(), "8".into()));
    assert_eq!(cell("shape"), ("shape".into(), "8x H200".into()));
    assert_eq!(cell("meta.shape"), ("shape".into(), "8x H200".into()));
    assert_eq!(cell("concurrency"), ("Concurrency".into(), "16".into()));
    assert_eq!(cell("rate"), ("Rate [req/s]".into(), "0.30".into()));
    assert_eq!(cell("file"), ("File".into(), "c16.ndjson".into()));
    assert_eq!(cell("label"), ("Label".into(), "m".into()));
}

#[test]
fn unknown_names_are_bad_input() {
    let r = report();
    let err = Field::parse("ttf.p99", &r).unwrap_err();
    assert_eq!(err.ending(), Ending::BadInput);
    let e = err.to_string();
    assert!(
        e.contains("`ttf.p99`") && e.contains("--list-fields"),
        "{e}"
    );
    assert!(Field::parse("ttft.p98", &r).is_err());
    assert!(Field::parse("meta", &r).is_err());
    // Well-formed names that no run has a value for.
    for name in ["meta.nope", "param.nope", "batch", "goodput", "tg_tps"] {
        assert!(Field::parse(name, &r).is_err(), "{name}");
    }
}

#[test]
fn member_names_read_as_their_short_names_and_whole_numbers_as_counts() {
    let r = report();
    let f = Field::parse("output_throughput_tokens_per_s", &r).unwrap();
    assert_eq!(
        (f.heading.as_str(), f.better),
        ("Output [tok/s]", Better::Higher)
    );
    assert_eq!(
        f.name, "output_throughput_tokens_per_s",
        "machine columns keep the name"
    );
    let mut r = r;
    r.runs[0].summary.requests_sent = Some(8);
    let f = Field::parse("requests_sent", &r).unwrap();
    assert_eq!(f.kind, Kind::Count);
    assert_eq!(
        f.cell(&r.runs[0], "m").render(crate::grid::SpreadMode::Cv),
        "8"
    );
}

#[test]
fn better_follows_the_unit() {
    let r = report();
    let better = |n: &str| Field::parse(n, &r).unwrap().better;
    assert_eq!(better("ttft.p99"), Better::Lower);
    assert_eq!(better("user_tps.p50"), Better::Higher);
    assert_eq!(better("output_tps"), Better::Higher);
    assert_eq!(better("label"), Better::Neither);
}

#[test]
fn natural_order_reads_digits_as_numbers() {
    let mut v = vec!["c16", "c2", "c1", "b", "c02x", "c2a"];
    v.sort_by(|a, b| natural_cmp(a, b));
    assert_eq!(v, ["b", "c1", "c2", "c2a", "c02x", "c16"]);
    assert_eq!(
        compare_cells(&Cell::Missing, &Cell::Num(Num::value(1.0))),
        Ordering::Greater
    );
}

#[test]
fn the_field_list_names_what_the_input_has() {
    let names: Vec<String> = list_fields(&report()).into_iter().map(|(n, _)| n).collect();
    for want in [
        "label",
        "output_tps",
        "ttft.p99",
        "user_tps.p50",
        "meta.shape",
        "concurrency",
        "rate",
    ] {
        assert!(names.contains(&want.to_string()), "{want} in {names:?}");
    }
    assert!(!names.contains(&"goodput".to_string()), "{names:?}");
}

#[test]
fn rate_statistics_read_as_words_with_their_unit() {
    let mut r = report();
    r.runs[0]
        .summary
        .set_stat_in("user_gen_tps", StatName::Mean, "tps", Some(95.5));
    let f = Field::parse("user_gen_tps.mean", &r).unwrap();
    assert_eq!(f.heading, "User generation mean [tok/s]");
    assert_eq!(f.better, Better::Higher);
}

#[test]
fn runs_counts_the_runs_a_row_stands_for() {
    let mut r = report();
    let mut group = r.runs[0].clone();
    group.summary.runs = vec!["a".into(), "b".into(), "c".into()];
    r.runs.push(group);
    let f = Field::parse("runs", &r).unwrap();
    assert_eq!((f.heading.as_str(), f.kind), ("Runs", Kind::Count));
    assert!(f.is_numeric());
    let shown: Vec<String> = r
        .runs
        .iter()
        .map(|run| f.cell(run, "m").render(crate::grid::SpreadMode::Cv))
        .collect();
    assert_eq!(shown, ["1", "3"]);
    let names: Vec<String> = list_fields(&r).into_iter().map(|(n, _)| n).collect();
    assert!(names.contains(&"runs".to_string()), "{names:?}");
}

#[test]
fn a_or_b_reads_the_first_field_each_run_has() {
    let mut r = report();
    let mut batch = r.runs[0].clone();
    batch.summary.llama_benchy = Some(
        serde_json::from_value(serde_json::json!({
            "batches": 50, "net_latency_ms": 0.0,
            "tg_tps": {"mean": 57.22, "std": 0.15, "cv_pct": 0.26, "n": 50, "per": "batch"}
        }))
        .unwrap(),
    );
    r.runs.push(batch);
    let f = Field::parse("tg_tps|output_tps", &r).unwrap();
    assert_eq!(f.heading, "Decode [t/s] or Output [tok/s]");
    assert_eq!(f.name, "tg_tps|output_tps", "machine columns keep the name");
    assert_eq!((f.better, f.kind), (Better::Higher, Kind::Value));
    assert!(f.is_numeric());
    let values: Vec<Option<f64>> = r.runs.iter().map(|run| f.cell(run, "m").number()).collect();
    assert_eq!(values, [Some(120.5), Some(57.22)]);
    // Alternatives that disagree on direction have none; a run with none of them is missing.
    let mixed = Field::parse("ttft.p99 | output_tps", &r).unwrap();
    assert_eq!(mixed.better, Better::Neither);
    let only_benchy = Field::parse("tg_tps|goodput", &r);
    assert!(only_benchy.is_err(), "every alternative must be a field");
    let f = Field::parse("tg_tps", &r).unwrap();
    assert_eq!(f.cell(&r.runs[0], "m"), Cell::Missing);
    assert!(Field::parse("tg_tps||output_tps", &r).is_err());
}
