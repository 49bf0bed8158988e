//! The workload of a run in a few words, from the settings in its header chain: lengths
//! (`1024→128`), the load (`c16`, `0.3/s b0.7`, `batch 8×5`) and, for a group summary, how many
//! runs it pools. A table that compares runs shows what each run asked of the server.

use crate::report::RunReport;
use serde_json::Value;
use tokenpipe_format::vocab::{self, Role};

/// The settings that say how hard a run loads the server, in the order they are looked for
/// (the vocabulary's): what sorts a sweep, pairs a run with its baseline and is the x axis of a
/// load chart.
pub fn load_settings() -> impl Iterator<Item = &'static str> {
    vocab::settings_with(&[Role::Load]).map(|s| s.key)
}

/// The run's load: its concurrency, else its rate, else its batch size.
pub fn load(run: &RunReport) -> Option<f64> {
    load_settings().find_map(|key| run.param(key).and_then(Value::as_f64))
}

/// A setting as written on a command line: `16`, `0.3`, `chat`.
pub fn setting_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), short),
        other => other.to_string(),
    }
}

/// The mean prompt the server counted (usage), where it is more than 5 % off the `asked`
/// length: prompts of plain words, which a tokenizer splits into more tokens than words, or a
/// chat template's tokens. A table would otherwise show the same workload for runs that sent
/// prompts of different lengths.
fn counted_prompt(run: &RunReport, asked: f64) -> Option<f64> {
    let s = &run.summary;
    if s.requests_ok == 0 || s.input_tokens == 0 || asked <= 0.0 {
        return None;
    }
    let mean = s.input_tokens as f64 / s.requests_ok as f64;
    ((mean - asked).abs() > 0.05 * asked).then_some(mean)
}

/// `1024→128 c16`, `4000→500 1.5/s b1 max25 ×3 runs`, `128 (191 tok)→128 c4` when the server
/// counted other prompt lengths than were asked for; `None` when the run has no settings
/// (summary lines picked out with jq, some vLLM result files).
pub fn describe(run: &RunReport) -> Option<String> {
    let num = |key: &str| run.param(key).and_then(Value::as_f64);
    let mut parts = Vec::new();
    let input = |i: f64| match counted_prompt(run, i) {
        Some(counted) => format!("{} ({} tok)", short(i), short(counted.round())),
        None => short(i),
    };
    match (num(vocab::INPUT_TOKENS.key), num(vocab::OUTPUT_TOKENS.key)) {
        (Some(i), Some(o)) => parts.push(format!("{}→{}", input(i), short(o))),
        (Some(i), None) => parts.push(format!("{}→?", input(i))),
        (None, Some(o)) => parts.push(format!("?→{}", short(o))),
        (None, None) => {}
    }
    if let Some(b) = num(vocab::BATCH.key) {
        match num("runs") {
            Some(r) => parts.push(format!("batch {}×{}", short(b), short(r))),
            None => parts.push(format!("batch {}", short(b))),
        }
    } else if let Some(rate) = num(vocab::RATE.key) {
        let mut load = format!("{}/s", short(rate));
        if let Some(b) = num(vocab::BURSTINESS.key).filter(|b| *b != 1.0) {
            load.push_str(&format!(" b{}", short(b)));
        }
        parts.push(load);
    } else if let Some(c) = num(vocab::CONCURRENCY.key) {
        parts.push(format!("c{}", short(c)));
    }
    if let Some(m) = num(vocab::MAX_CONCURRENCY.key) {
        parts.push(format!("max{}", short(m)));
    }
    if run.is_group() {
        parts.push(format!("×{} runs", run.summary.runs.len()));
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// A number as written on a command line: `16`, `0.3`, `1.5` (`1e308` past a thousand
/// trillion).
pub fn short(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        tokenpipe_format::number::shortest(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_format::{Header, Summary};

    fn run(params: &[(&str, Value)], pooled: usize) -> RunReport {
        let mut h = Header::new("reduce", "r".into(), vec![]);
        let mut up = Header::new("arrivals", "a".into(), vec![]);
        for (k, v) in params {
            up.params.insert((*k).into(), v.clone());
        }
        h.upstream.push(up);
        RunReport::new(
            Some(h),
            Summary {
                runs: (0..pooled).map(|i| format!("r{i}")).collect(),
                ..Summary::default()
            },
        )
    }

    #[test]
    fn workloads_read_as_short_phrases() {
        let closed = run(
            &[
                ("input_tokens", 1024.into()),
                ("output_tokens", 128.into()),
                ("concurrency", 16.into()),
            ],
            0,
        );
        assert_eq!(describe(&closed).as_deref(), Some("1024→128 c16"));
        let open = run(
            &[
                ("input_tokens", 4000.into()),
                ("output_tokens", 500.into()),
                ("rate_per_s", 1.5.into()),
                ("burstiness", 1.0.into()),
                ("max_concurrency", 25.into()),
            ],
            3,
        );
        assert_eq!(
            describe(&open).as_deref(),
            Some("4000→500 1.5/s max25 ×3 runs")
        );
        let bursty = run(&[("rate_per_s", 0.3.into()), ("burstiness", 0.7.into())], 0);
        assert_eq!(describe(&bursty).as_deref(), Some("0.3/s b0.7"));
        let batch = run(&[("batch", 8.into()), ("runs", 5.into())], 0);
        assert_eq!(describe(&batch).as_deref(), Some("batch 8×5"));
        assert_eq!(describe(&RunReport::default()), None);
    }

    #[test]
    fn prompts_the_server_counted_otherwise_are_shown() {
        let mut words = run(
            &[
                ("input_tokens", 128.into()),
                ("output_tokens", 128.into()),
                ("concurrency", 4.into()),
            ],
            0,
        );
        // 128 words made 191 tokens on average, by usage.
        words.summary.requests_ok = 40;
        words.summary.input_tokens = 40 * 191;
        assert_eq!(describe(&words).as_deref(), Some("128 (191 tok)→128 c4"));
        // Within 5 %: the asked length stands.
        words.summary.input_tokens = 40 * 133;
        assert_eq!(describe(&words).as_deref(), Some("128→128 c4"));
        // Absurd settings and counts read in a few characters.
        words.summary.requests_ok = 1;
        words.summary.input_tokens = u64::MAX;
        let huge = run(
            &[("input_tokens", 128.into()), ("rate_per_s", 1e308.into())],
            0,
        );
        let huge = RunReport {
            summary: words.summary.clone(),
            ..huge
        };
        assert_eq!(
            describe(&huge).as_deref(),
            Some("128 (1.8446744073709552e19 tok)→? 1e308/s")
        );
    }
}
