//! Every summary field of hand-written runs with exact timings.

use super::*;

#[test]
fn every_field_of_two_known_requests() {
    let s = summary_of(&stream(&two_requests())).unwrap();
    assert_eq!(s.label, "l");
    assert_eq!(s.run_id, "run-1");
    assert_eq!(s.requests_ok, 2);
    assert_eq!(s.requests_failed, 0);
    // From the first sent (1000 ms) to the last done (1140 ms).
    assert_eq!(s.duration_s, 0.14);
    assert_eq!(s.input_tokens, 300);
    assert_eq!(s.output_tokens, 10);
    assert_eq!(s.request_throughput_per_s, 2.0 / 0.14);
    assert_eq!(s.output_throughput_tokens_per_s, 10.0 / 0.14);
    assert_eq!(s.total_throughput_tokens_per_s, 310.0 / 0.14);

    assert_eq!(s.stat("ttft", StatName::Mean), Some(60.0));
    assert_eq!(s.stat("ttft", StatName::Std), Some(10.0));
    // The histogram's median of {50, 70} is the lower sample (no interpolation).
    assert_pct(s.stat("ttft", StatName::Percentile(50.0)), 50.0);
    assert_pct(s.stat("ttft", StatName::Percentile(90.0)), 70.0);
    assert_pct(s.stat("ttft", StatName::Percentile(99.0)), 70.0);
    assert_eq!(s.stat("ttft", StatName::Max), Some(70.0));

    // (100 - 50) / 4 and (120 - 70) / 4.
    assert_eq!(s.stat("tpot", StatName::Mean), Some(12.5));
    assert_eq!(s.stat("tpot", StatName::Std), Some(0.0));
    assert_pct(s.stat("tpot", StatName::Percentile(50.0)), 12.5);
    assert_pct(s.stat("tpot", StatName::Percentile(90.0)), 12.5);
    assert_pct(s.stat("tpot", StatName::Percentile(99.0)), 12.5);
    assert_eq!(s.stat("tpot", StatName::Max), Some(12.5));

    // 4 gaps per request, all 10 ms.
    assert_eq!(s.stat("itl", StatName::Mean), Some(10.0));
    assert_eq!(s.stat("itl", StatName::Std), Some(0.0));
    assert_pct(s.stat("itl", StatName::Percentile(50.0)), 10.0);
    assert_pct(s.stat("itl", StatName::Percentile(90.0)), 10.0);
    assert_pct(s.stat("itl", StatName::Percentile(99.0)), 10.0);
    assert_eq!(s.stat("itl", StatName::Max), Some(10.0));
    assert_eq!(s.itl_jitter, Some(1.0));

    assert_eq!(s.stat("e2el", StatName::Mean), Some(110.0));
    assert_eq!(s.stat("e2el", StatName::Std), Some(10.0));
    assert_pct(s.stat("e2el", StatName::Percentile(50.0)), 100.0);
    assert_pct(s.stat("e2el", StatName::Percentile(90.0)), 120.0);
    assert_pct(s.stat("e2el", StatName::Percentile(99.0)), 120.0);
    assert_eq!(s.stat("e2el", StatName::Max), Some(120.0));

    // Lags of 1 and 3 ms.
    assert_eq!(s.stat("dispatch_lag", StatName::Mean), Some(2.0));
    assert_pct(s.stat("dispatch_lag", StatName::Percentile(50.0)), 1.0);
    assert_pct(s.stat("dispatch_lag", StatName::Percentile(99.0)), 3.0);
    assert_eq!(s.stat("dispatch_lag", StatName::Max), Some(3.0));
}

#[test]
fn failed_requests_are_counted_but_excluded() {
    let mut lines = two_requests();
    // Sent, streamed slowly, then failed inside the run's window: no effect on latencies.
    lines.insert(1, sent(3, 1_000 * MS, 1_001 * MS));
    lines.push(token(3, 1_002 * MS, 7));
    lines.push(token(3, 1_100 * MS, 7));
    lines.push(done(
        3,
        1_130 * MS,
        false,
        r#","status":500,"error_kind":"http","prompt_tokens":999,"completion_tokens":999"#,
    ));
    // Never sent: failed, and its done still ends the run window.
    lines.push(done(4, 1_200 * MS, false, r#","error_kind":"not_sent""#));
    let s = summary_of(&stream(&lines)).unwrap();
    assert_eq!(s.requests_ok, 2);
    assert_eq!(s.requests_failed, 2);
    assert_eq!(s.input_tokens, 300);
    assert_eq!(s.output_tokens, 10);
    assert_eq!(s.duration_s, 0.2);
    assert_eq!(s.request_throughput_per_s, 2.0 / 0.2);
    assert_eq!(s.stat("ttft", StatName::Mean), Some(60.0));
    assert_eq!(s.stat("ttft", StatName::Max), Some(70.0));
    assert_eq!(s.stat("itl", StatName::Max), Some(10.0));
    assert_eq!(s.stat("e2el", StatName::Max), Some(120.0));
    // Dispatch lag counts every sent request, failed ones included (lags 1, 3 and 1 ms).
    assert_eq!(
        s.stat("dispatch_lag", StatName::Mean),
        Some(5e6 / 3.0 / 1e6)
    );
    assert_eq!(s.stat("dispatch_lag", StatName::Max), Some(3.0));
}

#[test]
fn success_without_tokens_has_no_ttft_and_single_token_no_tpot() {
    let lines = vec![
        sent(1, 0, 0),
        done(1, 40 * MS, true, r#","completion_tokens":3"#),
        sent(2, 0, 0),
        token(2, 20 * MS, 1),
        done(2, 30 * MS, true, ""),
    ];
    let s = summary_of(&stream(&lines)).unwrap();
    assert_eq!(s.requests_ok, 2);
    assert_eq!(s.output_tokens, 4);
    assert_eq!(s.stat("ttft", StatName::Mean), Some(20.0));
    assert_eq!(s.stat("tpot", StatName::Mean), None);
    assert_eq!(s.stat("tpot", StatName::Percentile(99.0)), None);
    assert_eq!(s.stat("itl", StatName::Mean), None);
    assert_eq!(s.itl_jitter, None);
    assert_eq!(s.stat("e2el", StatName::Mean), Some(35.0));
    assert_eq!(s.stat("dispatch_lag", StatName::Max), Some(0.0));
}

#[test]
fn usage_counts_win_over_token_events_for_tpot() {
    // Two events carrying 1 and 4 tokens: n = 5 from usage, TPOT = (90 - 10) / 4 = 20 ms; ITL is
    // per event, one gap of 50 ms.
    let lines = vec![
        sent(1, 0, 0),
        token(1, 10 * MS, 1),
        token(1, 60 * MS, 4),
        done(1, 90 * MS, true, r#","completion_tokens":5"#),
    ];
    let s = summary_of(&stream(&lines)).unwrap();
    assert_eq!(s.stat("tpot", StatName::Mean), Some(20.0));
    assert_eq!(s.stat("itl", StatName::Mean), Some(50.0));
    assert_eq!(s.output_tokens, 5);
}

#[test]
fn no_schedule_means_no_dispatch_lag() {
    let lines = vec![
        r#"{"type":"sent","id":1,"sent_ns":5}"#.to_string(),
        done(1, 10, false, ""),
    ];
    let s = summary_of(&stream(&lines)).unwrap();
    assert_eq!(s.stat("dispatch_lag", StatName::Mean), None);
    assert_eq!(s.stat("ttft", StatName::Mean), None);
    assert_eq!(s.requests_failed, 1);
    assert_eq!(s.request_throughput_per_s, 0.0);
}

#[test]
fn jitter_is_itl_p99_over_p50() {
    // 100 gaps: 98 of 10 ms and 2 of 50 ms. Nearest rank: p50 is 10 ms, p99 (the 99th) 50 ms.
    let mut lines = vec![sent(1, 0, 0)];
    let mut t = 5 * MS;
    lines.push(token(1, t, 1));
    for i in 0..100 {
        t += if i == 40 || i == 70 { 50 * MS } else { 10 * MS };
        lines.push(token(1, t, 1));
    }
    lines.push(done(1, t, true, ""));
    let s = summary_of(&stream(&lines)).unwrap();
    assert_pct(s.stat("itl", StatName::Percentile(50.0)), 10.0);
    assert_pct(s.stat("itl", StatName::Percentile(99.0)), 50.0);
    assert_pct(s.itl_jitter, 5.0);
    assert_eq!(s.stat("itl", StatName::Max), Some(50.0));
    assert_eq!(
        s.stat("itl", StatName::Mean),
        Some((98.0 * 10.0 + 2.0 * 50.0) / 100.0)
    );
    assert_eq!(s.output_tokens, 101);
    // E2EL ends at the last token here: TPOT = (E2EL - TTFT) / 100 = mean ITL.
    assert_eq!(
        s.stat("tpot", StatName::Mean),
        s.stat("itl", StatName::Mean)
    );
}

#[test]
fn any_percentile_set_and_mergeable_histograms() {
    let mut agg = RunReducer::default();
    fold_text(&stream(&two_requests()), &mut agg, &mut |_| Ok(())).unwrap();
    let opts = SummaryOptions {
        percentiles: vec![95.0, 99.9],
        histograms: true,
        ..SummaryOptions::default()
    };
    let s = agg.finish_summary("l".into(), "run-1".into(), &opts, &mut Vec::new());
    assert_eq!(s.percentiles, [95.0, 99.9]);
    assert_pct(s.stat("ttft", StatName::Percentile(99.9)), 70.0);
    assert_pct(s.stat("e2el", StatName::Percentile(95.0)), 120.0);
    assert_eq!(s.stat("ttft", StatName::Percentile(50.0)), None);
    assert_eq!(s.stat("ttft", StatName::Min), Some(50.0));
    // Jitter is defined whatever percentiles were asked for.
    assert_eq!(s.itl_jitter, Some(1.0));
    let text = serde_json::to_string(&s).unwrap();
    assert!(text.contains("\"ttft_p99.9_ms\":"), "{text}");
    // The saved TTFT histogram reads back to the same figures.
    let ttft = crate::stat::Stat::from_state(&s.histograms["ttft"]).unwrap();
    assert_eq!(ttft.count(), 2);
    assert_eq!(ttft.moments(&[50.0]).unwrap().mean_ms, 60.0);
    let bare = agg.finish_summary(
        "l".into(),
        "run-1".into(),
        &SummaryOptions {
            histograms: false,
            ..opts
        },
        &mut Vec::new(),
    );
    assert!(bare.histograms.is_empty());
}
