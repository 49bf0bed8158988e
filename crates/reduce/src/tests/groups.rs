//! Repeated runs: group summaries with exactly known spreads, pooled percentiles equal to those
//! of one run holding every request, bootstrap intervals, sweeps and `--no-group`.

use super::*;
use crate::group::t975;
use crate::RunsOptions;
use tokenpipe_format::Record;

/// A fire header of run `run_id` whose arrivals ran at `concurrency`.
fn header_at(run_id: &str, concurrency: u32) -> String {
    // Repeats differ in seed, start, argv, run ids and fire's prompt salt; none of them splits a
    // group.
    let seed: u32 = run_id.bytes().map(u32::from).sum();
    format!(
        r#"{{"type":"header","format_major":1,"tool":"fire","tool_version":"0.1.0","run_id":"{run_id}","seed":{seed},"started_at":"2026-11-18T11:06:4{concurrency}.000000000Z","params":{{"url":"http://x","salt":"{run_id} words"}},"upstream":[{{"format_major":1,"tool":"arrivals","tool_version":"0.1.0","run_id":"a-{run_id}","argv":["arrivals","{run_id}"],"params":{{"model":"m-7b","concurrency":{concurrency}}}}}]}}"#
    )
}

/// One request per TTFT in `ttfts_ms`, each sent 100 ms after the last, with two tokens 10 ms
/// apart and done 20 ms after its first token.
fn requests(ttfts_ms: &[u64]) -> Vec<String> {
    let mut lines = vec![];
    for (i, &ttft) in ttfts_ms.iter().enumerate() {
        let (id, at) = (i as u64, 1_000 * MS + 100 * MS * i as u64);
        lines.push(sent(id, at, at));
        lines.push(token(id, at + ttft * MS, 1));
        lines.push(token(id, at + (ttft + 10) * MS, 1));
        lines.push(done(
            id,
            at + (ttft + 20) * MS,
            true,
            r#","prompt_tokens":10,"completion_tokens":2"#,
        ));
    }
    lines
}

fn run_text(header: String, lines: &[String]) -> String {
    let mut s = header;
    s.push('\n');
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    s
}

/// Reduces one stream made of `texts`, with the given choices; returns the records written
/// and the warnings.
pub(super) fn reduce_text(
    texts: &[String],
    opts: &SummaryOptions,
    runs: RunsOptions,
) -> Result<(Vec<Record>, String), crate::Error> {
    drive(vec![("<stdin>", texts.concat())], &[], opts, runs)
}

pub(super) fn summaries(records: &[Record]) -> Vec<&Summary> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::Summary(s) => Some(&**s),
            _ => None,
        })
        .collect()
}

fn three_runs() -> Vec<String> {
    [("r1", 10), ("r2", 20), ("r3", 30)]
        .iter()
        .map(|(id, ttft)| run_text(header_at(id, 4), &requests(&[*ttft])))
        .collect()
}

#[test]
fn three_runs_give_mean_sample_sd_cv_and_t_interval() {
    let (records, warn) = reduce_text(
        &three_runs(),
        &SummaryOptions::default(),
        RunsOptions::default(),
    )
    .unwrap();
    assert_eq!(warn, "");
    let kinds: Vec<&str> = records.iter().map(Record::type_name).collect();
    assert_eq!(
        kinds,
        ["header", "summary", "header", "summary", "header", "summary", "header", "summary"]
    );
    let all = summaries(&records);
    let (runs, group) = (&all[..3], all[3]);
    assert!(runs
        .iter()
        .all(|s| s.runs.is_empty() && s.across_runs.is_empty()));
    assert_eq!(group.runs, ["r1", "r2", "r3"]);
    assert_eq!(group.label, "m-7b");
    assert!(group.run_id.starts_with("group-"), "{}", group.run_id);
    let Record::Header(h) = &records[6] else {
        panic!("{records:?}")
    };
    assert_eq!(
        (h.tool.as_str(), h.run_id.clone()),
        ("reduce", format!("{}-reduce", group.run_id))
    );
    // TTFT means 10, 20, 30 ms: mean 20, sample sd √((100 + 0 + 100) / 2) = 10, CV 50 %.
    let ttft = &group.across_runs["ttft_mean_ms"];
    assert_eq!(
        (ttft.n, ttft.mean, ttft.sd, ttft.cv_pct),
        (3, 20.0, 10.0, Some(50.0))
    );
    let half = 4.3027 * 10.0 / 3f64.sqrt();
    assert!(
        (ttft.ci95[0] - (20.0 - half)).abs() < 1e-9 && (ttft.ci95[1] - (20.0 + half)).abs() < 1e-9,
        "{ttft:?}"
    );
    // Durations 30, 40, 50 ms; request throughputs 1/0.03, 1/0.04, 1/0.05.
    let d = &group.across_runs["duration_s"];
    assert!(
        (d.mean - 0.04).abs() < 1e-12 && (d.sd - 0.01).abs() < 1e-12,
        "{d:?}"
    );
    let tput = [1.0 / 0.03, 1.0 / 0.04, 1.0 / 0.05];
    let mean = tput.iter().sum::<f64>() / 3.0;
    let sd = (tput.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
    let rt = &group.across_runs["request_throughput_per_s"];
    assert!(
        (rt.mean - mean).abs() < 1e-9 && (rt.sd - sd).abs() < 1e-9,
        "{rt:?}"
    );
    assert!(
        group.across_runs.contains_key("ttft_p99_ms")
            && group.across_runs.contains_key("requests_ok")
    );
    // Counts are summed; the pooled rate is over the summed durations.
    assert_eq!(
        (group.requests_ok, group.output_tokens, group.input_tokens),
        (3, 6, 30)
    );
    assert!((group.duration_s - 0.12).abs() < 1e-12);
    assert!((group.request_throughput_per_s - 25.0).abs() < 1e-9);
    assert_eq!(t975(2), 4.3027);
}

#[test]
fn pooled_percentiles_equal_one_run_holding_every_request() {
    let (records, _) = reduce_text(
        &three_runs(),
        &SummaryOptions::default(),
        RunsOptions::default(),
    )
    .unwrap();
    let group = summaries(&records)[3].clone();
    let one = run_text(header_at("all", 4), &requests(&[10, 20, 30]));
    let (records, _) =
        reduce_text(&[one], &SummaryOptions::default(), RunsOptions::default()).unwrap();
    let single = summaries(&records)[0];
    for metric in ["ttft", "tpot", "itl", "e2el", "dispatch_lag"] {
        for stat in [
            StatName::Mean,
            StatName::Std,
            StatName::Min,
            StatName::Max,
            StatName::Percentile(50.0),
            StatName::Percentile(90.0),
            StatName::Percentile(99.0),
        ] {
            let (g, s) = (group.stat(metric, stat), single.stat(metric, stat));
            let same = match (g, s) {
                (Some(g), Some(s)) => (g - s).abs() <= 1e-9 * s.abs().max(1.0),
                (g, s) => g == s,
            };
            assert!(same, "{metric} {stat:?}: group {g:?}, one run {s:?}");
        }
    }
    // Rates and ratios keep their own units in the group, as in each run.
    assert!(single.stat_in("user_tps", StatName::Mean, "tps").is_some());
    for (metric, unit) in [
        ("user_tps", "tps"),
        ("prefill_tps", "tps"),
        ("itl_cv", "ratio"),
    ] {
        for stat in [StatName::Mean, StatName::Max, StatName::Percentile(50.0)] {
            let (g, s) = (
                group.stat_in(metric, stat, unit),
                single.stat_in(metric, stat, unit),
            );
            let same = match (g, s) {
                (Some(g), Some(s)) => (g - s).abs() <= 1e-9 * s.abs().max(1.0),
                (g, s) => g == s,
            };
            assert!(same, "{metric} {stat:?}: group {g:?}, one run {s:?}");
        }
        assert_eq!(
            group.stat(metric, StatName::Mean),
            None,
            "no {metric}_mean_ms"
        );
    }
    // Pooled p50 is the middle request's, not an average of the runs' p50s.
    assert_pct(group.stat("ttft", StatName::Percentile(50.0)), 20.0);
    assert_eq!(group.histograms["ttft"].count, 3);
    assert_eq!(group.itl_jitter, single.itl_jitter);
}

#[test]
fn bootstrap_intervals_hold_the_pooled_percentiles_and_repeat() {
    // Three runs of 40 requests with TTFTs spread from 10 to 129 ms.
    let texts: Vec<String> = (0..3u64)
        .map(|r| {
            let ttfts: Vec<u64> = (0..40).map(|i| 10 + 3 * i + r).collect();
            run_text(header_at(&format!("r{r}"), 4), &requests(&ttfts))
        })
        .collect();
    let opts = SummaryOptions::default();
    let (first, _) = reduce_text(&texts, &opts, RunsOptions::default()).unwrap();
    let (again, _) = reduce_text(&texts, &opts, RunsOptions::default()).unwrap();
    let (group, repeat) = (summaries(&first)[3], summaries(&again)[3]);
    assert_eq!(group.percentile_ci95, repeat.percentile_ci95);
    for p in [50.0, 90.0, 99.0] {
        let key = tokenpipe_format::stat_key("ttft", StatName::Percentile(p), "ms");
        let [lo, hi] = group.percentile_ci95[&key];
        let value = group.stat("ttft", StatName::Percentile(p)).unwrap();
        assert!(
            lo <= value && value <= hi,
            "{key}: {value} not in [{lo}, {hi}]"
        );
    }
    let [lo, hi] = group.percentile_ci95["ttft_p50_ms"];
    assert!(
        lo < hi,
        "the median of 120 spread values varies between replicates"
    );
    assert!(group.percentile_ci95.contains_key("e2el_p99_ms"));
    // The same interval from the histogram a summary carries: a group's, and one run's own.
    for p in [50.0, 99.0] {
        let key = tokenpipe_format::stat_key("ttft", StatName::Percentile(p), "ms");
        assert_eq!(
            crate::summary_interval(group, "ttft", p),
            Some(group.percentile_ci95[&key])
        );
        let one = summaries(&first)[0];
        let [lo, hi] = crate::summary_interval(one, "ttft", p).unwrap();
        let value = one.stat("ttft", StatName::Percentile(p)).unwrap();
        assert!(
            lo <= value && value <= hi,
            "one run's {key}: {value} not in [{lo}, {hi}]"
        );
    }
    assert_eq!(crate::summary_interval(group, "no_such_metric", 50.0), None);
}

#[test]
fn a_sweep_forms_one_group_per_configuration() {
    let texts = vec![
        run_text(header_at("c1-a", 1), &requests(&[10])),
        run_text(header_at("c2-a", 2), &requests(&[20])),
        run_text(header_at("c1-b", 1), &requests(&[30])),
        run_text(header_at("c2-b", 2), &requests(&[40])),
        run_text(header_at("c3-a", 3), &requests(&[50])),
    ];
    let (records, _) =
        reduce_text(&texts, &SummaryOptions::default(), RunsOptions::default()).unwrap();
    let all = summaries(&records);
    assert_eq!(all.len(), 7, "five runs and two groups");
    assert_eq!(all[5].runs, ["c1-a", "c1-b"]);
    assert_eq!(all[6].runs, ["c2-a", "c2-b"]);
    assert_eq!(all[5].across_runs["ttft_mean_ms"].mean, 20.0);
    assert_eq!(all[6].across_runs["ttft_mean_ms"].mean, 30.0);
}

#[test]
fn no_group_and_no_histograms() {
    let opts = SummaryOptions::default();
    let (records, _) = reduce_text(&three_runs(), &opts, RunsOptions { groups: false }).unwrap();
    assert_eq!(summaries(&records).len(), 3);
    let bare = SummaryOptions {
        histograms: false,
        ..opts
    };
    let (records, _) = reduce_text(&three_runs(), &bare, RunsOptions::default()).unwrap();
    let all = summaries(&records);
    assert!(all.iter().all(|s| s.histograms.is_empty()));
    // The group still pools the runs exactly: the summaries were built with histograms.
    assert_pct(all[3].stat("ttft", StatName::Percentile(50.0)), 20.0);
    assert_eq!(all[3].across_runs["ttft_mean_ms"].n, 3);
}
