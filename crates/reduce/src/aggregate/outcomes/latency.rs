//! The metrics beyond vLLM's set, each with the full statistic set and a histogram: time to
//! first response, TTFT and E2EL from the scheduled instant, per-token ITL, the per-request
//! token rates, and the spread of each request's own gaps. Also counts the values behind every
//! metric (`samples`), so each figure says which requests it covers.

use crate::aggregate::{Aggregator, RunSpan, SummaryOptions};
use crate::error::RequestError;
use crate::request::RequestResult;
use crate::stat::Stat;
use tokenpipe_format::vocab::{self, Metric, Unit};
use tokenpipe_format::{Record, StatName, Summary};

/// The extra metrics of one run, from its successful requests.
#[derive(Debug)]
pub struct MoreLatency {
    percentiles: Vec<f64>,
    histograms: bool,
    ttfr: Stat,
    ttft_sched: Stat,
    e2el_sched: Stat,
    itl_token: Stat,
    user_tps: Stat,
    user_gen_tps: Stat,
    prefill_tps: Stat,
    itl_cv: Stat,
}

impl MoreLatency {
    /// Empty accumulators, written with the percentiles and histograms of `opts`.
    pub fn new(opts: &SummaryOptions) -> Self {
        MoreLatency {
            percentiles: opts.percentiles.clone(),
            histograms: opts.histograms,
            ttfr: Stat::new(),
            ttft_sched: Stat::new(),
            e2el_sched: Stat::new(),
            itl_token: Stat::new(),
            user_tps: Stat::new(),
            user_gen_tps: Stat::new(),
            prefill_tps: Stat::new(),
            itl_cv: Stat::new(),
        }
    }

    /// Every metric with its accumulator.
    fn metrics(&self) -> [(Metric, &Stat); 8] {
        [
            (vocab::TTFR, &self.ttfr),
            (vocab::TTFT_SCHED, &self.ttft_sched),
            (vocab::E2EL_SCHED, &self.e2el_sched),
            (vocab::ITL_TOKEN, &self.itl_token),
            (vocab::USER_TPS, &self.user_tps),
            (vocab::USER_GEN_TPS, &self.user_gen_tps),
            (vocab::PREFILL_TPS, &self.prefill_tps),
            (vocab::ITL_CV, &self.itl_cv),
        ]
    }
}

/// Adds `value` (in the summary's unit) to `stat` in the stat's fixed-point unit.
pub fn push(stat: &mut Stat, value: Option<f64>, unit: Unit) {
    if let Some(v) = value.filter(|v| v.is_finite()) {
        stat.push_ns_f64(v * unit.per_unit());
    }
}

impl Aggregator for MoreLatency {
    fn add(&mut self, r: &RequestResult) -> Result<(), RequestError> {
        if !r.ok {
            return Ok(());
        }
        let ns = |v: Option<u64>| v.map(|v| v as f64 / Unit::Ms.per_unit());
        push(&mut self.ttfr, ns(r.ttfr_ns()), vocab::TTFR.unit);
        push(
            &mut self.ttft_sched,
            ns(r.ttft_from_scheduled_ns()),
            vocab::TTFT_SCHED.unit,
        );
        push(
            &mut self.e2el_sched,
            ns(r.e2el_from_scheduled_ns()),
            vocab::E2EL_SCHED.unit,
        );
        self.itl_token.add_sparse(&r.token_gaps);
        push(&mut self.user_tps, r.user_tps(), vocab::USER_TPS.unit);
        push(
            &mut self.user_gen_tps,
            r.user_gen_tps(),
            vocab::USER_GEN_TPS.unit,
        );
        push(
            &mut self.prefill_tps,
            r.prefill_tps(),
            vocab::PREFILL_TPS.unit,
        );
        push(&mut self.itl_cv, r.itl_cv(), vocab::ITL_CV.unit);
        Ok(())
    }

    fn finish(&mut self, _span: &RunSpan, summary: &mut Summary, _out: &mut Vec<Record>) {
        for (metric, stat) in self.metrics() {
            write_metric(summary, metric, stat, &self.percentiles, self.histograms);
        }
    }
}

/// Writes one metric's statistics in its unit (nulls without samples), its sample count and,
/// when asked and it has samples, its histogram.
pub fn write_metric(
    summary: &mut Summary,
    metric: Metric,
    stat: &Stat,
    percentiles: &[f64],
    histograms: bool,
) {
    let (name, unit) = (metric.name, metric.unit);
    let m = stat.moments_scaled(percentiles, unit.per_unit());
    let m = m.as_ref();
    let mut set = |stat: StatName, v: Option<f64>| {
        summary.set_stat_in(name, stat, unit.suffix(), v);
    };
    set(StatName::Mean, m.map(|m| m.mean_ms));
    set(StatName::Std, m.map(|m| m.std_ms));
    set(StatName::SampleStd, m.and_then(|m| m.sstd_ms));
    set(StatName::Min, m.map(|m| m.min_ms));
    set(StatName::Max, m.map(|m| m.max_ms));
    for &p in percentiles {
        set(StatName::Percentile(p), m.and_then(|m| m.p(p)));
    }
    summary.samples.insert(name.into(), stat.count());
    if histograms && stat.count() > 0 {
        summary.histograms.insert(name.into(), stat.to_state());
    }
}
