//! Each stage used as a library, without a command line: arrivals writes a schedule from a
//! `Plan` built in code, reduce folds a stream under a `Config`, table renders the summaries
//! under its `Options`. These are the documented entry points (docs/architecture.md).

use std::io::Cursor;
use tokenpipe_arrivals::process::{self, ProcessSpec};
use tokenpipe_arrivals::prompts::{self, DistKind, LengthDist, PromptSpec, Shape, Words};
use tokenpipe_arrivals::session::Sessions;
use tokenpipe_arrivals::{arrival_rng, prompt_rng, Bounds, Plan};
use tokenpipe_cli::Input;
use tokenpipe_format::{Header, Record, RecordWriter};

fn records(bytes: &[u8]) -> Vec<Record> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a record"))
        .collect()
}

fn input(name: &str, bytes: Vec<u8>) -> Input {
    Input {
        reader: Box::new(Cursor::new(bytes)),
        name: name.into(),
    }
}

#[test]
fn a_plan_built_in_code_writes_a_schedule() {
    let seed = 3;
    let process = process::build(ProcessSpec::Closed { concurrency: 2 }, arrival_rng(seed))
        .expect("a closed loop of 2");
    let prompts = prompts::build(PromptSpec::Synthetic {
        input: LengthDist::new(8, DistKind::Uniform, 0.0).expect("fixed length"),
        output: LengthDist::new(4, DistKind::Uniform, 0.0).expect("fixed length"),
        shape: Shape::Distinct,
        prefixes: None,
        maker: Box::new(Words),
        seed,
        vllm: None,
        depth: 0,
    })
    .expect("synthetic prompts");
    let plan = Plan {
        header: Header::new("arrivals", "arrivals-library".into(), vec![]),
        process,
        prompts,
        prompt_rng: prompt_rng(seed),
        bounds: Bounds {
            count: Some(5),
            ..Bounds::default()
        },
        sessions: Sessions::none(arrival_rng(seed)),
        shard: None,
        salt_tokens: 0,
    };
    let mut out = Vec::new();
    plan.write(&mut out).expect("written");
    let records = records(&out);
    let requests = records
        .iter()
        .filter(|r| matches!(r, Record::Request(_)))
        .count();
    assert_eq!(requests, 5);
    assert!(matches!(&records[1], Record::Schedule(s) if s.concurrency == Some(2)));
}

#[test]
fn reduce_and_table_run_on_streams_in_memory() {
    let events = concat!(
        r#"{"type":"header","format_major":1,"format_minor":7,"tool":"fire","tool_version":"0","run_id":"fire-lib","argv":["fire"]}"#,
        "\n",
        r#"{"type":"sent","id":0,"scheduled_ns":0,"sent_ns":0}"#,
        "\n",
        r#"{"type":"token","id":0,"at_ns":20000000,"tokens":1}"#,
        "\n",
        r#"{"type":"token","id":0,"at_ns":30000000,"tokens":1}"#,
        "\n",
        r#"{"type":"done","id":0,"at_ns":30000000,"ok":true,"events":2,"prompt_tokens":8,"completion_tokens":2}"#,
        "\n",
    );
    let mut bytes = Vec::new();
    let mut summaries = RecordWriter::new(&mut bytes);
    let mut warnings = Vec::new();
    tokenpipe_reduce::reduce(
        tokenpipe_reduce::Config::default(),
        vec![input("<events>", events.as_bytes().to_vec())],
        &mut summaries,
        &mut warnings,
    )
    .expect("reduced");
    summaries.flush().expect("flushed");
    drop(summaries);
    let summary = records(&bytes)
        .into_iter()
        .find_map(|r| match r {
            Record::Summary(s) => Some(s),
            _ => None,
        })
        .expect("a summary");
    assert_eq!(summary.requests_ok, 1);
    let verdict = summary.verdict.as_ref().expect("a verdict");
    assert_eq!(verdict.complete.ok, Some(true), "{verdict:?}");
    assert_eq!(
        summary.stat("ttft", tokenpipe_format::StatName::Mean),
        Some(20.0)
    );

    let report = tokenpipe_table::read_report(vec![input("<summaries>", bytes)]).expect("read");
    let rendered = tokenpipe_table::Style::default()
        .render(
            &report,
            tokenpipe_table::Format::Csv,
            &tokenpipe_table::Options::default(),
        )
        .expect("rendered");
    let mut lines = rendered
        .text
        .lines()
        .map(|l| l.split(',').collect::<Vec<_>>());
    let (head, row) = (lines.next().expect("a head"), lines.next().expect("a row"));
    let cell = |name: &str| row[head.iter().position(|h| *h == name).expect(name)];
    assert_eq!((cell("requests_ok"), cell("ttft_mean_ms")), ("1", "20.0"));
}
