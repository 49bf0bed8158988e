//! `--vllm-compatible` on a hand-written stream: a chat role chunk before the first token, an
//! empty-text token, usage against counted tokens, a failure, a role-only answer and an answer
//! without any chunk, each with vLLM's figures worked out by hand and checked with numpy.

use super::*;
use crate::aggregate::vllm::VllmAggregator;
use crate::cli::{parse_slo_bound, vllm_options};
use crate::RunReducer;
use serde_json::Value;
use std::collections::BTreeMap;

/// Five requests; run start 0, times in ms:
/// 1. sent 100, role chunk 130, tokens 150, 160 (empty), 175, 200; done 210 with usage 5:
///    chunks 130..200, TTFT 30, latency 100, ITL 20 10 15 25, TPOT (100 − 30) / 4 = 17.5.
/// 2. sent 300, no first event recorded (an older fire), tokens 340 (empty), 360, 400; no
///    usage, so 3 counted: TTFT 40 (the empty one is a chunk), latency 100, ITL 20 40,
///    TPOT (100 − 40) / 2 = 30.
/// 3. sent 500, HTTP 500 at 520: failed.
/// 4. sent 600, role chunk 1650 and nothing else, done 1700 with usage 0: TTFT = latency = 1050.
/// 5. sent 700, ok but no chunk at all, done 800: vLLM fails it.
fn five_requests() -> String {
    stream(&[
        sent(1, 100 * MS, 100 * MS),
        token(1, 150 * MS, 1),
        format!(
            r#"{{"type":"token","id":1,"at_ns":{},"tokens":1,"empty":true}}"#,
            160 * MS
        ),
        token(1, 175 * MS, 1),
        token(1, 200 * MS, 1),
        done(
            1,
            210 * MS,
            true,
            &format!(
                r#","prompt_tokens":10,"completion_tokens":5,"first_event_ns":{}"#,
                130 * MS
            ),
        ),
        sent(2, 300 * MS, 300 * MS),
        format!(
            r#"{{"type":"token","id":2,"at_ns":{},"tokens":1,"empty":true}}"#,
            340 * MS
        ),
        token(2, 360 * MS, 1),
        token(2, 400 * MS, 1),
        done(2, 420 * MS, true, r#","prompt_tokens":20"#),
        sent(3, 500 * MS, 500 * MS),
        done(3, 520 * MS, false, r#","status":500,"error_kind":"http""#),
        sent(4, 600 * MS, 600 * MS),
        sent(5, 700 * MS, 700 * MS),
        done(
            5,
            800 * MS,
            true,
            r#","prompt_tokens":40,"completion_tokens":0"#,
        ),
        done(
            4,
            1_700 * MS,
            true,
            &format!(
                r#","prompt_tokens":30,"completion_tokens":0,"first_event_ns":{}"#,
                1_650 * MS
            ),
        ),
    ])
}

fn vllm_of(text: &str, percentiles: &[f64], slo: &str) -> (Summary, BTreeMap<String, Value>) {
    let mut reader = RecordReader::new(text.as_bytes(), "<test>");
    let header = reader.read_header().unwrap();
    let slos: Vec<_> = slo
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| parse_slo_bound(s).unwrap())
        .collect();
    let opts = vllm_options(percentiles, &slos).unwrap();
    let mut agg = RunReducer::new(vec![Box::new(VllmAggregator::new(opts, &header, 0))]);
    let fold = FoldOptions {
        keep_events: true,
        offset_ns: 0,
        empty_ok: false,
    };
    fold_run(&mut reader, &header, &mut agg, &fold, &mut |_| Ok(())).unwrap();
    let s = agg.finish_summary(
        "l".into(),
        "r".into(),
        &SummaryOptions::default(),
        &mut vec![],
    );
    let v = s.vllm.clone().expect("a vllm member");
    (s, v)
}

fn num(v: &BTreeMap<String, Value>, key: &str) -> f64 {
    v.get(key)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{key} missing in {v:?}"))
}

fn close(v: &BTreeMap<String, Value>, key: &str, want: f64) {
    let got = num(v, key);
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{key} = {got}, want {want}"
    );
}

#[test]
fn every_vllm_figure_of_five_known_requests() {
    let (s, v) = vllm_of(&five_requests(), &[], "");
    assert_eq!(s.definitions.as_deref(), Some("vllm"));
    // Our own figures are untouched: request 5 is ok for us, and TTFT waits for text.
    assert_eq!(s.requests_ok, 4);
    assert_eq!(s.stat("ttft", StatName::Max), Some(60.0));
    // From the run start (0) to the last done (1.7 s), not from the first send.
    close(&v, "duration", 1.7);
    assert_eq!(v["completed"], 3);
    assert_eq!(v["failed"], 2);
    assert_eq!(v["total_input_tokens"], 60);
    assert_eq!(v["total_output_tokens"], 8);
    close(&v, "request_throughput", 3.0 / 1.7);
    close(&v, "output_throughput", 8.0 / 1.7);
    close(&v, "total_token_throughput", 68.0 / 1.7);
    assert_eq!(v["request_goodput"], Value::Null);
    // Buckets from 100 ms: 8 chunks in the first second; requests 1, 2 and 4 all touch it.
    close(&v, "max_output_tokens_per_s", 8.0);
    assert_eq!(v["max_concurrent_requests"], 3);
    // python3 -c "import numpy as np; [print(n, np.mean(x), np.median(x), np.std(x),
    //   np.percentile(x, 99)) for n, x in [('ttft', [30, 40, 1050]), ('tpot', [17.5, 30]),
    //   ('itl', [20, 10, 15, 25, 20, 40]), ('e2el', [100, 100, 1050])]]"
    // ttft 373.3333333333333 40.0 478.4930047091134 1029.8
    // tpot 23.75 23.75 6.25 29.875
    // itl 21.666666666666668 20.0 9.428090415820634 39.25
    // e2el 416.6666666666667 100.0 447.83429475148006 1031.0
    for (m, mean, median, std, p99) in [
        ("ttft", 373.3333333333333, 40.0, 478.4930047091134, 1029.8),
        ("tpot", 23.75, 23.75, 6.25, 29.875),
        ("itl", 21.666666666666668, 20.0, 9.428090415820634, 39.25),
        ("e2el", 416.6666666666667, 100.0, 447.83429475148006, 1031.0),
    ] {
        close(&v, &format!("mean_{m}_ms"), mean);
        close(&v, &format!("median_{m}_ms"), median);
        close(&v, &format!("std_{m}_ms"), std);
        close(&v, &format!("p99_{m}_ms"), p99);
    }
    // vLLM's default percentile set is 99 alone.
    assert!(!v.contains_key("p50_ttft_ms") && !v.contains_key("p90_ttft_ms"));
}

#[test]
fn percentiles_and_goodput_when_asked() {
    // Good: TTFT ≤ 50 ms and TPOT ≤ 20 ms: request 1 only (request 2's TPOT is 30; request
    // 4's TTFT is 1050). numpy: np.percentile([30, 40, 1050], 90) = 848.0,
    // np.percentile([17.5, 30], 99.9) = 29.9875.
    let (_, v) = vllm_of(&five_requests(), &[90.0, 99.9], "ttft=50ms,tpot=20ms");
    close(&v, "request_goodput", 1.0 / 1.7);
    close(&v, "p90_ttft_ms", 848.0);
    close(&v, "p99.9_tpot_ms", 29.9875);
    assert!(
        !v.contains_key("p99_ttft_ms"),
        "only the percentiles asked for"
    );
    // A request without TPOT (n ≤ 1) counts as TPOT 0 for goodput, as in vLLM.
    let (_, v) = vllm_of(&five_requests(), &[], "tpot=20ms");
    close(&v, "request_goodput", 2.0 / 1.7);
}

#[test]
fn a_metric_without_values_reports_zero() {
    // Only request 4 completes: no ITL and no TPOT values.
    let text = stream(&[
        sent(4, 0, 0),
        done(
            4,
            50 * MS,
            true,
            &format!(r#","first_event_ns":{}"#, 40 * MS),
        ),
    ]);
    let (_, v) = vllm_of(&text, &[], "");
    for key in [
        "mean_itl_ms",
        "median_itl_ms",
        "std_itl_ms",
        "p99_itl_ms",
        "mean_tpot_ms",
    ] {
        assert_eq!(v[key], 0.0, "{key}");
    }
    close(&v, "mean_ttft_ms", 40.0);
}

#[test]
fn without_kept_events_the_aggregator_says_so() {
    let text = five_requests();
    let mut reader = RecordReader::new(text.as_bytes(), "<test>");
    let header = reader.read_header().unwrap();
    let mut agg = VllmAggregator::new(vllm_options(&[], &[]).unwrap(), &header, 0);
    let e = fold_run(
        &mut reader,
        &header,
        &mut agg,
        &FoldOptions::default(),
        &mut |_| Ok(()),
    )
    .unwrap_err();
    assert!(
        tokenpipe_cli::message(&e).contains("need every event"),
        "{e:?}"
    );
}

#[test]
fn a_request_never_sent_is_one_of_vllms_failures() {
    // A stopped run ends its unsent rest with a `done` and no `sent`.
    let mut text = five_requests();
    text.push_str(&done(
        9,
        900 * MS,
        false,
        r#","error_kind":"not_sent","error":"stopped""#,
    ));
    text.push('\n');
    let (_, v) = vllm_of(&text, &[], "");
    assert_eq!(num(&v, "completed"), 3.0);
    assert_eq!(num(&v, "failed"), 3.0);
}
