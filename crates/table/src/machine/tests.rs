//! Snapshot tests of the machine formats: CSV and JSON of hand-built summaries, exact text.

use crate::{Format, Report, RunReport, Style};
use tokenpipe_format::{StatName, Summary};

fn report() -> Report {
    let mut a = Summary {
        label: "fp8, v2".into(),
        run_id: "r1".into(),
        requests_ok: 100,
        requests_failed: 0,
        duration_s: 37.8712,
        input_tokens: 102_400,
        output_tokens: 12_800,
        request_throughput_per_s: 2.6405,
        output_throughput_tokens_per_s: 338.0279,
        total_throughput_tokens_per_s: 3042.2312,
        itl_jitter: Some(4.853_033),
        percentiles: vec![99.0],
        peak_concurrency: Some(16),
        ..Summary::default()
    };
    a.set_stat("ttft", StatName::Percentile(99.0), Some(24464.041));
    a.set_stat("ttft", StatName::Mean, Some(11606.981));
    let b = Summary {
        label: "awq".into(),
        run_id: "r2".into(),
        requests_failed: 10,
        duration_s: 1.5,
        ..Summary::default()
    };
    let mut b = b;
    b.set_stat("ttft", StatName::Mean, None);
    Report {
        runs: [a, b]
            .into_iter()
            .map(|summary| RunReport {
                header: None,
                summary,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// Every member of every run, as `--format csv` and `json` write them without layout flags.
fn render(format: Format) -> String {
    Style::Default
        .render(&report(), format, &Default::default())
        .unwrap()
        .text
}

#[test]
fn csv_snapshot() {
    let got = render(Format::Csv);
    let want = "\
label,run_id,requests_ok,requests_failed,duration_s,input_tokens,output_tokens,request_throughput_per_s,output_throughput_tokens_per_s,total_throughput_tokens_per_s,itl_jitter,verdict.comparable,verdict.reason,peak_concurrency,ttft_mean_ms,ttft_p99_ms
\"fp8, v2\",r1,100,0,37.8712,102400,12800,2.6405,338.0279,3042.2312,4.853033,true,comparable,16,11606.981,24464.041
awq,r2,0,10,1.5,0,0,0.0,0.0,0.0,,false,incomplete: 10 of 10 failed (100.0 %: unknown: 10),,,";
    assert_eq!(got, want);
}

#[test]
fn json_snapshot() {
    let got = render(Format::Json);
    let parsed: serde_json::Value = serde_json::from_str(&got).unwrap();
    assert_eq!(parsed[0]["ttft_p99_ms"], 24464.041);
    assert_eq!(parsed[1]["ttft_mean_ms"], serde_json::Value::Null);
    assert_eq!(parsed[1]["peak_concurrency"], serde_json::Value::Null);
    let want = r#"[
  {
    "label": "fp8, v2",
    "run_id": "r1",
    "requests_ok": 100,
    "requests_failed": 0,
    "duration_s": 37.8712,
    "input_tokens": 102400,
    "output_tokens": 12800,
    "request_throughput_per_s": 2.6405,
    "output_throughput_tokens_per_s": 338.0279,
    "total_throughput_tokens_per_s": 3042.2312,
    "itl_jitter": 4.853033,
    "verdict.comparable": true,
    "verdict.reason": "comparable",
    "peak_concurrency": 16,
    "ttft_mean_ms": 11606.981,
    "ttft_p99_ms": 24464.041
  },
  {
    "label": "awq",
    "run_id": "r2",
    "requests_ok": 0,
    "requests_failed": 10,
    "duration_s": 1.5,
    "input_tokens": 0,
    "output_tokens": 0,
    "request_throughput_per_s": 0.0,
    "output_throughput_tokens_per_s": 0.0,
    "total_throughput_tokens_per_s": 0.0,
    "itl_jitter": null,
    "verdict.comparable": false,
    "verdict.reason": "incomplete: 10 of 10 failed (100.0 %: unknown: 10)",
    "peak_concurrency": null,
    "ttft_mean_ms": null,
    "ttft_p99_ms": null
  }
]"#;
    assert_eq!(got, want);
}
