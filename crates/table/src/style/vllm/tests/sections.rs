//! The latency sections `--percentile-metrics` and `--metric-percentiles` choose, as vLLM's
//! `process_one_metric` prints them: which sections, in which order, which `P…` lines.

use super::*;

/// vLLM's c10 result of seed 002 as it would be saved with `--percentile-metrics
/// ttft,tpot,itl,e2el --metric-percentiles 50,90,99`.
fn c10_with_e2el_and_three_percentiles() -> RunReport {
    vllm_run(
        "c10",
        json!({
            "completed": 10, "failed": 0, "duration": 10.5234,
            "total_input_tokens": 10240, "total_output_tokens": 1280,
            "request_throughput": 0.9503, "output_throughput": 121.6356,
            "max_output_tokens_per_s": 170.0, "max_concurrent_requests": 10,
            "total_token_throughput": 1094.7913,
            "mean_ttft_ms": 1693.0812, "median_ttft_ms": 1731.7203, "p50_ttft_ms": 1731.7203,
            "p90_ttft_ms": 2401.5, "p99_ttft_ms": 2623.2588,
            "mean_tpot_ms": 68.4211, "median_tpot_ms": 68.1187, "p50_tpot_ms": 68.1187,
            "p90_tpot_ms": 74.004, "p99_tpot_ms": 76.7912,
            "mean_itl_ms": 68.4177, "median_itl_ms": 62.2914, "p50_itl_ms": 62.2914,
            "p90_itl_ms": 80.125, "p99_itl_ms": 515.5803,
            "mean_e2el_ms": 10382.5, "median_e2el_ms": 10380.0, "p50_e2el_ms": 10380.0,
            "p90_e2el_ms": 10501.25, "p99_e2el_ms": 10520.999,
        }),
    )
}

/// The head of seed 002's c10 block, which no section choice changes.
const C10_HEAD: &str = "\
============ Serving Benchmark Result ============
Successful requests:                     10        
Failed requests:                         0         
Benchmark duration (s):                  10.52     
Total input tokens:                      10240     
Total generated tokens:                  1280      
Request throughput (req/s):              0.95      
Output token throughput (tok/s):         121.64    
Peak output token throughput (tok/s):    170.00    
Peak concurrent requests:                10.00     
Total token throughput (tok/s):          1094.79   
";

#[test]
fn e2el_is_printed_only_when_chosen_and_always_last() {
    let run = c10_with_e2el_and_three_percentiles();
    let report = Report {
        runs: vec![run.clone()],
        ..Default::default()
    };
    // vLLM's defaults: the figures' E2EL, P50 and P90 are not printed, as vLLM printed c10.
    let want_default =
        include_str!("../../../../../../tests/fixtures/table/vllm_seed_002_blocks.txt")
            .split_inclusive('\n')
            .skip(24)
            .take(24)
            .collect::<String>();
    assert_eq!(
        blocks(&report, &Sections::default()).unwrap() + "\n",
        want_default
    );
    // Asked for in any order, the sections keep vLLM's; E2EL ends the block.
    let got = blocks(&report, &chosen(&["e2el", "itl", "ttft", "tpot"], &[99.0])).unwrap();
    let want = format!(
        "{C10_HEAD}\
---------------Time to First Token----------------
Mean TTFT (ms):                          1693.08   
Median TTFT (ms):                        1731.72   
P99 TTFT (ms):                           2623.26   
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          68.42     
Median TPOT (ms):                        68.12     
P99 TPOT (ms):                           76.79     
---------------Inter-token Latency----------------
Mean ITL (ms):                           68.42     
Median ITL (ms):                         62.29     
P99 ITL (ms):                            515.58    
----------------End-to-end Latency----------------
Mean E2EL (ms):                          10382.50  
Median E2EL (ms):                        10380.00  
P99 E2EL (ms):                           10521.00  
=================================================="
    );
    assert_eq!(got, want);
    // One metric alone: its section only.
    let got = blocks(&report, &chosen(&["e2el"], &[99.0])).unwrap();
    assert_eq!(
        got,
        format!(
            "{C10_HEAD}\
----------------End-to-end Latency----------------
Mean E2EL (ms):                          10382.50  
Median E2EL (ms):                        10380.00  
P99 E2EL (ms):                           10521.00  
=================================================="
        )
    );
}

#[test]
fn each_chosen_percentile_gets_a_line_in_the_order_given() {
    let report = Report {
        runs: vec![c10_with_e2el_and_three_percentiles()],
        ..Default::default()
    };
    let got = blocks(
        &report,
        &chosen(&["ttft", "tpot", "itl"], &[50.0, 90.0, 99.0]),
    )
    .unwrap();
    let want = format!(
        "{C10_HEAD}\
---------------Time to First Token----------------
Mean TTFT (ms):                          1693.08   
Median TTFT (ms):                        1731.72   
P50 TTFT (ms):                           1731.72   
P90 TTFT (ms):                           2401.50   
P99 TTFT (ms):                           2623.26   
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          68.42     
Median TPOT (ms):                        68.12     
P50 TPOT (ms):                           68.12     
P90 TPOT (ms):                           74.00     
P99 TPOT (ms):                           76.79     
---------------Inter-token Latency----------------
Mean ITL (ms):                           68.42     
Median ITL (ms):                         62.29     
P50 ITL (ms):                            62.29     
P90 ITL (ms):                            80.12     
P99 ITL (ms):                            515.58    
=================================================="
    );
    assert_eq!(got, want);
    // vLLM keeps the order given, not an increasing one.
    let got = blocks(&report, &chosen(&["ttft"], &[99.0, 50.0])).unwrap();
    assert!(
        got.contains("P99 TTFT (ms):                           2623.26   \nP50 TTFT"),
        "{got}"
    );
}

#[test]
fn our_summary_gives_p50_beside_the_median_when_chosen() {
    let got = block(&figures(&ours()), "m", &chosen(&["itl"], &[50.0])).unwrap();
    assert!(
        got.ends_with(
            "---------------Inter-token Latency----------------\n\
             Mean ITL (ms):                           10.00     \n\
             Median ITL (ms):                         9.50      \n\
             P50 ITL (ms):                            9.50      \n\
             =================================================="
        ),
        "{got}"
    );
}

#[test]
fn a_chosen_percentile_a_run_lacks_names_the_run_and_key() {
    let report = Report {
        runs: seed_runs(),
        ..Default::default()
    };
    let err = blocks(&report, &chosen(&["ttft"], &[90.0])).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("run c1: no vLLM figure \"p90_ttft_ms\" to print"),
        "{err}"
    );
    assert_eq!(err.ending(), Ending::BadInput);
}

#[test]
fn unknown_metrics_and_percentiles_out_of_range_are_refused() {
    let opts = |metrics: &[&str], percentiles: &[f64]| Options {
        percentile_metrics: Some(metrics.iter().map(|m| m.to_string()).collect()),
        metric_percentiles: Some(percentiles.to_vec()),
        ..Options::default()
    };
    let err = Sections::from_options(&opts(&["ttft", "ttfr"], &[99.0])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "--percentile-metrics: `ttfr` is not one of vLLM's metrics (ttft, tpot, itl, e2el)"
    );
    let err = Sections::from_options(&opts(&["ttft"], &[101.0])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "--metric-percentiles: a percentile is from 0 to 100, got 101"
    );
    assert_eq!(err.ending(), Ending::BadInput);
    assert_eq!(
        Sections::from_options(&Options::default()).unwrap(),
        Sections::default()
    );
}
