//! llama-benchy's own figures, recomputed from our events: `tests/fixtures/llama_benchy/` holds
//! two batch runs as fire writes them (timings chosen by hand, `make_events.py`) and what
//! llama-benchy 0.4.0's own `results.py` computed from the same timings
//! (`scripts/real/llama-benchy-recompute.py`): its JSON report and its Markdown table. reduce
//! must give every figure of the JSON, and `table --style llama-bench` the table byte for byte.

use crate::common;
use common::*;
use serde_json::Value;

const DIR: &str = "tests/fixtures/llama_benchy";
const RUNS: [&str; 2] = ["c1-depth0", "c4-depth1024"];

/// reduce's output for one fixture run.
fn reduced(name: &str) -> Vec<u8> {
    let out = run(&cmd("reduce", &[&format!("{DIR}/{name}.ndjson")]), b"");
    assert_ok(&out, "reduce");
    out.stdout
}

/// llama-benchy's name for each figure, and ours under `llama_benchy`.
const FIGURES: [(&str, &str); 9] = [
    ("pp_throughput", "pp_tps"),
    ("pp_req_throughput", "pp_tps_request"),
    ("tg_throughput", "tg_tps"),
    ("tg_req_throughput", "tg_tps_request"),
    ("peak_throughput", "peak_tps"),
    ("peak_req_throughput", "peak_tps_request"),
    ("ttfr", "ttfr_ms"),
    ("est_ppt", "est_ppt_ms"),
    ("e2e_ttft", "e2e_ttft_ms"),
];

fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1e-9),
        "{what}: {got} against llama-benchy's {want}"
    );
}

#[test]
fn reduce_gives_every_figure_llama_benchy_computed_from_the_same_timings() {
    let text = std::fs::read_to_string(format!("{DIR}/llama-benchy.json")).expect("the fixture");
    let want: Value = serde_json::from_str(&text).expect("fixture JSON");
    let benchmarks = want["benchmarks"].as_array().expect("benchmarks");
    assert_eq!(benchmarks.len(), RUNS.len());
    let mut latencies = Vec::new();
    for (run, bench) in RUNS.iter().zip(benchmarks) {
        let recs = records(&reduced(run));
        let summaries = of_type(&recs, "summary");
        assert_eq!(summaries.len(), 1, "{run}");
        let got = &summaries[0]["llama_benchy"];
        assert_eq!(got["concurrency"], bench["concurrency"], "{run}");
        for (theirs, ours) in FIGURES {
            let (w, g) = (&bench[theirs], &got[ours]);
            assert!(!w.is_null(), "{run}: llama-benchy has {theirs}");
            let what = format!("{run}: {ours}");
            close(
                g["mean"].as_f64().expect(&what),
                w["mean"].as_f64().unwrap(),
                &what,
            );
            close(
                g["std"].as_f64().expect(&what),
                w["std"].as_f64().unwrap(),
                &what,
            );
            let values = w["values"].as_array().unwrap().len() as u64;
            if let Some(n) = g.get("n") {
                assert_eq!(n.as_u64(), Some(values), "{what}: values");
            }
        }
        latencies.push(got["net_latency_ms"].as_f64().expect("net_latency_ms"));
    }
    // fire's measured latency of each run (its header's net_latency_ms), subtracted as
    // llama-benchy subtracts its own; its report names the last one.
    assert_eq!(latencies, [2.5, 3.25]);
    assert_eq!(want["latency_ms"].as_f64(), Some(3.25));
}

#[test]
fn the_style_prints_llama_benchys_own_table_byte_for_byte() {
    let mut summaries = Vec::new();
    for run in RUNS {
        summaries.extend(reduced(run));
    }
    let out = run(&cmd("table", &["--style", "llama-bench"]), &summaries);
    assert_ok(&out, "table");
    let want = std::fs::read_to_string(format!("{DIR}/llama-benchy.md")).expect("the fixture");
    let got = String::from_utf8(out.stdout).expect("utf-8");
    let (own, _seed_tables) = got.split_once("\n\n").expect("several tables");
    assert_eq!(format!("{own}\n"), want);
}
