//! The pooled figures of a group summary: counts summed over its runs, and every latency
//! metric recomputed from the runs' merged histograms and moments, never averaged.

use crate::error::Error;
use crate::stat::Stat;
use std::collections::BTreeMap;
use tokenpipe_format::vocab;
use tokenpipe_format::{StatName, Summary};

/// The runs' latency metrics merged: each run's saved state read back and added.
pub fn merged_metrics(runs: &[Summary]) -> Result<BTreeMap<String, Stat>, Error> {
    let mut merged: BTreeMap<String, Stat> = BTreeMap::new();
    for run in runs {
        for (metric, state) in &run.histograms {
            let stat = Stat::from_state(state).map_err(|source| Error::Histogram {
                run: run.run_id.clone(),
                metric: metric.clone(),
                source,
            })?;
            merged.entry(metric.clone()).or_default().merge(&stat);
        }
    }
    Ok(merged)
}

/// The counts and throughputs of the runs pooled: counts and durations summed, throughputs
/// what the runs counted (throughput × duration) over the summed durations (the rate over all
/// the time measured).
pub fn pooled_counts(runs: &[Summary], into: &mut Summary) {
    let sum_u = |f: fn(&Summary) -> u64| runs.iter().map(f).fold(0u64, u64::saturating_add);
    let sum_f = |f: fn(&Summary) -> f64| runs.iter().map(f).sum::<f64>();
    into.requests_ok = sum_u(|s| s.requests_ok);
    into.requests_failed = sum_u(|s| s.requests_failed);
    into.input_tokens = sum_u(|s| s.input_tokens);
    into.output_tokens = sum_u(|s| s.output_tokens);
    into.output_stalls = sum_u(|s| s.output_stalls);
    into.output_stall_ms = sum_f(|s| s.output_stall_ms);
    into.duration_s = sum_f(|s| s.duration_s);
    let per_s = |x: f64| {
        if into.duration_s > 0.0 {
            x / into.duration_s
        } else {
            0.0
        }
    };
    // What each run counted over its own duration (a windowed run counts what was stamped in
    // its window), added up and divided by the time measured in all.
    let counted = |f: fn(&Summary) -> f64| runs.iter().map(|s| f(s) * s.duration_s).sum::<f64>();
    into.request_throughput_per_s = per_s(counted(|s| s.request_throughput_per_s));
    into.output_throughput_tokens_per_s = per_s(counted(|s| s.output_throughput_tokens_per_s));
    into.total_throughput_tokens_per_s = per_s(counted(|s| s.total_throughput_tokens_per_s));
    let all_u = |f: fn(&Summary) -> Option<u64>| sum_all(runs, f);
    into.requests_scheduled = all_u(|s| s.requests_scheduled);
    into.requests_sent = all_u(|s| s.requests_sent);
    into.requests_failed_server = all_u(|s| s.requests_failed_server);
    for run in runs {
        for (kind, n) in &run.errors {
            *into.errors.entry(kind.clone()).or_default() += n;
        }
    }
    let kept_up: Vec<bool> = runs.iter().filter_map(|s| s.client_kept_up).collect();
    into.client_kept_up = (!kept_up.is_empty()).then(|| kept_up.iter().all(|&k| k));
    into.client_warnings = runs
        .iter()
        .flat_map(|s| {
            s.client_warnings
                .iter()
                .map(|w| format!("run {}: {w}", s.run_id))
        })
        .collect();
    // Not judged only when no run was.
    into.client_not_judged = runs
        .iter()
        .map(|s| s.client_not_judged.clone())
        .collect::<Option<Vec<String>>>()
        .and_then(|why| why.into_iter().next());
    let cpu: Vec<f64> = runs.iter().filter_map(|s| s.client_cpu_s).collect();
    into.client_cpu_s = (!cpu.is_empty()).then(|| cpu.iter().sum());
    pooled_server_figures(runs, into);
    pooled_live_figures(runs, into);
    pooled_reasoning_and_cache(runs, into);
}

/// Speculative decoding, tokens per event, the gauges and the energy of the runs, when every
/// run has them: averaged over the runs (a gauge's largest value is the largest of the runs').
/// The per-GPU and per-position breakdowns are the runs' own and are not pooled.
fn pooled_live_figures(runs: &[Summary], into: &mut Summary) {
    let mean_f = |f: &dyn Fn(&Summary) -> Option<f64>| {
        let values: Option<Vec<f64>> = runs.iter().map(f).collect();
        let values = values?;
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    };
    into.spec_acceptance_rate = mean_f(&|s| s.spec_acceptance_rate);
    into.spec_acceptance_length = mean_f(&|s| s.spec_acceptance_length);
    into.tokens_per_event = mean_f(&|s| s.tokens_per_event);
    into.power_w_mean = mean_f(&|s| s.power_w_mean);
    into.energy_j_per_output_token = mean_f(&|s| s.energy_j_per_output_token);
    let names = runs
        .first()
        .map(|s| s.gauges.keys().cloned().collect::<Vec<_>>());
    into.gauges = names
        .unwrap_or_default()
        .into_iter()
        .filter_map(|name| {
            let mean = mean_f(&|s| s.gauges.get(&name).map(|g| g.mean))?;
            let max = runs
                .iter()
                .filter_map(|s| s.gauges.get(&name).map(|g| g.max))
                .fold(f64::MIN, f64::max);
            Some((name, tokenpipe_format::GaugeSummary { mean, max }))
        })
        .collect();
}

/// Reasoning and cache figures of the runs, where every run has them: token counts summed,
/// the usage's hit ratio weighted by each run's prompt tokens, the server's recomputed from
/// its summed hits and lookups (else, SGLang's gauge, averaged).
fn pooled_reasoning_and_cache(runs: &[Summary], into: &mut Summary) {
    let all_u = |f: fn(&Summary) -> Option<u64>| sum_all(runs, f);
    into.reasoning_tokens = all_u(|s| s.reasoning_tokens);
    into.answer_tokens = all_u(|s| s.answer_tokens);
    into.cached_prompt_tokens = all_u(|s| s.cached_prompt_tokens);
    let weighted: Option<(f64, f64)> = runs.iter().try_fold((0.0, 0.0), |(sum, w), s| {
        let input = s.input_tokens as f64;
        Some((sum + s.cache_hit_ratio? * input, w + input))
    });
    into.cache_hit_ratio = weighted.and_then(|(sum, w)| (w > 0.0).then(|| sum / w));
    into.server_prefix_cache_queries = all_u(|s| s.server_prefix_cache_queries);
    into.server_prefix_cache_hits = all_u(|s| s.server_prefix_cache_hits);
    into.server_prefix_cache_hit_ratio = match (
        into.server_prefix_cache_queries,
        into.server_prefix_cache_hits,
    ) {
        (Some(q), Some(h)) => (q > 0).then(|| h as f64 / q as f64),
        _ => {
            let ratios: Option<Vec<f64>> = runs
                .iter()
                .map(|s| s.server_prefix_cache_hit_ratio)
                .collect();
            ratios
                .filter(|r| !r.is_empty())
                .map(|r| r.iter().sum::<f64>() / r.len() as f64)
        }
    };
}

/// The server's own figures of the runs, when every run has them: counts summed, means
/// averaged over the runs (each run's mean is over its own scrapes; the observation counts
/// behind them are not kept, so the runs weigh the same).
fn pooled_server_figures(runs: &[Summary], into: &mut Summary) {
    let all_u = |f: fn(&Summary) -> Option<u64>| sum_all(runs, f);
    let mean_f = |f: fn(&Summary) -> Option<f64>| {
        let values: Option<Vec<f64>> = runs.iter().map(f).collect();
        let values = values?;
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    };
    into.server_prompt_tokens = all_u(|s| s.server_prompt_tokens);
    into.server_generation_tokens = all_u(|s| s.server_generation_tokens);
    into.server_requests_succeeded = all_u(|s| s.server_requests_succeeded);
    into.server_ttft_mean_ms = mean_f(|s| s.server_ttft_mean_ms);
    into.server_itl_mean_ms = mean_f(|s| s.server_itl_mean_ms);
    into.server_e2el_mean_ms = mean_f(|s| s.server_e2el_mean_ms);
}

/// Writes the statistics of one merged metric into `into`, as a run's summary carries them:
/// in the metric's own unit ([`vocab::unit_of`]).
pub fn set_metric(into: &mut Summary, metric: &str, stat: &Stat, percentiles: &[f64]) {
    let unit = vocab::unit_of(metric);
    let (unit, per_unit) = (unit.suffix(), unit.per_unit());
    let m = stat.moments_scaled(percentiles, per_unit);
    let mut set = |name: StatName, value: Option<f64>| into.set_stat_in(metric, name, unit, value);
    set(StatName::Mean, m.as_ref().map(|m| m.mean_ms));
    set(StatName::Std, m.as_ref().map(|m| m.std_ms));
    set(StatName::SampleStd, m.as_ref().and_then(|m| m.sstd_ms));
    set(StatName::Min, m.as_ref().map(|m| m.min_ms));
    set(StatName::Max, m.as_ref().map(|m| m.max_ms));
    for &p in percentiles {
        set(StatName::Percentile(p), m.as_ref().and_then(|m| m.p(p)));
    }
}

/// ITL p99 over ITL p50 of the merged gaps, as a run's `itl_jitter`.
pub fn jitter(itl: Option<&Stat>) -> Option<f64> {
    let m = itl?.moments(&[50.0, 99.0])?;
    let (p50, p99) = (m.p(50.0)?, m.p(99.0)?);
    (p50 > 0.0).then(|| p99 / p50)
}

/// The sum of `f` over the runs, when every run has it.
fn sum_all(runs: &[Summary], f: fn(&Summary) -> Option<u64>) -> Option<u64> {
    runs.iter()
        .map(f)
        .try_fold(0u64, |sum, x| Some(sum.saturating_add(x?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_figures_pool_only_when_every_run_has_them() {
        let run = |tokens: u64, ttft: f64| Summary {
            server_prompt_tokens: Some(tokens),
            server_ttft_mean_ms: Some(ttft),
            ..Summary::default()
        };
        let mut group = Summary::default();
        pooled_counts(&[run(100, 50.0), run(300, 70.0)], &mut group);
        assert_eq!(group.server_prompt_tokens, Some(400));
        assert_eq!(group.server_ttft_mean_ms, Some(60.0));
        let mut group = Summary::default();
        pooled_counts(&[run(100, 50.0), Summary::default()], &mut group);
        assert_eq!(group.server_prompt_tokens, None);
    }

    #[test]
    fn reasoning_and_cache_figures_pool_when_every_run_has_them() {
        let run = |reasoning, cached, ratio, input| Summary {
            input_tokens: input,
            reasoning_tokens: Some(reasoning),
            answer_tokens: Some(3 * reasoning),
            cached_prompt_tokens: Some(cached),
            cache_hit_ratio: Some(ratio),
            server_prefix_cache_queries: Some(input),
            server_prefix_cache_hits: Some(cached),
            ..Summary::default()
        };
        let mut group = Summary::default();
        pooled_counts(&[run(10, 50, 0.5, 100), run(20, 300, 1.0, 300)], &mut group);
        assert_eq!(group.reasoning_tokens, Some(30));
        assert_eq!(group.answer_tokens, Some(90));
        assert_eq!(group.cached_prompt_tokens, Some(350));
        assert_eq!(group.cache_hit_ratio, Some(350.0 / 400.0));
        assert_eq!(group.server_prefix_cache_hit_ratio, Some(350.0 / 400.0));
        let mut group = Summary::default();
        pooled_counts(&[run(10, 50, 0.5, 100), Summary::default()], &mut group);
        assert_eq!(group.reasoning_tokens, None);
        assert_eq!(group.cache_hit_ratio, None);
        assert_eq!(group.server_ttft_mean_ms, None);
    }

    #[test]
    fn live_figures_pool_as_means_when_every_run_has_them() {
        let run = |rate: f64, power: Option<f64>, kv: (f64, f64)| Summary {
            spec_acceptance_rate: Some(rate),
            power_w_mean: power,
            gauges: [(
                "kv_cache_usage".to_string(),
                tokenpipe_format::GaugeSummary {
                    mean: kv.0,
                    max: kv.1,
                },
            )]
            .into(),
            ..Summary::default()
        };
        let mut group = Summary::default();
        let runs = [
            run(0.5, Some(200.0), (0.2, 0.4)),
            run(0.7, None, (0.4, 0.9)),
        ];
        pooled_counts(&runs, &mut group);
        assert_eq!(group.spec_acceptance_rate, Some(0.6));
        assert_eq!(group.power_w_mean, None, "one run has no power");
        let kv = group.gauges["kv_cache_usage"];
        assert!((kv.mean - 0.3).abs() < 1e-12 && kv.max == 0.9, "{kv:?}");
    }
}
