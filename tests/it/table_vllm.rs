//! `table --style vllm` and vLLM result files as input, through the real binaries: a run of
//! ours (`arrivals | fire | reduce --vllm-compatible` against `simserve`) beside a saved
//! `vllm bench serve` result.

use crate::common;
use common::*;

/// A `vllm bench serve --save-result` file, pretty-printed as vLLM writes it.
const VLLM_RESULT: &str = r#"{
    "date": "20250101-120000",
    "backend": "vllm",
    "model_id": "Qwen/Qwen3-VL-32B-Instruct-FP8",
    "num_prompts": 10,
    "request_rate": "inf",
    "max_concurrency": null,
    "duration": 10.5234,
    "completed": 10,
    "failed": 0,
    "total_input_tokens": 10240,
    "total_output_tokens": 1280,
    "request_throughput": 0.9503,
    "request_goodput": null,
    "output_throughput": 121.6356,
    "total_token_throughput": 1094.7913,
    "max_output_tokens_per_s": 170.0,
    "max_concurrent_requests": 10,
    "mean_ttft_ms": 1693.0812,
    "median_ttft_ms": 1731.7203,
    "std_ttft_ms": 400.1,
    "p99_ttft_ms": 2623.2588,
    "mean_tpot_ms": 68.4211,
    "median_tpot_ms": 68.1187,
    "std_tpot_ms": 3.2,
    "p99_tpot_ms": 76.7912,
    "mean_itl_ms": 68.4177,
    "median_itl_ms": 62.2914,
    "std_itl_ms": 80.0,
    "p99_itl_ms": 515.5803
}
"#;

/// The block vLLM printed for that result (seed 002).
const VLLM_BLOCK: &str = "\
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
==================================================
";

/// Runs a closed loop of 2 against simserve and saves reduce's vLLM-compatible summary.
fn our_summary(path: &std::path::Path) {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "5"]);
    let outs = pipeline(
        &[
            cmd(
                "arrivals",
                &[
                    "--concurrency",
                    "2",
                    "-n",
                    "4",
                    "--input-tokens",
                    "4",
                    "--output-tokens",
                    "3",
                ],
            ),
            cmd("fire", &["--url", server.url.as_str()]),
            cmd(
                "reduce",
                &[
                    "--label",
                    "sim",
                    "--vllm-compatible",
                    "--percentiles",
                    "50,99",
                ],
            ),
        ],
        None,
    );
    for (o, what) in outs.iter().zip(["arrivals", "fire", "reduce"]) {
        assert_ok(o, what);
    }
    std::fs::write(path, &outs[2].stdout).expect("write summary");
}

#[test]
fn vllm_style_writes_a_vllm_result_file_and_our_run_as_vllm_blocks() {
    let vllm = temp_path("c10.json");
    let ours = temp_path("sim.summary.ndjson");
    std::fs::write(&vllm, VLLM_RESULT).expect("write vLLM result");
    our_summary(&ours);
    let paths = [vllm.to_string_lossy(), ours.to_string_lossy()];
    let out = run(
        &cmd("table", &["--style", "vllm", &paths[0], &paths[1]]),
        b"",
    );
    assert_ok(&out, "table --style vllm");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    // The vLLM run reads exactly as vLLM printed it; ours follows in the same lines.
    let (first, second) = text.split_at(VLLM_BLOCK.len());
    assert_eq!(first, VLLM_BLOCK);
    let lines: Vec<&str> = second.lines().collect();
    assert_eq!(
        lines[0],
        "============ Serving Benchmark Result ============"
    );
    assert_eq!(
        lines[1],
        format!("{:<40} {:<10}", "Successful requests:", 4)
    );
    assert_eq!(
        lines[3],
        format!("{:<40} {:<10}", "Maximum request concurrency:", 2)
    );
    // vLLM's default sections: no End-to-end Latency, one P99 line each.
    assert!(!second.contains("End-to-end Latency"), "{second}");
    assert!(lines.contains(&"---------------Inter-token Latency----------------"));
    assert_eq!(second.matches("\nP99 ").count(), 3, "{second}");
    assert_eq!(lines.last(), Some(&"=".repeat(50).as_str()));

    // With vLLM's flags, its sections and percentiles: E2EL last, P50 and P99 in each.
    let out = run(
        &cmd(
            "table",
            &[
                "--style",
                "vllm",
                "--percentile-metrics",
                "e2el,ttft",
                "--metric-percentiles",
                "50,99",
                &paths[1],
            ],
        ),
        b"",
    );
    assert_ok(&out, "table --style vllm --percentile-metrics");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let rules: Vec<&str> = text.lines().filter(|l| l.starts_with("---")).collect();
    assert_eq!(
        rules,
        [
            "---------------Time to First Token----------------",
            "----------------End-to-end Latency----------------"
        ]
    );
    let names: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with('P') && !l.starts_with("Peak"))
        .map(|l| l[..40].trim_end())
        .collect();
    assert_eq!(
        names,
        [
            "P50 TTFT (ms):",
            "P99 TTFT (ms):",
            "P50 E2EL (ms):",
            "P99 E2EL (ms):"
        ]
    );

    // A percentile the vLLM result was not saved with is refused, naming run and key.
    let out = run(
        &cmd(
            "table",
            &["--style", "vllm", "--metric-percentiles", "90", &paths[0]],
        ),
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no vLLM figure \"p90_ttft_ms\""), "{err}");
    // The section flags belong to --style vllm.
    let out = run(
        &cmd("table", &["--percentile-metrics", "e2el", &paths[1]]),
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--percentile-metrics chooses the sections of --style vllm's blocks"),
        "{err}"
    );

    // The default style puts both runs side by side, headed by their labels.
    let out = run(&cmd("table", &[&paths[0], &paths[1]]), b"");
    assert_ok(&out, "table");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let heading = text.lines().nth(1).expect("heading row");
    assert!(heading.contains("Qwen/Qwen3-VL-32B-Instruct-FP8"), "{text}");
    assert!(heading.contains("sim"), "{text}");
    let _ = std::fs::remove_file(&vllm);
    let _ = std::fs::remove_file(&ours);
}

#[test]
fn a_json_file_that_is_neither_is_bad_input_naming_it() {
    let path = temp_path("other.json");
    std::fs::write(&path, "{\n  \"model\": \"x\"\n}\n").expect("write");
    let name = path.to_string_lossy();
    let out = run(&cmd("table", &["--style", "vllm", &name]), b"");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{name}: line 1: a JSON object that is neither")),
        "{err}"
    );
    let _ = std::fs::remove_file(&path);
}

/// A result saved by a real `vllm bench serve` (open loop at 2 req/s) and the block vLLM's own
/// print statements make of it (tests/fixtures/table/make_vllm_block.py).
const RECORDED: &str = "tests/fixtures/vllm/real-0.32-seed0.json";
const RECORDED_BLOCK: &str = include_str!("../fixtures/table/vllm_real_0.32_block.txt");

#[test]
fn a_recorded_vllm_result_prints_as_vllm_prints_it_for_the_metrics_chosen() {
    // Saved with e2el: shown when chosen, byte for byte, the configured rate included.
    let out = run(
        &cmd(
            "table",
            &[
                "--style",
                "vllm",
                "--percentile-metrics",
                "ttft,tpot,itl,e2el",
                RECORDED,
            ],
        ),
        b"",
    );
    assert_ok(
        &out,
        "table --style vllm --percentile-metrics ttft,tpot,itl,e2el",
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), RECORDED_BLOCK);
    // vLLM's defaults leave its E2EL section out, and nothing else.
    let out = run(&cmd("table", &["--style", "vllm", RECORDED]), b"");
    assert_ok(&out, "table --style vllm");
    let e2el = RECORDED_BLOCK
        .find("----------------End-to-end Latency")
        .expect("the E2EL section");
    let end = RECORDED_BLOCK
        .rfind(&"=".repeat(50))
        .expect("the closing banner");
    let want = format!("{}{}", &RECORDED_BLOCK[..e2el], &RECORDED_BLOCK[end..]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);
}
