//! What llama-benchy's figures read from the run's headers: the expected prompt length
//! (`input_tokens + depth − adapt_tokens`), the network latency fire measured, and whether
//! fire's token counts are exact per event (`stream_usage`).

use super::*;
use crate::{llama_benchy_prompt_tokens, LlamaBenchyOptions};
use tokenpipe_format::LlamaBenchy;

/// The figures of `lines` under a fire header with `fire_params` over arrivals' `arrivals`.
fn figures_of(
    fire_params: &str,
    arrivals: &str,
    lines: &[String],
    opts: LlamaBenchyOptions,
) -> LlamaBenchy {
    let s = super::llama_benchy::run_under(fire_params, arrivals, lines, opts);
    s.llama_benchy.expect("a llama_benchy member")
}

/// One batch of one: sent at 0, first event at 40 ms, content events at 50 (3 tokens), 60 and
/// 80 (1 each), an empty event at 70; usage says `prompt` prompt and 6 completion tokens.
fn one_request(prompt: u64) -> Vec<String> {
    let ms = |t: u64| t * MS;
    vec![
        sent(1, 0, 0),
        token(1, ms(50), 3),
        token(1, ms(60), 1),
        format!(
            r#"{{"type":"token","id":1,"at_ns":{},"tokens":1,"empty":true}}"#,
            ms(70)
        ),
        token(1, ms(80), 1),
        done(
            1,
            ms(90),
            true,
            &format!(
                r#","batch":0,"first_event_ns":{},"prompt_tokens":{prompt},"completion_tokens":6"#,
                ms(40)
            ),
        ),
    ]
}

fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= want.abs() * 1e-12,
        "{what}: got {got}, want {want}"
    );
}

#[test]
fn prompt_tokens_are_the_servers_only_within_20_percent() {
    let e = Some(100);
    for (usage, want) in [
        (Some(119), 119),
        (Some(81), 81),
        (Some(100), 100),
        (Some(120), 100),
        (Some(80), 100),
        (Some(500), 100),
        (Some(0), 100),
        (None, 100),
    ] {
        assert_eq!(
            llama_benchy_prompt_tokens(e, usage),
            Some(want),
            "{usage:?}"
        );
    }
    assert_eq!(llama_benchy_prompt_tokens(None, Some(90)), Some(90));
    assert_eq!(llama_benchy_prompt_tokens(None, Some(0)), None);
    assert_eq!(llama_benchy_prompt_tokens(None, None), None);
}

#[test]
fn the_expected_prompt_length_adds_the_depth_and_takes_off_the_adapt_step() {
    let arrivals = r#"{"batch":1,"runs":1,"input_tokens":1000,"depth":1000}"#;
    // Expected 1000 + 1000 − 21 = 1979. The server's 1700 is within 20 % of it (> 1583.2):
    // taken; its 1500 is not: 1979 is. TTFR 40 ms.
    let pp = |prompt, fire: &str| {
        let b = figures_of(
            fire,
            arrivals,
            &one_request(prompt),
            LlamaBenchyOptions::default(),
        );
        b.pp_tps.expect("pp").mean
    };
    let fire = r#"{"url":"http://x","adapt_tokens":21}"#;
    close(pp(1700, fire), 1700.0 / 0.040, "in range");
    close(
        pp(1500, fire),
        1979.0 / 0.040,
        "out of range: the expected length",
    );
    // Without the adapt step 2000 is expected: 1601 is within 20 % (strictly), 1600 is not.
    close(
        pp(1601, r#"{"url":"http://x"}"#),
        1601.0 / 0.040,
        "2000 expected",
    );
    close(
        pp(1600, r#"{"url":"http://x"}"#),
        2000.0 / 0.040,
        "exactly 20 % off",
    );
}

#[test]
fn fires_measured_latency_is_subtracted_unless_net_latency_overrides_it() {
    let arrivals = r#"{"batch":1,"runs":1,"input_tokens":100}"#;
    let fire = r#"{"url":"http://x","net_latency_ms":2.5}"#;
    let b = figures_of(
        fire,
        arrivals,
        &one_request(100),
        LlamaBenchyOptions::default(),
    );
    assert_eq!(b.net_latency_ms, 2.5);
    // est_ppt = 40 − 2.5 ms; TTFR and e2e_ttft keep it.
    close(b.est_ppt_ms.unwrap().mean, 37.5, "est_ppt");
    close(b.ttfr_ms.unwrap().mean, 40.0, "ttfr");
    close(b.e2e_ttft_ms.unwrap().mean, 50.0, "e2e_ttft");
    close(b.pp_tps.unwrap().mean, 100.0 / 0.0375, "pp");
    let given = LlamaBenchyOptions {
        net_latency_ns: Some(10 * MS),
        ..LlamaBenchyOptions::default()
    };
    let b = figures_of(fire, arrivals, &one_request(100), given);
    assert_eq!(b.net_latency_ms, 10.0);
    close(
        b.est_ppt_ms.unwrap().mean,
        30.0,
        "est_ppt with --net-latency",
    );
    // --net-latency 0 is a choice, not an absence.
    let zero = LlamaBenchyOptions {
        net_latency_ns: Some(0),
        ..LlamaBenchyOptions::default()
    };
    let b = figures_of(fire, arrivals, &one_request(100), zero);
    assert_eq!(b.net_latency_ms, 0.0);
    // Neither: 0.
    let b = figures_of(
        r#"{"url":"http://x"}"#,
        arrivals,
        &one_request(100),
        LlamaBenchyOptions::default(),
    );
    assert_eq!(b.net_latency_ms, 0.0);
    close(b.est_ppt_ms.unwrap().mean, 40.0, "est_ppt without latency");
}

#[test]
fn continuous_usage_counts_each_events_tokens_and_otherwise_usage_is_spread() {
    let arrivals = r#"{"batch":1,"runs":1,"input_tokens":100}"#;
    // Usage spread: 6 stamps from 50 to 80 ms, every 6 ms: tg = 5 / 0.030; peak 6 / 0.030.
    let b = figures_of(
        r#"{"url":"http://x","stream_usage":"on"}"#,
        arrivals,
        &one_request(100),
        LlamaBenchyOptions::default(),
    );
    close(b.tg_tps.unwrap().mean, 5.0 / 0.030, "tg, usage spread");
    close(b.peak_tps.unwrap().mean, 6.0 / 0.030, "peak, usage spread");
    close(
        b.peak_tps_request.unwrap().mean,
        6.0 / 0.030,
        "peak per request",
    );
    // Exact counts: 50, 50, 50, 60, 80 (the empty event's token left out, as llama-benchy
    // leaves out chunks without text): decode tokens 2 over 30 ms; peak 5 / 0.030.
    let b = figures_of(
        r#"{"url":"http://x","stream_usage":"continuous"}"#,
        arrivals,
        &one_request(100),
        LlamaBenchyOptions::default(),
    );
    close(b.tg_tps.unwrap().mean, 2.0 / 0.030, "tg, exact counts");
    close(
        b.tg_tps_batch.unwrap().mean,
        2.0 / 0.030,
        "tg per batch, exact counts",
    );
    close(b.peak_tps.unwrap().mean, 5.0 / 0.030, "peak, exact counts");
    // A header that does not say is taken at its word: the exact-count branch.
    let b = figures_of(
        r#"{"url":"http://x"}"#,
        arrivals,
        &one_request(100),
        LlamaBenchyOptions::default(),
    );
    close(b.tg_tps.unwrap().mean, 2.0 / 0.030, "tg, no stream_usage");
}

/// Two batches of two under arrivals' `warmup_batches: 1`: batch 0 (sent at 0, 50 ms TTFT,
/// 4 tokens to 80 ms) warms up; batch 1 (sent at 1000, 20 ms TTFT, 2 tokens to 1030) counts.
fn warmup_run() -> String {
    let ms = |t: u64| t * MS;
    let mut text = r#"{"type":"header","format_major":1,"tool":"fire","tool_version":"0.1.0","run_id":"run-w","params":{"url":"http://x"},"upstream":[{"format_major":1,"tool":"arrivals","tool_version":"0.1.0","run_id":"a","params":{"batch":2,"runs":1,"warmup_batches":1,"input_tokens":10}}]}"#.to_string();
    let mut lines = Vec::new();
    for (batch, ids, start, first, last) in [(0, [1, 2], 0, 50, 80), (1, [3, 4], 1000, 1020, 1030)]
    {
        for id in ids {
            lines.push(sent(id, ms(start), ms(start)));
        }
        for id in ids {
            let n = if batch == 0 { 4 } else { 2 };
            lines.push(token(id, ms(first), 1));
            for k in 1..n {
                lines.push(token(id, ms(first + (last - first) * k / (n - 1)), 1));
            }
            let usage = format!(r#","batch":{batch},"prompt_tokens":10,"completion_tokens":{n}"#);
            lines.push(done(id, ms(last + 5), true, &usage));
        }
    }
    for l in lines {
        text.push('\n');
        text.push_str(&l);
    }
    text.push('\n');
    text
}

fn summary_with(window: crate::aggregate::timing::window::WindowChoice) -> Summary {
    let opts = SummaryOptions {
        window,
        ..SummaryOptions::default()
    };
    let (records, _) = drive(vec![("w", warmup_run())], &[], &opts, Default::default()).unwrap();
    let mut summaries = records.into_iter().filter_map(|r| match r {
        tokenpipe_format::Record::Summary(s) => Some(*s),
        _ => None,
    });
    summaries.next().expect("a summary")
}

#[test]
fn the_warmup_batches_are_left_out_of_every_figure_unless_phase_all() {
    let s = summary_with(Default::default());
    assert_eq!((s.requests_ok, s.requests_scheduled), (2, Some(2)));
    assert_eq!(s.output_tokens, 4, "batch 1's tokens only");
    assert_eq!(s.requests_outside_window, Some(2));
    let w = s.window.as_ref().expect("the measured window");
    assert_eq!(
        (w.name.as_str(), w.start_s, w.end_s),
        ("after_warmup", 1.0, 1.035)
    );
    close(
        s.duration_s,
        0.035,
        "duration: batch 1's send to its last done",
    );
    close(
        s.stat("ttft", StatName::Mean).unwrap(),
        20.0,
        "ttft of batch 1",
    );
    let b = s.llama_benchy.as_ref().unwrap();
    assert_eq!(b.batches, 1);
    // tg per batch: 2 decode tokens over 1020 → 1030 ms.
    close(b.tg_tps.as_ref().unwrap().mean, 200.0, "tg of batch 1");
    close(b.ttfr_ms.unwrap().mean, 20.0, "ttfr of batch 1");

    let all = summary_with(crate::aggregate::timing::window::WindowChoice::All);
    assert_eq!((all.requests_ok, all.output_tokens), (4, 12));
    assert_eq!((all.window, all.requests_outside_window), (None, None));
    assert_eq!(all.llama_benchy.unwrap().batches, 2);
}
