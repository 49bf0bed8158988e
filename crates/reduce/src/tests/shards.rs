//! Shards: the parts of one plan, on clocks started at different instants, merge into the
//! summary of the one run they split; missing parts warn; parts sharing a request are refused.

use super::groups::{reduce_text, summaries};
use super::*;
use crate::RunsOptions;

/// A fire header of part `index` of `count`, started `start_ms` after 11:06:40.
fn part_header(run_id: &str, index: u32, count: u32, start_ms: u64) -> String {
    format!(
        r#"{{"type":"header","format_major":1,"tool":"fire","tool_version":"0.1.0","run_id":"{run_id}","started_at":"2026-11-18T11:06:40.{start_ms:03}000000Z","shard":{{"index":{index},"count":{count}}},"params":{{"url":"http://x"}},"upstream":[{{"format_major":1,"tool":"arrivals","tool_version":"0.1.0","run_id":"a-{index}","seed":5,"shard":{{"index":{index},"count":{count}}},"params":{{"model":"m-7b","rate_per_s":4}}}}]}}"#
    )
}

/// Request `id` on a clock started at 0: sent at 100·id ms, tokens after 30 + 5·id ms and 10 ms
/// later, done 10 ms after that.
fn request(id: u64, clock_start_ms: u64) -> Vec<String> {
    let at = (100 * id + 200 - clock_start_ms) * MS;
    let ttft = (30 + 5 * id) * MS;
    vec![
        sent(id, at - MS, at),
        token(id, at + ttft, 1),
        token(id, at + ttft + 10 * MS, 2),
        done(
            id,
            at + ttft + 20 * MS,
            true,
            r#","prompt_tokens":7,"completion_tokens":3"#,
        ),
    ]
}

fn text(header: String, ids: &[u64], clock_start_ms: u64) -> String {
    let mut s = header;
    s.push('\n');
    for &id in ids {
        for l in request(id, clock_start_ms) {
            s.push_str(&l);
            s.push('\n');
        }
    }
    s
}

#[test]
fn two_shards_started_apart_merge_into_the_single_run() {
    let whole = text(header("whole"), &[0, 1, 2, 3, 4, 5], 0);
    // Part 1 started 150 ms after part 0, so its clock reads 150 ms less; it is read first.
    let part1 = text(part_header("p1", 1, 2, 150), &[1, 3, 5], 150);
    let part0 = text(part_header("p0", 0, 2, 0), &[0, 2, 4], 0);
    let (records, warn) = reduce_text(
        &[part1, part0],
        &SummaryOptions::default(),
        RunsOptions::default(),
    )
    .unwrap();
    assert_eq!(warn, "");
    let kinds: Vec<&str> = records.iter().map(|r| r.type_name()).collect();
    assert_eq!(kinds, ["header", "summary"], "one merged run, no group");
    let merged = summaries(&records)[0];
    assert_eq!(merged.shards, Some(2));
    assert_eq!(merged.shard_runs, ["p1", "p0"]);
    assert!(merged.shards_missing.is_empty());
    assert_eq!(merged.run_id, "p1-merged");
    assert_eq!(merged.label, "m-7b");
    let (records, _) =
        reduce_text(&[whole], &SummaryOptions::default(), RunsOptions::default()).unwrap();
    let single = summaries(&records)[0];
    assert_eq!(
        (
            merged.requests_ok,
            merged.requests_failed,
            merged.input_tokens,
            merged.output_tokens
        ),
        (
            single.requests_ok,
            single.requests_failed,
            single.input_tokens,
            single.output_tokens
        )
    );
    assert_eq!(merged.requests_ok, 6);
    // The union window: first send of part 0 to last done of part 1, on one clock.
    assert!(
        (merged.duration_s - single.duration_s).abs() < 1e-12,
        "{} vs {}",
        merged.duration_s,
        single.duration_s
    );
    assert!(
        (single.duration_s - 0.575).abs() < 1e-12,
        "{}",
        single.duration_s
    );
    assert!(
        (merged.output_throughput_tokens_per_s - single.output_throughput_tokens_per_s).abs()
            < 1e-9
    );
    for metric in ["ttft", "tpot", "itl", "e2el", "dispatch_lag"] {
        for p in [50.0, 90.0, 99.0] {
            let stat = StatName::Percentile(p);
            assert_eq!(
                merged.stat(metric, stat),
                single.stat(metric, stat),
                "{metric} p{p}"
            );
        }
        let (m, s) = (
            merged.stat(metric, StatName::Mean),
            single.stat(metric, StatName::Mean),
        );
        assert!(
            (m.unwrap() - s.unwrap()).abs() < 1e-9,
            "{metric}: {m:?} {s:?}"
        );
    }
}

#[test]
fn a_missing_shard_warns_and_the_rest_is_summarised() {
    let part0 = text(part_header("p0", 0, 3, 0), &[0, 3], 0);
    let part2 = text(part_header("p2", 2, 3, 20), &[2, 5], 20);
    let (records, warn) = reduce_text(
        &[part0, part2],
        &SummaryOptions::default(),
        RunsOptions::default(),
    )
    .unwrap();
    assert!(warn.contains("shard(s) 1 of 3 missing"), "{warn}");
    let merged = summaries(&records)[0];
    assert_eq!((merged.requests_ok, merged.shards), (4, Some(3)));
    assert_eq!(merged.shards_missing, [1]);
}

#[test]
fn repeats_of_a_sharded_plan_merge_per_repeat_and_group() {
    let mut texts = vec![];
    for r in 0..2 {
        texts.push(text(part_header(&format!("r{r}p0"), 0, 2, 0), &[0, 2], 0));
        texts.push(text(part_header(&format!("r{r}p1"), 1, 2, 5), &[1, 3], 5));
    }
    let (records, warn) =
        reduce_text(&texts, &SummaryOptions::default(), RunsOptions::default()).unwrap();
    assert_eq!(warn, "");
    let all = summaries(&records);
    assert_eq!(all.len(), 3, "{all:?}");
    assert_eq!(all[0].shard_runs, ["r0p0", "r0p1"]);
    assert_eq!(all[1].shard_runs, ["r1p0", "r1p1"]);
    assert_eq!(all[2].runs, ["r0p0-merged", "r1p0-merged"]);
    assert_eq!(all[2].requests_ok, 8);
}

#[test]
fn a_request_in_two_parts_is_bad_input() {
    let part0 = text(part_header("p0", 0, 2, 0), &[0, 1], 0);
    let part1 = text(part_header("p1", 1, 2, 0), &[1], 0);
    let err = reduce_text(
        &[part0, part1],
        &SummaryOptions::default(),
        RunsOptions::default(),
    )
    .unwrap_err();
    let message = tokenpipe_cli::message(&err);
    assert!(
        message.contains("request 1 is also in another shard"),
        "{message}"
    );
    assert!(message.contains("line"), "{message}");
    assert_eq!(
        tokenpipe_cli::ToolError::ending(&err),
        tokenpipe_cli::Ending::BadInput
    );
}

#[test]
fn a_part_a_day_before_the_first_is_refused() {
    let part0 = text(part_header("p0", 0, 2, 0), &[0], 0);
    let late = part_header("p1", 1, 2, 0).replace("2026-11-18T11:06:40", "2026-11-17T11:04:40");
    let part1 = text(late, &[1], 0);
    let err = reduce_text(
        &[part0, part1],
        &SummaryOptions::default(),
        RunsOptions::default(),
    )
    .unwrap_err();
    assert!(
        tokenpipe_cli::message(&err).contains("started 86520.000 s before shard 0"),
        "{err:?}"
    );
    assert!(
        matches!(
            err,
            crate::Error::Shard {
                source: crate::ShardError::TooEarly { .. },
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn a_run_between_two_parts_keeps_every_record_under_its_own_header() {
    let part0 = text(part_header("p0", 0, 2, 0), &[0, 2], 0);
    let between = stream(&two_requests());
    let part1 = text(part_header("p1", 1, 2, 3), &[1, 3], 3);
    let (records, warn) = reduce_text(
        &[part0, between, part1],
        &SummaryOptions::default(),
        RunsOptions::default(),
    )
    .unwrap();
    assert_eq!(warn, "");
    let ids: Vec<String> = records
        .iter()
        .map(|r| match r {
            tokenpipe_format::Record::Header(h) => format!("header {}", h.run_id),
            tokenpipe_format::Record::Summary(s) => format!("summary {}", s.run_id),
            other => other.type_name().to_string(),
        })
        .collect();
    assert_eq!(
        ids,
        [
            "header p0-merged-reduce",
            "header run-1-reduce",
            "summary run-1",
            "header p0-merged-reduce",
            "summary p0-merged",
        ]
    );
}

#[test]
fn parts_started_minutes_apart_merge_alike_in_either_order_and_are_not_comparable() {
    let part0 = text(part_header("p0", 0, 2, 0), &[0, 2], 0);
    // Two minutes later (61 s once split the run; -61 s was refused; which, by file order).
    let later = text(
        part_header("p1", 1, 2, 0).replace("11:06:40", "11:08:40"),
        &[1, 3],
        0,
    );
    let merged = |inputs: [&String; 2]| {
        let (records, _) = reduce_text(
            &[inputs[0].clone(), inputs[1].clone()],
            &SummaryOptions::default(),
            RunsOptions { groups: false },
        )
        .unwrap();
        let s = summaries(&records);
        assert_eq!(s.len(), 1, "one run of the plan");
        s[0].clone()
    };
    let (a, b) = (merged([&part0, &later]), merged([&later, &part0]));
    for s in [&a, &b] {
        assert_eq!(s.requests_ok, 4);
        assert_eq!(s.start_spread_ms, Some(120_000.0));
        let v = s.verdict.as_ref().unwrap();
        assert!(!v.comparable);
        assert!(
            v.reason
                .contains("parts started 120.0 s apart (limit 1.2 s)"),
            "{}",
            v.reason
        );
    }
    assert_eq!(a.duration_s, b.duration_s);
    // The same figures, to the last bits a sum taken in another order may differ in.
    let (sa, sb) = (
        serde_json::to_value(&a.stats).unwrap(),
        serde_json::to_value(&b.stats).unwrap(),
    );
    for (k, va) in sa.as_object().unwrap() {
        let (x, y) = (va.as_f64(), sb[k].as_f64());
        match (x, y) {
            (Some(x), Some(y)) => assert!((x - y).abs() <= 1e-9 * x.abs().max(1.0), "{k}"),
            _ => assert_eq!(va, &sb[k], "{k}"),
        }
    }
    assert_eq!(a.parts.len(), 2);
    assert_eq!(
        (a.parts[0].start_offset_ms, a.parts[1].start_offset_ms),
        (Some(0.0), Some(120_000.0))
    );
}
