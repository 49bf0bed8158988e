//! Reads the result file of `vllm bench serve --save-result` (one JSON object, pretty-printed
//! or not; `--append-result` puts one per line) as runs, so that runs published with vLLM sit
//! in the same table as ours. The figures go to the summary's `vllm` member unchanged; our own
//! fields get the ones that mean the same thing. The per-request arrays of `--save-detailed`
//! are not needed and not read (`reduce --from-vllm` recomputes from them).

use crate::error::Error;
use crate::report::RunReport;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use tokenpipe_format::vllm::{self, key, ResultFile};
use tokenpipe_format::vocab;
use tokenpipe_format::{Header, StatName, Summary};

/// The run of one vLLM result object. `source` names the file (and `line` the line of an
/// appended result, when there are several) in messages and in the run id.
pub fn run_from_vllm(
    object: Map<String, Value>,
    source: &str,
    line: Option<usize>,
) -> Result<RunReport, Error> {
    let at = match line {
        Some(n) => format!("{source}: line {n}"),
        None => source.to_string(),
    };
    let bad = |key: &str, expected: &'static str| Error::VllmResult {
        at: at.clone(),
        key: key.to_string(),
        expected,
    };
    let file = ResultFile(object);
    let figures: BTreeMap<String, Value> = file
        .figures()
        .map_err(|e| bad(&e.key, e.expected))?
        .into_iter()
        .collect();
    let count = |k: &str| file.count(k).map_err(|e| bad(&e.key, e.expected));
    let number = |k: &str| file.number(k);
    let text = |k: &str| file.text(k);
    if file.get(key::DURATION).and_then(Value::as_f64).is_none() {
        return Err(bad(key::DURATION, "a number"));
    }
    let run_id = match line {
        Some(n) => format!("{}-{n}", vllm::run_id(source)),
        None => vllm::run_id(source),
    };
    let mut summary = Summary {
        label: text(key::LABEL)
            .or_else(|| text(key::MODEL_ID))
            .map_or_else(|| run_id.clone(), str::to_string),
        run_id: run_id.clone(),
        requests_ok: count(key::COMPLETED)?,
        requests_failed: count(key::FAILED)?,
        duration_s: number(key::DURATION),
        input_tokens: count(key::TOTAL_INPUT_TOKENS)?,
        output_tokens: count(key::TOTAL_OUTPUT_TOKENS)?,
        request_throughput_per_s: number(key::REQUEST_THROUGHPUT),
        output_throughput_tokens_per_s: number(key::OUTPUT_THROUGHPUT),
        total_throughput_tokens_per_s: number(key::TOTAL_TOKEN_THROUGHPUT),
        definitions: Some("vllm".into()),
        ..Summary::default()
    };
    // vLLM's statistics under our names: mean, population std, median as p50, each percentile.
    let mut percentiles = vec![50.0];
    for (key, value) in &figures {
        let (Some((stat, metric)), Some(v)) = (vllm::parse_latency_key(key), value.as_f64()) else {
            continue;
        };
        if let StatName::Percentile(p) = stat {
            percentiles.push(p);
        }
        summary.set_stat(metric, stat, Some(v));
    }
    percentiles.sort_by(f64::total_cmp);
    percentiles.dedup();
    summary.percentiles = percentiles;
    summary.vllm = Some(figures);
    let mut header = Header::new(vllm::TOOL, run_id, Vec::new());
    for setting in vllm::SETTINGS {
        if let Some(v) = file.get(setting) {
            header.params.insert((*setting).into(), v.clone());
        }
    }
    for (theirs, ours) in [
        (key::MAX_CONCURRENCY, vocab::CONCURRENCY.key),
        (key::REQUEST_RATE, vocab::RATE.key),
    ] {
        if let Some(v) = file.get(theirs).filter(|v| v.is_number()) {
            header.params.insert(ours.into(), v.clone());
        }
    }
    Ok(RunReport {
        header: Some(header),
        summary,
        source: source.to_string(),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use crate::read_report;
    use tokenpipe_cli::{Ending, Input, ToolError};
    use tokenpipe_format::StatName;

    fn input(name: &str, text: &str) -> Input {
        Input {
            reader: Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
            name: name.into(),
        }
    }

    const PRETTY: &str = r#"
{
    "date": "20250101-120000",
    "backend": "vllm",
    "model_id": "Qwen/Qwen3-8B",
    "label": null,
    "max_concurrency": 16,
    "request_rate": "inf",
    "duration": 10.5234,
    "completed": 10,
    "failed": 1,
    "total_input_tokens": 10240,
    "total_output_tokens": 1280,
    "request_throughput": 0.9503,
    "request_goodput": null,
    "output_throughput": 121.6356,
    "total_token_throughput": 1094.7913,
    "max_output_tokens_per_s": 170.0,
    "max_concurrent_requests": 10,
    "mean_ttft_ms": 1693.08,
    "median_ttft_ms": 1731.72,
    "std_ttft_ms": 300.5,
    "p99_ttft_ms": 2623.26,
    "p99.9_ttft_ms": 2700.0,
    "mean_itl_ms": 68.42,
    "input_lens": [1024, 1024],
    "ttfts": [1.5, 1.7]
}
"#;

    #[test]
    fn a_pretty_printed_result_is_one_run_with_its_figures() {
        let report = read_report(vec![input("runs/c10.json", PRETTY)]).unwrap();
        assert_eq!(report.runs.len(), 1);
        let run = &report.runs[0];
        let s = &run.summary;
        assert_eq!(s.label, "Qwen/Qwen3-8B");
        assert_eq!(s.run_id, "vllm-c10");
        assert_eq!((s.requests_ok, s.requests_failed), (10, 1));
        assert_eq!((s.input_tokens, s.output_tokens), (10240, 1280));
        assert_eq!(s.duration_s, 10.5234);
        assert_eq!(s.output_throughput_tokens_per_s, 121.6356);
        assert_eq!(s.stat("ttft", StatName::Percentile(50.0)), Some(1731.72));
        assert_eq!(s.stat("ttft", StatName::Std), Some(300.5));
        assert_eq!(s.stat("ttft", StatName::Percentile(99.9)), Some(2700.0));
        assert_eq!(s.stat("itl", StatName::Mean), Some(68.42));
        assert_eq!(s.percentiles, [50.0, 99.0, 99.9]);
        let vllm = s.vllm.as_ref().unwrap();
        assert_eq!(vllm["p99.9_ttft_ms"], 2700.0);
        assert_eq!(vllm["request_goodput"], serde_json::Value::Null);
        assert!(!vllm.contains_key("ttfts") && !vllm.contains_key("model_id"));
        let header = run.header.as_ref().unwrap();
        assert_eq!(header.tool, "vllm bench serve");
        assert_eq!(header.param("concurrency"), Some(&16.into()));
        // "inf" is not a rate to compare runs by.
        assert_eq!(header.param("rate_per_s"), None);
    }

    #[test]
    fn appended_results_are_one_run_per_line_beside_our_summaries() {
        let line = |label: &str, completed: u64| {
            format!(r#"{{"label":"{label}","completed":{completed},"duration":2.0}}"#)
        };
        let text = format!("{}\n\n{}\n", line("a", 1), line("b", 2));
        let ours = r#"{"type":"summary","label":"ours","run_id":"r","requests_ok":5,"requests_failed":0,"duration_s":1,"input_tokens":0,"output_tokens":0,"request_throughput_per_s":5,"output_throughput_tokens_per_s":0,"total_throughput_tokens_per_s":0}"#;
        let report = read_report(vec![input("all.jsonl", &text), input("s", ours)]).unwrap();
        let got: Vec<(&str, &str, u64)> = report
            .runs
            .iter()
            .map(|r| {
                let s = &r.summary;
                (s.label.as_str(), s.run_id.as_str(), s.requests_ok)
            })
            .collect();
        assert_eq!(
            got,
            [
                ("a", "vllm-all-1", 1),
                ("b", "vllm-all-3", 2),
                ("ours", "r", 5)
            ]
        );
    }

    #[test]
    fn a_json_object_that_is_neither_is_refused_naming_the_file() {
        for text in ["{\n  \"model\": \"x\"\n}\n", "{\"completed\": 3}\n"] {
            let err = read_report(vec![input("other.json", text)]).unwrap_err();
            let msg = err.to_string();
            assert!(
                msg.starts_with("other.json: line 1: a JSON object that is neither"),
                "{msg}"
            );
            assert_eq!(err.ending(), Ending::BadInput);
        }
    }

    #[test]
    fn a_figure_of_the_wrong_type_names_file_and_field() {
        let text = r#"{"completed": 3, "duration": 1.0, "mean_ttft_ms": "fast"}"#;
        let err = read_report(vec![input("r.json", text)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "r.json: field \"mean_ttft_ms\": expected a number (reading a `vllm bench serve` result)"
        );
        let text = r#"{"completed": 2.5, "duration": 1.0}"#;
        let err = read_report(vec![input("r.json", text)]).unwrap_err();
        assert!(err
            .to_string()
            .contains("field \"completed\": expected a whole number"));
        assert_eq!(err.ending(), Ending::BadInput);
    }
}
