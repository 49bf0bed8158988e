//! The whole pipe, `arrivals | fire | reduce | table`, through real OS pipes against the real
//! simulated server at known timings. The server sends token k at TTFT + (k-1)·ITL after it
//! reads a request, so every metric has a known true value.

use crate::common;
use common::*;

const TTFT_MS: f64 = 50.0;
const ITL_MS: f64 = 10.0;

fn f(v: &serde_json::Value, field: &str) -> f64 {
    v[field]
        .as_f64()
        .unwrap_or_else(|| panic!("summary field {field} missing in {v}"))
}

fn near(v: &serde_json::Value, field: &str, want: f64, tol: f64) {
    let got = f(v, field);
    assert!(
        (got - want).abs() <= tol,
        "{field} = {got}, want {want} ± {tol}"
    );
}

/// Runs arrivals | fire, then reduce on fire's output; returns (events, summary).
fn run_pipe(
    server: &Server,
    arrivals: &[&str],
    fire: &[&str],
) -> (Vec<serde_json::Value>, serde_json::Value) {
    let mut fire_args = vec!["--url", server.url.as_str()];
    fire_args.extend_from_slice(fire);
    let outs = pipeline(&[cmd("arrivals", arrivals), cmd("fire", &fire_args)], None);
    assert_ok(&outs[0], "arrivals");
    assert_ok(&outs[1], "fire");
    let events = records(&outs[1].stdout);
    let reduced = run(&cmd("reduce", &[]), &outs[1].stdout);
    assert_ok(&reduced, "reduce");
    let recs = records(&reduced.stdout);
    assert_eq!(recs[0]["type"], "header");
    let summaries = of_type(&recs, "summary");
    assert_eq!(summaries.len(), 1);
    (events, summaries[0].clone())
}

#[test]
fn open_loop_metrics_match_the_configured_timings() {
    let server = Server::start(&["--ttft-ms", "50", "--itl-ms", "10"]);
    let n = 40;
    let (events, s) = run_pipe(
        &server,
        &[
            "--rate",
            "40",
            "--num-prompts",
            "40",
            "--input-tokens",
            "16",
            "--output-tokens",
            "20",
            "--seed",
            "3",
        ],
        &[],
    );
    // Exact counts.
    assert_eq!(of_type(&events, "sent").len(), n);
    assert_eq!(of_type(&events, "done").len(), n);
    assert_eq!(of_type(&events, "token").len(), n * 20);
    assert!(of_type(&events, "done").iter().all(|d| d["ok"] == true));
    assert_eq!(s["requests_ok"], n as u64);
    assert_eq!(s["requests_failed"], 0);
    assert_eq!(s["output_tokens"], (n * 20) as u64);
    assert_eq!(s["input_tokens"], (n * 16) as u64);
    // Timings, with tolerances that hold on a loaded two-core machine.
    near(&s, "ttft_p50_ms", TTFT_MS, 2.0);
    near(&s, "tpot_p50_ms", ITL_MS, 1.0);
    near(&s, "itl_p50_ms", ITL_MS, 1.0);
    near(&s, "e2el_p50_ms", TTFT_MS + 19.0 * ITL_MS, 4.0);
    // The header chain records how the data was made.
    let header = &events[0];
    assert_eq!(header["tool"], "fire");
    assert_eq!(header["upstream"][0]["tool"], "arrivals");
    assert_eq!(header["params"]["model"], "tokenpipe-sim");
    // Every send happened at (or just after) its scheduled instant.
    for sent in of_type(&events, "sent") {
        let lag = sent["sent_ns"].as_u64().unwrap() as i64
            - sent["scheduled_ns"].as_u64().unwrap() as i64;
        assert!((0..50_000_000).contains(&lag), "dispatch lag {lag} ns");
    }
}

#[test]
fn closed_loop_keeps_exactly_n_in_flight_and_skips_the_role_chunk() {
    let server = Server::start(&["--ttft-ms", "50", "--itl-ms", "10"]);
    let (events, s) = run_pipe(
        &server,
        &[
            "--concurrency",
            "4",
            "--num-prompts",
            "16",
            "--input-tokens",
            "8",
            "--output-tokens",
            "10",
        ],
        &["--api", "chat"],
    );
    assert_eq!(s["requests_ok"], 16);
    assert_eq!(s["output_tokens"], 160);
    // The chat stream opens with a role-only chunk (with the first token); TTFT is the content's.
    near(&s, "ttft_p50_ms", TTFT_MS, 2.0);
    near(&s, "itl_p50_ms", ITL_MS, 1.0);
    assert_eq!(
        peak_in_flight(&events),
        4,
        "closed loop must keep exactly 4 in flight"
    );
}

#[test]
fn two_network_threads_give_the_same_records() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "2"]);
    let (events, s) = run_pipe(
        &server,
        &[
            "--concurrency",
            "6",
            "--num-prompts",
            "30",
            "--input-tokens",
            "8",
            "--output-tokens",
            "12",
        ],
        &["--threads", "2"],
    );
    assert_eq!(s["requests_ok"], 30);
    assert_eq!(s["requests_failed"], 0);
    assert_eq!(of_type(&events, "token").len(), 30 * 12);
    assert_eq!(
        peak_in_flight(&events),
        6,
        "closed loop must keep exactly 6 in flight"
    );
}

#[test]
fn table_renders_terminal_and_markdown() {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "5"]);
    let fire_args = ["--url", server.url.as_str()];
    let outs = pipeline(
        &[
            cmd(
                "arrivals",
                &[
                    "--rate",
                    "inf",
                    "-n",
                    "4",
                    "--input-tokens",
                    "4",
                    "--output-tokens",
                    "3",
                ],
            ),
            cmd("fire", &fire_args),
            cmd("reduce", &["--label", "sim"]),
            cmd("table", &["--format", "markdown"]),
        ],
        None,
    );
    for (o, what) in outs.iter().zip(["arrivals", "fire", "reduce", "table"]) {
        assert_ok(o, what);
    }
    let md = String::from_utf8(outs[3].stdout.clone()).unwrap();
    assert!(md.lines().next().unwrap().starts_with('|'), "{md}");
    assert!(md.contains("sim"), "{md}");
    assert!(md.contains("TTFT"), "{md}");
    assert!(md.lines().nth(1).unwrap().contains("---"), "{md}");
}

#[test]
fn same_seed_gives_byte_identical_schedules() {
    let args = [
        "--rate",
        "7",
        "--burstiness",
        "0.5",
        "-n",
        "200",
        "--seed",
        "11",
    ];
    let a = run(&cmd("arrivals", &args), b"");
    let b = run(&cmd("arrivals", &args), b"");
    assert_ok(&a, "arrivals");
    assert!(!a.stdout.is_empty());
    assert_eq!(a.stdout, b.stdout);
    let c = run(
        &cmd(
            "arrivals",
            &[
                "--rate",
                "7",
                "--burstiness",
                "0.5",
                "-n",
                "200",
                "--seed",
                "12",
            ],
        ),
        b"",
    );
    assert_ne!(a.stdout, c.stdout);
}
