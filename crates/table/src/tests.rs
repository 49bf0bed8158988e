//! Snapshot tests: two summaries rendered in each format, compared with the exact expected text.

use crate::{read_report, Format, Report, RunReport};
use tokenpipe_cli::{Ending, Input, ToolError};
use tokenpipe_format::Summary;

fn fp8() -> Summary {
    let mut s = Summary {
        label: "fp8".into(),
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
        percentiles: vec![50.0, 99.0],
        ..Summary::default()
    };
    for (key, value) in [
        ("ttft_mean_ms", 11606.981),
        ("ttft_p50_ms", 11121.38),
        ("ttft_p99_ms", 24464.041),
        ("tpot_mean_ms", 190.384),
        ("tpot_p50_ms", 193.391),
        ("tpot_p99_ms", 260.849),
        ("itl_mean_ms", 190.38),
        ("itl_p50_ms", 111.25),
        ("itl_p99_ms", 539.9),
        ("e2el_mean_ms", 35785.2),
        ("e2el_p50_ms", 35111.0),
        ("e2el_p99_ms", 37800.5),
        ("dispatch_lag_p99_ms", 0.0421),
    ] {
        s.stats.0.insert(key.to_string(), Some(value));
    }
    s
}

/// A run where every request failed: no latencies at all.
fn failed() -> Summary {
    Summary {
        label: "awq|v2".into(),
        run_id: "r2".into(),
        requests_ok: 0,
        requests_failed: 10,
        duration_s: 1.5,
        percentiles: vec![50.0, 99.0],
        ..Summary::default()
    }
}

fn report(summaries: &[Summary]) -> Report {
    Report {
        runs: summaries
            .iter()
            .map(|s| RunReport {
                header: None,
                summary: s.clone(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn render(format: Format) -> String {
    crate::Style::Default
        .render(&report(&[fp8(), failed()]), format, &Default::default())
        .unwrap()
        .text
}

#[test]
fn terminal_snapshot() {
    let want = "\
╭─────────────────────────────────┬──────────┬──────────────────╮
│ Metric                          │      fp8 │           awq|v2 │
├─────────────────────────────────┼──────────┼──────────────────┤
│ Comparable                      │      yes │ no: 10/10 failed │
│ Successful requests             │      100 │                0 │
│ Failed requests                 │        0 │               10 │
│ Duration (s)                    │    37.87 │             1.50 │
│ Request throughput (req/s)      │     2.64 │             0.00 │
│ Output token throughput (tok/s) │   338.03 │             0.00 │
│ Total token throughput (tok/s)  │  3042.23 │             0.00 │
│ Mean TTFT (ms)                  │ 11606.98 │                - │
│ Median TTFT (ms)                │ 11121.38 │                - │
│ P99 TTFT (ms)                   │ 24464.04 │                - │
│ Mean TPOT (ms)                  │   190.38 │                - │
│ Median TPOT (ms)                │   193.39 │                - │
│ P99 TPOT (ms)                   │   260.85 │                - │
│ Mean ITL (ms)                   │   190.38 │                - │
│ Median ITL (ms)                 │   111.25 │                - │
│ P99 ITL (ms)                    │   539.90 │                - │
│ ITL jitter (p99/p50)            │     4.85 │                - │
│ Mean E2EL (ms)                  │ 35785.20 │                - │
│ Median E2EL (ms)                │ 35111.00 │                - │
│ P99 E2EL (ms)                   │ 37800.50 │                - │
│ Dispatch lag p99 (ms)           │     0.04 │                - │
╰─────────────────────────────────┴──────────┴──────────────────╯
Not comparable: awq|v2: incomplete: 10 of 10 failed (100.0 %: unknown: 10)";
    assert_eq!(render(Format::Terminal), want);
}

#[test]
fn markdown_snapshot() {
    let want = "\
| Metric                          |      fp8 |          awq\\|v2 |
|---------------------------------|---------:|-----------------:|
| Comparable                      |      yes | no: 10/10 failed |
| Successful requests             |      100 |                0 |
| Failed requests                 |        0 |               10 |
| Duration (s)                    |    37.87 |             1.50 |
| Request throughput (req/s)      |     2.64 |             0.00 |
| Output token throughput (tok/s) |   338.03 |             0.00 |
| Total token throughput (tok/s)  |  3042.23 |             0.00 |
| Mean TTFT (ms)                  | 11606.98 |                - |
| Median TTFT (ms)                | 11121.38 |                - |
| P99 TTFT (ms)                   | 24464.04 |                - |
| Mean TPOT (ms)                  |   190.38 |                - |
| Median TPOT (ms)                |   193.39 |                - |
| P99 TPOT (ms)                   |   260.85 |                - |
| Mean ITL (ms)                   |   190.38 |                - |
| Median ITL (ms)                 |   111.25 |                - |
| P99 ITL (ms)                    |   539.90 |                - |
| ITL jitter (p99/p50)            |     4.85 |                - |
| Mean E2EL (ms)                  | 35785.20 |                - |
| Median E2EL (ms)                | 35111.00 |                - |
| P99 E2EL (ms)                   | 37800.50 |                - |
| Dispatch lag p99 (ms)           |     0.04 |                - |

Not comparable: awq|v2: incomplete: 10 of 10 failed (100.0 %: unknown: 10)";
    assert_eq!(render(Format::Markdown), want);
}

fn input(name: &str, text: &str) -> Input {
    Input {
        reader: Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
        name: name.into(),
    }
}

const HEADER: &str =
    r#"{"type":"header","format_major":1,"tool":"reduce","tool_version":"0.1.0","run_id":"x"}"#;

fn summary_line(s: &Summary) -> String {
    serde_json::to_string(&tokenpipe_format::Record::Summary(Box::new(s.clone()))).unwrap()
}

fn summaries(r: &Report) -> Vec<Summary> {
    r.runs.iter().map(|r| r.summary.clone()).collect()
}

#[test]
fn reads_summaries_across_inputs_with_their_headers() {
    let a = format!(
        "{HEADER}\n{}\n{{\"type\":\"future\"}}\n{HEADER}\n",
        summary_line(&fp8())
    );
    let b = format!("{HEADER}\n{}\n", summary_line(&failed()));
    let got = read_report(vec![input("a", &a), input("b", &b)]).unwrap();
    assert_eq!(summaries(&got), vec![fp8(), failed()]);
    assert!(got
        .runs
        .iter()
        .all(|r| r.header.as_ref().map(|h| h.run_id.as_str()) == Some("x")));
}

#[test]
fn summary_lines_without_a_header_are_read() {
    // What `jq -c 'select(.type=="summary")'` leaves.
    let text = format!("{}\n{}\n", summary_line(&fp8()), summary_line(&failed()));
    let got = read_report(vec![input("picked", &text)]).unwrap();
    assert_eq!(summaries(&got), vec![fp8(), failed()]);
    assert_eq!(got.runs[0].header, None);
}

#[test]
fn events_are_the_wrong_input_and_say_so() {
    let text = format!("{HEADER}\n{{\"type\":\"token\",\"id\":1,\"at_ns\":0,\"tokens\":1}}\n");
    let err = read_report(vec![input("run.ndjson", &text)]).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("run.ndjson: line 2: this is not summaries"),
        "{msg}"
    );
    assert!(msg.contains("which fire writes and reduce reads"), "{msg}");
    assert!(
        msg.contains("summarise the events with reduce first"),
        "{msg}"
    );
    assert_eq!(err.ending(), Ending::BadInput);
}

#[test]
fn a_schedule_says_to_run_fire_and_reduce() {
    let text = format!("{HEADER}\n{{\"type\":\"schedule\",\"id\":0,\"at_ns\":0}}\n");
    let err = read_report(vec![input("plan.ndjson", &text)]).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("plan.ndjson: line 2"), "{msg}");
    assert!(
        msg.contains("send it with fire and summarise the events with reduce"),
        "{msg}"
    );
    assert_eq!(err.ending(), Ending::BadInput);
}

#[test]
fn no_summaries_is_bad_input() {
    let err = read_report(vec![input("a", &format!("{HEADER}\n"))]).unwrap_err();
    assert!(
        err.to_string().contains("no summary records in input"),
        "{err}"
    );
    assert_eq!(err.ending(), Ending::BadInput);
}

#[test]
fn bad_records_name_source_and_line() {
    let text = format!("{HEADER}\n{{\"type\":\"summary\",\"label\":3}}\n");
    let err = read_report(vec![input("s.ndjson", &text)]).unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("s.ndjson: line 2:"), "{msg}");
    assert!(
        matches!(&err, crate::Error::Read(r) if r.is_bad_input()),
        "{err:?}"
    );
    assert_eq!(err.ending(), Ending::BadInput);
}
