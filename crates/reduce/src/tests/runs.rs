//! The driver over several inputs: one header, one summary per input, labels, killed runs.

use super::*;
use crate::reduce_inputs;
use tokenpipe_cli::Input;
use tokenpipe_format::{Record, RecordWriter};

fn input(name: &str, text: String) -> Input {
    Input {
        reader: Box::new(std::io::Cursor::new(text.into_bytes())),
        name: name.into(),
    }
}

fn run_inputs(inputs: Vec<Input>, labels: &[String]) -> anyhow::Result<(Vec<Record>, String)> {
    let mut bytes = Vec::new();
    let mut warn = Vec::new();
    {
        let mut out = RecordWriter::new(&mut bytes);
        reduce_inputs(inputs, labels, vec!["reduce".into()], &mut out, &mut warn)?;
        out.flush()?;
    }
    let mut reader = RecordReader::new(&bytes[..], "<out>");
    let mut records = vec![];
    while let Some(r) = reader.next_record()? {
        records.push(r);
    }
    Ok((records, String::from_utf8(warn)?))
}

#[test]
fn truncated_run_counts_unfinished_as_failed_and_warns() {
    let mut lines = two_requests();
    lines.push(sent(9, 1_200 * MS, 1_200 * MS));
    lines.push(token(9, 1_250 * MS, 1));
    let (records, warn) = run_inputs(vec![input("killed.ndjson", stream(&lines))], &[]).unwrap();
    assert_eq!(
        warn,
        "reduce: killed.ndjson: 1 requests had no done record; counted as failed\n"
    );
    let Record::Summary(s) = &records[1] else {
        panic!("{records:?}")
    };
    assert_eq!(s.requests_ok, 2);
    assert_eq!(s.requests_failed, 1);
    assert_eq!(s.stat("ttft", StatName::Mean), Some(60.0));
}

#[test]
fn one_summary_per_input_with_labels_and_chained_header() {
    let second = stream(&two_requests()).replacen("run-1", "run-2", 1);
    let inputs = vec![
        input("a.ndjson", stream(&two_requests())),
        input("b.ndjson", second),
    ];
    let (records, warn) = run_inputs(inputs, &["fp8".to_string()]).unwrap();
    assert_eq!(warn, "");
    assert_eq!(records.len(), 3);
    let Record::Header(h) = &records[0] else {
        panic!("{records:?}")
    };
    assert_eq!(h.tool, "reduce");
    assert_eq!(h.run_id, "run-1-reduce");
    assert_eq!(h.format_major, tokenpipe_format::FORMAT_MAJOR);
    assert_eq!(h.argv, vec!["reduce".to_string()]);
    assert!(h.started_at.is_some());
    let tools: Vec<&str> = h.upstream.iter().map(|u| u.tool.as_str()).collect();
    assert_eq!(tools, ["arrivals", "fire"]);
    let (Record::Summary(a), Record::Summary(b)) = (&records[1], &records[2]) else {
        panic!("{records:?}")
    };
    assert_eq!((a.label.as_str(), a.run_id.as_str()), ("fp8", "run-1"));
    // No --label for the second input: the model from the header chain.
    assert_eq!((b.label.as_str(), b.run_id.as_str()), ("m-7b", "run-2"));
    assert_eq!(
        a.stat("ttft", StatName::Mean),
        b.stat("ttft", StatName::Mean)
    );
}

#[test]
fn default_label_falls_back_to_run_id() {
    let text = "{\"type\":\"header\",\"format_major\":1,\"tool\":\"fire\",\"tool_version\":\"0\",\"run_id\":\"r-9\"}\n";
    let mut reader = RecordReader::new(text.as_bytes(), "<test>");
    let h = reader.read_header().unwrap();
    assert_eq!(crate::default_label(&h), "r-9");
}

#[test]
fn many_sequential_requests_leave_nothing_in_flight() {
    let mut reducer = crate::Reducer::new();
    for id in 0..10_000u64 {
        let t = id * 1_000;
        let recs = [
            Record::Sent(tokenpipe_format::Sent {
                id,
                scheduled_ns: None,
                sent_ns: t,
            }),
            Record::Token(tokenpipe_format::Token {
                id,
                at_ns: t + 10,
                tokens: 1,
            }),
        ];
        for r in &recs {
            reducer.push(r, 1).unwrap();
        }
        assert_eq!(reducer.in_flight(), 1);
        let d = done(id, t + 20, true, "");
        let Ok(Record::Done(d)) = serde_json::from_str::<Record>(&d) else {
            panic!("bad test record")
        };
        reducer.push(&Record::Done(d), 1).unwrap();
        assert_eq!(reducer.in_flight(), 0);
    }
    let (stats, unfinished) = reducer.finish().unwrap();
    assert_eq!((stats.requests_ok, unfinished), (10_000, 0));
}
