//! Reading one numeric member of a run's summary by the name it has in the summary
//! (`output_throughput_tokens_per_s`, `ttft_p99_ms`, `llama_benchy.tg_tps.mean`), as every
//! layout and chart shows it: for a group summary, the mean over its runs with their spread (its
//! `across_runs` member; for its `errors` by kind, the pooled count over its runs), else the
//! summary's own value.

use crate::grid::Kind;
use crate::grid::{Num, Spread};
use crate::report::RunReport;
use serde_json::Value;
use tokenpipe_format::vocab;

/// The summary member `key` of `run` as a number to show, `None` when the run has none. A dotted
/// key walks into nested members (`llama_benchy.tg_tps.mean`).
pub fn member_num(run: &RunReport, key: &str, kind: Kind) -> Option<Num> {
    if let Some(across) = run.summary.across_runs.get(key) {
        if across.n >= 2 {
            return Some(Num {
                value: across.mean,
                kind,
                spread: Some(Spread {
                    n: across.n,
                    sd: across.sd,
                    cv_pct: across.cv_pct,
                    ci95: Some(across.ci95),
                    within_run: false,
                }),
            });
        }
    }
    let value = member_value(run, key)?.as_f64()?;
    // A group's `errors` are its runs' pooled; shown, as its other counts are, as the mean over
    // its runs, which need not be whole.
    if run.is_group() && key.starts_with("errors.") {
        let value = value / run.summary.runs.len() as f64;
        return Some(Num {
            value,
            kind: if value.fract() == 0.0 {
                kind
            } else {
                Kind::Value
            },
            spread: None,
        });
    }
    Some(Num {
        value,
        kind,
        spread: None,
    })
}

/// The summary member `key` of `run` as JSON (a dotted key walks into nested members), `None`
/// when absent or null. A run-wide figure, a statistic or one of vLLM's figures is read from
/// the summary directly; only other members cost a serialisation of the summary.
pub fn member_value(run: &RunReport, key: &str) -> Option<Value> {
    let s = &run.summary;
    if let Some(figure) = vocab::figure(key) {
        return (figure.get)(s).filter(|v| !v.is_null());
    }
    if let Some(stat) = s.stats.0.get(key) {
        return stat.map(Value::from).filter(|v| !v.is_null());
    }
    if let Some(vllm_key) = key.strip_prefix("vllm.") {
        return s
            .vllm
            .as_ref()?
            .get(vllm_key)
            .filter(|v| !v.is_null())
            .cloned();
    }
    let summary = serde_json::to_value(s).ok()?;
    let value = match summary.get(key) {
        Some(v) => v.clone(),
        None => key
            .split('.')
            .try_fold(&summary, |v, part| v.get(part))?
            .clone(),
    };
    (!value.is_null()).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_format::{AcrossRuns, StatName, Summary};

    #[test]
    fn a_group_reads_the_mean_over_runs_and_a_run_its_own_value() {
        let mut summary = Summary {
            output_throughput_tokens_per_s: 100.0,
            ..Summary::default()
        };
        summary.set_stat("ttft", StatName::Percentile(99.0), Some(12.5));
        let run = RunReport::new(None, summary.clone());
        let n = member_num(&run, "output_throughput_tokens_per_s", Kind::Value).unwrap();
        assert_eq!((n.value, n.spread), (100.0, None));
        assert_eq!(
            member_num(&run, "ttft_p99_ms", Kind::Value).unwrap().value,
            12.5
        );
        assert!(member_num(&run, "ttft_p50_ms", Kind::Value).is_none());
        assert!(member_num(&run, "label", Kind::Value).is_none());

        summary.runs = vec!["a".into(), "b".into()];
        summary.across_runs.insert(
            "output_throughput_tokens_per_s".into(),
            AcrossRuns {
                n: 2,
                mean: 98.0,
                sd: 2.0,
                cv_pct: Some(2.04),
                ci95: [80.0, 116.0],
            },
        );
        let group = RunReport::new(None, summary);
        let n = member_num(&group, "output_throughput_tokens_per_s", Kind::Value).unwrap();
        assert_eq!(n.value, 98.0);
        assert_eq!(n.spread.map(|s| s.sd), Some(2.0));
    }

    #[test]
    fn dotted_keys_walk_into_nested_members() {
        let summary: Summary = serde_json::from_value(serde_json::json!({
            "type": "summary", "label": "m", "run_id": "r", "requests_ok": 1, "requests_failed": 0,
            "duration_s": 1.0, "input_tokens": 1, "output_tokens": 1,
            "request_throughput_per_s": 1.0, "output_throughput_tokens_per_s": 1.0,
            "total_throughput_tokens_per_s": 2.0,
            "meta": {"model": "m7"},
        }))
        .unwrap();
        let run = RunReport::new(None, summary);
        assert_eq!(member_value(&run, "meta.model"), Some(Value::from("m7")));
        assert_eq!(member_value(&run, "meta.none"), None);
    }
}
