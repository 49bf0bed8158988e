//! Windows, intervals, peak throughput and concurrency on hand-built runs whose every figure is
//! known (docs/metrics.md, "Windows" to "Server throughput from users").

use super::*;
use crate::aggregate::timing::intervals::IntervalAggregator;
use crate::aggregate::timing::window::WindowChoice;
use crate::{Aggregator, RunSpan};
use tokenpipe_cli::{message, Ending, ToolError};
use tokenpipe_format::{Interval, Record, Sent, Token};

const S: u64 = 1_000_000_000;

/// A fire header whose arrivals upstream marks fill [0, 1 s), measure [1 s, 3 s) and drain.
fn phased_header(extra_params: &str) -> String {
    format!(
        r#"{{"type":"header","format_major":1,"tool":"fire","tool_version":"0.1.0","run_id":"run-p","params":{{"url":"http://x"}},"upstream":[{{"format_major":1,"tool":"arrivals","tool_version":"0.1.0","run_id":"a","params":{{"model":"m"{extra_params},"phases":[{{"name":"fill","start_ns":0,"end_ns":1000000000}},{{"name":"measure","start_ns":1000000000,"end_ns":3000000000}},{{"name":"drain","start_ns":3000000000,"end_ns":null}}]}}}}]}}"#
    )
}

fn with_header(header: String, lines: &[String]) -> String {
    let mut s = header;
    s.push('\n');
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    s
}

/// Four requests around the measure phase [1 s, 3 s):
/// A sent in fill (0.5 s), a token in the window (1.2 s), ends ok in it (1.3 s, 10 prompt
///   tokens);
/// B sent in it (1.2 s), tokens at 1.6 and 1.7 s, ends ok at 1.8 s (20 prompt tokens);
/// C sent in it (2.5 s), tokens at 2.8 and 3.2 s, ends ok after it (3.5 s);
/// D sent in drain (3.1 s), two tokens at 3.3 s, ends ok at 3.6 s (the run's last event).
fn straddling() -> Vec<String> {
    let ms = |x: u64| x * MS;
    vec![
        sent(1, ms(500), ms(500)),
        token(1, ms(900), 1),
        sent(2, ms(1200), ms(1200)),
        token(1, ms(1200), 1),
        done(
            1,
            ms(1300),
            true,
            r#","prompt_tokens":10,"completion_tokens":2"#,
        ),
        token(2, ms(1600), 1),
        token(2, ms(1700), 1),
        done(2, ms(1800), true, r#","prompt_tokens":20"#),
        sent(3, ms(2500), ms(2500)),
        token(3, ms(2800), 1),
        sent(4, ms(3100), ms(3100)),
        token(3, ms(3200), 1),
        token(4, ms(3300), 2),
        done(3, ms(3500), true, r#","prompt_tokens":30"#),
        done(4, ms(3600), true, r#","prompt_tokens":40"#),
    ]
}

fn reduce_text(text: String, opts: &SummaryOptions) -> Result<Vec<Record>, crate::Error> {
    Ok(drive(
        vec![("run.ndjson", text)],
        &[],
        opts,
        crate::RunsOptions::default(),
    )?
    .0)
}

fn summary_with(text: String, window: WindowChoice) -> Result<Summary, crate::Error> {
    let opts = SummaryOptions {
        window,
        ..SummaryOptions::default()
    };
    let records = reduce_text(text, &opts)?;
    match records.last() {
        Some(Record::Summary(s)) => Ok((**s).clone()),
        other => panic!("no summary last: {other:?}"),
    }
}

fn near(got: Option<f64>, want: f64) {
    let got = got.expect("a value");
    assert!((got - want).abs() < 1e-9, "{got} != {want}");
}

#[test]
fn the_measure_phase_is_the_default_window_and_requests_belong_where_they_were_sent() {
    let s = summary_with(
        with_header(phased_header(""), &straddling()),
        WindowChoice::Default,
    )
    .unwrap();
    let w = s.window.clone().expect("a window");
    assert_eq!((w.name.as_str(), w.start_s, w.end_s), ("measure", 1.0, 3.0));
    // B and C were sent in the window; C is measured whole although it ends after it.
    assert_eq!(s.requests_ok, 2);
    assert_eq!(s.requests_outside_window, Some(2));
    assert_eq!(
        s.stat("ttft", StatName::Mean),
        Some(350.0),
        "B 400 ms, C 300 ms"
    );
    assert_eq!(
        s.stat("e2el", StatName::Max),
        Some(1000.0),
        "C from 2.5 s to 3.5 s"
    );
    assert_eq!(s.output_tokens, 4, "B's and C's");
    // Throughputs over the window's 2 s: the tokens stamped in it (A's at 1.2 s, B's two, C's
    // at 2.8 s) and the ok ends stamped in it (A at 1.3 s, B at 1.8 s).
    assert_eq!(s.duration_s, 2.0);
    near(Some(s.output_throughput_tokens_per_s), 2.0);
    near(Some(s.request_throughput_per_s), 1.0);
    near(Some(s.total_throughput_tokens_per_s), (4.0 + 30.0) / 2.0);
}

#[test]
fn by_hand_windows_and_the_whole_run() {
    let text = with_header(phased_header(""), &straddling());
    let manual = summary_with(
        text.clone(),
        WindowChoice::Manual {
            warmup_ns: S,
            measure_ns: Some(2 * S),
        },
    )
    .unwrap();
    let phase = summary_with(text.clone(), WindowChoice::Phase("measure".into())).unwrap();
    assert_eq!(
        manual.window.as_ref().map(|w| w.name.as_str()),
        Some("manual")
    );
    assert_eq!(manual.requests_ok, phase.requests_ok);
    assert_eq!(manual.stats, phase.stats);
    assert_eq!(
        manual.output_throughput_tokens_per_s,
        phase.output_throughput_tokens_per_s
    );
    // From 3 s to the end: D alone, over 3 s → 3.6 s (the run's last event).
    let tail = summary_with(
        text.clone(),
        WindowChoice::Manual {
            warmup_ns: 3 * S,
            measure_ns: None,
        },
    )
    .unwrap();
    assert_eq!(tail.requests_ok, 1);
    near(Some(tail.duration_s), 0.6);
    near(Some(tail.output_throughput_tokens_per_s), 3.0 / 0.6);
    let all = summary_with(text, WindowChoice::All).unwrap();
    assert_eq!(all.window, None);
    assert_eq!(all.requests_outside_window, None);
    assert_eq!(all.requests_ok, 4);
    near(Some(all.duration_s), 3.1);
    let text = serde_json::to_string(&all).unwrap();
    assert!(!text.contains("window"), "{text}");
}

#[test]
fn a_phase_the_run_does_not_mark_is_bad_input_naming_those_it_has() {
    let err = summary_with(
        with_header(phased_header(""), &straddling()),
        WindowChoice::Phase("steady".into()),
    )
    .unwrap_err();
    let text = message(&err);
    assert!(text.contains("run.ndjson: run run-p"), "{text}");
    assert!(text.contains("fill, measure, drain"), "{text}");
    assert!(matches!(err, crate::Error::Window { .. }), "{err:?}");
    assert_eq!(err.ending(), Ending::BadInput);
    let err = summary_with(
        stream(&two_requests()),
        WindowChoice::Phase("measure".into()),
    )
    .unwrap_err();
    assert!(message(&err).contains("marks no phases"), "{err:?}");
    // Without phases the default is the whole run.
    let s = summary_with(stream(&two_requests()), WindowChoice::Default).unwrap();
    assert_eq!(s.window, None);
    assert_eq!(s.requests_ok, 2);
}

#[test]
fn peak_and_concurrency_over_the_window() {
    let s = summary_with(
        with_header(phased_header(""), &straddling()),
        WindowChoice::Default,
    )
    .unwrap();
    // Tokens in the window at 1.2, 1.6, 1.7 and 2.8 s: the busiest second is [1.0, 2.0).
    assert_eq!(s.peak_output_tps, Some(3.0));
    assert_eq!(s.peak_output_tps_at_s, Some(1.0));
    // In flight within [1 s, 3 s): A 0.3 s, B 0.6 s, C 0.5 s; A and B overlap.
    near(s.mean_concurrency, 1.4 / 2.0);
    assert_eq!(s.peak_concurrency, Some(2));
    // Open loop: mean user_tps of B (2 / 0.6 s) and C (2 / 1 s) times the mean concurrency.
    near(s.server_tps_from_users, (2.0 / 0.6 + 2.0) / 2.0 * 0.7);
    assert_eq!(
        s.server_tps_concurrency.as_deref(),
        Some("mean_concurrency")
    );
}

#[test]
fn a_closed_loop_multiplies_by_its_n() {
    let header = phased_header(r#","mode":"closed","concurrency":4"#);
    let s = summary_with(with_header(header, &straddling()), WindowChoice::Default).unwrap();
    near(s.server_tps_from_users, (2.0 / 0.6 + 2.0) / 2.0 * 4.0);
    assert_eq!(s.server_tps_concurrency.as_deref(), Some("closed_loop"));
}

fn interval(r: &Record) -> &Interval {
    match r {
        Record::Interval(i) => i,
        other => panic!("not an interval: {other:?}"),
    }
}

#[test]
fn intervals_are_written_once_the_run_is_a_grace_past_them() {
    let ms = |x: u64| x * MS;
    let sent = |id, at| Sent {
        id,
        scheduled_ns: None,
        sent_ns: at,
    };
    let token = |id, at| Token {
        id,
        at_ns: at,
        tokens: 1,
        empty: false,
        reasoning: false,
    };
    let mut agg = IntervalAggregator::new(S);
    let mut out = Vec::new();
    agg.sent(&sent(1, ms(100)));
    agg.token(&token(1, ms(300)));
    agg.token(&token(1, ms(500)));
    agg.sent(&sent(2, ms(900)));
    agg.token(&token(2, ms(1200)));
    agg.token(&token(1, ms(1400)));
    let done = |id, at, ok| crate::request::RequestResult {
        id,
        ok,
        sent_ns: Some(0),
        done_ns: Some(at),
        ..Default::default()
    };
    agg.add(&done(1, ms(1500), true)).unwrap();
    agg.drain(&mut out);
    assert!(out.is_empty(), "nothing is a grace past 1 s yet: {out:?}");
    agg.token(&token(2, ms(2050)));
    agg.drain(&mut out);
    assert_eq!(out.len(), 1, "[0, 1 s) is written at 2.05 s");
    let first = interval(&out[0]).clone();
    assert_eq!((first.start_s, first.end_s), (0.0, 1.0));
    assert_eq!((first.sent, first.ended_ok, first.output_tokens), (2, 0, 2));
    assert_eq!(first.in_flight, 2);
    assert_pct(first.ttft_p50_ms, 200.0);
    assert_pct(first.itl_p99_ms, 200.0);
    // A send stamped in the slice already written: late, but still in flight counts.
    agg.sent(&sent(3, ms(800)));
    agg.add(&done(3, ms(2200), false)).unwrap();
    agg.add(&done(2, ms(2300), true)).unwrap();
    // A request the client never sent ends too, but was never in flight.
    let never_sent = crate::request::RequestResult {
        id: 9,
        done_ns: Some(ms(2250)),
        ..Default::default()
    };
    agg.add(&never_sent).unwrap();
    let mut last = Vec::new();
    agg.finish(&RunSpan::default(), &mut Summary::default(), &mut last);
    assert_eq!(last.len(), 2);
    let second = interval(&last[0]);
    assert_eq!((second.start_s, second.end_s), (1.0, 2.0));
    assert_eq!(
        (second.sent, second.ended_ok, second.output_tokens),
        (0, 1, 2)
    );
    assert_eq!(second.late_events, 1);
    assert_eq!(second.in_flight, 2, "requests 2 and 3 at 2 s");
    assert_pct(second.ttft_p50_ms, 300.0);
    assert_pct(second.itl_p50_ms, 900.0);
    let third = interval(&last[1]);
    assert_eq!(
        (third.start_s, third.end_s),
        (2.0, 2.3),
        "the last ends with the run"
    );
    assert_eq!(
        (third.ended_ok, third.ended_failed, third.in_flight),
        (1, 2, 0)
    );
    near(Some(third.output_tps), 1.0 / 0.3);
    assert_eq!(third.ttft_p50_ms, None);
    assert_pct(third.itl_p50_ms, 850.0);
}

#[test]
fn every_writes_intervals_before_the_summary_of_their_run() {
    let opts = SummaryOptions {
        every_ns: Some(S),
        ..SummaryOptions::default()
    };
    let records = reduce_text(with_header(phased_header(""), &straddling()), &opts).unwrap();
    let types: Vec<&str> = records.iter().map(|r| r.type_name()).collect();
    assert_eq!(
        types,
        ["header", "interval", "interval", "interval", "interval", "summary"]
    );
    let tokens: u64 = records[1..5]
        .iter()
        .map(|r| interval(r).output_tokens)
        .sum();
    assert_eq!(tokens, 8, "every token event of the run, in some slice");
    assert_eq!(interval(&records[4]).end_s, 3.6);
}
