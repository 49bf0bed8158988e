//! llama-benchy's figures of hand-written batch runs, every one worked out by hand below from
//! its formulas (docs/metrics.md, "llama-benchy's figures").

use super::*;
use crate::{LlamaBenchyAggregator, LlamaBenchyOptions};
use tokenpipe_format::{LlamaBenchy, SpreadFigure};

/// fire's default parameters (`stream_usage: on`: usage at the end, one token per event).
const FIRE_PARAMS: &str = r#"{"url":"http://x","stream_usage":"on"}"#;

fn run(arrivals_params: &str, lines: &[String], opts: LlamaBenchyOptions) -> Summary {
    run_under(FIRE_PARAMS, arrivals_params, lines, opts)
}

/// The summary of `lines` under a fire header with `fire_params` over an arrivals header with
/// `arrivals_params`, folded as the driver folds a batch run: with every event kept, for the
/// token stamps.
pub(super) fn run_under(
    fire_params: &str,
    arrivals_params: &str,
    lines: &[String],
    opts: LlamaBenchyOptions,
) -> Summary {
    let mut text = format!(
        r#"{{"type":"header","format_major":1,"tool":"fire","tool_version":"0.1.0","run_id":"run-1","params":{fire_params},"upstream":[{{"format_major":1,"tool":"arrivals","tool_version":"0.1.0","run_id":"a","params":{arrivals_params}}}]}}"#
    );
    text.push('\n');
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    let mut reader = RecordReader::new(text.as_bytes(), "<test>");
    let header = reader.read_header().unwrap();
    let mut agg = RunReducer::new(vec![Box::new(LlamaBenchyAggregator::new(opts, &header))]);
    let fold = FoldOptions {
        keep_events: true,
        ..FoldOptions::default()
    };
    fold_run(&mut reader, &header, &mut agg, &fold, &mut |_| Ok(())).unwrap();
    let mut out = Vec::new();
    agg.finish_summary("l".into(), "r".into(), &SummaryOptions::default(), &mut out)
}

fn figures(s: &Summary) -> &LlamaBenchy {
    s.llama_benchy.as_ref().expect("a llama_benchy member")
}

fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= want.abs() * 1e-12 + 1e-12,
        "{what}: got {got}, want {want}"
    );
}

fn check(fig: &Option<SpreadFigure>, mean: f64, std: f64, n: u64, per: &str, what: &str) {
    let f = fig.as_ref().unwrap_or_else(|| panic!("{what}: missing"));
    close(f.mean, mean, what);
    close(f.std, std, what);
    close(f.cv_pct.unwrap_or(f64::NAN), 100.0 * std / mean, what);
    assert_eq!((f.n, f.per.as_str()), (n, per), "{what}");
}

const BATCH_PARAMS: &str = r#"{"batch":3,"runs":2,"input_tokens":100}"#;

/// Two batches of three (times in ms; expected prompt length 100):
///
/// | req | batch | start | first event | first token | token events      | end  | usage p / n |
/// |-----|-------|-------|-------------|-------------|------------------|------|-------------|
/// | 1   | 0     | 0     | 40          | 50          | 50,60,70,80,90   | 100  | 100 / 5     |
/// | 2   | 0     | 0     | 60          | 80          | 80,100,120       | 120  | 110 / 3     |
/// | 3   | 0     | 1     | 100         | 100         | 100,110,120,130  | 140  | 150 / 4     |
/// | 4   | 1     | 1000  | (none)      | 1030        | 1030,1040,1050   | 1050 | 0 / (3)     |
/// | 5   | 1     | 1000  | 1020        | 1040        | 1040 ×4, 1060    | 1060 | 85 / 5      |
/// | 6   | 1     | 1000  | failed at 1010 (http 500)                        |      |             |
///
/// Prompt tokens (within 20 % of 100, strictly, else 100): 100, 110, 100 (150 is 50 off),
/// 100 (0 is no count), 85.
fn two_batches_of_three() -> Vec<String> {
    let ms = |t: u64| t * MS;
    let mut lines = vec![sent(1, 0, 0), sent(2, 0, 0), sent(3, 0, ms(1))];
    for t in [50, 60, 70, 80, 90] {
        lines.push(token(1, ms(t), 1));
    }
    for t in [80, 100, 120] {
        lines.push(token(2, ms(t), 1));
    }
    for t in [100, 110, 120, 130] {
        lines.push(token(3, ms(t), 1));
    }
    let usage = |batch: u64, first: Option<u64>, p: u64, n: Option<u64>| {
        let first = first.map_or(String::new(), |f| format!(r#","first_event_ns":{}"#, ms(f)));
        let n = n.map_or(String::new(), |n| format!(r#","completion_tokens":{n}"#));
        format!(r#","batch":{batch}{first},"prompt_tokens":{p}{n}"#)
    };
    lines.push(done(1, ms(100), true, &usage(0, Some(40), 100, Some(5))));
    lines.push(done(2, ms(120), true, &usage(0, Some(60), 110, Some(3))));
    lines.push(done(3, ms(140), true, &usage(0, Some(100), 150, Some(4))));
    lines.extend([sent(4, ms(1000), ms(1000)), sent(5, ms(1000), ms(1000))]);
    lines.push(sent(6, ms(1000), ms(1000)));
    lines.push(done(
        6,
        ms(1010),
        false,
        r#","batch":1,"status":500,"error_kind":"http""#,
    ));
    for t in [1030, 1040, 1050] {
        lines.push(token(4, ms(t), 1));
    }
    lines.push(token(5, ms(1040), 4));
    lines.push(token(5, ms(1060), 1));
    lines.push(done(4, ms(1050), true, &usage(1, None, 0, None)));
    lines.push(done(5, ms(1060), true, &usage(1, Some(1020), 85, Some(5))));
    lines
}

#[test]
fn every_figure_of_two_known_batches() {
    let s = run(
        BATCH_PARAMS,
        &two_batches_of_three(),
        LlamaBenchyOptions::default(),
    );
    let b = figures(&s);
    assert_eq!(b.concurrency, Some(3));
    assert_eq!(b.batches, 2);
    assert_eq!(b.net_latency_ms, 0.0);
    // Token stamps (`stream_usage: on`: usage spread evenly from the first to the last
    // content event; request 4 has no usage: one stamp per event):
    //   1: 50,60,70,80,90   2: 80,100,120   3: 100,110,120,130
    //   4: 1030,1040,1050   5: 1040,1045,1050,1055,1060 (5 over its events at 1040 and 1060)
    // Batch 0: pp = (100 + 110 + 100) / (100 − 0 ms) = 3100;
    //   tg = (4 + 2 + 3 decode tokens) / (130 − 50 ms, last stamp − first token) = 112.5.
    // Batch 1 (request 6 failed): pp = (100 + 85) / (1040 − 1000 ms) = 4625;
    //   tg = (2 + 4) / (1060 − 1030 ms) = 200.
    // mean ± np.std: 3862.5 ± 762.5 and 156.25 ± 43.75.
    check(&b.pp_tps_batch, 3862.5, 762.5, 2, "batch", "pp per batch");
    check(&b.tg_tps_batch, 156.25, 43.75, 2, "batch", "tg per batch");
    // Peak per batch: every batch spans under 1 s, so stamps / span: 12 / 0.080 = 150 and
    // 8 / 0.030 = 266.67; mean ± np.std = 208.33 ± 58.33.
    check(
        &b.peak_tps,
        625.0 / 3.0,
        175.0 / 3.0,
        2,
        "batch",
        "peak per batch",
    );
    // Peak per request, stamps / span: 5/0.04 = 125, 3/0.04 = 75, 4/0.03 = 133.33,
    // 3/0.02 = 150, 5/0.02 = 250: np.std = 57.39725119240855.
    let peaks = [125.0, 75.0, 400.0 / 3.0, 150.0, 250.0];
    check(
        &b.peak_tps_request,
        peaks.iter().sum::<f64>() / 5.0,
        57.39725119240855,
        5,
        "request",
        "peak per request",
    );
    // Concurrency 3: the headline figures are the batch ones.
    assert_eq!(b.pp_tps, b.pp_tps_batch);
    assert_eq!(b.tg_tps, b.tg_tps_batch);
    // Per request, est_ppt = TTFR (no latency): pp = 100/0.040, 110/0.060, 100/0.099, 100/0.030
    // (request 4 has no first event: TTFR falls back to its first token), 85/0.020;
    // tg = decode tokens / (last − first stamp) = 4/0.040 = 100, 2/0.040 = 50, 3/0.030 = 100,
    // 2/0.020 = 100, 4/0.020 = 200.
    let pp = [2500.0, 110.0 / 0.06, 100.0 / 0.099, 100.0 / 0.03, 4250.0];
    let pp_mean = pp.iter().sum::<f64>() / 5.0;
    // np.std([2500, 110/0.06, 100/0.099, 100/0.03, 4250]) = 1130.023164276218
    check(
        &b.pp_tps_request,
        pp_mean,
        1130.023164276218,
        5,
        "request",
        "pp per request",
    );
    close(pp_mean, 2585.3535353535353, "pp mean by hand");
    // np.std([100, 50, 100, 100, 200]) = 48.98979485566356
    check(
        &b.tg_tps_request,
        110.0,
        48.98979485566356,
        5,
        "request",
        "tg per request",
    );
    // TTFR 40, 60, 99, 30, 20 ms: np.std = 27.931344400153748.
    let ttfr = b.ttfr_ms.unwrap();
    close(ttfr.mean, 49.8, "ttfr mean");
    close(ttfr.std, 27.931344400153748, "ttfr std");
    assert_eq!(b.est_ppt_ms, b.ttfr_ms, "est_ppt is TTFR without latency");
    // E2E TTFT 50, 80, 99, 30, 40 ms: np.std = 25.771301868551383.
    let e2e = b.e2e_ttft_ms.unwrap();
    close(e2e.mean, 59.8, "e2e_ttft mean");
    close(e2e.std, 25.771301868551383, "e2e_ttft std");
}

#[test]
fn net_latency_comes_off_ttfr_and_a_zero_estimate_gives_no_prefill_rate() {
    let opts = LlamaBenchyOptions {
        always: false,
        net_latency_ns: Some(25 * MS),
    };
    let s = run(BATCH_PARAMS, &two_batches_of_three(), opts);
    let b = figures(&s);
    assert_eq!(b.net_latency_ms, 25.0);
    // est_ppt = max(0, TTFR − 25): 15, 35, 74, 5, 0 ms; np.std = 26.917652200739948.
    let est = b.est_ppt_ms.unwrap();
    close(est.mean, 25.8, "est_ppt mean");
    close(est.std, 26.917652200739948, "est_ppt std");
    // Request 5's estimate is 0: no prefill rate. np.mean/np.std of
    // [100/0.015, 110/0.035, 100/0.074, 100/0.005] = 7790.218790218791 ± 7304.076100742312.
    check(
        &b.pp_tps_request,
        7790.218790218791,
        7304.076100742312,
        4,
        "request",
        "pp",
    );
    // TTFR and E2E TTFT keep the latency; the batch figures do not use it.
    close(b.ttfr_ms.unwrap().mean, 49.8, "ttfr mean");
    check(&b.pp_tps_batch, 3862.5, 762.5, 2, "batch", "pp per batch");
}

#[test]
fn a_wrong_server_count_is_replaced_by_the_expected_length_in_the_stream() {
    let ms = |t: u64| t * MS;
    // One batch of one: TTFR 50 ms. Usage says 50 prompt tokens for an expected 100.
    let lines = |p: u64| {
        vec![
            sent(1, 0, 0),
            token(1, ms(50), 1),
            token(1, ms(60), 1),
            done(
                1,
                ms(60),
                true,
                &format!(r#","batch":0,"prompt_tokens":{p},"completion_tokens":2"#),
            ),
        ]
    };
    let params = r#"{"batch":1,"runs":1,"input_tokens":100}"#;
    let pp = |p| {
        let s = run(params, &lines(p), LlamaBenchyOptions::default());
        figures(&s).pp_tps_request.as_ref().unwrap().mean
    };
    close(pp(50), 100.0 / 0.05, "50 is out of range: 100 tokens");
    close(pp(90), 90.0 / 0.05, "90 is in range: taken");
}

#[test]
fn concurrency_one_reports_per_request_figures() {
    let ms = |t: u64| t * MS;
    // Two batches of one. Request 1: first token 10, end 30, 3 tokens: tg = 2/0.020 = 100.
    // Request 2: first token 110, end 150, 3 tokens: tg = 2/0.040 = 50. np.std = 25.
    let lines = vec![
        sent(1, 0, 0),
        token(1, ms(10), 1),
        token(1, ms(20), 1),
        token(1, ms(30), 1),
        done(1, ms(30), true, r#","batch":0,"completion_tokens":3"#),
        sent(2, ms(100), ms(100)),
        token(2, ms(110), 1),
        token(2, ms(130), 1),
        token(2, ms(150), 1),
        done(2, ms(150), true, r#","batch":1,"completion_tokens":3"#),
    ];
    let s = run(
        r#"{"batch":1,"runs":2,"input_tokens":10}"#,
        &lines,
        LlamaBenchyOptions::default(),
    );
    let b = figures(&s);
    assert_eq!((b.concurrency, b.batches), (Some(1), 2));
    check(&b.tg_tps, 75.0, 25.0, 2, "request", "headline tg");
    assert_eq!(b.tg_tps, b.tg_tps_request);
    assert_eq!(b.pp_tps, b.pp_tps_request);
    // The batch view is still there: with one request a batch's figure is the request's.
    check(&b.tg_tps_batch, 75.0, 25.0, 2, "batch", "tg per batch");
}

#[test]
fn a_run_without_batches_has_no_member_unless_asked_and_then_only_per_request_figures() {
    let plain = r#"{"rate_per_s":4,"input_tokens":100}"#;
    let s = run(plain, &two_requests(), LlamaBenchyOptions::default());
    assert_eq!(s.llama_benchy, None);
    assert!(!serde_json::to_string(&s).unwrap().contains("llama_benchy"));

    let always = LlamaBenchyOptions {
        always: true,
        net_latency_ns: None,
    };
    let s = run(plain, &two_requests(), always);
    let b = figures(&s);
    assert_eq!((b.concurrency, b.batches), (None, 0));
    assert_eq!((&b.pp_tps_batch, &b.tg_tps_batch), (&None, &None));
    // two_requests: 5 tokens each, first to last token 40 ms: tg = 4/0.040 = 100 for both.
    check(&b.tg_tps, 100.0, 0.0, 2, "request", "headline tg");
    assert_eq!(b.tg_tps.as_ref().unwrap().cv_pct, Some(0.0));
    // TTFT 50 and 70 ms; no first event stamped, so TTFR is the same.
    let ttfr = b.ttfr_ms.unwrap();
    close(ttfr.mean, 60.0, "ttfr mean");
    close(ttfr.std, 10.0, "ttfr std");
    let text = serde_json::to_string(&s).unwrap();
    let back: Summary = serde_json::from_str(&text).unwrap();
    assert_eq!(back.llama_benchy, s.llama_benchy, "{text}");
}

#[test]
fn a_batch_run_without_a_success_has_no_member() {
    let lines = vec![
        sent(1, 0, 0),
        done(
            1,
            MS,
            false,
            r#","batch":0,"status":500,"error_kind":"http""#,
        ),
    ];
    let s = run(BATCH_PARAMS, &lines, LlamaBenchyOptions::default());
    assert_eq!(s.requests_failed, 1);
    assert_eq!(s.llama_benchy, None);
}

#[test]
fn without_a_batch_parameter_the_largest_batch_seen_is_the_concurrency() {
    let mut lines = two_batches_of_three();
    lines.retain(|l| !l.contains(r#""id":6,"#));
    let s = run(
        r#"{"input_tokens":100}"#,
        &lines,
        LlamaBenchyOptions::default(),
    );
    let b = figures(&s);
    assert_eq!((b.concurrency, b.batches), (Some(3), 2));
    assert_eq!(b.tg_tps, b.tg_tps_batch);
}

#[test]
fn without_an_expected_length_the_servers_count_is_taken_and_a_missing_one_drops_pp() {
    let ms = |t: u64| t * MS;
    // One batch of two, no input_tokens in the schedule. Both TTFR 50 ms, first tokens at 50.
    let lines = |second_usage: &str| {
        vec![
            sent(1, 0, 0),
            sent(2, 0, 0),
            token(1, ms(50), 1),
            token(2, ms(50), 1),
            token(1, ms(60), 1),
            token(2, ms(60), 1),
            done(1, ms(60), true, r#","batch":0,"prompt_tokens":40"#),
            done(2, ms(60), true, &format!(r#","batch":0{second_usage}"#)),
        ]
    };
    let params = r#"{"batch":2,"runs":1}"#;
    let s = run(
        params,
        &lines(r#","prompt_tokens":60"#),
        LlamaBenchyOptions::default(),
    );
    // (40 + 60) / 0.050 s = 2000 per batch; 800 and 1200 per request.
    check(
        &figures(&s).pp_tps_batch,
        2000.0,
        0.0,
        1,
        "batch",
        "pp per batch",
    );
    check(
        &figures(&s).pp_tps_request,
        1000.0,
        200.0,
        2,
        "request",
        "pp",
    );
    let s = run(params, &lines(""), LlamaBenchyOptions::default());
    let b = figures(&s);
    assert_eq!(
        b.pp_tps_batch, None,
        "one request's prompt length is unknown"
    );
    check(
        &b.pp_tps_request,
        800.0,
        0.0,
        1,
        "request",
        "pp of the known one",
    );
    // Generation does not need the prompt: (4 − 2) / (60 − 50 ms) = 200.
    check(&b.tg_tps_batch, 200.0, 0.0, 1, "batch", "tg per batch");
}
