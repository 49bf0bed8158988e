//! The exposition read back: exact counts after known requests on virtual time.

use super::*;
use crate::engine::batching::curve::Curve;
use crate::engine::batching::model::Params;
use crate::engine::batching::Batching;
use crate::engine::profile::BatchingSettings;
use crate::engine::{Admission, Engine};
use std::collections::BTreeMap;
use std::time::Duration;
use tokenpipe_format::{parse_exposition, sum_series};

const MS: Duration = Duration::from_millis(1);

fn scrape(metrics: &Metrics, gauges: EngineGauges) -> BTreeMap<String, f64> {
    let text = metrics.render(gauges);
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        assert!(line.starts_with("vllm:"), "{line}");
        assert!(
            line.contains("model_name=\"m\\\"x\",engine=\"0\""),
            "{line}"
        );
    }
    parse_exposition(&text, "vllm:")
}

fn total(samples: &BTreeMap<String, f64>, name: &str) -> f64 {
    sum_series(samples, name, |_| true).unwrap_or_else(|| panic!("no {name}"))
}

/// `_bucket` values of `name` in the order written, with their `le`.
fn buckets(text: &str, name: &str) -> Vec<(String, f64)> {
    let prefix = format!("{name}_bucket{{");
    text.lines()
        .filter(|l| l.starts_with(&prefix))
        .map(|l| {
            let le = l.split("le=\"").nth(1).unwrap().split('"').next().unwrap();
            let v = l.rsplit(' ').next().unwrap().parse().unwrap();
            (le.to_string(), v)
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn known_requests_give_exact_counts_and_latencies() {
    let metrics = Arc::new(Metrics::new("m\"x", DEFAULT_MAX_MODEL_LEN));
    let clock = TokenTimer::tokio();
    // A streamed request: 7 prompt tokens, first token at 50 ms, then 3 more 5 ms apart.
    let mut a = Meter::start(metrics.clone(), clock.clone(), clock.now_ns(), 7);
    // One sent whole: 3 prompt tokens, 4 tokens at once at 20 ms.
    let mut b = Meter::start(metrics.clone(), clock.clone(), clock.now_ns(), 3);
    // One cut short after 1 token.
    let mut c = Meter::start(metrics.clone(), clock.clone(), clock.now_ns(), 2);
    let during = scrape(&metrics, EngineGauges::default());
    assert_eq!(total(&during, "vllm:num_requests_running"), 3.0);
    assert_eq!(total(&during, "vllm:generation_tokens_total"), 0.0);

    tokio::time::advance(20 * MS).await;
    b.sent(4);
    b.end(FinishReason::Length);
    tokio::time::advance(30 * MS).await;
    a.sent(1);
    c.sent(1);
    // Counted as they go: the prompts whose first token left, and every token handed over.
    let running = scrape(&metrics, EngineGauges::default());
    assert_eq!(total(&running, "vllm:prompt_tokens_total"), 12.0);
    assert_eq!(total(&running, "vllm:generation_tokens_total"), 6.0);
    assert_eq!(
        total(&running, "vllm:time_to_first_token_seconds_count"),
        3.0
    );
    drop(c);
    for _ in 0..3 {
        tokio::time::advance(5 * MS).await;
        a.sent(1);
    }
    a.end(FinishReason::Length);
    a.end(FinishReason::Abort); // no effect: already ended
    drop(a);

    let text = metrics.render(EngineGauges::default());
    let s = parse_exposition(&text, "vllm:");
    assert_eq!(total(&s, "vllm:num_requests_running"), 0.0);
    assert_eq!(total(&s, "vllm:prompt_tokens_total"), 12.0);
    assert_eq!(total(&s, "vllm:generation_tokens_total"), 9.0);
    let success = |reason: &str| {
        let label = format!("finished_reason=\"{reason}\"");
        sum_series(&s, "vllm:request_success_total", |k| k.contains(&label)).unwrap()
    };
    assert_eq!(
        (success("stop"), success("length"), success("abort")),
        (0.0, 2.0, 1.0)
    );
    assert_eq!((success("error"), success("repetition")), (0.0, 0.0));
    assert_eq!(total(&s, "vllm:time_to_first_token_seconds_count"), 3.0);
    let ttft_sum = total(&s, "vllm:time_to_first_token_seconds_sum");
    assert!((ttft_sum - 0.120).abs() < 1e-9, "{ttft_sum}");
    for name in [
        "vllm:inter_token_latency_seconds",
        "vllm:time_per_output_token_seconds",
    ] {
        assert_eq!(total(&s, &format!("{name}_count")), 3.0);
        let sum = total(&s, &format!("{name}_sum"));
        assert!((sum - 0.015).abs() < 1e-9, "{name}: {sum}");
        let b = buckets(&text, name);
        assert_eq!(b.len(), ITL_BUCKETS.len() + 1);
        // 5 ms gaps: every bucket from 0.01 up holds all three.
        assert_eq!(b[0], ("0.01".to_string(), 3.0));
    }
    // The aborted request is in no per-request histogram.
    assert_eq!(total(&s, "vllm:e2e_request_latency_seconds_count"), 2.0);
    let e2e = total(&s, "vllm:e2e_request_latency_seconds_sum");
    assert!((e2e - (0.065 + 0.020)).abs() < 1e-9, "{e2e}");
    assert_eq!(total(&s, "vllm:request_prompt_tokens_sum"), 10.0);
    assert_eq!(total(&s, "vllm:request_generation_tokens_count"), 2.0);
    assert_eq!(total(&s, "vllm:request_generation_tokens_sum"), 8.0);

    let ttft = buckets(&text, "vllm:time_to_first_token_seconds");
    assert_eq!(ttft.len(), TTFT_BUCKETS.len() + 1);
    // 20 ms is in le="0.02"; the two 50 ms ones only from le="0.06".
    let at = |le: &str| ttft.iter().find(|(l, _)| l == le).unwrap().1;
    assert_eq!(
        (at("0.02"), at("0.04"), at("0.06"), at("+Inf")),
        (1.0, 1.0, 3.0, 3.0)
    );
    let prompt = buckets(&text, "vllm:request_prompt_tokens");
    assert_eq!(prompt.first().unwrap().0, "1.0");
    assert_eq!(prompt[prompt.len() - 2].0, "100000.0");
    for (name, count) in [
        ("vllm:time_to_first_token_seconds", 3.0),
        ("vllm:e2e_request_latency_seconds", 2.0),
        ("vllm:request_prompt_tokens", 2.0),
        ("vllm:request_generation_tokens", 2.0),
    ] {
        let b = buckets(&text, name);
        assert!(b.windows(2).all(|w| w[0].1 <= w[1].1), "{name}: {b:?}");
        assert_eq!(b.last().unwrap(), &("+Inf".to_string(), count), "{name}");
    }
}

#[test]
fn gauges_come_from_the_engine_when_it_keeps_them() {
    let metrics = Metrics::new("m\"x", DEFAULT_MAX_MODEL_LEN);
    let gauges = EngineGauges {
        running: Some(4),
        waiting: 2,
        kv_cache_usage: 0.25,
        ..EngineGauges::default()
    };
    let s = scrape(&metrics, gauges);
    assert_eq!(total(&s, "vllm:num_requests_running"), 4.0);
    assert_eq!(total(&s, "vllm:num_requests_waiting"), 2.0);
    assert_eq!(total(&s, "vllm:kv_cache_usage_perc"), 0.25);
    assert_eq!(total(&s, "vllm:gpu_cache_usage_perc"), 0.25);
}

#[test]
fn the_batching_engine_reports_its_queue_and_cache() {
    let engine = Batching::new(BatchingSettings {
        profile: "test".into(),
        params: Params {
            decode_ms: Curve::linear(10.0, 0.0).unwrap(),
            prefill_tps: Curve::linear(1_000_000.0, 0.0).unwrap(),
            max_num_seqs: 1,
            max_batched_tokens: 100_000,
            kv_tokens: 1_000,
            prefix_cache: false,
        },
        max_model_len: 1_000,
    });
    for _ in 0..3 {
        engine.admit(&Admission {
            arrival_ns: 0,
            prompt_tokens: 100,
            max_tokens: 10,
            prefix_blocks: Vec::new(),
        });
    }
    let g = Engine::gauges(&engine, 1);
    assert_eq!((g.running, g.waiting), (Some(1), 2));
    assert!(g.kv_cache_usage > 0.0 && g.kv_cache_usage <= 1.0, "{g:?}");
}

#[test]
fn one_two_five_buckets_are_vllms() {
    assert_eq!(one_two_five(100), [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]);
    assert_eq!(one_two_five(DEFAULT_MAX_MODEL_LEN).len(), 16);
    assert_eq!(bucket(&[1.0, 2.0], 1.0), 0);
    assert_eq!(bucket(&[1.0, 2.0], 1.5), 1);
    assert_eq!(bucket(&[1.0, 2.0], 9.0), 2);
}

#[test]
fn prefix_cache_counters_only_with_a_prefix_cache() {
    let metrics = Metrics::new("m\"x", DEFAULT_MAX_MODEL_LEN);
    let none = scrape(&metrics, EngineGauges::default());
    assert!(none.keys().all(|k| !k.contains("prefix_cache")), "{none:?}");
    let gauges = EngineGauges {
        prefix_cache: Some(crate::engine::PrefixCacheCounts {
            queries: 300,
            hits: 96,
        }),
        ..EngineGauges::default()
    };
    let s = scrape(&metrics, gauges);
    assert_eq!(total(&s, "vllm:prefix_cache_queries_total"), 300.0);
    assert_eq!(total(&s, "vllm:prefix_cache_hits_total"), 96.0);
    assert_eq!(total(&s, "vllm:gpu_prefix_cache_queries_total"), 300.0);
    assert_eq!(total(&s, "vllm:gpu_prefix_cache_hits_total"), 96.0);
}
