//! The verdict (docs/verdict.md) through the real binaries against simserve: a server that
//! fails requests makes a run incomplete, a healthy server scraped with `--server-metrics`
//! agrees with the client, and one told to under-count (`--fault uncounted:F`) does not.

use crate::common;
use common::*;

/// `arrivals ARGS | fire --url URL FIRE_ARGS | reduce`: the run's one summary.
fn summary(url: &str, arrivals: &[&str], fire: &[&str]) -> serde_json::Value {
    let mut fire_args = vec!["--url", url, "--quiet"];
    fire_args.extend_from_slice(fire);
    let outs = pipeline(&[cmd("arrivals", arrivals), cmd("fire", &fire_args)], None);
    assert_ok(&outs[1], "fire");
    let reduced = run(&cmd("reduce", &[]), &outs[1].stdout);
    assert_ok(&reduced, "reduce");
    let recs = records(&reduced.stdout);
    let sums = of_type(&recs, "summary");
    assert_eq!(sums.len(), 1, "{recs:?}");
    sums[0].clone()
}

const CLOSED_40: &[&str] = &[
    "--concurrency",
    "4",
    "-n",
    "40",
    "--input-tokens",
    "16",
    "--output-tokens",
    "8",
];

#[test]
fn a_server_failing_30_percent_makes_the_run_not_comparable_naming_the_failures() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "2", "--fault", "http=503:0.3"]);
    let s = summary(&server.url, CLOSED_40, &[]);
    let failed = s["requests_failed"].as_u64().unwrap();
    assert!((4..=20).contains(&failed), "about 30 % of 40: {failed}");
    let v = &s["verdict"];
    assert_eq!(v["comparable"], false, "{v}");
    assert_eq!(v["complete"]["ok"], false, "{v}");
    let reason = v["reason"].as_str().unwrap();
    let expected = format!(
        "incomplete: {failed} of 40 failed ({:.1} %: http: {failed})",
        failed as f64 * 100.0 / 40.0
    );
    assert!(reason.starts_with(&expected), "{reason} / {expected}");
}

#[test]
fn a_healthy_server_s_counts_agree_with_the_client_s() {
    let server = Server::start(&["--profile", "small-gpu"]);
    let s = summary(&server.url, CLOSED_40, &["--server-metrics"]);
    let v = &s["verdict"];
    assert_eq!(
        v["server"],
        serde_json::json!({
            "ok": true,
            "reason": "the server's counts agree (requests, output tokens, prompt tokens)"
        }),
        "{s}"
    );
    // Exactly, on simserve: it counts what it answered, the client what it received.
    for (server, client) in [
        ("server_requests_succeeded", "requests_ok"),
        ("server_generation_tokens", "output_tokens"),
        ("server_prompt_tokens", "input_tokens"),
    ] {
        assert_eq!(s[server], s[client], "{server} against {client}: {s}");
    }
    assert_eq!(v["complete"]["ok"], true, "{v}");
    // Comparable, unless fire's own self-check (not this test's subject) judged that it did
    // not keep up on this busy machine.
    let client_failed = v["client"]["ok"] == false;
    assert_eq!(v["comparable"], !client_failed, "{v}");
    if !client_failed {
        assert_eq!(v["reason"], "comparable");
    }
}

#[test]
fn a_server_that_under_counts_fails_the_cross_check_naming_the_counts() {
    let server = Server::start(&[
        "--ttft-ms",
        "5",
        "--itl-ms",
        "2",
        "--fault",
        "uncounted:0.3",
    ]);
    let s = summary(&server.url, CLOSED_40, &["--server-metrics"]);
    // Every request was answered: the client saw a whole run.
    assert_eq!(s["requests_ok"], 40, "{s}");
    let v = &s["verdict"];
    assert_eq!(v["complete"]["ok"], true, "{v}");
    assert_eq!(v["server"]["ok"], false, "{v}");
    assert_eq!(v["comparable"], false, "{v}");
    let counted = s["server_requests_succeeded"].as_u64().unwrap();
    assert!((20..=36).contains(&counted), "about 70 % of 40: {counted}");
    let expected = format!(
        "the server's counts disagree (requests: server {counted}, client 40; output tokens: \
         server {}, client 320; prompt tokens: server {}, client {})",
        counted * 8,
        s["server_prompt_tokens"],
        s["input_tokens"]
    );
    assert_eq!(v["server"]["reason"], expected.as_str(), "{v}");
    assert!(v["reason"].as_str().unwrap().contains(&expected), "{v}");
}
