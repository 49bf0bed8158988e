//! fire's protocol options, timeouts and loud failures, end to end: the real binaries through
//! real pipes against simserve (or, where the request itself must be seen, a tiny capturing
//! server in this file). Every timeout is provoked with a server at least ten times slower than
//! the limit, so a loaded machine cannot flip a result.

use crate::common;
use common::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// `arrivals -n N` with tiny requests, as a closed loop of `concurrency` when given.
fn schedule(n: usize, concurrency: Option<usize>) -> Vec<u8> {
    let n = n.to_string();
    let c = concurrency.map(|c| c.to_string());
    let mut args = vec!["-n", &n, "--input-tokens", "3", "--output-tokens", "4"];
    if let Some(c) = &c {
        args.extend(["--concurrency", c]);
    }
    let out = run(&cmd("arrivals", &args), b"");
    assert_ok(&out, "arrivals");
    out.stdout
}

/// Runs fire with `args` on a schedule; returns its output, its records and its stderr.
fn fire(args: &[&str], sched: &[u8]) -> (std::process::Output, Vec<serde_json::Value>, String) {
    let out = run(&cmd("fire", args), sched);
    let recs = records(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, recs, stderr)
}

fn dones(recs: &[serde_json::Value]) -> Vec<&serde_json::Value> {
    of_type(recs, "done")
}

fn all_of_kind(recs: &[serde_json::Value], n: usize, kind: &str) {
    let d = dones(recs);
    assert_eq!(d.len(), n, "{d:?}");
    for d in d {
        assert_eq!(d["error_kind"], kind, "{d}");
        assert!(d["error"].as_str().is_some_and(|e| !e.is_empty()), "{d}");
    }
}

#[test]
fn no_content_within_the_first_token_timeout() {
    let server = Server::start(&["--ttft-ms", "3000", "--itl-ms", "1"]);
    let args = [
        "--url",
        &server.url,
        "--model",
        "m",
        "--first-token-timeout",
        "200ms",
    ];
    let (out, recs, _) = fire(&args, &schedule(2, None));
    assert_none_succeeded(&out, "fire");
    all_of_kind(&recs, 2, "first_token_timeout");
    assert!(dones(&recs)[0]["error"]
        .as_str()
        .unwrap()
        .contains("0.200 s"));
    assert_eq!(recs[0]["params"]["first_token_timeout_s"], 0.2);
}

#[test]
fn a_slow_response_head_counts_against_the_first_token_timeout() {
    let server = Server::start(&["--ttft-ms", "1", "--headers-delay-ms", "3000"]);
    let args = [
        "--url",
        &server.url,
        "--model",
        "m",
        "--first-token-timeout",
        "200ms",
    ];
    let (_, recs, _) = fire(&args, &schedule(1, None));
    all_of_kind(&recs, 1, "first_token_timeout");
}

#[test]
fn a_stalled_stream_ends_at_the_idle_timeout_not_the_request_timeout() {
    let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1", "--fault", "stall"]);
    let args = [
        "--url",
        &server.url,
        "--model",
        "m",
        "--idle-timeout",
        "200ms",
    ];
    let (out, recs, _) = fire(&args, &schedule(2, None));
    assert_none_succeeded(&out, "fire");
    all_of_kind(&recs, 2, "idle_timeout");
    // Half the answer came before the stall.
    assert!(dones(&recs).iter().all(|d| d["events"] == 2), "{recs:?}");
}

/// A loopback listener whose accept queue is full, so a new connection's SYN goes unanswered;
/// `None` where the kernel answers anyway (then there is no reliable way to test on loopback).
fn unanswering_address() -> Option<(TcpListener, Vec<TcpStream>, std::net::SocketAddr)> {
    use std::os::fd::AsRawFd;
    let listener = TcpListener::bind("127.0.0.1:0").ok()?;
    // SAFETY: listen(2) again on our own socket, to shrink its backlog.
    if unsafe { libc::listen(listener.as_raw_fd(), 0) } != 0 {
        return None;
    }
    let addr = listener.local_addr().ok()?;
    let mut fillers = Vec::new();
    for _ in 0..16 {
        match TcpStream::connect_timeout(&addr, Duration::from_millis(300)) {
            Ok(s) => fillers.push(s),
            Err(_) => return Some((listener, fillers, addr)),
        }
    }
    None
}

#[test]
fn no_connection_within_the_connect_timeout() {
    let Some((_listener, _fillers, addr)) = unanswering_address() else {
        eprintln!(
            "skipped: this kernel answers every SYN on loopback, so nothing here hangs a connect"
        );
        return;
    };
    let url = format!("http://{addr}/v1");
    let args = ["--url", &url, "--model", "m", "--connect-timeout", "200ms"];
    let (out, recs, _) = fire(&args, &schedule(2, None));
    assert_none_succeeded(&out, "fire");
    all_of_kind(&recs, 2, "connect_timeout");
    assert!(dones(&recs)[0]["error"]
        .as_str()
        .unwrap()
        .contains("--connect-timeout"));
}

#[test]
fn answers_that_are_not_event_streams() {
    for (fault, content_type, excerpt) in [
        ("json", "application/json", "\"choices\""),
        ("html", "text/html", "<!DOCTYPE html>"),
    ] {
        let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1", "--fault", fault]);
        let (out, recs, _) = fire(&["--url", &server.url, "--model", "m"], &schedule(2, None));
        assert_none_succeeded(&out, fault);
        all_of_kind(&recs, 2, "not_stream");
        let e = dones(&recs)[0]["error"].as_str().unwrap().to_string();
        assert!(
            e.contains(content_type) && e.contains(excerpt),
            "{fault}: {e}"
        );
        assert_eq!(dones(&recs)[0]["status"], 200);
    }
}

#[test]
fn an_api_key_is_sent_but_never_written() {
    const KEY: &str = "sk-never-written-4242";
    let server = Server::start(&["--api-key", KEY]);
    let sched = schedule(2, None);
    let saved = temp_path("protocol-key.ndjson");
    let save = saved.to_str().unwrap();
    // The flag (model discovered through the key) and the environment variable.
    let (out, recs, stderr) = fire(
        &["--url", &server.url, "--api-key", KEY, "--save", save],
        &sched,
    );
    assert_ok(&out, "fire --api-key");
    assert!(dones(&recs).iter().all(|d| d["ok"] == true), "{recs:?}");
    assert_eq!(recs[0]["params"]["api_key"], true);
    let written = std::fs::read_to_string(&saved).unwrap();
    let _ = std::fs::remove_file(&saved);
    for (what, text) in [
        ("stdout", String::from_utf8_lossy(&out.stdout).into_owned()),
        ("stderr", stderr),
        ("--save", written),
    ] {
        assert!(
            !text.contains(KEY) && !text.contains("never-written"),
            "{what}: {text}"
        );
    }
    let from_env = std::process::Command::new(bin("fire"))
        .args(["--url", &server.url])
        .env("OPENAI_API_KEY", KEY)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    from_env.stdin.as_ref().unwrap().write_all(&sched).unwrap();
    let out = from_env.wait_with_output().unwrap();
    assert_ok(&out, "fire with OPENAI_API_KEY");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(KEY));
    // Without the key: 401s, and exit 1.
    let (out, recs, _) = fire(&["--url", &server.url, "--model", "m"], &sched);
    assert_none_succeeded(&out, "fire without a key");
    assert!(dones(&recs).iter().all(|d| d["status"] == 401), "{recs:?}");
}

/// A server that records each raw request and answers it with a short, complete stream.
struct Capture {
    url: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Capture {
    fn start() -> Capture {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let Some(request) = read_whole_request(&mut conn) else {
                    continue;
                };
                seen.lock().unwrap().push(request);
                let body = "data: {\"choices\":[{\"text\":\"a\",\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n";
                let _ = conn.write_all(format!("{SSE_HEAD}{body}").as_bytes());
            }
        });
        Capture { url, requests }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

fn read_whole_request(conn: &mut TcpStream) -> Option<String> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = conn.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        raw.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&raw).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length: usize = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().to_string())
                })
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            if raw.len() >= end + 4 + length {
                return Some(text);
            }
        }
    }
}

#[test]
fn headers_endpoint_and_body_options_reach_the_server() {
    let server = Capture::start();
    let (out, recs, _) = fire(
        &[
            "--url",
            &server.url,
            "--model",
            "m",
            "--endpoint",
            "/gateway/generate",
            "-H",
            "X-Tenant: blue",
            "--header=X-Auth-Token: tok-hidden-77",
            "--extra-body",
            r#"{"top_p":0.5,"seed":3}"#,
            "--temperature",
            "0.25",
            "--stream-usage",
            "continuous",
        ],
        &schedule(1, None),
    );
    assert_ok(&out, "fire");
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let req = &requests[0];
    assert!(
        req.starts_with("POST /gateway/generate HTTP/1.1\r\n"),
        "{req}"
    );
    let lower = req.to_ascii_lowercase();
    assert!(lower.contains("\r\nx-tenant: blue\r\n"), "{req}");
    assert!(
        lower.contains("\r\nx-auth-token: tok-hidden-77\r\n"),
        "{req}"
    );
    let body: serde_json::Value =
        serde_json::from_str(req.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["top_p"], 0.5, "{body}");
    assert_eq!(body["seed"], 3, "{body}");
    assert_eq!(body["temperature"], 0.25, "{body}");
    assert_eq!(
        body["stream_options"]["continuous_usage_stats"], true,
        "{body}"
    );
    let header = &recs[0];
    assert_eq!(header["params"]["headers"]["X-Tenant"], "blue");
    assert_eq!(header["params"]["headers"]["X-Auth-Token"], "***");
    assert_eq!(header["params"]["extra_body"]["seed"], 3);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("tok-hidden-77"), "{stdout}");
}

#[test]
fn a_server_that_is_down_stops_fire_before_the_run() {
    let url = format!("http://127.0.0.1:{}/v1", dead_port());
    let (out, _, stderr) = fire(&["--url", &url], &schedule(3, None));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing is written before the run");
    assert!(
        stderr.contains(&format!("cannot connect to {url}")),
        "{stderr}"
    );
    assert!(
        stderr.to_ascii_lowercase().contains("connection refused"),
        "{stderr}"
    );
}

#[test]
fn the_first_requests_all_failing_to_connect_stop_the_run() {
    let url = format!("http://127.0.0.1:{}/v1", dead_port());
    let sched = schedule(20, Some(1));
    let (out, recs, stderr) = fire(&["--url", &url, "--model", "m"], &sched);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("first 8 requests all failed to connect"),
        "{stderr}"
    );
    assert!(
        stderr.to_ascii_lowercase().contains("connection refused"),
        "{stderr}"
    );
    let d = dones(&recs);
    assert_eq!(d.len(), 20, "one done per request");
    let connect = d.iter().filter(|d| d["error_kind"] == "connect").count();
    let not_sent = d.iter().filter(|d| d["error_kind"] == "not_sent").count();
    assert_eq!(connect, 8, "{d:?}");
    assert_eq!(not_sent, 12, "{d:?}");
    // --keep-going sends every one.
    let (out, recs, _) = fire(&["--url", &url, "--model", "m", "--keep-going"], &sched);
    assert_none_succeeded(&out, "fire --keep-going");
    all_of_kind(&recs, 20, "connect");
}

#[test]
fn a_model_list_not_found_hints_at_v1() {
    let server = Server::start(&[]);
    let base = server.url.trim_end_matches("/v1").to_string();
    let (_, _, stderr) = fire(&["--url", &base], &schedule(1, None));
    assert!(
        stderr.contains(&format!("did you mean {base}/v1?")),
        "{stderr}"
    );
}
