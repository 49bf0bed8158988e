//! Every simulated fault end to end, mixed in one run through the per-request
//! `x-tokenpipe-fault` header: `arrivals | (schedule with per-request headers) | fire | reduce`
//! against `simserve`. For each request: fire's `done` has the right `ok` and `error_kind`,
//! the tokens sent before the fault are kept as `token` records, and reduce counts the
//! failure under its kind.

use crate::common;
use common::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Tokens each request asks for.
const OUTPUT_TOKENS: u64 = 6;

/// One request of the mixed run: the header it carries, members for its body, and what fire
/// must make of it.
struct Case {
    header: &'static str,
    extra_body: Option<Value>,
    /// `None`: ok.
    kind: Option<&'static str>,
    /// Content events fire must keep; `None`: more than `OUTPUT_TOKENS` (endless).
    tokens: Option<u64>,
}

const fn case(header: &'static str, kind: Option<&'static str>, tokens: Option<u64>) -> Case {
    Case {
        header,
        extra_body: None,
        kind,
        tokens,
    }
}

fn cases() -> Vec<Case> {
    vec![
        case("none", None, Some(OUTPUT_TOKENS)),
        case("http=500", Some("http"), Some(0)),
        case("http=503", Some("http"), Some(0)),
        case("http=429", Some("http"), Some(0)),
        case("reset;after=3", Some("body"), Some(3)),
        case("stall;after=3", Some("idle_timeout"), Some(3)),
        case("stall=300;after=3", None, Some(OUTPUT_TOKENS)),
        case("stall=3000;after=3", Some("idle_timeout"), Some(3)),
        case("slow-headers=300", None, Some(OUTPUT_TOKENS)),
        case("slow-headers=5000", Some("first_token_timeout"), Some(0)),
        case("garbage;after=3", Some("parse"), Some(3)),
        case("error;after=3", Some("server"), Some(3)),
        case("truncate;after=3", Some("incomplete"), Some(3)),
        case("bare-done;after=2", Some("incomplete"), Some(2)),
        case("json", Some("not_stream"), Some(0)),
        case("html", Some("not_stream"), Some(0)),
        case("endless", Some("timeout"), None),
        case("long", None, Some(10_000)),
        // The header beats the body members, part by part.
        Case {
            extra_body: Some(json!({"tokenpipe_fault": "error", "tokenpipe_fault_after": 4})),
            ..case("reset;after=2", Some("body"), Some(2))
        },
        Case {
            extra_body: Some(json!({"tokenpipe_fault": "error", "tokenpipe_fault_after": 4})),
            ..case("truncate", Some("incomplete"), Some(4))
        },
        Case {
            extra_body: Some(json!({"tokenpipe_fault": "error"})),
            ..case("none", None, Some(OUTPUT_TOKENS))
        },
        // Answered whole; only the server's /metrics leave it out (server_metrics.rs).
        case("uncounted", None, Some(OUTPUT_TOKENS)),
    ]
}

/// `arrivals`' schedule for `n` requests all in flight at once, each request given the
/// header and body members of its case.
fn schedule(cases: &[Case]) -> Vec<u8> {
    closed_schedule(cases.len() as u64, OUTPUT_TOKENS, |rec| {
        let c = &cases[rec["id"].as_u64().unwrap() as usize];
        rec["headers"] = json!({ "x-tokenpipe-fault": c.header });
        if let Some(extra) = &c.extra_body {
            rec["extra_body"] = extra.clone();
        }
    })
}

/// Content events per request, from fire's `token` records.
fn tokens_by_id(events: &[Value]) -> BTreeMap<u64, u64> {
    let mut count = BTreeMap::new();
    for t in of_type(events, "token") {
        if t.get("empty") != Some(&Value::Bool(true)) {
            *count.entry(t["id"].as_u64().unwrap()).or_default() += 1;
        }
    }
    count
}

#[test]
fn every_fault_mixed_in_one_run_through_the_header() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "0.1", "--retry-after", "7"]);
    let cases = cases();
    let fire = cmd(
        "fire",
        &[
            "--url",
            server.url.as_str(),
            "--model",
            "m",
            "--idle-timeout",
            "1s",
            "--first-token-timeout",
            "2s",
            "--timeout",
            "4s",
        ],
    );
    let out = run(&fire, &schedule(&cases));
    assert_ok(&out, "fire");
    let events = records(&out.stdout);
    let tokens = tokens_by_id(&events);
    let sent_ns = |id: u64| {
        of_type(&events, "sent")
            .into_iter()
            .find(|s| s["id"] == id)
            .unwrap_or_else(|| panic!("no sent for {id}"))["sent_ns"]
            .as_u64()
            .unwrap()
    };
    let token_times = |id: u64| -> Vec<u64> {
        of_type(&events, "token")
            .into_iter()
            .filter(|t| t["id"] == id)
            .map(|t| t["at_ns"].as_u64().unwrap())
            .collect()
    };
    let mut want_errors: BTreeMap<&str, u64> = BTreeMap::new();
    for (id, c) in cases.iter().enumerate() {
        let id = id as u64;
        let done = of_type(&events, "done")
            .into_iter()
            .find(|d| d["id"] == id)
            .unwrap_or_else(|| panic!("no done for {id}"));
        let what = format!("{}: {done}", c.header);
        match c.kind {
            None => {
                assert_eq!(done["ok"], true, "{what}");
                assert_eq!(done["finish_reason"], "length", "{what}");
            }
            Some(kind) => {
                assert_eq!(done["ok"], false, "{what}");
                assert_eq!(done["error_kind"], kind, "{what}");
                *want_errors.entry(kind).or_default() += 1;
            }
        }
        let kept = tokens.get(&id).copied().unwrap_or(0);
        match c.tokens {
            Some(n) => assert_eq!(kept, n, "{what}"),
            None => assert!(kept > OUTPUT_TOKENS, "endless: {kept} tokens; {what}"),
        }
        assert_eq!(done["events"], kept, "{what}");
        if c.kind.is_none() {
            assert_eq!(done["completion_tokens"], kept, "usage counts them: {what}");
        }
        if let Some(status) = c.header.strip_prefix("http=") {
            assert_eq!(done["status"].to_string(), status, "{what}");
            let error = done["error"].as_str().unwrap();
            let says_retry = error.contains("(retry-after: 7)");
            assert_eq!(says_retry, status != "500", "{what}");
        }
    }
    // A finite stall: tokens 1 to 3 at once, token 4 not before 300 ms after the send (the
    // gap itself is a little less when token 3 came late on a loaded machine).
    let stalled = token_times(6);
    assert!(stalled[3] - sent_ns(6) >= 300_000_000, "{stalled:?}");
    assert!(stalled[3] - stalled[2] >= 250_000_000, "{stalled:?}");
    // Slow headers: nothing for 300 ms, then the answer.
    let slow = token_times(8);
    assert!(slow[0] - sent_ns(8) >= 300_000_000, "{slow:?}");

    let reduced = run(&cmd("reduce", &[]), &out.stdout);
    assert_ok(&reduced, "reduce");
    let summary = of_type(&records(&reduced.stdout), "summary")[0].clone();
    let failed: u64 = want_errors.values().sum();
    assert_eq!(summary["requests_failed"], failed, "{summary}");
    assert_eq!(summary["requests_failed_server"], failed, "{summary}");
    assert_eq!(
        summary["requests_ok"],
        cases.len() as u64 - failed,
        "{summary}"
    );
    let errors: BTreeMap<String, u64> = serde_json::from_value(summary["errors"].clone()).unwrap();
    let want: BTreeMap<String, u64> = want_errors
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    assert_eq!(errors, want, "{summary}");
    // The ok answers' tokens, the 10,000-token one whole.
    assert_eq!(
        summary["output_tokens"],
        5 * OUTPUT_TOKENS + 10_000,
        "{summary}"
    );
}

#[test]
fn a_fire_header_flag_fails_every_request_and_the_flags_reach_the_new_kinds() {
    // `fire -H` puts the header on every request.
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "1"]);
    let outs = pipeline(
        &[
            cmd("arrivals", &["-n", "2", "--output-tokens", "5"]),
            cmd(
                "fire",
                &[
                    "--url",
                    server.url.as_str(),
                    "--model",
                    "m",
                    "-H",
                    "x-tokenpipe-fault: truncate;after=2",
                ],
            ),
        ],
        None,
    );
    assert_none_succeeded(&outs[1], "fire");
    let events = records(&outs[1].stdout);
    let dones = of_type(&events, "done");
    assert_eq!(dones.len(), 2);
    assert!(
        dones.iter().all(|d| d["error_kind"] == "incomplete"),
        "{dones:?}"
    );
    assert_eq!(tokens_by_id(&events).values().sum::<u64>(), 4);

    // `--fault long=N` and `--fault http=429` with `--retry-after`, from the flags alone.
    for (fault, check) in [("long=40", "long"), ("http=429", "retry")] {
        let server = Server::start(&[
            "--ttft-ms",
            "5",
            "--itl-ms",
            "1",
            "--fault",
            fault,
            "--retry-after",
            "3",
        ]);
        let outs = pipeline(
            &[
                cmd("arrivals", &["-n", "2", "--output-tokens", "5"]),
                cmd("fire", &["--url", server.url.as_str(), "--model", "m"]),
            ],
            None,
        );
        let events = records(&outs[1].stdout);
        let dones = of_type(&events, "done");
        assert_eq!(dones.len(), 2, "{fault}");
        for d in dones {
            if check == "long" {
                assert_eq!(d["ok"], true, "{d}");
                assert_eq!(d["completion_tokens"], 40, "{d}");
                assert_eq!(d["events"], 40, "{d}");
            } else {
                assert_eq!(
                    (d["error_kind"].as_str(), d["status"].as_u64()),
                    (Some("http"), Some(429)),
                    "{d}"
                );
                assert!(
                    d["error"].as_str().unwrap().contains("(retry-after: 3)"),
                    "{d}"
                );
            }
        }
    }
}

#[test]
fn a_bad_fault_header_is_a_400_and_a_bad_schedule_header_is_refused() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "1"]);
    let outs = pipeline(
        &[
            cmd("arrivals", &["-n", "1", "--output-tokens", "3"]),
            cmd(
                "fire",
                &[
                    "--url",
                    server.url.as_str(),
                    "--model",
                    "m",
                    "-H",
                    "x-tokenpipe-fault: boom",
                ],
            ),
        ],
        None,
    );
    let events = records(&outs[1].stdout);
    let done = of_type(&events, "done")[0];
    assert_eq!(done["status"], 400, "{done}");
    let error = done["error"].as_str().unwrap();
    assert!(
        error.contains("x-tokenpipe-fault") && error.contains("boom"),
        "{done}"
    );

    // A schedule whose request carries a header fire sets itself: exit 2, naming the field.
    let schedule = concat!(
        r#"{"type":"header","format_major":1,"format_minor":5,"tool":"arrivals","tool_version":"0","run_id":"hand"}"#,
        "\n",
        r#"{"type":"request","id":0,"prompt":"a b","max_tokens":2,"headers":{"x-request-id":"mine"}}"#,
        "\n",
    );
    let out = run(
        &cmd("fire", &["--url", server.url.as_str(), "--model", "m"]),
        schedule.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("line 2") && stderr.contains("field \"headers\""),
        "{stderr}"
    );
}
