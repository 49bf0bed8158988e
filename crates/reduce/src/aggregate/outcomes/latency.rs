//! The metrics beyond vLLM's set, each with the full statistic set and a histogram: time to
//! first response, TTFT and E2EL from the scheduled instant, per-token ITL, the per-request
//! token rates, and the spread of each request's own gaps. Also counts the values behind every
//! metric (`samples`), so each figure says which requests it covers.

use crate::aggregate::{Aggregator, RunSpan, SummaryOptions};
use crate::request::RequestResult;
use crate::stat::Stat;
use tokenpipe_format::{Record, StatName, Summary};

/// How a metric's values are held in its [`Stat`] (whole units of its histogram) and written.
#[derive(Debug, Clone, Copy)]
struct Unit {
    /// The unit of its summary members.
    name: &'static str,
    /// Histogram units per summary unit: latencies are recorded in ns (10⁶ per ms); rates in
    /// milli-tokens/s (1000 per token/s) and ratios in millionths, so the histogram's 3
    /// significant figures hold for values below 1.
    per_unit: f64,
}

/// The unit a metric's statistics are written in and its histogram units per summary unit:
/// `("tps", 1000)` for the per-request token rates, `("ratio", 10⁶)` for `itl_cv`, `("ms", 10⁶)`
/// for every latency. Whoever reads a summary's `histograms` back (group summaries) asks here.
pub fn metric_unit(metric: &str) -> (&'static str, f64) {
    let unit = match metric {
        "user_tps" | "user_gen_tps" | "prefill_tps" => TPS,
        "itl_cv" => RATIO,
        _ => MS,
    };
    (unit.name, unit.per_unit)
}

const MS: Unit = Unit {
    name: "ms",
    per_unit: 1e6,
};
const TPS: Unit = Unit {
    name: "tps",
    per_unit: 1e3,
};
const RATIO: Unit = Unit {
    name: "ratio",
    per_unit: 1e6,
};

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

    /// Every metric with its summary name and unit.
    fn metrics(&self) -> [(&'static str, &Stat, Unit); 8] {
        [
            ("ttfr", &self.ttfr, MS),
            ("ttft_sched", &self.ttft_sched, MS),
            ("e2el_sched", &self.e2el_sched, MS),
            ("itl_token", &self.itl_token, MS),
            ("user_tps", &self.user_tps, TPS),
            ("user_gen_tps", &self.user_gen_tps, TPS),
            ("prefill_tps", &self.prefill_tps, TPS),
            ("itl_cv", &self.itl_cv, RATIO),
        ]
    }
}

/// Adds `value` (in the summary's unit) to `stat` in the stat's fixed-point unit.
fn push(stat: &mut Stat, value: Option<f64>, unit: Unit) {
    if let Some(v) = value.filter(|v| v.is_finite()) {
        stat.push_ns_f64(v * unit.per_unit);
    }
}

impl Aggregator for MoreLatency {
    fn add(&mut self, r: &RequestResult) -> Result<(), String> {
        if !r.ok {
            return Ok(());
        }
        let ns = |v: Option<u64>| v.map(|v| v as f64 / MS.per_unit);
        push(&mut self.ttfr, ns(r.ttfr_ns()), MS);
        push(&mut self.ttft_sched, ns(r.ttft_from_scheduled_ns()), MS);
        push(&mut self.e2el_sched, ns(r.e2el_from_scheduled_ns()), MS);
        self.itl_token.add_sparse(&r.token_gaps);
        push(&mut self.user_tps, r.user_tps(), TPS);
        push(&mut self.user_gen_tps, r.user_gen_tps(), TPS);
        push(&mut self.prefill_tps, r.prefill_tps(), TPS);
        push(&mut self.itl_cv, r.itl_cv(), RATIO);
        Ok(())
    }

    fn finish(&mut self, _span: &RunSpan, summary: &mut Summary, _out: &mut Vec<Record>) {
        for (metric, stat, unit) in self.metrics() {
            let m = stat.moments_scaled(&self.percentiles, unit.per_unit);
            let m = m.as_ref();
            let mut set = |stat: StatName, v: Option<f64>| {
                summary.set_stat_in(metric, stat, unit.name, v);
            };
            set(StatName::Mean, m.map(|m| m.mean_ms));
            set(StatName::Std, m.map(|m| m.std_ms));
            set(StatName::SampleStd, m.and_then(|m| m.sstd_ms));
            set(StatName::Min, m.map(|m| m.min_ms));
            set(StatName::Max, m.map(|m| m.max_ms));
            for &p in &self.percentiles {
                set(StatName::Percentile(p), m.and_then(|m| m.p(p)));
            }
            summary.samples.insert(metric.into(), stat.count());
            if self.histograms && stat.count() > 0 {
                summary.histograms.insert(metric.into(), stat.to_state());
            }
        }
    }
}
