//! Bad input gives a clear error and exit 2; a failing server gives failed-request records;
//! an interrupted or cut-off run still accounts for every request.

use crate::common;
use common::*;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

const HEADER: &str =
    r#"{"type":"header","format_major":1,"tool":"fire","tool_version":"0","run_id":"r"}"#;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn malformed_lines_name_the_line_and_field() {
    let bad_type = format!("{HEADER}\n{{\"type\":\"sent\",\"id\":1,\"sent_ns\":5}}\n{{\"type\":\"token\",\"id\":1,\"at_ns\":\"soon\",\"tokens\":1}}\n");
    let not_json =
        format!("{HEADER}\n{{\"type\":\"sent\",\"id\":1,\"sent_ns\":5}}\n{{\"type\":\"done\",\n");
    let bad_summary = format!("{HEADER}\n{{\"type\":\"summary\",\"label\":3}}\n");
    let summary_not_json = format!("{HEADER}\n\n{{\"type\":\"summary\",\n{HEADER}\n");
    for (tool, bad_type, not_json, field) in [
        ("reduce", &bad_type, &not_json, "at_ns"),
        ("table", &bad_summary, &summary_not_json, "label"),
    ] {
        let o = run(&cmd(tool, &[]), bad_type.as_bytes());
        assert_eq!(o.status.code(), Some(2), "{tool}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.starts_with(&format!("{tool}: ")), "{e}");
        let line = if tool == "reduce" { "line 3" } else { "line 2" };
        assert!(e.contains(line) && e.contains(field), "{tool}: {e}");
        let o = run(&cmd(tool, &[]), not_json.as_bytes());
        assert_eq!(o.status.code(), Some(2), "{tool}: {}", stderr(&o));
        assert!(stderr(&o).contains("line 3"), "{tool}: {}", stderr(&o));
    }
    // Events given to table say what they are and which tool reads them.
    let o = run(&cmd("table", &[]), bad_type.as_bytes());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("line 2: this is not summaries") && stderr(&o).contains("reduce reads"),
        "{}",
        stderr(&o)
    );
    let sched = "{\"type\":\"header\",\"format_major\":1,\"tool\":\"arrivals\",\"tool_version\":\"0\",\"run_id\":\"a\"}\n{\"type\":\"request\",\"id\":0,\"offset_ns\":0,\"prompt\":\"x\",\"prompt_tokens\":1}\n";
    let o = run(
        &cmd("fire", &["--url", "http://127.0.0.1:9/v1", "--model", "m"]),
        sched.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("line 2") && stderr(&o).contains("max_tokens"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn newer_major_version_and_empty_streams_are_refused() {
    let newer =
        r#"{"type":"header","format_major":99,"tool":"fire","tool_version":"9","run_id":"r"}"#;
    for tool in ["reduce", "table"] {
        let o = run(&cmd(tool, &[]), newer.as_bytes());
        assert_eq!(o.status.code(), Some(2), "{tool}");
        assert!(stderr(&o).contains("major version 99"), "{}", stderr(&o));
        let o = run(&cmd(tool, &[]), b"");
        assert_eq!(o.status.code(), Some(2), "{tool}");
        // table also reads summary lines without a header, so for it an empty input is one
        // without summaries.
        let empty = if tool == "reduce" {
            "empty"
        } else {
            "no summary records"
        };
        assert!(stderr(&o).contains(empty), "{}", stderr(&o));
        let o = run(
            &cmd(tool, &[]),
            b"{\"type\":\"token\",\"id\":1,\"at_ns\":1,\"tokens\":1}\n",
        );
        assert_eq!(o.status.code(), Some(2), "{tool}");
        let why = if tool == "reduce" {
            "header"
        } else {
            "this is not summaries"
        };
        assert!(stderr(&o).contains(why), "{}", stderr(&o));
    }
    let o = run(&cmd("fire", &["--url", "http://127.0.0.1:9/v1"]), b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("empty"), "{}", stderr(&o));
}

#[test]
fn unreachable_server_gives_one_connect_failure_per_request() {
    let url = format!("http://127.0.0.1:{}/v1", dead_port());
    let outs = pipeline(
        &[
            cmd(
                "arrivals",
                &[
                    "--rate",
                    "inf",
                    "-n",
                    "5",
                    "--input-tokens",
                    "3",
                    "--output-tokens",
                    "2",
                ],
            ),
            cmd("fire", &["--url", &url, "--model", "m"]),
        ],
        None,
    );
    assert_none_succeeded(&outs[1], "fire");
    let recs = records(&outs[1].stdout);
    let done = of_type(&recs, "done");
    assert_eq!(done.len(), 5);
    assert!(
        done.iter()
            .all(|d| d["ok"] == false && d["error_kind"] == "connect"),
        "{done:?}"
    );
    assert!(
        stderr(&outs[1]).contains("5 requests: 0 ok, 5 failed (connect: 5)"),
        "{}",
        stderr(&outs[1])
    );
    let r = run(&cmd("reduce", &[]), &outs[1].stdout);
    assert_ok(&r, "reduce");
    let s = of_type(&records(&r.stdout), "summary")[0].clone();
    assert_eq!(s["requests_failed"], 5);
    assert_eq!(s["requests_ok"], 0);
}

#[test]
fn http_errors_become_failed_requests_with_status() {
    let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let url = format!("{}/nowhere", server.url);
    let outs = pipeline(
        &[
            cmd(
                "arrivals",
                &["-n", "3", "--input-tokens", "3", "--output-tokens", "2"],
            ),
            cmd("fire", &["--url", &url, "--model", "m"]),
        ],
        None,
    );
    assert_none_succeeded(&outs[1], "fire");
    assert!(
        stderr(&outs[1]).contains(&format!("did you mean {url}/v1?")),
        "{}",
        stderr(&outs[1])
    );
    let recs = records(&outs[1].stdout);
    let done = of_type(&recs, "done");
    assert_eq!(done.len(), 3);
    for d in done {
        assert_eq!(d["error_kind"], "http", "{d}");
        assert_eq!(d["status"], 404, "{d}");
    }
}

/// Runs `fire` on `n` requests at 10 per second (50 ms per token, so many are in flight), sends
/// it `signal` after `after_ms`, and returns its output once it has exited.
fn fire_stopped_by(signal: i32, n: usize, after_ms: u64) -> std::process::Output {
    let server = Server::start(&["--ttft-ms", "50", "--itl-ms", "50"]);
    let n_text = n.to_string();
    let sched = run(
        &cmd(
            "arrivals",
            &[
                "--rate",
                "10",
                "-n",
                &n_text,
                "--input-tokens",
                "2",
                "--output-tokens",
                "40",
            ],
        ),
        b"",
    );
    let path = std::env::temp_dir().join(format!(
        "tokenpipe-signal-{signal}-{}.ndjson",
        std::process::id()
    ));
    std::fs::write(&path, &sched.stdout).unwrap();
    let child = Command::new(bin("fire"))
        .args(["--url", &server.url])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(after_ms));
    send_signal(child.id() as i32, signal);
    let (out, timed_out) = read_until_exit(child, Duration::from_secs(20));
    let _ = std::fs::remove_file(&path);
    assert!(!timed_out, "fire did not stop after signal {signal}");
    out
}

#[test]
fn ctrl_c_flushes_and_accounts_for_every_request() {
    let out = fire_stopped_by(libc::SIGINT, 100, 1500);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let recs = records(&out.stdout);
    let done = of_type(&recs, "done");
    assert_eq!(done.len(), 100, "every request needs its done record");
    let kinds = |k: &str| done.iter().filter(|d| d["error_kind"] == k).count();
    assert!(
        kinds("cancelled") >= 1,
        "requests in flight end as cancelled"
    );
    assert!(kinds("not_sent") >= 50, "unsent requests end as not_sent");
}

#[test]
fn closed_stdout_ends_quietly() {
    let outs = pipeline(
        &[
            cmd("arrivals", &["-n", "200000", "--input-tokens", "8"]),
            vec!["head".into(), "-n".into(), "2".into()],
        ],
        None,
    );
    assert_eq!(outs[0].status.code(), Some(0), "{}", stderr(&outs[0]));
    assert!(stderr(&outs[0]).is_empty(), "{}", stderr(&outs[0]));
    assert_eq!(String::from_utf8_lossy(&outs[1].stdout).lines().count(), 2);

    let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let outs = pipeline(
        &[
            cmd(
                "arrivals",
                &[
                    "--rate",
                    "200",
                    "-n",
                    "400",
                    "--input-tokens",
                    "2",
                    "--output-tokens",
                    "50",
                ],
            ),
            cmd("fire", &["--url", &server.url]),
            vec!["head".into(), "-c".into(), "100".into()],
        ],
        None,
    );
    assert_eq!(outs[1].status.code(), Some(0), "{}", stderr(&outs[1]));
    assert!(stderr(&outs[1]).is_empty(), "{}", stderr(&outs[1]));
}

#[test]
fn sigterm_flushes_and_accounts_for_every_request() {
    let out = fire_stopped_by(libc::SIGTERM, 60, 1200);
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert_eq!(of_type(&records(&out.stdout), "done").len(), 60);
}

/// A terminal's Ctrl-C reaches every process of the pipeline. `fire` stops and flushes; `reduce`
/// must outlive the signal and still summarise what it was sent.
#[test]
fn ctrl_c_on_the_whole_pipeline_still_gives_a_summary() {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "20"]);
    let sched = run(
        &cmd(
            "arrivals",
            &[
                "--rate",
                "20",
                "-n",
                "200",
                "--input-tokens",
                "2",
                "--output-tokens",
                "20",
            ],
        ),
        b"",
    );
    let path = std::env::temp_dir().join(format!("tokenpipe-pgrp-{}.ndjson", std::process::id()));
    std::fs::write(&path, &sched.stdout).unwrap();
    let mut fire = Command::new(bin("fire"))
        .args(["--url", &server.url])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let group = fire.id() as i32;
    let reduce = Command::new(bin("reduce"))
        .stdin(Stdio::from(fire.stdout.take().unwrap()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(group)
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: signalling the process group we created.
    unsafe {
        libc::killpg(group, libc::SIGINT);
    }
    let (summary, timed_out) = read_until_exit(reduce, Duration::from_secs(20));
    let fire = fire.wait_with_output().unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(!timed_out, "reduce did not finish");
    assert_eq!(fire.status.code(), Some(130), "{}", stderr(&fire));
    // reduce writes its summary, then ends as interrupted too.
    assert_eq!(
        summary.status.code(),
        Some(130),
        "reduce: {}",
        stderr(&summary)
    );
    let s = of_type(&records(&summary.stdout), "summary")[0].clone();
    let total = s["requests_ok"].as_u64().unwrap() + s["requests_failed"].as_u64().unwrap();
    assert_eq!(total, 200, "{s}");
    assert!(s["requests_ok"].as_u64().unwrap() > 0, "{s}");
}

#[test]
fn a_repeated_request_id_is_bad_input() {
    let sched = "{\"type\":\"header\",\"format_major\":1,\"tool\":\"arrivals\",\"tool_version\":\"0\",\"run_id\":\"a\"}\n\
{\"type\":\"request\",\"id\":0,\"offset_ns\":0,\"prompt\":\"x\",\"prompt_tokens\":1,\"max_tokens\":1}\n\
{\"type\":\"request\",\"id\":0,\"offset_ns\":0,\"prompt\":\"y\",\"prompt_tokens\":1,\"max_tokens\":1}\n";
    let url = format!("http://127.0.0.1:{}/v1", dead_port());
    let o = run(
        &cmd("fire", &["--url", &url, "--model", "m"]),
        sched.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("line 3") && stderr(&o).contains("appears twice"),
        "{}",
        stderr(&o)
    );
}
