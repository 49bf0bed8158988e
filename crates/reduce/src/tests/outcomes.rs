//! Counts, coverage, the extra metrics, `result` records and goodput of a hand-written run in
//! which every kind of end occurs: a normal answer, a one-token answer, a failure mid-stream,
//! a cancelled request, one never sent, one of a kind this build does not know, and one the run
//! left unfinished.

use super::*;
use crate::aggregate::outcomes;

use tokenpipe_format::{Record, ResultRecord};

/// Everything known, in ms: request 1 is due at 0, sent at 2, its first event at 5, tokens at
/// 10 (1), 20 (1) and 40 (2 tokens), done at 50 with usage 100 in, 4 out. Request 2 is one
/// token. 3 fails mid-stream, 4 is cancelled, 5 never sent, 6 never ends, 7 fails with a kind
/// from a newer writer.
fn every_end() -> Vec<String> {
    vec![
        sent(1, 0, 2 * MS),
        sent(2, 10 * MS, 10 * MS),
        token(1, 10 * MS, 1),
        sent(3, 12 * MS, 12 * MS),
        sent(4, 14 * MS, 14 * MS),
        token(3, 15 * MS, 1),
        sent(6, 16 * MS, 16 * MS),
        sent(7, 17 * MS, 17 * MS),
        token(1, 20 * MS, 1),
        token(6, 20 * MS, 1),
        done(3, 25 * MS, false, r#","status":200,"error_kind":"body""#),
        token(2, 30 * MS, 1),
        done(
            2,
            31 * MS,
            true,
            r#","completion_tokens":1,"finish_reason":"stop","session":"s1","turn":2"#,
        ),
        done(7, 40 * MS, false, r#","error_kind":"teapot""#),
        token(1, 40 * MS, 2),
        done(
            1,
            50 * MS,
            true,
            r#","prompt_tokens":100,"completion_tokens":4,"first_event_ns":5000000,"finish_reason":"length""#,
        ),
        done(4, 60 * MS, false, r#","error_kind":"cancelled""#),
        done(5, 60 * MS, false, r#","error_kind":"not_sent""#),
    ]
}

/// Folds `lines` through the summary and this part's aggregators; returns the records written
/// while the run was read, then the summary.
fn reduce(lines: &[String], opts: &SummaryOptions) -> (Vec<Record>, Summary) {
    let mut agg = RunReducer::new(outcomes::aggregators(opts));
    let mut written = Vec::new();
    let mut emit = |r: Record| -> std::io::Result<()> {
        written.push(r);
        Ok(())
    };
    let header = fold_text(&stream(lines), &mut agg, &mut emit).unwrap();
    let mut last = Vec::new();
    let s = agg.finish_summary("l".into(), header.run_id, opts, &mut last);
    written.extend(last);
    (written, s)
}

fn with(f: impl FnOnce(&mut SummaryOptions)) -> SummaryOptions {
    let mut opts = SummaryOptions::default();
    f(&mut opts);
    opts
}

fn close(got: Option<f64>, want: f64) {
    let got = got.expect("a value");
    assert!(
        (got - want).abs() <= want.abs() * 1e-12,
        "{got} is not {want}"
    );
}

fn results(records: &[Record]) -> Vec<&ResultRecord> {
    records
        .iter()
        .map(|r| match r {
            Record::Result(r) => &**r,
            other => panic!("only results are written while a run is read: {other:?}"),
        })
        .collect()
}

#[test]
fn counts_every_end_by_kind_and_tells_a_stopped_run_from_a_failing_server() {
    let (written, s) = reduce(&every_end(), &SummaryOptions::default());
    assert!(
        written.is_empty(),
        "no result records without --per-request"
    );
    assert_eq!(s.requests_scheduled, Some(7));
    assert_eq!(s.requests_sent, Some(6), "all but request 5");
    assert_eq!((s.requests_ok, s.requests_failed), (2, 5));
    let errors: Vec<(&str, u64)> = s.errors.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        errors,
        [
            ("body", 1),
            ("cancelled", 1),
            ("not_sent", 1),
            ("teapot", 1),
            ("unfinished", 1)
        ]
    );
    assert_eq!(
        s.errors.values().sum::<u64>(),
        s.requests_failed,
        "every failed request has a kind"
    );
    // body and the unknown kind; not cancelled, not_sent or unfinished.
    assert_eq!(s.requests_failed_server, Some(2));
}

#[test]
fn samples_say_how_many_values_each_metric_covers() {
    let (_, s) = reduce(&every_end(), &SummaryOptions::default());
    let want = [
        ("ttft", 2),
        ("ttfr", 2),
        ("tpot", 1), // the one-token answer has none
        ("e2el", 2),
        ("itl", 2), // request 1's two gaps
        ("itl_token", 3),
        ("dispatch_lag", 6), // every sent request, failed or not
        ("ttft_sched", 2),
        ("e2el_sched", 2),
        ("user_tps", 2),
        ("user_gen_tps", 2),
        ("prefill_tps", 1), // request 2 has no prompt usage
        ("itl_cv", 1),
    ];
    for (metric, n) in want {
        assert_eq!(s.samples.get(metric), Some(&n), "{metric}");
    }
    assert_eq!(s.samples.len(), want.len(), "{:?}", s.samples);
}

#[test]
fn the_extra_metrics_have_known_values() {
    let (_, s) = reduce(&every_end(), &SummaryOptions::default());
    let mean = |m: &str| s.stat(m, StatName::Mean);
    // TTFR: 5 − 2 = 3 (first event), and request 2 falls back to its first token, 30 − 10.
    close(mean("ttfr"), 11.5);
    assert_eq!(s.stat("ttfr", StatName::Min), Some(3.0));
    // From the scheduled instant: 10 − 0 and 30 − 10; 50 − 0 and 31 − 10.
    close(mean("ttft_sched"), 15.0);
    assert_eq!(s.stat("e2el_sched", StatName::Max), Some(50.0));
    assert_eq!(s.stat("e2el_sched", StatName::Min), Some(21.0));
    // Per token: a gap of 10 for one token, then 20 split over 2 tokens: 10, 10, 10.
    close(mean("itl_token"), 10.0);
    assert_eq!(s.stat("itl_token", StatName::Std), Some(0.0));
    assert_pct(s.stat("itl_token", StatName::Percentile(99.0)), 10.0);
    // Per-event ITL is 10 and 20 for the same request.
    close(mean("itl"), 15.0);
    // Rates: 4 / 48 ms and 1 / 21 ms; 4 / 40 ms and 1 / 1 ms; 100 / 8 ms.
    let tps = |m: &str, st: StatName| s.stat_in(m, st, "tps");
    close(
        tps("user_tps", StatName::Mean),
        (4e3 / 48.0 + 1e3 / 21.0) / 2.0,
    );
    close(tps("user_gen_tps", StatName::Max), 1000.0);
    close(tps("user_gen_tps", StatName::Min), 100.0);
    close(tps("prefill_tps", StatName::Mean), 12_500.0);
    assert_pct(tps("prefill_tps", StatName::Percentile(50.0)), 12_500.0);
    assert_eq!(tps("prefill_tps", StatName::SampleStd), None, "one value");
    // Request 1's gaps 10 and 20: std 5, mean 15.
    let cv = s.stat_in("itl_cv", StatName::Mean, "ratio");
    close(cv, 1.0 / 3.0);
    assert_pct(
        s.stat_in("itl_cv", StatName::Percentile(99.0), "ratio"),
        1.0 / 3.0,
    );
    assert!(s.histograms.contains_key("user_tps") && s.histograms.contains_key("itl_cv"));
    let text = serde_json::to_string(&s).unwrap();
    for key in [
        "\"user_tps_mean_tps\":",
        "\"prefill_tps_p50_tps\":",
        "\"itl_cv_p99_ratio\":",
        "\"ttfr_sstd_ms\":",
    ] {
        assert!(text.contains(key), "{key} in {text}");
    }
}

#[test]
fn sample_std_divides_by_n_minus_one_and_needs_two_values() {
    let (_, s) = reduce(&every_end(), &SummaryOptions::default());
    // TTFT 8 and 20: population std 6, sample std √72.
    assert_eq!(s.stat("ttft", StatName::Std), Some(6.0));
    close(s.stat("ttft", StatName::SampleStd), 72f64.sqrt());
    // One TPOT value: population std 0, no sample std.
    assert_eq!(s.stat("tpot", StatName::Std), Some(0.0));
    assert_eq!(s.stat("tpot", StatName::SampleStd), None);
    assert!(s.stats.0.contains_key("tpot_sstd_ms"), "written as null");
}

#[test]
fn a_result_record_per_request_as_it_ends_failed_ones_too() {
    let opts = with(|o| o.outcomes.per_request = true);
    let (written, s) = reduce(&every_end(), &opts);
    let rs = results(&written);
    let ids: Vec<u64> = rs.iter().map(|r| r.id).collect();
    // In the order requests ended; the unfinished one when the run does.
    assert_eq!(ids, [3, 2, 7, 1, 4, 5, 6]);
    assert_eq!(rs.len() as u64, s.requests_scheduled.unwrap());
    assert_eq!(rs.iter().filter(|r| r.ok).count() as u64, s.requests_ok);

    let r1 = rs[3];
    assert!(r1.ok && r1.error_kind.is_none());
    assert_eq!(
        (r1.scheduled_ms, r1.sent_ms, r1.done_ms, r1.queue_ms),
        (Some(0.0), Some(2.0), Some(50.0), Some(2.0))
    );
    assert_eq!((r1.ttft_ms, r1.ttfr_ms), (Some(8.0), Some(3.0)));
    assert_eq!(r1.ttft_from_scheduled_ms, Some(10.0));
    assert_eq!(
        (r1.e2el_ms, r1.e2el_from_scheduled_ms),
        (Some(48.0), Some(50.0))
    );
    close(r1.tpot_ms, 40.0 / 3.0);
    assert_eq!(
        (r1.itl_mean_ms, r1.itl_max_ms, r1.itl_std_ms),
        (Some(15.0), Some(20.0), Some(5.0))
    );
    assert_eq!(r1.itl_per_token_mean_ms, Some(10.0));
    assert_eq!(
        (r1.output_tokens, r1.output_tokens_source.as_str()),
        (4, "usage")
    );
    assert_eq!(
        (r1.input_tokens, r1.input_tokens_source.as_deref()),
        (Some(100), Some("usage"))
    );
    assert_eq!((r1.content_events, r1.empty_events), (3, 0));
    close(r1.user_tps, 4e3 / 48.0);
    close(r1.user_gen_tps, 100.0);
    close(r1.prefill_tps, 12_500.0);
    assert_eq!(r1.finish_reason.as_deref(), Some("length"));

    let r2 = rs[1];
    assert_eq!(r2.tpot_ms, None, "a one-token answer has no TPOT");
    assert_eq!((r2.itl_mean_ms, r2.itl_max_ms), (None, None));
    assert_eq!(
        (r2.input_tokens, r2.input_tokens_source.as_deref()),
        (None, None)
    );
    assert_eq!(r2.grouping.session.as_deref(), Some("s1"));
    assert_eq!(r2.grouping.turn, Some(2));
    close(r2.user_gen_tps, 1000.0);

    let r3 = rs[0];
    assert_eq!(
        (r3.ok, r3.error_kind.as_deref(), r3.status),
        (false, Some("body"), Some(200))
    );
    assert_eq!((r3.ttft_ms, r3.e2el_ms), (Some(3.0), Some(13.0)));
    assert_eq!(
        (r3.output_tokens, r3.output_tokens_source.as_str()),
        (1, "counted")
    );

    let r5 = rs[5];
    assert_eq!(r5.error_kind.as_deref(), Some("not_sent"));
    assert_eq!((r5.sent_ms, r5.queue_ms, r5.e2el_ms), (None, None, None));
    assert_eq!(r5.done_ms, Some(60.0));

    let r6 = rs[6];
    assert_eq!(r6.error_kind.as_deref(), Some("unfinished"));
    assert_eq!((r6.done_ms, r6.e2el_ms), (None, None));
    assert_eq!((r6.ttft_ms, r6.content_events), (Some(4.0), 1));

    assert_eq!(rs[2].error_kind.as_deref(), Some("teapot"));
    assert_eq!(rs[4].error_kind.as_deref(), Some("cancelled"));
}

#[test]
fn a_result_line_is_flat_and_null_where_undefined() {
    let opts = with(|o| o.outcomes.per_request = true);
    let (written, _) = reduce(&every_end(), &opts);
    let line = serde_json::to_value(&written[1]).unwrap();
    assert_eq!(line["type"], "result");
    assert_eq!(line["id"], 2);
    assert!(line["tpot_ms"].is_null() && line.get("tpot_ms").is_some());
    assert_eq!(line["session"], "s1");
    let nested: Vec<&String> = line
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, v)| v.is_object() || v.is_array())
        .map(|(k, _)| k)
        .collect();
    assert!(nested.is_empty(), "nested members {nested:?}");
}

fn goodput_with(bounds: &str) -> Summary {
    let slo: Vec<_> = bounds
        .split(',')
        .map(|b| crate::cli::parse_slo_bound(b).unwrap())
        .collect();
    reduce(&every_end(), &with(|o| o.outcomes.slo = slo)).1
}

#[test]
fn goodput_counts_ok_requests_within_every_bound() {
    // Request 1: TTFT 8, TPOT 13.3; request 2: TTFT 20 exactly (a tie meets the bound) and no
    // TPOT (which meets any bound). Failed requests are never good, however fast.
    let s = goodput_with("ttft=20ms,tpot=14ms");
    assert_eq!(s.good_requests, Some(2));
    assert_eq!(s.slo.get("ttft"), Some(&20.0));
    assert_eq!(s.slo.get("tpot"), Some(&14.0));
    // From the first send (2 ms) to the last done (60 ms).
    assert_eq!(s.duration_s, 0.058);
    assert_eq!(s.goodput_per_s, Some(2.0 / 0.058));
    // Over the 4 requests the server answered (2 ok, `body` and `teapot` failed): the
    // cancelled, the unsent and the unfinished one are the run's own ends.
    assert_eq!(s.good_fraction, Some(2.0 / 4.0));

    let s = goodput_with("ttft=19999us");
    assert_eq!(s.good_requests, Some(1), "20 ms is over 19.999 ms");
    let s = goodput_with("tpot=13ms");
    assert_eq!(s.good_requests, Some(1), "13.3 ms is over 13 ms");
    // ITL bounds the request's mean gap: 15 ms for request 1; request 2 has no gap.
    assert_eq!(goodput_with("itl=15ms").good_requests, Some(2));
    assert_eq!(goodput_with("itl=14ms").good_requests, Some(1));
    assert_eq!(goodput_with("e2el_sched=0.03s").good_requests, Some(1));
    assert_eq!(goodput_with("ttfr=3ms").good_requests, Some(1));
}

#[test]
fn without_the_flags_the_summary_has_no_goodput_results_or_meta() {
    let (_, s) = reduce(&every_end(), &SummaryOptions::default());
    let text = serde_json::to_string(&s).unwrap();
    for absent in ["\"slo\"", "good_", "goodput", "\"meta\""] {
        assert!(!text.contains(absent), "{absent} in {text}");
    }
    let (_, s) = reduce(&two_requests(), &SummaryOptions::default());
    let text = serde_json::to_string(&s).unwrap();
    assert!(
        !text.contains("\"errors\""),
        "no errors member when all ok: {text}"
    );
}

#[test]
fn meta_goes_on_the_summary() {
    let meta = [("model".to_string(), "m-7b".to_string())].into();
    let (_, s) = reduce(&two_requests(), &with(|o| o.outcomes.meta = meta));
    assert_eq!(s.meta.get("model").map(String::as_str), Some("m-7b"));
}
