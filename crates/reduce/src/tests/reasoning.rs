//! Reasoning and answer apart, and the prefix cache's hits from the usage, on hand-written runs
//! with exact timings.

use super::*;
use crate::aggregate::outcomes;
use tokenpipe_format::{Record, ResultRecord};

fn reasoning(id: u64, at_ns: u64) -> String {
    format!(r#"{{"type":"token","id":{id},"at_ns":{at_ns},"tokens":1,"reasoning":true}}"#)
}

fn reduce(lines: &[String], per_request: bool) -> (Vec<Record>, Summary) {
    let mut opts = SummaryOptions::default();
    opts.outcomes.per_request = per_request;
    reduce_with(lines, opts)
}

fn reduce_with(lines: &[String], opts: SummaryOptions) -> (Vec<Record>, Summary) {
    let mut agg = RunReducer::new(outcomes::aggregators(&opts));
    let mut written = Vec::new();
    let mut emit = |r: Record| -> std::io::Result<()> {
        written.push(r);
        Ok(())
    };
    let header = fold_text(&stream(lines), &mut agg, &mut emit).unwrap();
    let s = agg.finish_summary("l".into(), header.run_id, &opts, &mut Vec::new());
    (written, s)
}

/// Request 1, sent at 0: reasoning at 50, 60, 70 ms, answer at 80, 90, 110 ms, done at 110 ms,
/// usage 6 tokens of which the server says 3 were reasoning, 100 prompt tokens of which 64
/// were cached. Request 2, sent at 200 ms, has no reasoning: tokens at 230 and 240, done at
/// 240, 40 prompt tokens, 0 cached.
fn thinking() -> Vec<String> {
    vec![
        sent(1, 0, 0),
        reasoning(1, 50 * MS),
        reasoning(1, 60 * MS),
        reasoning(1, 70 * MS),
        token(1, 80 * MS, 1),
        token(1, 90 * MS, 1),
        token(1, 110 * MS, 1),
        done(
            1,
            110 * MS,
            true,
            r#","prompt_tokens":100,"completion_tokens":6,"reasoning_tokens":3,"answer_tokens":3,"cached_tokens":64"#,
        ),
        sent(2, 200 * MS, 200 * MS),
        token(2, 230 * MS, 1),
        token(2, 240 * MS, 1),
        done(
            2,
            240 * MS,
            true,
            r#","prompt_tokens":40,"completion_tokens":2,"cached_tokens":0"#,
        ),
    ]
}

#[test]
fn time_to_first_answer_reasoning_duration_and_answer_only_decode() {
    let (_, s) = reduce(&thinking(), false);
    // TTFT stays the first token of either kind: 50 and 30 ms.
    assert_eq!(s.stat("ttft", StatName::Max), Some(50.0));
    // TTFA: 80 ms, and request 2's TTFT (30 ms).
    assert_eq!(s.stat("ttfa", StatName::Mean), Some(55.0));
    assert_eq!(s.stat("ttfa", StatName::Max), Some(80.0));
    // Reasoning: 50 → 80 ms, request 1 only.
    assert_eq!(s.stat("reasoning_duration", StatName::Mean), Some(30.0));
    assert_eq!(s.samples["reasoning_duration"], 1);
    // Answer TPOT: (110 − 80) / (3 − 1) = 15 ms, and (40 − 30) / 1 = 10 ms.
    assert_eq!(s.stat("answer_tpot", StatName::Max), Some(15.0));
    assert_eq!(s.stat("answer_tpot", StatName::Min), Some(10.0));
    // Answer ITL: 10 and 20 ms after the reasoning, and request 2's 10 ms.
    assert_eq!(s.samples["answer_itl"], 3);
    assert_eq!(s.stat("answer_itl", StatName::Max), Some(20.0));
    // ITL is every gap: five in request 1, one in request 2.
    assert_eq!(s.samples["itl"], 6);
    assert_eq!((s.reasoning_tokens, s.answer_tokens), (Some(3), Some(5)));
    // The cache: 64 of 140 prompt tokens.
    assert_eq!(s.cached_prompt_tokens, Some(64));
    assert_eq!(s.cache_hit_ratio, Some(64.0 / 140.0));
}

#[test]
fn counted_from_events_when_the_done_says_nothing() {
    let mut lines = thinking();
    lines[7] = done(1, 110 * MS, true, r#","completion_tokens":6"#);
    let (_, s) = reduce(&lines, false);
    assert_eq!((s.reasoning_tokens, s.answer_tokens), (Some(3), Some(5)));
    // Request 2 still reported its cache: 0 of 40.
    assert_eq!(s.cached_prompt_tokens, Some(0));
    assert_eq!(s.cache_hit_ratio, Some(0.0));
}

#[test]
fn a_run_without_reasoning_or_cache_reports_keeps_its_summary() {
    let (_, plain) = reduce(&two_requests(), false);
    assert_eq!(plain.reasoning_tokens, None);
    assert_eq!(plain.cached_prompt_tokens, None);
    let json = serde_json::to_string(&plain).unwrap();
    for member in ["ttfa", "reasoning", "answer_", "cache"] {
        assert!(!json.contains(member), "{member} in {json}");
    }
}

#[test]
fn per_request_records_carry_them_only_where_they_exist() {
    let (written, _) = reduce(&thinking(), true);
    let results: Vec<&ResultRecord> = written
        .iter()
        .filter_map(|r| match r {
            Record::Result(r) => Some(r.as_ref()),
            _ => None,
        })
        .collect();
    assert_eq!(results[0].ttfa_ms, Some(80.0));
    assert_eq!(results[0].reasoning_duration_ms, Some(30.0));
    assert_eq!(results[0].reasoning_tokens, Some(3));
    assert_eq!(results[0].cache_hit_ratio, Some(0.64));
    assert_eq!(results[1].ttfa_ms, None);
    assert_eq!(results[1].cache_hit_ratio, Some(0.0));
    let (written, _) = reduce(&two_requests(), true);
    for r in written {
        let json = serde_json::to_string(&r).unwrap();
        assert!(!json.contains("ttfa") && !json.contains("cache"), "{json}");
    }
}

#[test]
fn a_gap_across_reasoning_is_not_the_answer_s() {
    // Answer at 10, reasoning at 20 and 30, answer at 40 and 45: one answer gap, 5 ms.
    let lines = vec![
        sent(1, 0, 0),
        token(1, 10 * MS, 1),
        reasoning(1, 20 * MS),
        reasoning(1, 30 * MS),
        token(1, 40 * MS, 1),
        token(1, 45 * MS, 1),
        done(1, 45 * MS, true, r#","completion_tokens":5"#),
    ];
    let (_, s) = reduce(&lines, false);
    assert_eq!(s.samples["answer_itl"], 1);
    assert_eq!(s.stat("answer_itl", StatName::Max), Some(5.0));
    // The first answer token is the first one, whatever came after it.
    assert_eq!(s.stat("ttfa", StatName::Max), Some(10.0));
    assert_eq!((s.reasoning_tokens, s.answer_tokens), (Some(2), Some(3)));
}

#[test]
fn an_slo_on_the_first_answer_token() {
    use crate::aggregate::outcomes::slo::{SloBound, SloMetric};
    let mut opts = SummaryOptions::default();
    opts.outcomes.slo = vec![SloBound {
        metric: SloMetric::Ttfa,
        bound_ns: 60e6,
    }];
    // Request 1's answer starts at 80 ms: not good; request 2's at 30 ms.
    let (_, s) = reduce_with(&thinking(), opts);
    assert_eq!(s.good_requests, Some(1));
    assert_eq!(s.slo.get("ttfa"), Some(&60.0));
}
