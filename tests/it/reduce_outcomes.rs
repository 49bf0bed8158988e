//! `reduce --per-request --slo … --meta …` through real pipes against the simulated server, a
//! quarter of whose answers are cut off mid-stream: the `result` records, the summary's counts
//! and its goodput agree with each other, and `table` reads the output without a word about
//! the records it does not use.

use crate::common;
use common::*;
use std::collections::BTreeMap;

const N: usize = 24;

/// fire's output for N requests, a quarter of them truncated by the server.
fn fire_output(server: &Server) -> Vec<u8> {
    let arrivals = [
        "--rate",
        "inf",
        "-n",
        "24",
        "--input-tokens",
        "8",
        "--output-tokens",
        "6",
        "--seed",
        "5",
    ];
    let fire = ["--url", server.url.as_str()];
    let outs = pipeline(&[cmd("arrivals", &arrivals), cmd("fire", &fire)], None);
    assert_ok(&outs[0], "arrivals");
    assert_ok(&outs[1], "fire");
    outs[1].stdout.clone()
}

#[test]
fn results_counts_goodput_and_meta_agree() {
    let server = Server::start(&[
        "--ttft-ms",
        "20",
        "--itl-ms",
        "2",
        "--fault",
        "truncate:0.25",
    ]);
    let events = fire_output(&server);
    let args = [
        "--per-request",
        "--slo",
        "ttft=30s,tpot=10s",
        "--slo",
        "e2el=60s",
        "--meta",
        "model=sim-7b",
        "--meta",
        "gpu=none",
    ];
    let reduced = run(&cmd("reduce", &args), &events);
    assert_ok(&reduced, "reduce");
    let recs = records(&reduced.stdout);
    assert_eq!(recs[0]["type"], "header");
    assert_eq!(recs.last().unwrap()["type"], "summary");
    let results = of_type(&recs, "result");
    assert_eq!(results.len() + 2, recs.len(), "header, results, summary");
    let s = of_type(&recs, "summary")[0];

    // One result per request, and the summary's counts are theirs.
    assert_eq!(results.len(), N);
    assert_eq!(s["requests_scheduled"], N as u64);
    assert_eq!(s["requests_sent"], N as u64);
    let ok = results.iter().filter(|r| r["ok"] == true).count();
    assert_eq!(s["requests_ok"], ok as u64);
    assert!(ok > 0 && ok < N, "some but not all were cut off: {ok}");
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    for r in results.iter().filter(|r| r["ok"] == false) {
        let kind = r["error_kind"]
            .as_str()
            .expect("a failed result names its kind");
        *kinds.entry(kind.to_string()).or_default() += 1;
    }
    let errors: BTreeMap<String, u64> = serde_json::from_value(s["errors"].clone()).unwrap();
    assert_eq!(errors, kinds);
    assert_eq!(s["requests_failed"], (N - ok) as u64);
    assert_eq!(
        s["requests_failed_server"],
        (N - ok) as u64,
        "the server cut them"
    );
    assert_eq!(s["samples"]["ttft"], ok as u64);
    assert_eq!(s["samples"]["e2el"], ok as u64);

    // Every result is flat; the ok ones have the values the summary is made of.
    for r in &results {
        assert!(r.as_object().unwrap().values().all(|v| !v.is_object()));
        assert!(r["sent_ms"].as_f64().is_some() && r["done_ms"].as_f64().is_some());
        if r["ok"] == true {
            assert_eq!(r["output_tokens"], 6);
            assert_eq!(r["output_tokens_source"], "usage");
            assert_eq!(r["input_tokens_source"], "usage");
            assert!(r["ttft_ms"].as_f64().unwrap() >= 19.0, "{r}");
            assert!(r["tpot_ms"].as_f64().is_some());
        }
    }
    let ttft_mean = results
        .iter()
        .filter(|r| r["ok"] == true)
        .map(|r| r["ttft_ms"].as_f64().unwrap())
        .sum::<f64>()
        / ok as f64;
    let summary_mean = s["ttft_mean_ms"].as_f64().unwrap();
    assert!(
        (ttft_mean - summary_mean).abs() <= 1e-9 * summary_mean,
        "{ttft_mean} vs {summary_mean}"
    );

    // Generous bounds: every ok request is good.
    assert_eq!(s["good_requests"], ok as u64);
    // Read back through serde_json, whose default float parsing may land one ulp off.
    let close = |got: &serde_json::Value, want: f64| {
        let got = got.as_f64().expect("a number");
        assert!((got - want).abs() <= 1e-12 * want.abs(), "{got} vs {want}");
    };
    close(&s["good_fraction"], ok as f64 / N as f64);
    assert_eq!(s["slo"]["ttft"], 30_000.0);
    assert_eq!(s["slo"]["e2el"], 60_000.0);
    let duration = s["duration_s"].as_f64().unwrap();
    close(&s["goodput_per_s"], ok as f64 / duration);

    // Metadata on the summary and in the reduce header.
    assert_eq!(s["meta"]["model"], "sim-7b");
    assert_eq!(recs[0]["params"]["meta"]["gpu"], "none");

    // A bound no request meets.
    let tight = run(&cmd("reduce", &["--slo", "ttft=1us"]), &events);
    assert_ok(&tight, "reduce");
    let recs = records(&tight.stdout);
    let s = of_type(&recs, "summary")[0];
    assert_eq!(s["good_requests"], 0);
    assert!(
        of_type(&recs, "result").is_empty(),
        "no results without --per-request"
    );
    assert!(s.get("meta").is_none());

    // table reads the summaries and skips the results.
    let table = run(&cmd("table", &[]), &reduced.stdout);
    assert_ok(&table, "table");
    assert!(!table.stdout.is_empty());
    assert!(
        table.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&table.stderr)
    );
    server.stop();
}

#[test]
fn a_key_or_metric_given_twice_or_an_unknown_metric_is_refused() {
    for args in [
        &["--meta", "gpu=a", "--meta", "gpu=b"][..],
        &["--slo", "ttft=1s,ttft=2s"][..],
        &["--slo", "speed=1s"][..],
        &["--slo", "ttft=soon"][..],
        &["--meta", "novalue"][..],
    ] {
        let out = run(&cmd("reduce", args), b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?} says why");
    }
}
