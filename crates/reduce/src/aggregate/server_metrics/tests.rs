use super::*;

/// A scrape at time 0 of `pairs` (series → value), for this module's tests and its children's.
pub(super) fn scrape(phase: ScrapePhase, pairs: &[(&str, f64)]) -> ServerMetrics {
    ServerMetrics {
        at_ns: 0,
        phase,
        url: "http://h/metrics".into(),
        samples: pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
    }
}

#[test]
fn deltas_and_means_between_the_two_scrapes() {
    let l = "{model_name=\"m\",engine=\"0\"}";
    let key = |name: &str| format!("{name}{l}");
    let ok = "vllm:request_success_total{model_name=\"m\",engine=\"0\",finished_reason=\"length\"}";
    let abort =
        "vllm:request_success_total{model_name=\"m\",engine=\"0\",finished_reason=\"abort\"}";
    let before = [
        (key("vllm:prompt_tokens_total"), 100.0),
        (key("vllm:generation_tokens_total"), 50.0),
        (ok.to_string(), 2.0),
        (abort.to_string(), 1.0),
        (key("vllm:time_to_first_token_seconds_count"), 2.0),
        (key("vllm:time_to_first_token_seconds_sum"), 0.1),
        (key("vllm:e2e_request_latency_seconds_count"), 2.0),
        (key("vllm:e2e_request_latency_seconds_sum"), 1.0),
        (key("vllm:time_per_output_token_seconds_count"), 10.0),
        (key("vllm:time_per_output_token_seconds_sum"), 0.05),
    ];
    let after = [
        (key("vllm:prompt_tokens_total"), 130.0),
        (key("vllm:generation_tokens_total"), 90.0),
        (ok.to_string(), 6.0),
        (abort.to_string(), 3.0),
        (key("vllm:time_to_first_token_seconds_count"), 6.0),
        (key("vllm:time_to_first_token_seconds_sum"), 0.3),
        (key("vllm:e2e_request_latency_seconds_count"), 6.0),
        // went down: a restart, no figure
        (key("vllm:e2e_request_latency_seconds_sum"), 0.5),
        (key("vllm:time_per_output_token_seconds_count"), 30.0),
        (key("vllm:time_per_output_token_seconds_sum"), 0.15),
    ];
    let as_refs = |v: &[(String, f64)]| -> Vec<(String, f64)> { v.to_vec() };
    let mut a = ServerMetricsAggregator::default();
    let mut s = Summary::default();
    a.finish(&RunSpan::default(), &mut s, &mut vec![]);
    assert_eq!(s.server_prompt_tokens, None, "no scrapes, no figures");
    let to = |phase, v: Vec<(String, f64)>| {
        let pairs: Vec<(&str, f64)> = v.iter().map(|(k, x)| (k.as_str(), *x)).collect();
        scrape(phase, &pairs)
    };
    a.server_metrics(&to(ScrapePhase::Before, as_refs(&before)));
    a.server_metrics(&to(ScrapePhase::After, as_refs(&after)));
    a.finish(&RunSpan::default(), &mut s, &mut vec![]);
    assert_eq!(s.server_prompt_tokens, Some(30));
    assert_eq!(s.server_generation_tokens, Some(40));
    assert_eq!(s.server_requests_succeeded, Some(4));
    let ttft = s.server_ttft_mean_ms.unwrap();
    assert!((ttft - 50.0).abs() < 1e-9, "{ttft}");
    let itl = s.server_itl_mean_ms.unwrap();
    assert!((itl - 5.0).abs() < 1e-9, "{itl}");
    assert_eq!(s.server_e2el_mean_ms, None);
}

#[test]
fn llama_cpp_counters_give_the_token_counts() {
    let before = [
        ("llamacpp:prompt_tokens_total", 1000.0),
        ("llamacpp:prompt_tokens_cached_total", 40.0),
        ("llamacpp:tokens_predicted_total", 300.0),
        ("llamacpp:tokens_predicted_seconds_total", 1.0),
    ];
    let after = [
        ("llamacpp:prompt_tokens_total", 1400.0),
        ("llamacpp:prompt_tokens_cached_total", 52.0),
        ("llamacpp:tokens_predicted_total", 492.0),
        ("llamacpp:tokens_predicted_seconds_total", 1.5),
    ];
    let mut a = ServerMetricsAggregator::default();
    a.server_metrics(&scrape(ScrapePhase::Before, &before));
    a.server_metrics(&scrape(ScrapePhase::After, &after));
    let mut s = Summary::default();
    a.finish(&RunSpan::default(), &mut s, &mut vec![]);
    // Computed and cached prompt tokens together.
    assert_eq!(s.server_prompt_tokens, Some(412));
    assert_eq!(s.server_generation_tokens, Some(192));
    assert_eq!(s.server_requests_succeeded, None);
    assert_eq!(s.server_ttft_mean_ms, None);
    assert_eq!(s.server_itl_mean_ms, None);
    // Its cache: 12 of the 412 prompt tokens.
    assert_eq!(s.server_prefix_cache_queries, Some(412));
    assert_eq!(s.server_prefix_cache_hits, Some(12));
    let ratio = s.server_prefix_cache_hit_ratio.unwrap();
    assert!((ratio - 12.0 / 412.0).abs() < 1e-12, "{ratio}");
}

fn cache_figures(before: &[(&str, f64)], after: &[(&str, f64)]) -> Summary {
    let mut a = ServerMetricsAggregator::default();
    a.server_metrics(&scrape(ScrapePhase::Before, before));
    a.server_metrics(&scrape(ScrapePhase::After, after));
    let mut s = Summary::default();
    a.finish(&RunSpan::default(), &mut s, &mut vec![]);
    s
}

#[test]
fn prefix_cache_hits_from_vllm_s_counters_old_or_new_and_sglang_s_gauge() {
    let l = "{model_name=\"m\",engine=\"0\"}";
    let (q, h) = (
        format!("vllm:prefix_cache_queries_total{l}"),
        format!("vllm:prefix_cache_hits_total{l}"),
    );
    let (oq, oh) = (
        format!("vllm:gpu_prefix_cache_queries_total{l}"),
        format!("vllm:gpu_prefix_cache_hits_total{l}"),
    );
    // Both names with the same values (simserve, a vLLM between the two): counted once.
    let s = cache_figures(
        &[(&q, 100.0), (&h, 10.0), (&oq, 100.0), (&oh, 10.0)],
        &[(&q, 500.0), (&h, 310.0), (&oq, 500.0), (&oh, 310.0)],
    );
    assert_eq!(
        (s.server_prefix_cache_queries, s.server_prefix_cache_hits),
        (Some(400), Some(300))
    );
    assert_eq!(s.server_prefix_cache_hit_ratio, Some(0.75));
    let s = cache_figures(&[(&oq, 0.0), (&oh, 0.0)], &[(&oq, 64.0), (&oh, 16.0)]);
    assert_eq!(s.server_prefix_cache_hit_ratio, Some(0.25));
    // No lookups: counts, no ratio.
    let s = cache_figures(&[(&q, 5.0), (&h, 5.0)], &[(&q, 5.0), (&h, 5.0)]);
    assert_eq!(s.server_prefix_cache_queries, Some(0));
    assert_eq!(s.server_prefix_cache_hit_ratio, None);
    let s = cache_figures(
        &[("sglang:cache_hit_rate{model_name=\"m\"}", 0.1)],
        &[("sglang:cache_hit_rate{model_name=\"m\"}", 0.625)],
    );
    assert_eq!(s.server_prefix_cache_queries, None);
    assert_eq!(s.server_prefix_cache_hit_ratio, Some(0.625));
    let s = cache_figures(&[("x", 1.0)], &[("x", 2.0)]);
    assert_eq!(s.server_prefix_cache_hit_ratio, None);
}

fn at(url: &str, phase: ScrapePhase, prompt: f64) -> ServerMetrics {
    ServerMetrics {
        at_ns: 0,
        phase,
        url: url.into(),
        samples: [("vllm:prompt_tokens_total{engine=\"0\"}".to_string(), prompt)].into(),
    }
}

#[test]
fn parts_of_one_server_span_its_earliest_and_latest_scrape_in_any_order() {
    use ScrapePhase::{After, Before};
    let one = "http://a/metrics";
    // Two parts side by side on one server: 0 → 300 and 100 → 400 overlap; the run's
    // server counted 400, not 300 + 300, whichever part is read first.
    for order in [[0, 1], [1, 0]] {
        let parts = [
            [at(one, Before, 0.0), at(one, After, 300.0)],
            [at(one, Before, 100.0), at(one, After, 400.0)],
        ];
        let mut a = ServerMetricsAggregator::default();
        for i in order {
            for scrape in &parts[i] {
                a.server_metrics(scrape);
            }
        }
        let mut s = Summary::default();
        a.finish(&RunSpan::default(), &mut s, &mut vec![]);
        assert_eq!(s.server_prompt_tokens, Some(400), "{order:?}");
    }
    // Parts on two servers: their deltas add up.
    let mut a = ServerMetricsAggregator::default();
    let two = "http://b/metrics";
    for scrape in [
        at(one, Before, 1000.0),
        at(two, Before, 5.0),
        at(one, After, 1200.0),
        at(two, After, 55.0),
    ] {
        a.server_metrics(&scrape);
    }
    let mut s = Summary::default();
    a.finish(&RunSpan::default(), &mut s, &mut vec![]);
    assert_eq!(s.server_prompt_tokens, Some(250));
    // An exporter with none of the engine's series leaves the engine's figures as they were.
    let dcgm = "http://gpu:9400/metrics";
    for phase in [Before, After] {
        a.server_metrics(&ServerMetrics {
            at_ns: 0,
            phase,
            url: dcgm.into(),
            samples: [("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"}".to_string(), 70.0)].into(),
        });
    }
    let mut s = Summary::default();
    a.finish(&RunSpan::default(), &mut s, &mut vec![]);
    assert_eq!(s.server_prompt_tokens, Some(250));
    // A server scraped only before the run leaves the figures out.
    a.server_metrics(&at("http://c/metrics", Before, 1.0));
    let mut s = Summary::default();
    a.finish(&RunSpan::default(), &mut s, &mut vec![]);
    assert_eq!(s.server_prompt_tokens, None);
}
