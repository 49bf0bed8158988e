//! `fire --server-metrics` through the real binaries: simserve's `/metrics` scraped before and
//! after a run, and reduce's `server_*` members agreeing with the client's own counts.

use crate::common;
use common::*;

fn f(v: &serde_json::Value, field: &str) -> f64 {
    v[field]
        .as_f64()
        .unwrap_or_else(|| panic!("summary field {field} missing in {v}"))
}

#[test]
fn server_deltas_match_the_clients_counts_and_latencies() {
    let server = Server::start(&["--ttft-ms", "50", "--itl-ms", "5"]);
    let arrivals = cmd(
        "arrivals",
        &[
            "--concurrency",
            "4",
            "--num-prompts",
            "12",
            "--input-tokens",
            "16",
            "--output-tokens",
            "10",
        ],
    );
    let fire = cmd(
        "fire",
        &["--url", &server.url, "--server-metrics", "--quiet"],
    );
    let outs = pipeline(&[arrivals, fire], None);
    assert_ok(&outs[1], "fire");
    let events = records(&outs[1].stdout);
    let scrapes = of_type(&events, "server_metrics");
    assert_eq!(scrapes.len(), 2, "{scrapes:?}");
    assert_eq!(scrapes[0]["phase"], "before");
    assert_eq!(scrapes[1]["phase"], "after");
    assert!(scrapes[0]["url"].as_str().unwrap().ends_with("/metrics"));
    let before_done = events
        .iter()
        .position(|r| r["type"] == "server_metrics")
        .unwrap();
    let first_sent = events.iter().position(|r| r["type"] == "sent").unwrap();
    let last_done = events.iter().rposition(|r| r["type"] == "done").unwrap();
    let after = events
        .iter()
        .rposition(|r| r["type"] == "server_metrics")
        .unwrap();
    assert!(before_done < first_sent && last_done < after);

    let reduced = run(&cmd("reduce", &[]), &outs[1].stdout);
    assert_ok(&reduced, "reduce");
    let recs = records(&reduced.stdout);
    let s = of_type(&recs, "summary")[0];
    assert_eq!(f(s, "requests_ok"), 12.0);
    assert_eq!(f(s, "server_requests_succeeded"), 12.0);
    assert_eq!(f(s, "server_prompt_tokens"), f(s, "input_tokens"));
    assert_eq!(f(s, "server_generation_tokens"), f(s, "output_tokens"));
    assert_eq!(f(s, "output_tokens"), 120.0);
    // The server stamps when it hands a token over; the client when it reads it: a few ms
    // apart at most on a quiet machine, more on a busy one.
    let (server_ttft, client_ttft) = (f(s, "server_ttft_mean_ms"), f(s, "ttft_mean_ms"));
    assert!(
        (server_ttft - client_ttft).abs() < 15.0 && (50.0..80.0).contains(&server_ttft),
        "server {server_ttft} ms, client {client_ttft} ms"
    );
    let server_itl = f(s, "server_itl_mean_ms");
    assert!((4.0..15.0).contains(&server_itl), "{server_itl}");
    let e2el = f(s, "server_e2el_mean_ms");
    assert!((95.0..140.0).contains(&e2el), "{e2el}");
}

#[test]
fn a_scrape_that_fails_is_a_warning_not_a_failed_run() {
    let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let dead = format!("--server-metrics=http://127.0.0.1:{}/metrics", dead_port());
    let arrivals = cmd("arrivals", &["--concurrency", "2", "--num-prompts", "3"]);
    let fire = cmd("fire", &["--url", &server.url, &dead, "--quiet"]);
    let outs = pipeline(&[arrivals, fire], None);
    assert_ok(&outs[1], "fire");
    let stderr = String::from_utf8_lossy(&outs[1].stderr);
    assert!(
        stderr.contains("--server-metrics") && stderr.contains("before the run"),
        "{stderr}"
    );
    let events = records(&outs[1].stdout);
    assert!(of_type(&events, "server_metrics").is_empty());
    assert_eq!(of_type(&events, "done").len(), 3);
    let reduced = run(&cmd("reduce", &[]), &outs[1].stdout);
    assert_ok(&reduced, "reduce");
    let recs = records(&reduced.stdout);
    assert!(of_type(&recs, "summary")[0]
        .get("server_prompt_tokens")
        .is_none());
}

/// A metrics endpoint on another port that answers `count` scrapes and returns the request
/// heads it was sent.
pub(crate) fn recording_metrics_server(
    count: usize,
) -> (String, std::thread::JoinHandle<Vec<String>>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/metrics", listener.local_addr().expect("addr"));
    let heads = std::thread::spawn(move || {
        let page = "vllm:prompt_tokens_total{engine=\"0\"} 1.0\n";
        let mut heads = Vec::new();
        for conn in listener.incoming().take(count) {
            let mut conn = conn.expect("accept");
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && conn.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            heads.push(String::from_utf8_lossy(&head).to_ascii_lowercase());
            let response = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n{page}",
                page.len()
            );
            let _ = conn.write_all(response.as_bytes());
        }
        heads
    });
    (url, heads)
}

#[test]
fn the_api_key_and_headers_go_only_to_the_host_the_requests_go_to() {
    let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1", "--api-key", "sk-test"]);
    let (metrics_url, heads) = recording_metrics_server(2);
    let elsewhere = format!("--server-metrics={metrics_url}");
    let arrivals = cmd("arrivals", &["--concurrency", "2", "--num-prompts", "3"]);
    let fire = cmd(
        "fire",
        &[
            "--url",
            &server.url,
            "--api-key",
            "sk-test",
            "-H",
            "x-custom: 1",
            &elsewhere,
            "--quiet",
        ],
    );
    let outs = pipeline(&[arrivals, fire], None);
    assert_ok(&outs[1], "fire");
    let events = records(&outs[1].stdout);
    assert_eq!(
        of_type(&events, "done").len(),
        3,
        "the key reached simserve"
    );
    assert_eq!(of_type(&events, "server_metrics").len(), 2);
    let heads = heads.join().expect("metrics server");
    assert_eq!(heads.len(), 2);
    for head in heads {
        assert!(head.starts_with("get /metrics"), "{head}");
        assert!(
            !head.contains("authorization") && !head.contains("x-custom"),
            "{head}"
        );
    }
}

#[test]
fn an_uncounted_request_is_answered_but_never_reaches_the_servers_counters() {
    let server = Server::start(&["--ttft-ms", "2", "--itl-ms", "1"]);
    let arrivals = cmd(
        "arrivals",
        &[
            "--concurrency",
            "2",
            "--num-prompts",
            "6",
            "--output-tokens",
            "5",
        ],
    );
    let fire = cmd(
        "fire",
        &[
            "--url",
            &server.url,
            "-H",
            "x-tokenpipe-fault: uncounted",
            "--server-metrics",
            "--quiet",
        ],
    );
    let outs = pipeline(&[arrivals, fire], None);
    assert_ok(&outs[1], "fire");
    let reduced = run(&cmd("reduce", &[]), &outs[1].stdout);
    assert_ok(&reduced, "reduce");
    let recs = records(&reduced.stdout);
    let s = of_type(&recs, "summary")[0];
    assert_eq!(f(s, "requests_ok"), 6.0);
    assert_eq!(f(s, "output_tokens"), 30.0);
    for counter in [
        "server_requests_succeeded",
        "server_generation_tokens",
        "server_prompt_tokens",
    ] {
        assert_eq!(f(s, counter), 0.0, "{counter}: {s}");
    }
    assert_eq!(s["verdict"]["server"]["ok"], false, "{s}");
}
