//! `table --style llama-bench` and `table --format csv|json` through the real pipe against the
//! simulated server.

use crate::common;
use common::*;

/// `arrivals --batch 2 --runs 3 | fire | reduce`: one batch run's summary stream.
fn batch_run(server: &Server) -> Vec<u8> {
    let outs = pipeline(
        &[
            cmd(
                "arrivals",
                &[
                    "--batch",
                    "2",
                    "--runs",
                    "3",
                    "--input-tokens",
                    "16",
                    "--output-tokens",
                    "5",
                    "--no-warmup",
                ],
            ),
            cmd("fire", &["--url", server.url.as_str()]),
            cmd("reduce", &["--label", "sim"]),
        ],
        None,
    );
    for (o, what) in outs.iter().zip(["arrivals", "fire", "reduce"]) {
        assert_ok(o, what);
    }
    outs[2].stdout.clone()
}

#[test]
fn llama_bench_style_has_a_row_for_the_batch_size() {
    let server = Server::start(&["--ttft-ms", "10", "--itl-ms", "2"]);
    let outs = pipeline(
        &[
            cmd(
                "arrivals",
                &[
                    "--batch",
                    "2",
                    "--runs",
                    "3",
                    "--output-tokens",
                    "5",
                    "--no-warmup",
                ],
            ),
            cmd("fire", &["--url", server.url.as_str()]),
            cmd("reduce", &[]),
            cmd("table", &["--style", "llama-bench"]),
        ],
        None,
    );
    for (o, what) in outs.iter().zip(["arrivals", "fire", "reduce", "table"]) {
        assert_ok(o, what);
    }
    let md = String::from_utf8(outs[3].stdout.clone()).unwrap();
    // llama-benchy's own table first: its nine columns above concurrency 1, a tg row named
    // after the output length and the batch size.
    let own = md.split("\n\n").next().unwrap();
    assert!(own.starts_with("| model "), "{md}");
    assert!(own.contains(" |   peak t/s (req) |"), "{md}");
    assert!(own.contains(" tg5 (c2) |"), "{md}");
    assert!(
        md.contains("| Concurrency | t/s (total) | +/- stddev |"),
        "{md}"
    );
    assert!(
        md.contains("| Concurrency | pp t/s (total) | +/- stddev |"),
        "{md}"
    );
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.trim_start_matches('|').trim_start().starts_with("2 |"))
        .collect();
    assert_eq!(rows.len(), 2, "one decode and one prefill row: {md}");
}

#[test]
fn llama_bench_style_without_figures_exits_2_naming_the_run() {
    let summary = r#"{"type":"summary","label":"plain","run_id":"r7","requests_ok":1,"requests_failed":0,"duration_s":1.0,"input_tokens":1,"output_tokens":1,"request_throughput_per_s":1.0,"output_throughput_tokens_per_s":1.0,"total_throughput_tokens_per_s":2.0}"#;
    let out = run(
        &cmd("table", &["--style", "llama-bench"]),
        format!("{summary}\n").as_bytes(),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("run plain (r7) has no llama-benchy figures"),
        "{err}"
    );
}

#[test]
fn csv_and_json_have_one_row_per_run_with_member_names() {
    let server = Server::start(&["--ttft-ms", "10", "--itl-ms", "2"]);
    let mut summaries = batch_run(&server);
    summaries.extend(batch_run(&server));
    let csv = run(&cmd("table", &["--format", "csv"]), &summaries);
    assert_ok(&csv, "table --format csv");
    let text = String::from_utf8(csv.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "a header and two runs: {text}");
    let columns: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(columns[..3], ["label", "run_id", "requests_ok"]);
    assert!(columns.contains(&"ttft_p99_ms"), "{text}");
    let ok = columns.iter().position(|c| *c == "requests_ok").unwrap();
    assert_eq!(lines[1].split(',').nth(ok), Some("6"), "{text}");

    let json = run(&cmd("table", &["--format", "json"]), &summaries);
    assert_ok(&json, "table --format json");
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let runs = v.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["label"], "sim");
    assert_eq!(runs[0]["requests_ok"], 6);
    assert!(runs[1]["ttft_p99_ms"].as_f64().unwrap() > 0.0);
}
