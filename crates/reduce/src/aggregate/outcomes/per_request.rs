//! `reduce --per-request`: a `result` record for every request, written as soon as it ends,
//! with each value taken from [`RequestResult`]'s methods, so the record and the summary can
//! never disagree on a definition.

use super::error_label;
use crate::aggregate::Aggregator;
use crate::error::RequestError;
use crate::request::RequestResult;
use tokenpipe_format::{Record, ResultRecord};

/// Queues one `result` record per request until the run's reader drains it.
#[derive(Debug, Default)]
pub struct PerRequest {
    ready: Vec<Record>,
}

impl Aggregator for PerRequest {
    fn add(&mut self, r: &RequestResult) -> Result<(), RequestError> {
        self.ready.push(Record::Result(Box::new(result_record(r))));
        Ok(())
    }

    fn drain(&mut self, out: &mut Vec<Record>) {
        out.append(&mut self.ready);
    }
}

const NS_PER_MS: f64 = 1e6;

fn ms(ns: Option<u64>) -> Option<f64> {
    ns.map(|v| v as f64 / NS_PER_MS)
}

fn ms_f(ns: Option<f64>) -> Option<f64> {
    ns.map(|v| v / NS_PER_MS)
}

/// The `result` record of one request, failed or not: every value it has.
pub fn result_record(r: &RequestResult) -> ResultRecord {
    ResultRecord {
        id: r.id,
        ok: r.ok,
        error_kind: error_label(r).map(str::to_string),
        status: r.status,
        grouping: r.grouping.clone(),
        scheduled_ms: ms(r.scheduled_ns),
        sent_ms: ms(r.sent_ns),
        done_ms: ms(r.done_ns),
        queue_ms: ms(r.dispatch_lag_ns()),
        ttft_ms: ms(r.ttft_ns()),
        ttfr_ms: ms(r.ttfr_ns()),
        ttft_from_scheduled_ms: ms(r.ttft_from_scheduled_ns()),
        e2el_ms: ms(r.e2el_ns()),
        e2el_from_scheduled_ms: ms(r.e2el_from_scheduled_ns()),
        tpot_ms: ms_f(r.tpot_ns()),
        itl_mean_ms: ms_f(r.itl_mean_ns()),
        itl_max_ms: ms_f(r.itl_max_ns()),
        itl_std_ms: ms_f(r.itl_std_ns()),
        itl_per_token_mean_ms: ms_f(r.itl_per_token_mean_ns()),
        output_tokens: r.output_tokens,
        output_tokens_source: r.output_source.as_str().to_string(),
        input_tokens: r.input_tokens,
        input_tokens_source: r.input_tokens.map(|_| "usage".to_string()),
        content_events: r.content_events,
        empty_events: r.empty_events,
        user_tps: r.user_tps(),
        user_gen_tps: r.user_gen_tps(),
        prefill_tps: r.prefill_tps(),
        finish_reason: r.finish_reason.clone(),
        ttfa_ms: ms(r.ttfa_ns().filter(|_| r.had_reasoning())),
        reasoning_duration_ms: ms(r.reasoning_duration_ns()),
        reasoning_tokens: r.reasoning_tokens,
        answer_tokens: r.answer_tokens,
        cached_tokens: r.cached_tokens,
        cache_hit_ratio: r.cache_hit_ratio(),
    }
}
