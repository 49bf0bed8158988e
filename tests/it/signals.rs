//! Ctrl-C and SIGTERM on `fire` in every phase: a whole pipeline interrupted through its
//! process group (the saved events stay whole and agree with `reduce`), a second Ctrl-C that
//! quits at once, and a stop while the server has not yet said which model it serves.

use crate::common;
use common::*;
use std::collections::HashMap;
use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Parses every line of a saved event file, failing on any that is not whole.
fn saved_records(path: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.ends_with('\n'), "the saved file ends mid-line");
    records(text.as_bytes())
}

/// Every request that was sent has exactly one `done`; returns (ok, failed) done counts.
fn one_done_per_sent(recs: &[serde_json::Value]) -> (u64, u64) {
    let mut dones: HashMap<u64, u32> = HashMap::new();
    let (mut ok, mut failed) = (0, 0);
    for d in of_type(recs, "done") {
        *dones.entry(d["id"].as_u64().unwrap()).or_default() += 1;
        if d["ok"] == true {
            ok += 1;
        } else {
            failed += 1;
        }
    }
    assert!(dones.values().all(|n| *n == 1), "a request with two dones");
    for s in of_type(recs, "sent") {
        let id = s["id"].as_u64().unwrap();
        assert_eq!(dones.get(&id), Some(&1), "sent request {id} has no done");
    }
    (ok, failed)
}

/// `arrivals | fire --save FILE | reduce` in one process group, interrupted the way a terminal
/// does it. `arrivals` may die mid-line; `fire` must take that as the end of its input.
#[test]
fn ctrl_c_on_the_whole_group_keeps_the_saved_events_whole_and_in_step_with_reduce() {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "20"]);
    let saved = temp_path("group-saved.ndjson");
    let saved_arg = saved.to_str().unwrap();
    let (children, group) = spawn_group(&[
        endless_arrivals(),
        cmd("fire", &["--url", &server.url, "--save", saved_arg]),
        cmd("reduce", &[]),
    ]);
    let [mut arrivals, mut fire, mut reduce]: [Child; 3] = children.try_into().unwrap();
    let summary = read_all(reduce.stdout.take().unwrap());
    let fire_err = read_all(fire.stderr.take().unwrap());
    let reduce_err = read_all(reduce.stderr.take().unwrap());
    std::thread::sleep(Duration::from_millis(500));
    send_signal(-group, libc::SIGINT);
    let fire_status = wait_within(&mut fire, Duration::from_secs(30));
    let reduce_status = wait_within(&mut reduce, Duration::from_secs(30));
    let _ = wait_within(&mut arrivals, Duration::from_secs(30));
    let fire_err = String::from_utf8_lossy(&fire_err.join().unwrap()).into_owned();
    let reduce_err = String::from_utf8_lossy(&reduce_err.join().unwrap()).into_owned();
    assert_eq!(fire_status.code(), Some(130), "fire: {fire_err}");
    // reduce writes its summary, then ends as interrupted too.
    assert_eq!(reduce_status.code(), Some(130), "reduce: {reduce_err}");

    let recs = saved_records(&saved);
    let _ = std::fs::remove_file(&saved);
    assert_eq!(recs[0]["type"], "header");
    assert!(
        !of_type(&recs, "sent").is_empty(),
        "nothing was sent in 500 ms"
    );
    let (ok, failed) = one_done_per_sent(&recs);
    let s = of_type(&records(&summary.join().unwrap()), "summary")[0].clone();
    assert_eq!(s["requests_ok"], ok, "{s}");
    assert_eq!(s["requests_failed"], failed, "{s}");
    assert!(ok > 0, "{s}");
}

/// SIGTERM with a reader that takes everything: the saved file is byte for byte stdout.
#[test]
fn sigterm_leaves_the_saved_file_equal_to_stdout() {
    let server = Server::start(&["--ttft-ms", "30", "--itl-ms", "30"]);
    let sched = run(
        &cmd(
            "arrivals",
            &[
                "--rate",
                "20",
                "-n",
                "100",
                "--input-tokens",
                "2",
                "--output-tokens",
                "20",
            ],
        ),
        b"",
    );
    let input = temp_path("sigterm-schedule.ndjson");
    let saved = temp_path("sigterm-saved.ndjson");
    std::fs::write(&input, &sched.stdout).unwrap();
    let mut fire = Command::new(bin("fire"))
        .args(["--url", &server.url, "--save"])
        .arg(&saved)
        .arg(&input)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = read_all(fire.stdout.take().unwrap());
    std::thread::sleep(Duration::from_millis(800));
    send_signal(fire.id() as i32, libc::SIGTERM);
    let status = wait_within(&mut fire, Duration::from_secs(30));
    assert_eq!(status.code(), Some(143));
    let stdout = stdout.join().unwrap();
    let file = std::fs::read(&saved).unwrap();
    let _ = std::fs::remove_file(&saved);
    let _ = std::fs::remove_file(&input);
    assert!(file == stdout, "the saved file differs from stdout");
    let recs = records(&file);
    assert_eq!(of_type(&recs, "done").len(), 100);
    one_done_per_sent(&recs);
}

/// A reader that stopped reading holds `fire` after the first Ctrl-C (it cannot write what it
/// measured); the second quits at once, and the saved file still holds whole lines.
#[test]
fn a_second_ctrl_c_quits_at_once() {
    let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let sched = run(
        &cmd(
            "arrivals",
            &[
                "--concurrency",
                "20",
                "-n",
                "2000",
                "--input-tokens",
                "2",
                "--output-tokens",
                "100",
            ],
        ),
        b"",
    );
    let input = temp_path("second-schedule.ndjson");
    let saved = temp_path("second-saved.ndjson");
    std::fs::write(&input, &sched.stdout).unwrap();
    let mut fire = Command::new(bin("fire"))
        .args(["--url", &server.url, "--output-buffer", "64K", "--save"])
        .arg(&saved)
        .arg(&input)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Nobody reads stdout: the pipe and the 64 KiB bound fill, and fire waits for room.
    let stdout = fire.stdout.take().unwrap();
    let stderr = read_all(fire.stderr.take().unwrap());
    std::thread::sleep(Duration::from_millis(1500));
    send_signal(fire.id() as i32, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        fire.try_wait().unwrap().is_none(),
        "fire ended while its output could not be written"
    );
    send_signal(fire.id() as i32, libc::SIGINT);
    let status = wait_within(&mut fire, Duration::from_secs(20));
    drop(stdout);
    let stderr = String::from_utf8_lossy(&stderr.join().unwrap()).into_owned();
    let _ = std::fs::remove_file(&input);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("quitting at once"), "{stderr}");
    let recs = saved_records(&saved);
    let _ = std::fs::remove_file(&saved);
    assert_eq!(recs[0]["type"], "header");
    assert!(
        !of_type(&recs, "token").is_empty(),
        "the saved file lost what was measured"
    );
}

/// The server accepts the connection for `GET /models` and never answers; Ctrl-C then ends
/// discovery, and every request fire can read without waiting ends as `not_sent`. The schedule
/// arrives on a pipe that stays open, so waiting for its end would hang.
#[test]
fn ctrl_c_during_model_discovery_writes_not_sent_for_what_was_read() {
    let server = RawServer::silent();
    let mut fire = Command::new(bin("fire"))
        .args(["--url", &server.url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = fire.stdin.take().unwrap();
    let mut sched = String::from(
        r#"{"type":"header","format_major":1,"tool":"arrivals","tool_version":"0","run_id":"a"}"#,
    );
    sched.push('\n');
    for id in 0..3 {
        sched.push_str(&format!(
            "{{\"type\":\"request\",\"id\":{id},\"offset_ns\":0,\"prompt\":\"x\",\"prompt_tokens\":1,\"max_tokens\":2}}\n"
        ));
    }
    stdin.write_all(sched.as_bytes()).unwrap();
    stdin.flush().unwrap();
    let stdout = read_all(fire.stdout.take().unwrap());
    let stderr = read_all(fire.stderr.take().unwrap());
    std::thread::sleep(Duration::from_millis(500));
    send_signal(fire.id() as i32, libc::SIGINT);
    // Far less than the 30 s discovery timeout.
    let status = wait_within(&mut fire, Duration::from_secs(15));
    drop(stdin);
    let stderr = String::from_utf8_lossy(&stderr.join().unwrap()).into_owned();
    assert_eq!(status.code(), Some(130), "{stderr}");
    let recs = records(&stdout.join().unwrap());
    assert_eq!(recs[0]["type"], "header");
    assert!(of_type(&recs, "sent").is_empty());
    let done = of_type(&recs, "done");
    assert_eq!(done.len(), 3, "{recs:?}");
    assert!(
        done.iter().all(|d| d["error_kind"] == "not_sent"),
        "{done:?}"
    );
}

/// Ctrl-C after an open loop has sent its last request: the requests still in flight end as
/// `cancelled` at once, rather than running to their end.
#[test]
fn ctrl_c_after_the_last_send_cancels_the_requests_in_flight() {
    // Four requests of 16 tokens 200 ms apart: 3 s each, all sent at t = 0.
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "200"]);
    let sched = run(
        &cmd(
            "arrivals",
            &[
                "--rate",
                "inf",
                "-n",
                "4",
                "--input-tokens",
                "2",
                "--output-tokens",
                "16",
            ],
        ),
        b"",
    );
    let input = temp_path("ctrl-c-after-last-send.ndjson");
    std::fs::write(&input, &sched.stdout).unwrap();
    let mut fire = Command::new(bin("fire"))
        .args(["--url", &server.url])
        .arg(&input)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = read_all(fire.stdout.take().unwrap());
    std::thread::sleep(Duration::from_millis(800));
    send_signal(fire.id() as i32, libc::SIGINT);
    let status = wait_within(&mut fire, Duration::from_secs(30));
    let _ = std::fs::remove_file(&input);
    assert_eq!(status.code(), Some(130));
    let recs = records(&stdout.join().unwrap());
    let dones = of_type(&recs, "done");
    assert_eq!(dones.len(), 4);
    for d in &dones {
        assert_eq!(d["error_kind"], "cancelled", "{d}");
    }
    one_done_per_sent(&recs);
}
