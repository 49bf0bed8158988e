//! Inputs the fuzz targets (fuzz/) found, through the real binaries: each names what it broke
//! and checks the tool now answers it as bad input with a message that says where.

use crate::common;
use common::*;

/// A vLLM result file with a negative TTFT (`ttfts[5]` = -0.095 s) whose request was sent late
/// enough (2.1 s) that the chunk still fell after the run's start: the importer put a token
/// before its send, and reduce refused the stream it made itself with "line 19: request 5:
/// token record for a request that was never sent", naming a line the user never wrote. The
/// `vllm_import` target's first long run found it (fuzz/seeds/vllm_import/negative-ttft).
#[test]
fn a_negative_ttft_in_a_vllm_file_is_refused_naming_the_field() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/fuzz/vllm-negative-ttft.json"
    );
    let out = run(&cmd("reduce", &["--from-vllm", file]), b"");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr
            .contains(r#"field "ttfts"[5]: expected a number of seconds of 0 or more, got -0.095"#),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing written for a file refused");
}

/// A `done` whose `first_event_ns` came before its request's `sent_ns`, with no token record:
/// the request's only chunk ended before it began, and `reduce --vllm-compatible` panicked on
/// the subtraction (the peak buckets' span, `aggregate/vllm/peak.rs`). The `reduce_events`
/// target found it (fuzz/seeds/reduce_events/first-event-before-send). reduce now refuses the
/// line, as it refuses a token before its send.
#[test]
fn a_first_event_before_its_send_is_refused_naming_the_line() {
    let stream = concat!(
        r#"{"type":"header","format_major":1,"format_minor":10,"tool":"fire","tool_version":"0.1.0","run_id":"r","argv":["fire"],"seed":null,"started_at":"2026-01-01T00:00:00Z","monotonic_origin_ns":1,"host":"h","params":{"api":"chat"}}"#,
        "\n",
        r#"{"type":"sent","id":0,"scheduled_ns":1000000,"sent_ns":1900000}"#,
        "\n",
        r#"{"type":"done","id":0,"at_ns":814100000,"ok":true,"status":200,"error_kind":null,"error":null,"prompt_tokens":2051,"completion_tokens":8,"events":8,"finish_reason":"length","first_event_ns":6519}"#,
        "\n"
    );
    for args in [&["--vllm-compatible"][..], &[]] {
        let out = run(&cmd("reduce", args), stream.as_bytes());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(
                "line 3: request 0: done first_event_ns 6519 is earlier than its sent_ns (1900000)"
            ),
            "{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// A percentile written `-0` (`reduce --percentiles=-0,50`, sweep's `--slo 'ttft.p-0<=2s'`):
/// it was kept as the float -0, so reduce wrote the member `ttft_p-0_ms`, which no reader
/// takes back (table showed a row "P-0 TTFT" with no value), and sweep bounded a member no
/// summary has. The `flags` target found it (fuzz/seeds/flags/slo-negative-zero-percentile).
/// `-0` now reads as 0.
#[test]
fn a_negative_zero_percentile_is_the_0th() {
    let events = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/llama_benchy/c1-depth0.ndjson"
    );
    let out = run(&cmd("reduce", &["--percentiles=-0,50", events]), b"");
    let summary = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(summary.contains(r#""ttft_p0_ms":"#), "{summary}");
    assert!(!summary.contains("p-0"), "{summary}");
    let table = run(&cmd("table", &[]), &out.stdout);
    let shown = String::from_utf8_lossy(&table.stdout);
    assert_eq!(table.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("P0 TTFT (ms)") && !shown.contains("P-0"),
        "{shown}"
    );
}
