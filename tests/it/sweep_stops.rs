//! How `sweep` refuses and stops: bad values and templates (exit 2, nothing run), a failing
//! command (exit 1, the point and the record say so), `--max-runs`, and Ctrl-C or SIGTERM
//! mid-sweep (the running command is stopped, what it measured is written, then the record;
//! 130 or 143).

use crate::common;
use common::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn bad_values_and_templates_are_refused_with_status_2_before_anything_runs() {
    let marker = temp_path("sweep-refused-ran");
    let _ = std::fs::remove_file(&marker);
    let touch = format!("touch {} {{c}}", marker.display());
    let touch_other = format!("touch {} {{c}} {{rate}}", marker.display());
    for (args, says) in [
        (
            vec!["--scan", "c=1,two", "--", &touch],
            "--scan: `two` is not a number",
        ),
        (
            vec!["--scan", "c=0..4", "--", &touch],
            "--scan: `0` is not above 0",
        ),
        (vec!["--scan", "c=1;rm,2", "--", &touch], "--scan"),
        (
            vec!["--find", "c=8..1", "--slo", "ttft.p99<=1s", "--", &touch],
            "--find",
        ),
        (vec!["--find", "c=1..8", "--", &touch], "--find needs --slo"),
        (
            vec!["--find", "c=1..8", "--slo", "ttft<=1s", "--", &touch],
            "--slo",
        ),
        (
            vec![
                "--find",
                "c=1..8",
                "--slo",
                "ttft.p99<=1s",
                "--resolution",
                "0.5",
                "--",
                &touch,
            ],
            "--resolution",
        ),
        (
            vec!["--scan", "c=1,2", "--", "fire --concurrency 4"],
            "never uses {c}",
        ),
        (vec!["--scan", "c=1,2", "--", &touch_other], "{rate}"),
        (vec!["--scan", "c=1,2"], "after `--`"),
    ] {
        let out = run(&cmd("sweep", &args), b"");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?} wrote records");
    }
    assert!(!marker.exists(), "a refused sweep ran its command");
}

#[test]
fn a_failing_command_ends_with_status_1_after_the_point_and_the_record() {
    let out = run(
        &cmd("sweep", &["--scan", "c=1,2", "--", "echo {c} >&2; exit 3"]),
        b"",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("sweep: c=1: the command `echo 1 >&2; exit 3` exited with status 3"),
        "{stderr}"
    );
    let recs = records(&out.stdout);
    let types: Vec<&str> = recs.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["header", "sweep"],
        "the record, under sweep's own header"
    );
    let record = &recs[1];
    assert_eq!(record["ended"], "failed");
    assert_eq!(record["runs"], 1, "the second value never ran");
    let point = &record["points"][0];
    assert_eq!(
        (point["value"].as_f64(), point["status"].as_str()),
        (Some(1.0), Some("unusable"))
    );
    assert_eq!(point["reason"], "the command exited with status 3");
    // table, given that output, says why there is nothing to show.
    let shown = run(&cmd("table", &[]), &out.stdout);
    let said = String::from_utf8_lossy(&shown.stderr);
    assert_eq!(shown.status.code(), Some(2), "{said}");
    assert!(
        said.contains("the sweep wrote no summary, so there is no run to show: failed: c=1"),
        "{said}"
    );
    // A command whose output is not fire's events is a failure too, named as such.
    let out = run(
        &cmd("sweep", &["--scan", "c=1", "--", "echo not-events {c}"]),
        b"",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is not fire's events"), "{stderr}");
}

#[test]
fn max_runs_ends_the_search_early_and_says_so() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "2"]);
    let command = format!(
        "{} --concurrency {{c}} -n {{c}} --output-tokens 4 | {} --url {}",
        bin("arrivals"),
        bin("fire"),
        server.url
    );
    let args = [
        "--find",
        "c=1..64",
        "--slo",
        "e2el.p50<=10s",
        "--max-runs",
        "2",
        "--",
        &command,
    ];
    let out = run(&cmd("sweep", &args), b"");
    assert_ok(&out, "sweep --max-runs");
    let recs = records(&out.stdout);
    let record = recs.last().unwrap();
    assert_eq!(
        (record["ended"].as_str(), record["runs"].as_u64()),
        (Some("max_runs"), Some(2))
    );
    assert_eq!(
        record["capacity"], 2.0,
        "the largest value that passed so far"
    );
    assert!(
        record["reason"]
            .as_str()
            .unwrap()
            .starts_with("stopped at --max-runs"),
        "{record}"
    );
}

/// Starts a sweep whose every point runs far longer than the test, in a process group of its
/// own as a shell's job would be, and signals that group once the first point is running.
fn stopped_sweep(signal: i32) -> (std::process::Output, Vec<serde_json::Value>, Duration) {
    use std::os::unix::process::CommandExt;
    let server = Server::start(&["--ttft-ms", "10", "--itl-ms", "10"]);
    let saved = temp_path(&format!("sweep-stopped-{signal}.ndjson"));
    let command = format!(
        "{} --rate {{rate}} -n 100000 --input-tokens 16 --output-tokens 4 | {} --url {} --save {}",
        bin("arrivals"),
        bin("fire"),
        server.url,
        saved.display()
    );
    let argv = cmd("sweep", &["--scan", "rate=20,40", "--", &command]);
    let mut sweep = Command::new(&argv[0]);
    // sweep keeps a stop signal ignored if it was ignored when it started (a background job's
    // SIGINT), so the test gives it the default disposition whatever ran the tests.
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        sweep.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            Ok(())
        });
    }
    let child = sweep
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::fs::metadata(&saved).map_or(0, |m| m.len()) < 2000 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the first point never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    send_signal(-(child.id() as i32), signal);
    let signalled = Instant::now();
    let (out, timed_out) = read_until_exit(child, Duration::from_secs(30));
    // What sweep and the point's tools said, to tell which of them held on.
    assert!(
        !timed_out,
        "sweep outlived the signal; its stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let recs = records(&out.stdout);
    (out, recs, signalled.elapsed())
}

#[test]
fn ctrl_c_stops_the_running_point_writes_what_it_measured_and_exits_130() {
    let (out, recs, took) = stopped_sweep(libc::SIGINT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(took < Duration::from_secs(15), "stopping took {took:?}");
    let types: Vec<&str> = recs.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["header", "summary", "header", "sweep"], "{stderr}");
    assert!(
        recs[1]["requests_ok"].as_u64().unwrap() > 0,
        "the stopped run's measurements"
    );
    let record = &recs[3];
    assert_eq!(
        (record["ended"].as_str(), record["runs"].as_u64()),
        (Some("interrupted"), Some(1))
    );
    let point = &record["points"][0];
    assert_eq!(point["status"], "unusable");
    assert_eq!(point["reason"], "run 1 was stopped; not judged");
    assert_eq!(
        point["run_ids"][0], recs[1]["run_id"],
        "the stopped run's summary is its"
    );
    assert!(
        stderr.contains("sweep: interrupted after 1 run(s)"),
        "{stderr}"
    );
}

#[test]
fn sigterm_stops_the_sweep_the_same_way_with_143() {
    let (out, recs, _) = stopped_sweep(libc::SIGTERM);
    assert_eq!(
        out.status.code(),
        Some(143),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(recs.last().unwrap()["ended"], "terminated");
}

#[test]
fn warmup_runs_first_unmeasured_and_between_runs_before_every_later_run() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "2"]);
    let log = temp_path("sweep-between.log");
    let _ = std::fs::remove_file(&log);
    let command = format!(
        "echo run {{c}} >> {log}; {} --concurrency {{c}} -n 2 --output-tokens 4 | {} --url {}",
        bin("arrivals"),
        bin("fire"),
        server.url,
        log = log.display()
    );
    let between = format!("echo between >> {}", log.display());
    let args = [
        "--scan",
        "c=1,2",
        "--warmup",
        "--between",
        &between,
        "--",
        &command,
    ];
    let out = run(&cmd("sweep", &args), b"");
    assert_ok(&out, "sweep --warmup --between");
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text, "run 1\nbetween\nrun 1\nbetween\nrun 2\n");
    let recs = records(&out.stdout);
    assert_eq!(
        of_type(&recs, "summary").len(),
        2,
        "the warm-up run is not written"
    );
    assert_eq!(recs.last().unwrap()["runs"], 2, "nor counted");
    // A failing --between ends the sweep like a failing command.
    let args = ["--scan", "c=1,2", "--between", "exit 4", "--", &command];
    let out = run(&cmd("sweep", &args), b"");
    assert_eq!(out.status.code(), Some(1));
    let record = records(&out.stdout).pop().unwrap();
    assert_eq!(
        (record["ended"].as_str(), record["runs"].as_u64()),
        (Some("failed"), Some(1))
    );
    assert!(
        record["reason"]
            .as_str()
            .unwrap()
            .contains("--between `exit 4` exited with status 4"),
        "{record}"
    );
    let point = &record["points"][1];
    assert_eq!(
        (point["runs"].as_u64(), point["status"].as_str()),
        (Some(0), Some("unusable"))
    );
    assert_eq!(
        point["reason"],
        "not run: --between before it did not succeed"
    );
    // No time left: nothing runs, and the record says why.
    let out = run(
        &cmd(
            "sweep",
            &["--scan", "c=1", "--max-time", "0s", "--", &command],
        ),
        b"",
    );
    assert_ok(&out, "sweep --max-time 0s");
    let record = records(&out.stdout).pop().unwrap();
    assert_eq!(
        (record["ended"].as_str(), record["runs"].as_u64()),
        (Some("max_time"), Some(0))
    );
}
