//! Windows, intervals, peak throughput and concurrency through the real binaries and pipes:
//! a closed loop with marked phases against the simulated server at known timings, and a live
//! `reduce --every` fed by a slow writer.

use crate::common;
use common::*;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

fn f(v: &serde_json::Value, field: &str) -> f64 {
    v[field]
        .as_f64()
        .unwrap_or_else(|| panic!("summary field {field} missing in {v}"))
}

#[test]
fn a_closed_loop_is_measured_over_its_measure_phase() {
    let server = Server::start(&["--ttft-ms", "50", "--itl-ms", "10"]);
    let outs = pipeline(
        &[
            cmd(
                "arrivals",
                &[
                    "--concurrency",
                    "4",
                    "--fill",
                    "100ms",
                    "--stabilize",
                    "1s",
                    "--measure",
                    "2s",
                    "--input-tokens",
                    "8",
                    "--output-tokens",
                    "20",
                ],
            ),
            cmd("fire", &["--url", server.url.as_str()]),
            cmd("reduce", &[]),
        ],
        None,
    );
    for (out, what) in outs.iter().zip(["arrivals", "fire", "reduce"]) {
        assert_ok(out, what);
    }
    let recs = records(&outs[2].stdout);
    let s = of_type(&recs, "summary")[0];
    // fill [0, 0.3 s), stabilize [0.3, 1.3 s), measure [1.3, 3.3 s).
    assert_eq!(s["window"]["name"], "measure", "{s}");
    assert!((f(&s["window"], "start_s") - 1.3).abs() < 1e-9, "{s}");
    assert!((f(&s["window"], "end_s") - 3.3).abs() < 1e-9, "{s}");
    assert!((f(s, "duration_s") - 2.0).abs() < 1e-9, "{s}");
    assert!(
        s["requests_outside_window"].as_u64().unwrap_or(0) > 0,
        "{s}"
    );
    // Four slots, each a 20-token answer in E2EL (50 + 19 × 10 ms at best): at most
    // 4 × 20 / 0.24 s, and no less than 70% of that on a loaded machine. The directly
    // counted throughput and the one derived from users agree.
    let ceiling = 4.0 * 20.0 / 0.240;
    let direct = f(s, "output_throughput_tokens_per_s");
    assert!(
        direct <= ceiling * 1.02 && direct >= ceiling * 0.7,
        "{direct} vs {ceiling}"
    );
    let from_users = f(s, "server_tps_from_users");
    assert_eq!(s["server_tps_concurrency"], "closed_loop");
    assert!(
        (from_users / direct - 1.0).abs() < 0.15,
        "{from_users} vs {direct}"
    );
    // The loop keeps 4 in flight all through the window, bar the instants between an end and
    // the next send.
    assert_eq!(s["peak_concurrency"], 4, "{s}");
    let mean = f(s, "mean_concurrency");
    assert!((3.5..=4.0).contains(&mean), "{mean}");
    assert!(f(s, "peak_output_tps") >= direct, "{s}");
}

#[test]
fn every_writes_intervals_while_the_input_is_still_open() {
    let mut reduce = Command::new(bin("reduce"))
        .args(["--every", "500ms"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start reduce");
    let mut stdin = reduce.stdin.take().expect("stdin");
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = reduce.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let header = r#"{"type":"header","format_major":1,"tool":"fire","tool_version":"0.1.0","run_id":"live","params":{}}"#;
    let first = [
        header.to_string(),
        r#"{"type":"sent","id":1,"sent_ns":100000000}"#.into(),
        r#"{"type":"token","id":1,"at_ns":200000000,"tokens":1}"#.into(),
        r#"{"type":"done","id":1,"at_ns":300000000,"ok":true,"events":1}"#.into(),
        // 2.1 s: [0, 0.5 s) and [0.5 s, 1 s) are now a second behind.
        r#"{"type":"sent","id":2,"sent_ns":2100000000}"#.into(),
    ];
    for line in &first {
        writeln!(stdin, "{line}").expect("write");
    }
    stdin.flush().expect("flush");
    let wait = Duration::from_secs(30);
    let got = |rx: &std::sync::mpsc::Receiver<String>| -> serde_json::Value {
        let line = rx
            .recv_timeout(wait)
            .expect("a line from reduce while its input is open");
        serde_json::from_str(&line).expect("json")
    };
    assert_eq!(got(&rx)["type"], "header");
    let interval = got(&rx);
    assert_eq!(interval["type"], "interval", "{interval}");
    assert_eq!(interval["start_s"], 0.0);
    assert_eq!(interval["sent"], 1);
    assert_eq!(interval["ended_ok"], 1);
    assert_eq!(interval["output_tokens"], 1);
    assert_eq!(got(&rx)["start_s"], 0.5);
    writeln!(
        stdin,
        r#"{{"type":"done","id":2,"at_ns":2200000000,"ok":true,"events":0}}"#
    )
    .expect("write");
    drop(stdin);
    let rest: Vec<serde_json::Value> = std::iter::from_fn(|| rx.recv_timeout(wait).ok())
        .map(|l| serde_json::from_str(&l).expect("json"))
        .collect();
    let status = reduce.wait().expect("wait");
    assert!(status.success());
    let types: Vec<&str> = rest
        .iter()
        .map(|r| r["type"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        types,
        ["interval", "interval", "interval", "summary"],
        "{rest:?}"
    );
}

#[test]
fn table_reads_past_intervals() {
    let text = concat!(
        r#"{"type":"header","format_major":1,"tool":"fire","tool_version":"0.1.0","run_id":"t","params":{}}"#,
        "\n",
        r#"{"type":"sent","id":1,"sent_ns":0}"#,
        "\n",
        r#"{"type":"token","id":1,"at_ns":50000000,"tokens":1}"#,
        "\n",
        r#"{"type":"done","id":1,"at_ns":1500000000,"ok":true,"events":1}"#,
        "\n"
    );
    let outs = pipeline(
        &[cmd("reduce", &["--every", "1s"]), cmd("table", &[])],
        Some(text.as_bytes()),
    );
    assert_ok(&outs[0], "reduce");
    assert_ok(&outs[1], "table");
    assert!(!outs[1].stdout.is_empty());
}

/// A saved run whose arrivals marked fill [0, 1 s), measure [1 s, 2 s) and drain: one request
/// sent in each.
fn phased_run() -> String {
    let lines = [
        r#"{"type":"header","format_major":1,"tool":"fire","tool_version":"0.1.0","run_id":"p","params":{},"upstream":[{"format_major":1,"tool":"arrivals","tool_version":"0.1.0","run_id":"a","params":{"phases":[{"name":"fill","start_ns":0,"end_ns":1000000000},{"name":"measure","start_ns":1000000000,"end_ns":2000000000},{"name":"drain","start_ns":2000000000,"end_ns":null}]}}]}"#,
        r#"{"type":"sent","id":1,"sent_ns":500000000}"#,
        r#"{"type":"done","id":1,"at_ns":600000000,"ok":true,"events":0}"#,
        r#"{"type":"sent","id":2,"sent_ns":1500000000}"#,
        r#"{"type":"done","id":2,"at_ns":1600000000,"ok":true,"events":0}"#,
        r#"{"type":"sent","id":3,"sent_ns":2500000000}"#,
        r#"{"type":"done","id":3,"at_ns":2600000000,"ok":true,"events":0}"#,
    ];
    lines.join("\n") + "\n"
}

fn summary_of_reduce(args: &[&str]) -> serde_json::Value {
    let out = run(&cmd("reduce", args), phased_run().as_bytes());
    assert_ok(&out, "reduce");
    of_type(&records(&out.stdout), "summary")[0].clone()
}

#[test]
fn phase_and_by_hand_window_flags() {
    let s = summary_of_reduce(&[]);
    assert_eq!(s["window"]["name"], "measure");
    assert_eq!(
        (
            s["requests_ok"].as_u64(),
            s["requests_outside_window"].as_u64()
        ),
        (Some(1), Some(2))
    );
    let s = summary_of_reduce(&["--phase", "drain"]);
    assert_eq!(s["window"]["name"], "drain");
    assert_eq!(s["requests_ok"], 1);
    let s = summary_of_reduce(&["--phase", "all"]);
    assert!(s.get("window").is_none(), "{s}");
    assert_eq!(s["requests_ok"], 3);
    let s = summary_of_reduce(&["--warmup", "500ms", "--measure", "1.5s"]);
    assert_eq!(s["window"]["name"], "manual");
    assert_eq!(s["requests_ok"], 2, "sent at 0.5 s and 1.5 s");
    let out = run(
        &cmd("reduce", &["--phase", "steady"]),
        phased_run().as_bytes(),
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("fill, measure, drain"), "{stderr}");
    let out = run(
        &cmd("reduce", &["--phase", "measure", "--warmup", "1s"]),
        phased_run().as_bytes(),
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "--phase conflicts with --warmup"
    );
}
