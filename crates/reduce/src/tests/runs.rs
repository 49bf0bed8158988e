//! The driver over several inputs: one header, one summary per input, labels, killed runs.

use super::*;
use tokenpipe_format::Record;

fn input(name: &str, text: String) -> (&str, String) {
    (name, text)
}

fn run_inputs(
    inputs: Vec<(&str, String)>,
    labels: &[String],
) -> Result<(Vec<Record>, String), crate::Error> {
    drive(
        inputs,
        labels,
        &crate::SummaryOptions::default(),
        crate::RunsOptions::default(),
    )
}

#[test]
fn truncated_run_counts_unfinished_as_failed_and_warns() {
    let mut lines = two_requests();
    lines.push(sent(9, 1_200 * MS, 1_200 * MS));
    lines.push(token(9, 1_250 * MS, 1));
    let (records, warn) = run_inputs(vec![input("killed.ndjson", stream(&lines))], &[]).unwrap();
    assert_eq!(
        warn,
        "reduce: killed.ndjson: run run-1: 1 requests had no done record; counted as failed\n"
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
    let third = stream(&two_requests()).replacen("run-1", "run-3", 1);
    let inputs = vec![
        input("a.ndjson", stream(&two_requests())),
        input("b.ndjson", second),
        input("c.ndjson", third),
    ];
    let labels = ["fp8".to_string(), "awq".to_string()];
    let (records, warn) = run_inputs(inputs, &labels).unwrap();
    assert_eq!(warn, "");
    let kinds: Vec<&str> = records.iter().map(Record::type_name).collect();
    assert_eq!(
        kinds,
        ["header", "summary", "header", "summary", "header", "summary"]
    );
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
    let (Record::Summary(a), Record::Summary(b), Record::Summary(c)) =
        (&records[1], &records[3], &records[5])
    else {
        panic!("{records:?}")
    };
    assert_eq!((a.label.as_str(), a.run_id.as_str()), ("fp8", "run-1"));
    assert_eq!((b.label.as_str(), b.run_id.as_str()), ("awq", "run-2"));
    // Past the labels given: the model from the header chain.
    assert_eq!((c.label.as_str(), c.run_id.as_str()), ("m-7b", "run-3"));
    assert_eq!(
        a.stat("ttft", StatName::Mean),
        b.stat("ttft", StatName::Mean)
    );
}

#[test]
fn one_label_names_every_run() {
    let second = stream(&two_requests()).replacen("run-1", "run-2", 1);
    let inputs = vec![
        input("a.ndjson", stream(&two_requests())),
        input("b.ndjson", second),
    ];
    let (records, _) = run_inputs(inputs, &["fp8".to_string()]).unwrap();
    let labels: Vec<&str> = records
        .iter()
        .filter_map(|r| match r {
            Record::Summary(s) => Some(s.label.as_str()),
            _ => None,
        })
        .collect();
    // Two runs of one configuration under one name, and their group.
    assert_eq!(labels, ["fp8", "fp8", "fp8"]);
}

#[test]
fn default_label_falls_back_to_run_id() {
    let text = "{\"type\":\"header\",\"format_major\":1,\"tool\":\"fire\",\"tool_version\":\"0\",\"run_id\":\"r-9\"}\n";
    let mut reader = RecordReader::new(text.as_bytes(), "<test>");
    let h = reader.read_header().unwrap();
    assert_eq!(crate::default_label(&h), "r-9");
}

#[test]
fn every_header_starts_a_run_with_its_own_summary_and_provenance() {
    // `for c in 1 2; do ... | fire; done | reduce`: two runs in one stream.
    let first = stream(&two_requests());
    let second = stream(&two_requests()).replacen("run-1", "run-2", 1);
    let (records, warn) = run_inputs(vec![input("-", first + &second)], &[]).unwrap();
    assert_eq!(warn, "");
    let kinds: Vec<&str> = records.iter().map(Record::type_name).collect();
    // Two runs of one configuration: their own summaries, then the group's.
    assert_eq!(
        kinds,
        ["header", "summary", "header", "summary", "header", "summary"]
    );
    let (Record::Header(h1), Record::Header(h2)) = (&records[0], &records[2]) else {
        panic!("{records:?}")
    };
    assert_eq!(
        (h1.run_id.as_str(), h2.run_id.as_str()),
        ("run-1-reduce", "run-2-reduce")
    );
    assert_eq!(h2.upstream.last().map(|h| h.run_id.as_str()), Some("run-2"));
    let Record::Summary(s2) = &records[3] else {
        panic!("{records:?}")
    };
    assert_eq!((s2.run_id.as_str(), s2.requests_ok), ("run-2", 2));
}

#[test]
fn a_run_cut_mid_line_still_reduces() {
    let mut text = stream(&two_requests());
    text.push_str(r#"{"type":"sent","id":9,"sched"#);
    let (records, warn) = run_inputs(vec![input("cut.ndjson", text)], &[]).unwrap();
    assert!(warn.contains("cut.ndjson: line 16 is cut off"), "{warn}");
    let Record::Summary(s) = &records[1] else {
        panic!("{records:?}")
    };
    assert_eq!(s.requests_ok, 2);
}

#[test]
fn stalls_are_counted_and_reported() {
    let mut lines = two_requests();
    lines.push(r#"{"type":"stall","at_ns":5,"duration_ns":2500000,"buffered_bytes":100}"#.into());
    let (records, warn) = run_inputs(vec![input("s.ndjson", stream(&lines))], &[]).unwrap();
    assert!(warn.contains("blocked 1 times for 2.5 ms"), "{warn}");
    let Record::Summary(s) = &records[1] else {
        panic!("{records:?}")
    };
    assert_eq!((s.output_stalls, s.output_stall_ms), (1, 2.5));
}

#[test]
fn the_client_record_is_carried_into_the_summary_and_a_lapse_is_reported() {
    let mut lines = two_requests();
    lines.push(
        r#"{"type":"client","wall_ns":2000000000,"cpu_user_ns":300000000,"cpu_system_ns":200000000,"cpu_busy":0.25,"threads":1,"sent":2,"ok":2,"failed":0,"cancelled":0,"not_sent":0,"peak_in_flight":2,"kept_up":false,"warnings":["3 of 200 requests left late"]}"#
            .into(),
    );
    let (records, warn) = run_inputs(vec![input("c.ndjson", stream(&lines))], &[]).unwrap();
    assert!(
        warn.contains("the client did not keep up") && warn.contains("3 of 200 requests left late"),
        "{warn}"
    );
    let Record::Summary(s) = &records[1] else {
        panic!("{records:?}")
    };
    assert_eq!(s.client_kept_up, Some(false));
    assert_eq!(s.client_warnings, ["3 of 200 requests left late"]);
    assert_eq!(s.client_cpu_s, Some(0.5));
    // Without a client record (an older fire, a killed run) the fields stay out.
    let (records, warn) =
        run_inputs(vec![input("n.ndjson", stream(&two_requests()))], &[]).unwrap();
    let Record::Summary(s) = &records[1] else {
        panic!("{records:?}")
    };
    assert_eq!((s.client_kept_up, s.client_cpu_s), (None, None));
    assert!(!warn.contains("keep up"), "{warn}");
}

#[test]
fn a_schedule_or_summaries_are_the_wrong_input() {
    let schedule = format!(
        "{}\n{{\"type\":\"request\",\"id\":0,\"max_tokens\":4}}\n",
        header("a")
    );
    let err = run_inputs(vec![input("plan.ndjson", schedule)], &[])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("plan.ndjson: line 2: this is not fire's events"),
        "{err}"
    );
    assert!(
        err.contains("which arrivals writes and fire reads"),
        "{err}"
    );
}
