//! llama-benchy's figures through the real pipe: `arrivals --batch | fire | reduce` against the
//! simulated server, whose fixed inter-token latency fixes the generation rate llama-benchy
//! would report (10 ms per token: 100 tokens per second per request).

use crate::common;
use common::*;

/// Runs arrivals | fire | reduce with `reduce_args`; returns reduce's one summary.
fn summary(server: &Server, arrivals: &[&str], reduce_args: &[&str]) -> serde_json::Value {
    let outs = pipeline(
        &[
            cmd("arrivals", arrivals),
            cmd(
                "fire",
                &[
                    "--url",
                    server.url.as_str(),
                    "--latency-mode",
                    "none",
                    "--api",
                    "completions",
                ],
            ),
            cmd("reduce", reduce_args),
        ],
        None,
    );
    for (out, what) in outs.iter().zip(["arrivals", "fire", "reduce"]) {
        assert_ok(out, what);
    }
    let recs = records(&outs[2].stdout);
    let summaries = of_type(&recs, "summary");
    assert_eq!(summaries.len(), 1, "{recs:?}");
    summaries[0].clone()
}

fn num(v: &serde_json::Value, path: &[&str]) -> f64 {
    let mut at = v;
    for key in path {
        at = &at[key];
    }
    at.as_f64()
        .unwrap_or_else(|| panic!("{} missing in {v}", path.join(".")))
}

#[test]
fn a_batch_run_reports_llama_benchys_figures() {
    let server = Server::start(&["--ttft-ms", "50", "--itl-ms", "10"]);
    let s = summary(
        &server,
        &[
            "--batch",
            "4",
            "--runs",
            "3",
            "--input-tokens",
            "64",
            "--output-tokens",
            "20",
            "--seed",
            "5",
            "--no-warmup",
        ],
        &[],
    );
    let b = &s["llama_benchy"];
    assert_eq!(b["concurrency"], 4, "{s}");
    assert_eq!(b["batches"], 3, "{s}");
    assert_eq!(b["net_latency_ms"], 0.0);
    // Above concurrency 1 the headline is per batch, over the 3 batches.
    assert_eq!(b["tg_tps"]["per"], "batch");
    assert_eq!(b["tg_tps"]["n"], 3);
    assert_eq!(b["tg_tps"], b["tg_tps_batch"]);
    assert_eq!(b["tg_tps_request"]["n"], 12);
    // 19 gaps of 10 ms after the first token: 100 tokens/s per request, give or take a late
    // first token (the server then catches up) or a loaded machine's late wake-ups.
    let tg = num(b, &["tg_tps_request", "mean"]);
    assert!((70.0..=115.0).contains(&tg), "per-request tg {tg} t/s");
    // A batch of 4 streams side by side: (4·20 − 4) tokens over about the same 190 ms.
    let tg_batch = num(b, &["tg_tps_batch", "mean"]);
    assert!(
        (2.5 * tg..=4.1 * tg).contains(&tg_batch),
        "batch tg {tg_batch} t/s for per-request {tg}"
    );
    // Peaks: a request's 20 tokens span about 190 ms, under llama-benchy's 1 s window, so its
    // short-burst rule gives 20 / 0.19 s ≈ 105 t/s per request, and about 4 times that over a
    // batch's stamps.
    assert_eq!(
        (b["peak_tps"]["n"].as_u64(), b["peak_tps"]["per"].as_str()),
        (Some(3), Some("batch"))
    );
    assert_eq!(b["peak_tps_request"]["n"], 12);
    let peak = num(b, &["peak_tps_request", "mean"]);
    assert!(
        (70.0..=130.0).contains(&peak),
        "per-request peak {peak} t/s"
    );
    let peak_batch = num(b, &["peak_tps", "mean"]);
    assert!(
        (2.5 * peak..=4.1 * peak).contains(&peak_batch),
        "batch peak {peak_batch} t/s for per-request {peak}"
    );
    // The server says 64 prompt tokens, as asked: pp per request is 64 / TTFR (~50 ms).
    let ttfr = num(b, &["ttfr_ms", "mean"]);
    assert!((45.0..=100.0).contains(&ttfr), "ttfr {ttfr} ms");
    let pp = num(b, &["pp_tps_request", "mean"]);
    assert!((600.0..=1_400.0).contains(&pp), "per-request pp {pp} t/s");
    assert_eq!(b["est_ppt_ms"], b["ttfr_ms"], "no latency given");
    assert!(num(b, &["e2e_ttft_ms", "mean"]) >= ttfr);
}

#[test]
fn other_runs_carry_them_only_when_asked_with_the_given_latency() {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "5"]);
    let arrivals = [
        "--rate",
        "50",
        "--num-prompts",
        "6",
        "--input-tokens",
        "16",
        "--output-tokens",
        "8",
        "--seed",
        "2",
    ];
    let plain = summary(&server, &arrivals, &[]);
    assert!(plain.get("llama_benchy").is_none(), "{plain}");

    let asked = summary(
        &server,
        &arrivals,
        &["--llama-benchy", "--net-latency", "5ms"],
    );
    let b = &asked["llama_benchy"];
    assert_eq!(b["batches"], 0, "{asked}");
    assert!(b.get("concurrency").is_none(), "{asked}");
    assert!(b.get("tg_tps_batch").is_none(), "{asked}");
    assert_eq!(b["net_latency_ms"], 5.0);
    assert_eq!(b["tg_tps"]["per"], "request");
    assert_eq!(b["tg_tps"]["n"], 6);
    // est_ppt is TTFR less the 5 ms given.
    let (ttfr, est) = (
        num(b, &["ttfr_ms", "mean"]),
        num(b, &["est_ppt_ms", "mean"]),
    );
    assert!(
        (ttfr - est - 5.0).abs() < 1e-6,
        "ttfr {ttfr}, est_ppt {est}"
    );
}

#[test]
fn a_bad_net_latency_is_refused() {
    let out = run(&cmd("reduce", &["--net-latency", "fast"]), b"");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--net-latency"), "{err}");
}
