//! Speculative decoding, live scrapes and energy through the real binaries: simserve's
//! `--spec-decode` and `--gpus`, fire's `--server-metrics-every` and `--scrape`, reduce's
//! `spec_*`, `tokens_per_event`, `gauges` and energy members, with values known exactly.

use crate::common;
use common::*;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

fn f(v: &serde_json::Value, field: &str) -> f64 {
    v[field]
        .as_f64()
        .unwrap_or_else(|| panic!("summary field {field} missing in {v}"))
}

/// `arrivals | fire` against `server` with `fire_extra`, then reduce; fire's records and
/// reduce's summary.
fn run_and_reduce(
    server_url: &str,
    arrivals: &[&str],
    fire_extra: &[&str],
) -> (Vec<serde_json::Value>, serde_json::Value, String) {
    let mut fire = vec!["--url", server_url, "--quiet"];
    fire.extend_from_slice(fire_extra);
    let outs = pipeline(&[cmd("arrivals", arrivals), cmd("fire", &fire)], None);
    assert_ok(&outs[1], "fire");
    let events = records(&outs[1].stdout);
    let reduced = run(&cmd("reduce", &[]), &outs[1].stdout);
    assert_ok(&reduced, "reduce");
    let recs = records(&reduced.stdout);
    let summary = of_type(&recs, "summary")[0].clone();
    let stderr = String::from_utf8_lossy(&outs[1].stderr).into_owned();
    (events, summary, stderr)
}

const FOUR_OF_13: [&str; 8] = [
    "--concurrency",
    "2",
    "--num-prompts",
    "4",
    "--input-tokens",
    "8",
    "--output-tokens",
    "13",
];

#[test]
fn certain_acceptance_gives_rate_one_and_length_k_plus_one() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "5", "--spec-decode", "3:1"]);
    let (events, s, _) = run_and_reduce(&server.url, &FOUR_OF_13, &["--server-metrics"]);
    // 13 tokens: the prefill's alone, then three steps of 4.
    for done in of_type(&events, "done") {
        assert_eq!(done["completion_tokens"], 13, "{done}");
        assert_eq!(done["events"], 4, "{done}");
    }
    assert_eq!(f(&s, "spec_acceptance_rate"), 1.0);
    assert_eq!(f(&s, "spec_acceptance_length"), 4.0);
    assert_eq!(
        s["spec_acceptance_per_position"],
        serde_json::json!([1.0, 1.0, 1.0])
    );
    assert_eq!(f(&s, "tokens_per_event"), 13.0 / 4.0);
    assert_eq!(f(&s, "server_generation_tokens"), 52.0);
}

#[test]
fn continuous_usage_counts_each_step_s_tokens_so_itl_per_event_and_per_token_differ() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "8", "--spec-decode", "3:1"]);
    let fire = ["--stream-usage", "continuous"];
    let (events, s, _) = run_and_reduce(&server.url, &FOUR_OF_13, &fire);
    let tokens: Vec<u64> = of_type(&events, "token")
        .iter()
        .filter(|t| t["id"] == of_type(&events, "token")[0]["id"])
        .map(|t| t["tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(tokens, [1, 4, 4, 4]);
    // One step every 8 ms: 8 ms per event, 2 ms per token. Twelve gaps in all, so a first
    // token read a few ms late on a busy machine (its later tokens on time) shortens the mean
    // by a twelfth of that: the range is wide, and still far from a mean per token.
    let (per_event, per_token) = (f(&s, "itl_mean_ms"), f(&s, "itl_token_mean_ms"));
    assert!((5.0..12.0).contains(&per_event), "{per_event}");
    assert!(
        (per_token * 4.0 - per_event).abs() < 0.5,
        "{per_token} {per_event}"
    );
}

#[test]
fn no_acceptance_gives_rate_zero_and_length_one() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "2", "--spec-decode", "2:0"]);
    let (_, s, _) = run_and_reduce(&server.url, &FOUR_OF_13, &["--server-metrics"]);
    assert_eq!(f(&s, "spec_acceptance_rate"), 0.0);
    assert_eq!(f(&s, "spec_acceptance_length"), 1.0);
    assert!(
        s.get("tokens_per_event").is_none(),
        "one token an event: {s}"
    );
}

#[test]
fn half_acceptance_is_near_one_half_and_the_same_every_run() {
    let arrivals = [
        "--concurrency",
        "4",
        "--num-prompts",
        "16",
        "--output-tokens",
        "40",
    ];
    let mut rates = Vec::new();
    for _ in 0..2 {
        let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1", "--spec-decode", "1:0.5"]);
        let (_, s, _) = run_and_reduce(&server.url, &arrivals, &["--server-metrics"]);
        let rate = f(&s, "spec_acceptance_rate");
        // About 420 drafts: a standard deviation near 0.025.
        assert!((rate - 0.5).abs() < 0.1, "{rate}");
        let length = f(&s, "spec_acceptance_length");
        assert!(
            (length - (1.0 + rate)).abs() < 1e-9,
            "K = 1: length is 1 + rate"
        );
        let per_event = f(&s, "tokens_per_event");
        assert!((1.2..1.8).contains(&per_event), "{per_event}");
        rates.push(rate);
    }
    assert_eq!(rates[0], rates[1], "seeded by the requests' numbers");
}

#[test]
fn modelled_idle_power_gives_exact_watts_and_joules_per_token() {
    // `uncounted` requests never reach /metrics: the two GPUs stay at their idle 100 W.
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "10", "--gpus", "2"]);
    let metrics = server.url.trim_end_matches("/v1").to_string() + "/metrics";
    let arrivals = [
        "--concurrency",
        "1",
        "--num-prompts",
        "4",
        "--output-tokens",
        "20",
    ];
    let fire = [
        "--server-metrics",
        "--scrape",
        &metrics,
        "-H",
        "x-tokenpipe-fault: uncounted",
    ];
    let (events, s, _) = run_and_reduce(&server.url, &arrivals, &fire);
    let scrapes = of_type(&events, "server_metrics");
    assert_eq!(scrapes.len(), 4, "before and after, twice");
    assert!(scrapes.iter().any(|r| r["samples"]
        .as_object()
        .unwrap()
        .keys()
        .any(|k| k.starts_with("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"1\""))));
    // The counter's change over fire's time between the scrapes: the server and fire read
    // their clocks a little apart, so a few per mille.
    let power = f(&s, "power_w_mean");
    assert!((power - 200.0).abs() < 200.0 * 0.03, "{power}");
    for gpu in ["0", "1"] {
        let w = s["power_w_mean_per_gpu"][gpu].as_f64().unwrap();
        assert!((w - 100.0).abs() < 3.0, "{gpu}: {w}");
    }
    let per_token = f(&s, "energy_j_per_output_token");
    let tps = f(&s, "output_throughput_tokens_per_s");
    assert!(
        (per_token - power / tps).abs() < 1e-9 * per_token,
        "{per_token}"
    );
}

#[test]
fn a_loaded_gpu_draws_more_than_idle() {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "10", "--gpus", "2"]);
    let metrics = server.url.trim_end_matches("/v1").to_string() + "/metrics";
    let arrivals = [
        "--concurrency",
        "2",
        "--num-prompts",
        "6",
        "--output-tokens",
        "20",
    ];
    let fire = ["--scrape", &metrics, "--server-metrics-every", "100ms"];
    let (_, s, _) = run_and_reduce(&server.url, &arrivals, &fire);
    // Two requests in flight most of the time: 200 W + 2 × 25 W at most.
    let power = f(&s, "power_w_mean");
    assert!((205.0..=252.0).contains(&power), "{power}");
    let util = &s["gauges"]["gpu_util_pct"];
    assert_eq!(util["max"], 100.0, "{s}");
    let running = &s["gauges"]["requests_running"];
    assert!(running["max"].as_f64().unwrap() >= 1.0, "{s}");
}

#[test]
fn scrapes_every_100ms_over_a_second() {
    let server = Server::start(&["--ttft-ms", "10", "--itl-ms", "10"]);
    let arrivals = [
        "--concurrency",
        "1",
        "--num-prompts",
        "10",
        "--output-tokens",
        "10",
    ];
    let (events, s, _) =
        run_and_reduce(&server.url, &arrivals, &["--server-metrics-every", "100ms"]);
    let during: Vec<_> = of_type(&events, "server_metrics")
        .into_iter()
        .filter(|r| r["phase"] == "during")
        .collect();
    let last_done = of_type(&events, "done")
        .iter()
        .map(|d| d["at_ns"].as_u64().unwrap())
        .max()
        .unwrap();
    let expected = last_done / 100_000_000;
    assert!(
        (during.len() as u64).abs_diff(expected) <= 3,
        "{} scrapes during a run of {last_done} ns",
        during.len()
    );
    let stamps: Vec<u64> = during
        .iter()
        .map(|r| r["at_ns"].as_u64().unwrap())
        .collect();
    assert!(stamps.windows(2).all(|w| w[0] < w[1]), "{stamps:?}");
    for r in &during {
        let samples = r["samples"].as_object().unwrap();
        assert!(samples
            .contains_key("vllm:num_requests_running{model_name=\"tokenpipe-sim\",engine=\"0\"}"));
        assert!(
            !samples.keys().any(|k| k.contains("_bucket")),
            "no buckets during the run"
        );
    }
    assert!(
        s["gauges"]["requests_running"]["mean"].as_f64().unwrap() > 0.0,
        "{s}"
    );
}

/// An exporter that answers its first scrape, then takes every later one and never answers.
fn stalling_exporter() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/metrics", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for (n, conn) in listener.incoming().enumerate() {
            let Ok(mut conn) = conn else { continue };
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            if n == 0 {
                let body = "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 100\n";
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            } else {
                held.push(conn);
            }
        }
    });
    url
}

#[test]
fn a_stalled_exporter_never_holds_the_run_back() {
    let server = Server::start(&["--ttft-ms", "10", "--itl-ms", "10"]);
    let exporter = stalling_exporter();
    let arrivals = [
        "--concurrency",
        "1",
        "--num-prompts",
        "8",
        "--output-tokens",
        "10",
    ];
    let started = Instant::now();
    let fire = ["--scrape", &exporter, "--server-metrics-every", "100ms"];
    let (events, _, stderr) = run_and_reduce(&server.url, &arrivals, &fire);
    // Eight requests of 100 ms one after the other: the run keeps its pace, and only the
    // scrape after it waits its 5 s out.
    let last_done = of_type(&events, "done")
        .iter()
        .map(|d| d["at_ns"].as_u64().unwrap())
        .max()
        .unwrap();
    assert!(last_done < 1_600_000_000, "{last_done} ns");
    assert!(
        started.elapsed() < Duration::from_secs(12),
        "{:?}",
        started.elapsed()
    );
    assert!(stderr.contains("scrapes skipped"), "{stderr}");
    assert!(stderr.contains("--scrape: GET"), "{stderr}");
    // The engine's own scrapes went on every 100 ms meanwhile.
    let during = of_type(&events, "server_metrics")
        .into_iter()
        .filter(|r| r["phase"] == "during")
        .count();
    assert!(during >= 5, "{during}");
}

#[test]
fn ctrl_c_ends_a_run_with_live_scrapes_promptly() {
    let server = Server::start(&["--ttft-ms", "10", "--itl-ms", "10"]);
    let exporter = stalling_exporter();
    let fire = cmd(
        "fire",
        &[
            "--url",
            &server.url,
            "--quiet",
            "--server-metrics-every",
            "50ms",
            "--scrape",
            &exporter,
        ],
    );
    let (children, group) = spawn_group(&[endless_arrivals(), fire]);
    let [mut arrivals, mut fire]: [std::process::Child; 2] = children.try_into().unwrap();
    let out = read_all(fire.stdout.take().unwrap());
    let err = read_all(fire.stderr.take().unwrap());
    std::thread::sleep(Duration::from_millis(800));
    let signalled = Instant::now();
    send_signal(-group, libc::SIGINT);
    let status = wait_within(&mut fire, Duration::from_secs(20));
    let took = signalled.elapsed();
    let _ = wait_within(&mut arrivals, Duration::from_secs(20));
    let err = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
    assert_eq!(status.code(), Some(130), "{err}");
    // The stalled exporter's scrape after a stop waits 1 s at most.
    assert!(took < Duration::from_secs(4), "{took:?}: {err}");
    let events = records(&out.join().unwrap());
    let during = of_type(&events, "server_metrics")
        .into_iter()
        .filter(|r| r["phase"] == "during")
        .count();
    assert!(during >= 5, "{during}");
}

#[test]
fn a_scraped_exporter_gets_neither_the_api_key_nor_the_headers() {
    let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let (exporter, heads) = crate::server_metrics::recording_metrics_server(2);
    let fire = [
        "--url",
        &server.url,
        "--api-key",
        "sk-not-for-exporters",
        "-H",
        "X-Tenant: blue",
        "--scrape",
        &exporter,
        "--quiet",
    ];
    let out = run(&cmd("fire", &fire), &closed_schedule(1, 2, |_| {}));
    assert_ok(&out, "fire");
    let heads = heads.join().expect("exporter");
    assert_eq!(heads.len(), 2, "before and after");
    for head in heads {
        assert!(head.starts_with("get /metrics http/1.1\r\n"), "{head}");
        assert!(
            !head.contains("authorization") && !head.contains("x-tenant"),
            "{head}"
        );
    }
    let events = records(&out.stdout);
    let scrapes = of_type(&events, "server_metrics");
    assert_eq!(
        scrapes.len(),
        2,
        "the exporter's page has an engine's series: {scrapes:?}"
    );
}
