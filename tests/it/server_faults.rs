//! Every failure kind end to end from a real server: `simserve --fault` makes each request fail
//! the way a real server does, `fire` must record it as the matching `error_kind`, and `reduce`
//! must count it as failed. Real binaries, real pipes, real sockets.

use crate::common;
use common::*;

/// Runs `arrivals -n N | fire` against a server started with `fault`, then `reduce` on the
/// events; returns (done records, summary).
fn run_with_fault(
    fault: &[&str],
    fire_extra: &[&str],
    n: usize,
) -> (Vec<serde_json::Value>, serde_json::Value) {
    let mut server_args = vec!["--ttft-ms", "5", "--itl-ms", "2"];
    server_args.extend_from_slice(fault);
    let server = Server::start(&server_args);
    let n_text = n.to_string();
    let mut fire_args = vec!["--url", server.url.as_str(), "--model", "m"];
    fire_args.extend_from_slice(fire_extra);
    let outs = pipeline(
        &[
            cmd(
                "arrivals",
                &[
                    "--concurrency",
                    "4",
                    "-n",
                    &n_text,
                    "--input-tokens",
                    "8",
                    "--output-tokens",
                    "6",
                ],
            ),
            cmd("fire", &fire_args),
        ],
        None,
    );
    assert_ok(&outs[0], "arrivals");
    let events = records(&outs[1].stdout);
    let dones: Vec<serde_json::Value> = of_type(&events, "done").into_iter().cloned().collect();
    assert_eq!(dones.len(), n, "one done per request");
    // fire exits 1 exactly when no request succeeded.
    if dones.iter().any(|d| d["ok"] == true) {
        assert_ok(&outs[1], "fire");
    } else {
        assert_none_succeeded(&outs[1], "fire");
    }
    let reduced = run(&cmd("reduce", &[]), &outs[1].stdout);
    assert_ok(&reduced, "reduce");
    let recs = records(&reduced.stdout);
    let summary = of_type(&recs, "summary")[0].clone();
    (dones, summary)
}

#[test]
fn each_server_failure_becomes_its_error_kind() {
    for (fault, fire_extra, kind) in [
        ("http=503", &[][..], "http"),
        ("reset", &[], "body"),
        ("stall", &["--timeout", "0.5"], "timeout"),
        ("garbage", &[], "parse"),
        ("error", &[], "server"),
        ("truncate", &[], "incomplete"),
        ("bare-done", &[], "incomplete"),
    ] {
        let (dones, summary) = run_with_fault(&["--fault", fault], fire_extra, 4);
        for d in &dones {
            assert_eq!(d["ok"], false, "{fault}: {d}");
            assert_eq!(d["error_kind"], kind, "{fault}: {d}");
        }
        if kind == "http" {
            assert!(dones.iter().all(|d| d["status"] == 503), "{dones:?}");
        }
        assert_eq!(summary["requests_failed"], 4, "{fault}: {summary}");
        assert_eq!(summary["requests_ok"], 0, "{fault}: {summary}");
    }
}

#[test]
fn a_share_of_failures_leaves_the_rest_measured() {
    let (dones, summary) = run_with_fault(&["--fault", "reset:0.5", "--fault-seed", "7"], &[], 40);
    let failed = dones.iter().filter(|d| d["ok"] == false).count();
    assert!((5..=35).contains(&failed), "{failed} of 40 failed");
    assert!(dones
        .iter()
        .filter(|d| d["ok"] == false)
        .all(|d| d["error_kind"] == "body"));
    assert_eq!(summary["requests_failed"], failed as u64);
    assert_eq!(summary["requests_ok"], (40 - failed) as u64);
    // Only the successful requests' 6 tokens count.
    assert_eq!(summary["output_tokens"], ((40 - failed) * 6) as u64);
}

#[test]
fn one_request_fails_through_its_extra_body_and_keeps_its_tags() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "2"]);
    let schedule = concat!(
        r#"{"type":"header","format_major":1,"format_minor":1,"tool":"arrivals","tool_version":"0","run_id":"hand"}"#,
        "\n",
        r#"{"type":"schedule","mode":"closed","concurrency":2,"requests":3}"#,
        "\n",
        r#"{"type":"request","id":0,"prompt":"a b","max_tokens":4,"session":"s1","turn":0}"#,
        "\n",
        r#"{"type":"request","id":1,"prompt":"a b","max_tokens":4,"session":"s1","turn":1,"tags":{"class":"faulty"},"extra_body":{"tokenpipe_fault":"error"}}"#,
        "\n",
        r#"{"type":"request","id":2,"prompt":"a b","max_tokens":4,"tags":{"class":"plain"}}"#,
        "\n",
    );
    let out = run(
        &cmd("fire", &["--url", server.url.as_str(), "--model", "m"]),
        schedule.as_bytes(),
    );
    assert_ok(&out, "fire");
    let events = records(&out.stdout);
    let done = |id: u64| {
        of_type(&events, "done")
            .into_iter()
            .find(|d| d["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no done for {id}"))
    };
    let (d0, d1, d2) = (done(0), done(1), done(2));
    assert_eq!(
        (d0["ok"].clone(), d0["session"].clone(), d0["turn"].clone()),
        (true.into(), "s1".into(), 0.into())
    );
    assert_eq!(d1["ok"], false, "{d1}");
    assert_eq!(d1["error_kind"], "server", "{d1}");
    assert_eq!(
        (d1["session"].clone(), d1["turn"].clone()),
        ("s1".into(), 1.into())
    );
    assert_eq!(d1["tags"]["class"], "faulty", "{d1}");
    assert_eq!(d2["ok"], true, "{d2}");
    assert_eq!(d2["tags"]["class"], "plain", "{d2}");
    assert!(d2.get("session").is_none(), "{d2}");
}
