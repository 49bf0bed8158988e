//! What `fire` writes, and when: a reader slower than the run (bounded buffering, then `stall`
//! records, never a lost record), input that is not a schedule (refused before anything is
//! written), and a schedule whose last line was cut (used up to the cut).

use crate::common;
use common::*;
use std::collections::HashMap;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

const REQUESTS: usize = 200;
const TOKENS: usize = 50;

/// Runs `arrivals | fire --output-buffer BOUND` against a fast server, reading fire's stdout
/// like a slow consumer: nothing for the first second, then 4 KiB at a time with pauses.
/// Returns fire's records and its stderr.
fn through_a_slow_reader(bound: &str) -> (Vec<serde_json::Value>, String) {
    let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let n = REQUESTS.to_string();
    let tokens = TOKENS.to_string();
    let sched = run(
        &cmd(
            "arrivals",
            &[
                "--concurrency",
                "20",
                "-n",
                &n,
                "--input-tokens",
                "4",
                "--output-tokens",
                &tokens,
            ],
        ),
        b"",
    );
    assert_ok(&sched, "arrivals");
    let path = temp_path(&format!("slow-reader-{bound}.ndjson"));
    std::fs::write(&path, &sched.stdout).unwrap();
    let mut fire = Command::new(bin("fire"))
        .args(["--url", &server.url, "--output-buffer", bound])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = fire.stdout.take().unwrap();
    // The run writes far more than a pipe (64 KiB) and a 64 KiB bound hold, so while this
    // reader sleeps, fire must either buffer it or wait.
    std::thread::sleep(Duration::from_secs(1));
    let mut out = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match stdout.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&chunk[..n]),
            Err(e) => panic!("reading fire: {e}"),
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let status = fire.wait().unwrap();
    let mut stderr = String::new();
    fire.stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(status.success(), "fire: {status:?}: {stderr}");
    let reduced = run(&cmd("reduce", &[]), &out);
    assert_ok(&reduced, "reduce");
    let s = of_type(&records(&reduced.stdout), "summary")[0].clone();
    assert_eq!(s["requests_ok"], REQUESTS as u64, "{s}");
    (records(&out), stderr)
}

/// Every request sent once, ended once, and every token there.
fn nothing_lost(recs: &[serde_json::Value]) {
    let mut done_by_id: HashMap<u64, usize> = HashMap::new();
    for d in of_type(recs, "done") {
        assert_eq!(d["ok"], true, "{d}");
        *done_by_id.entry(d["id"].as_u64().unwrap()).or_default() += 1;
    }
    assert_eq!(done_by_id.len(), REQUESTS);
    assert!(
        done_by_id.values().all(|n| *n == 1),
        "a request with two dones"
    );
    assert_eq!(of_type(recs, "sent").len(), REQUESTS);
    let tokens: u64 = of_type(recs, "token")
        .iter()
        .map(|t| t["tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(tokens, (REQUESTS * TOKENS) as u64);
}

#[test]
fn a_slow_reader_past_a_small_bound_gives_stall_records_and_loses_nothing() {
    let (recs, stderr) = through_a_slow_reader("64K");
    nothing_lost(&recs);
    let stalls = of_type(&recs, "stall");
    assert!(!stalls.is_empty(), "no stall record; stderr: {stderr}");
    for s in &stalls {
        assert!(s["buffered_bytes"].as_u64().unwrap() >= 64 * 1024, "{s}");
        assert!(s["at_ns"].as_u64().is_some(), "{s}");
    }
    let waited: u64 = stalls
        .iter()
        .map(|s| s["duration_ns"].as_u64().unwrap())
        .sum();
    assert!(waited > 0, "{stalls:?}");
    assert_eq!(
        stderr
            .matches("warning: output reader is slower than the run")
            .count(),
        1,
        "{stderr}"
    );
}

#[test]
fn the_same_slow_reader_within_the_default_bound_costs_no_stall() {
    let (recs, stderr) = through_a_slow_reader("256M");
    nothing_lost(&recs);
    assert!(of_type(&recs, "stall").is_empty());
    assert!(!stderr.contains("slower than the run"), "{stderr}");
}

const ARRIVALS_HEADER: &str =
    r#"{"type":"header","format_major":1,"tool":"arrivals","tool_version":"0","run_id":"a"}"#;

#[test]
fn fires_own_events_are_refused_before_anything_is_written() {
    let events = format!(
        "{}\n{{\"type\":\"sent\",\"id\":0,\"scheduled_ns\":0,\"sent_ns\":5}}\n",
        r#"{"type":"header","format_major":1,"tool":"fire","tool_version":"0","run_id":"f"}"#
    );
    let url = format!("http://127.0.0.1:{}/v1", dead_port());
    let o = run(&cmd("fire", &["--url", &url]), events.as_bytes());
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("line 2") && e.contains("not a schedule") && e.contains("reduce reads"),
        "{e}"
    );
    assert!(
        o.stdout.is_empty(),
        "wrote {:?}",
        String::from_utf8_lossy(&o.stdout)
    );

    // A real run's output, named as the input file, the way `fire run.ndjson` would be typed.
    let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let outs = pipeline(
        &[
            cmd(
                "arrivals",
                &["-n", "2", "--input-tokens", "2", "--output-tokens", "2"],
            ),
            cmd("fire", &["--url", &server.url]),
        ],
        None,
    );
    assert_ok(&outs[1], "fire");
    let path = temp_path("own-events.ndjson");
    std::fs::write(&path, &outs[1].stdout).unwrap();
    let o = Command::new(bin("fire"))
        .args(["--url", &server.url])
        .arg(&path)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("\"sent\" records") && e.contains("reduce"),
        "{e}"
    );
    assert!(o.stdout.is_empty());
}

#[test]
fn a_schedule_cut_mid_line_is_used_up_to_the_cut() {
    let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let sched = format!(
        "{ARRIVALS_HEADER}\n\
{{\"type\":\"request\",\"id\":0,\"offset_ns\":0,\"prompt\":\"x\",\"prompt_tokens\":1,\"max_tokens\":2}}\n\
{{\"type\":\"request\",\"id\":1,\"offset_ns\":1000,\"prompt\":\"y\",\"prompt_tokens\":1,\"max_tokens\":2}}\n\
{{\"type\":\"request\",\"id\":2,\"offset_ns\":2000,\"pro"
    );
    let o = run(&cmd("fire", &["--url", &server.url]), sched.as_bytes());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{:?}: {e}", o.status);
    assert!(e.contains("line 4 is cut off"), "{e}");
    let recs = records(&o.stdout);
    let done = of_type(&recs, "done");
    assert_eq!(done.len(), 2);
    assert!(done.iter().all(|d| d["ok"] == true), "{done:?}");
}
