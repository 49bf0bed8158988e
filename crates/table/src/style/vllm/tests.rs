//! The block's exact text: seed blocks of `vllm bench serve` reproduced from their own numbers,
//! and our own figures written in the same lines.

use super::*;
use crate::options::Options;
use crate::report::{Report, RunReport};
use tokenpipe_cli::{Ending, ToolError};
use tokenpipe_format::Header;

/// The sections `--percentile-metrics METRICS --metric-percentiles PERCENTILES` choose.
fn chosen(metrics: &[&str], percentiles: &[f64]) -> Sections {
    Sections::from_options(&Options {
        percentile_metrics: Some(metrics.iter().map(|m| m.to_string()).collect()),
        metric_percentiles: Some(percentiles.to_vec()),
        ..Options::default()
    })
    .unwrap()
}

/// A run whose summary carries `figures` as its `vllm` member.
fn vllm_run(label: &str, figures: Value) -> RunReport {
    let Value::Object(map) = figures else {
        panic!("figures must be an object")
    };
    RunReport {
        header: None,
        summary: Summary {
            label: label.into(),
            vllm: Some(map.into_iter().collect()),
            ..Summary::default()
        },
        ..Default::default()
    }
}

/// Three results as vLLM computed them (more digits than it prints), the ones whose blocks are
/// in the fixture.
fn seed_runs() -> Vec<RunReport> {
    vec![
        vllm_run(
            "c1",
            json!({
                "completed": 1, "failed": 0, "duration": 6.6812,
                "total_input_tokens": 1024, "total_output_tokens": 128,
                "request_throughput": 0.1497, "request_goodput": null,
                "output_throughput": 19.1518, "max_output_tokens_per_s": 20.0,
                "max_concurrent_requests": 1, "total_token_throughput": 172.3938,
                "mean_ttft_ms": 83.9104, "median_ttft_ms": 83.9104, "std_ttft_ms": 0.0,
                "p99_ttft_ms": 83.9104,
                "mean_tpot_ms": 51.9487, "median_tpot_ms": 51.9487, "std_tpot_ms": 0.0,
                "p99_tpot_ms": 51.9487,
                "mean_itl_ms": 51.9487, "median_itl_ms": 51.7501, "std_itl_ms": 1.2,
                "p99_itl_ms": 55.0021,
            }),
        ),
        vllm_run(
            "c10",
            json!({
                "completed": 10, "failed": 0, "duration": 10.5234,
                "total_input_tokens": 10240, "total_output_tokens": 1280,
                "request_throughput": 0.9503, "output_throughput": 121.6356,
                "max_output_tokens_per_s": 170.0, "max_concurrent_requests": 10,
                "total_token_throughput": 1094.7913,
                "mean_ttft_ms": 1693.0812, "median_ttft_ms": 1731.7203, "p99_ttft_ms": 2623.2588,
                "mean_tpot_ms": 68.4211, "median_tpot_ms": 68.1187, "p99_tpot_ms": 76.7912,
                "mean_itl_ms": 68.4177, "median_itl_ms": 62.2914, "p99_itl_ms": 515.5803,
            }),
        ),
        vllm_run(
            "c100",
            json!({
                "completed": 100, "failed": 0, "duration": 37.8712,
                "total_input_tokens": 102400, "total_output_tokens": 12800,
                "request_throughput": 2.6404, "output_throughput": 338.0279,
                "max_output_tokens_per_s": 900.0, "max_concurrent_requests": 100,
                "total_token_throughput": 3042.2312,
                "mean_ttft_ms": 11606.981, "median_ttft_ms": 11121.38, "p99_ttft_ms": 24464.041,
                "mean_tpot_ms": 190.384, "median_tpot_ms": 193.391, "p99_tpot_ms": 260.849,
                "mean_itl_ms": 190.38, "median_itl_ms": 111.25, "p99_itl_ms": 539.9,
            }),
        ),
    ]
}

#[test]
fn seed_blocks_are_reproduced_line_for_line() {
    let want = include_str!("../../../../../tests/fixtures/table/vllm_seed_002_blocks.txt");
    let got = blocks(
        &Report {
            runs: seed_runs(),
            ..Default::default()
        },
        &Sections::default(),
    )
    .unwrap();
    let want_lines: Vec<&str> = want.trim_end_matches('\n').split('\n').collect();
    let got_lines: Vec<&str> = got.split('\n').collect();
    assert_eq!(got_lines.len(), want_lines.len(), "{got}");
    for (i, (g, w)) in got_lines.iter().zip(&want_lines).enumerate() {
        assert_eq!(g, w, "line {}", i + 1);
    }
}

/// Our own summary, without a `vllm` member: a closed loop of 4 with goodput, p90 and E2EL.
fn ours() -> RunReport {
    let mut s = Summary {
        label: "m".into(),
        requests_ok: 3,
        requests_failed: 1,
        duration_s: 2.004,
        input_tokens: 300,
        output_tokens: 30,
        request_throughput_per_s: 1.497,
        output_throughput_tokens_per_s: 14.97,
        total_throughput_tokens_per_s: 164.67,
        goodput_per_s: Some(0.998),
        peak_concurrency: Some(4),
        percentiles: vec![50.0, 90.0, 99.0],
        ..Summary::default()
    };
    for metric in ["ttft", "tpot", "itl", "e2el"] {
        s.set_stat(metric, StatName::Mean, Some(10.0));
        s.set_stat(metric, StatName::Std, Some(1.0));
        s.set_stat(metric, StatName::Percentile(50.0), Some(9.5));
        s.set_stat(metric, StatName::Percentile(90.0), Some(12.345));
        s.set_stat(metric, StatName::Percentile(99.0), None);
    }
    s.set_stat("dispatch_lag", StatName::Mean, Some(0.1));
    let mut header = Header::new("reduce", "r".into(), vec![]);
    let mut up = Header::new("arrivals", "a".into(), vec![]);
    up.params.insert("concurrency".into(), 4.into());
    header.upstream.push(up);
    RunReport {
        header: Some(header),
        summary: s,
        ..Default::default()
    }
}

#[test]
fn our_figures_fill_the_same_lines() {
    let got = block(
        &figures(&ours()),
        "m",
        &chosen(&["ttft", "tpot", "itl", "e2el"], &[90.0, 99.0]),
    )
    .unwrap();
    let mut want: Vec<String> = [
        "============ Serving Benchmark Result ============",
        "Successful requests:                     3         ",
        "Failed requests:                         1         ",
        "Maximum request concurrency:             4         ",
        "Benchmark duration (s):                  2.00      ",
        "Total input tokens:                      300       ",
        "Total generated tokens:                  30        ",
        "Request throughput (req/s):              1.50      ",
        "Request goodput (req/s):                 1.00      ",
        "Output token throughput (tok/s):         14.97     ",
        // No peak output throughput: this summary has none, and no line is made up.
        "Peak concurrent requests:                4.00      ",
        "Total token throughput (tok/s):          164.67    ",
    ]
    .map(String::from)
    .to_vec();
    for (name, title) in [
        ("TTFT", "---------------Time to First Token----------------"),
        ("TPOT", "-----Time per Output Token (excl. 1st token)------"),
        ("ITL", "---------------Inter-token Latency----------------"),
        ("E2EL", "----------------End-to-end Latency----------------"),
    ] {
        want.push(title.into());
        want.extend([
            format!("{:<40} 10.00     ", format!("Mean {name} (ms):")),
            format!("{:<40} 9.50      ", format!("Median {name} (ms):")),
            format!("{:<40} 12.35     ", format!("P90 {name} (ms):")),
            // A percentile without a value reads 0, as vLLM's `np.percentile(x or 0)`.
            format!("{:<40} 0.00      ", format!("P99 {name} (ms):")),
        ]);
    }
    want.push("=".repeat(50));
    assert_eq!(got, want.join("\n"));
}

#[test]
fn the_vllm_member_wins_over_our_fields_and_lines_follow_its_keys() {
    let mut run = ours();
    run.summary.vllm = Some(
        [
            ("completed", json!(7)),
            ("failed", json!(0)),
            ("duration", json!(1.0)),
            ("request_goodput", Value::Null),
            ("mean_ttft_ms", json!(1.0)),
            ("median_ttft_ms", json!(2.0)),
            ("p99.9_ttft_ms", json!(4.0)),
            ("p50_ttft_ms", json!(2.5)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect(),
    );
    let got = block(&figures(&run), "m", &chosen(&["ttft"], &[50.0, 99.9])).unwrap();
    assert_eq!(
        got,
        [
            "============ Serving Benchmark Result ============",
            "Successful requests:                     7         ",
            "Failed requests:                         0         ",
            "Maximum request concurrency:             4         ",
            "Benchmark duration (s):                  1.00      ",
            "---------------Time to First Token----------------",
            "Mean TTFT (ms):                          1.00      ",
            "Median TTFT (ms):                        2.00      ",
            "P50 TTFT (ms):                           2.50      ",
            "P99.9 TTFT (ms):                         4.00      ",
            "==================================================",
        ]
        .join("\n")
    );
}

#[test]
fn counts_read_as_python_writes_them() {
    let n = |v: Value| match v {
        Value::Number(n) => python_str(&n),
        _ => unreachable!(),
    };
    assert_eq!(n(json!(12)), "12");
    assert_eq!(n(json!(12.0)), "12.0");
    assert_eq!(n(json!(2.5)), "2.5");
    // From 1e16 on, Python's str is scientific with a signed exponent of two digits or more.
    assert_eq!(n(json!(1e16)), "1e+16");
    assert_eq!(n(json!(1.5e20)), "1.5e+20");
    assert_eq!(n(json!(1e308)), "1e+308");
    assert_eq!(n(json!(9999999999999998.0)), "9999999999999998.0");
}

#[test]
fn a_figure_that_is_not_a_number_names_the_run_and_key() {
    let run = vllm_run("bad", json!({"completed": "many"}));
    let err = blocks(
        &Report {
            runs: vec![run],
            ..Default::default()
        },
        &Sections::default(),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("run bad: vLLM figure \"completed\": expected a number"),
        "{err}"
    );
    assert_eq!(err.ending(), Ending::BadInput);
}

#[test]
fn a_finite_request_rate_has_its_line_after_the_concurrency_limit() {
    let rate_line = "Request rate configured (RPS):           2.50      ";
    // Our open loop: arrivals' rate, as `vllm bench serve --request-rate 2.5` prints it.
    let mut run = ours();
    if let Some(h) = run.header.as_mut() {
        h.upstream[0].params.insert("rate_per_s".into(), json!(2.5));
    }
    let got = block(&figures(&run), "m", &Sections::default()).unwrap();
    let lines: Vec<&str> = got.lines().collect();
    assert_eq!(
        lines[3..6],
        [
            "Maximum request concurrency:             4         ",
            rate_line,
            "Benchmark duration (s):                  2.00      "
        ]
    );
    // A closed loop has no rate, and vLLM's "inf" has no line.
    let got = block(&figures(&ours()), "m", &Sections::default()).unwrap();
    assert!(!got.contains("Request rate"), "{got}");
    let inf = vllm_run(
        "inf",
        json!({"completed": 1, "failed": 0, "duration": 1.0, "request_rate": "inf"}),
    );
    let got = block(&figures(&inf), "inf", &Sections::default()).unwrap();
    assert!(!got.contains("Request rate"), "{got}");
    let two = vllm_run(
        "two",
        json!({"completed": 1, "failed": 0, "duration": 1.0, "request_rate": 2.5}),
    );
    let got = block(&figures(&two), "two", &Sections::default()).unwrap();
    assert_eq!(got.lines().nth(3), Some(rate_line), "{got}");
}

mod sections;
