//! A server that goes away mid-run: `fire` stops once 8 requests failed to connect since the
//! last success, and
//! exits 1 with the rest `not_sent` (naming why), or, with `--retry-connect`, waits for the
//! server to come back on the same port and finishes with exit 0. And Ctrl-C on a whole
//! pipeline ends every stage with 130, its summary counting the run's own ends.

use crate::common;
use common::*;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// `fire` on a closed-loop schedule of `n` requests at `concurrency`, reading its stdout as it
/// comes: the returned receiver hears once when the first request has succeeded; the thread
/// returns every line.
fn fire_watched(
    url: &str,
    concurrency: u32,
    n: u32,
    extra: &[&str],
) -> (Child, mpsc::Receiver<()>, std::thread::JoinHandle<Vec<u8>>) {
    let sched = run(
        &cmd(
            "arrivals",
            &[
                "--concurrency",
                &concurrency.to_string(),
                "-n",
                &n.to_string(),
                "--input-tokens",
                "2",
                "--output-tokens",
                "10",
            ],
        ),
        b"",
    );
    let input = temp_path(&format!("stop-{concurrency}-{n}.ndjson"));
    std::fs::write(&input, &sched.stdout).unwrap();
    let mut fire = Command::new(bin("fire"))
        .args(["--url", url])
        .args(extra)
        .arg(&input)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = fire.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let lines = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut told = false;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if !told && line.contains("\"type\":\"done\"") && line.contains("\"ok\":true") {
                told = true;
                let _ = tx.send(());
            }
            all.extend_from_slice(line.as_bytes());
            all.push(b'\n');
        }
        let _ = std::fs::remove_file(&input);
        all
    });
    (fire, rx, lines)
}

fn count(done: &[&serde_json::Value], kind: &str) -> usize {
    done.iter().filter(|d| d["error_kind"] == kind).count()
}

/// The port of a simserve URL (`http://127.0.0.1:PORT/v1`).
fn port_of(url: &str) -> String {
    url.trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/v1")
        .to_string()
}

/// Starts simserve on `port` (the one a killed server had), waiting for its URL.
fn restart_on(port: &str) -> Child {
    let mut child = Command::new(bin("simserve"))
        .args(["--port", port, "--ttft-ms", "10", "--itl-ms", "10"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains(port), "simserve printed {line:?}");
    child
}

#[test]
fn a_server_killed_mid_run_stops_fire_with_exit_1_and_the_rest_not_sent() {
    let server = Server::start(&["--ttft-ms", "10", "--itl-ms", "10"]);
    let url = server.url.clone();
    let (mut fire, first_ok, lines) = fire_watched(&url, 4, 60, &[]);
    let stderr = read_all(fire.stderr.take().unwrap());
    first_ok
        .recv_timeout(Duration::from_secs(30))
        .expect("no request succeeded");
    drop(server);
    let status = wait_within(&mut fire, Duration::from_secs(30));
    let stderr = String::from_utf8_lossy(&stderr.join().unwrap()).into_owned();
    let recs = records(&lines.join().unwrap());
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("requests failed to connect to {url}")),
        "{stderr}"
    );
    assert!(
        stderr.to_ascii_lowercase().contains("connection refused")
            || stderr.contains("connected to itself"),
        "{stderr}"
    );
    let done = of_type(&recs, "done");
    assert_eq!(done.len(), 60, "one done per request");
    let failed_to_connect = count(&done, "connect") + count(&done, "connect_timeout");
    // 8 since the last success, plus at most the other 3 of the closed loop's 4 in flight.
    assert!(
        (8..=11).contains(&failed_to_connect),
        "{failed_to_connect} connect failures: {stderr}"
    );
    let not_sent: Vec<_> = done
        .iter()
        .filter(|d| d["error_kind"] == "not_sent")
        .collect();
    assert!(!not_sent.is_empty(), "{stderr}");
    for d in not_sent {
        let e = d["error"].as_str().unwrap();
        assert!(
            e.starts_with("run stopped before this request was sent: ")
                && e.contains("requests failed to connect to")
                && e.ends_with("since the last success"),
            "{e}"
        );
    }
    assert!(done.iter().any(|d| d["ok"] == true));
}

#[test]
fn retry_connect_waits_for_a_server_restarted_on_the_same_port() {
    let server = Server::start(&["--ttft-ms", "10", "--itl-ms", "10"]);
    let port = port_of(&server.url);
    let (mut fire, first_ok, lines) = fire_watched(&server.url, 2, 40, &["--retry-connect=60s"]);
    let stderr = read_all(fire.stderr.take().unwrap());
    first_ok
        .recv_timeout(Duration::from_secs(30))
        .expect("no request succeeded");
    drop(server);
    // Long enough for the first waits to find nobody there.
    std::thread::sleep(Duration::from_millis(800));
    let mut again = restart_on(&port);
    let status = wait_within(&mut fire, Duration::from_secs(60));
    let _ = again.kill();
    let _ = again.wait();
    let stderr = String::from_utf8_lossy(&stderr.join().unwrap()).into_owned();
    let recs = records(&lines.join().unwrap());
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("waiting up to 60 s"), "{stderr}");
    assert!(stderr.contains("is back after"), "{stderr}");
    let done = of_type(&recs, "done");
    assert_eq!(done.len(), 40, "one done per request");
    assert_eq!(count(&done, "not_sent"), 0, "{stderr}");
    assert_eq!(count(&done, "cancelled"), 0, "{stderr}");
    // The requests that failed to connect stay failed: they are data.
    let failed_to_connect = count(&done, "connect") + count(&done, "connect_timeout");
    assert!(failed_to_connect >= 8, "{stderr}");
    // Requests succeeded after the restart: the last to end did.
    let last = done
        .iter()
        .max_by_key(|d| d["at_ns"].as_u64().unwrap())
        .unwrap();
    assert_eq!(last["ok"], true, "{last}");
}

/// `arrivals | fire --save FILE | reduce | table` in one process group, interrupted the way a
/// terminal does it: every stage exits 130, table still prints, and the saved run's summary
/// counts the requests in flight as `cancelled` and the unsent ones as `not_sent`.
#[test]
fn ctrl_c_ends_every_stage_with_130_after_writing_what_it_has() {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "20"]);
    let saved = temp_path("stop-group-saved.ndjson");
    let saved_arg = saved.to_str().unwrap();
    let (children, group) = spawn_group(&[
        cmd(
            "arrivals",
            &[
                "--rate",
                "50",
                "-n",
                "2000",
                "--input-tokens",
                "8",
                "--output-tokens",
                "30",
            ],
        ),
        cmd("fire", &["--url", &server.url, "--save", saved_arg]),
        cmd("reduce", &[]),
        cmd("table", &[]),
    ]);
    let [mut arrivals, mut fire, mut reduce, mut table]: [Child; 4] = children.try_into().unwrap();
    let shown = read_all(table.stdout.take().unwrap());
    let errs: Vec<_> = [
        fire.stderr.take().unwrap(),
        reduce.stderr.take().unwrap(),
        table.stderr.take().unwrap(),
    ]
    .into_iter()
    .map(read_all)
    .collect();
    std::thread::sleep(Duration::from_millis(1500));
    send_signal(-group, libc::SIGINT);
    let statuses: Vec<_> = [&mut fire, &mut reduce, &mut table]
        .into_iter()
        .map(|c| wait_within(c, Duration::from_secs(30)))
        .collect();
    let _ = wait_within(&mut arrivals, Duration::from_secs(30));
    let errs: Vec<String> = errs
        .into_iter()
        .map(|e| String::from_utf8_lossy(&e.join().unwrap()).into_owned())
        .collect();
    for ((tool, status), err) in ["fire", "reduce", "table"].iter().zip(&statuses).zip(&errs) {
        assert_eq!(status.code(), Some(130), "{tool}: {err}");
    }
    let shown = String::from_utf8_lossy(&shown.join().unwrap()).into_owned();
    assert!(
        !shown.trim().is_empty(),
        "table printed nothing: {}",
        errs[2]
    );
    let summary = run(&cmd("reduce", &[saved.to_str().unwrap()]), b"");
    let _ = std::fs::remove_file(&saved);
    assert!(summary.status.success());
    let s = of_type(&records(&summary.stdout), "summary")[0].clone();
    assert!(s["errors"]["cancelled"].as_u64().unwrap_or(0) >= 1, "{s}");
    assert!(s["errors"]["not_sent"].as_u64().unwrap_or(0) >= 1, "{s}");
    assert!(s["requests_ok"].as_u64().unwrap() >= 1, "{s}");
}
