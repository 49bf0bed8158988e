//! A reader of this minor version reads a stream written by a newer minor version: record types,
//! fields and enum values it does not know are skipped or kept as strings, never refused. The
//! fixture is what a future 1.11 writer might produce.

use tokenpipe_format::{
    ErrorKind, LoopMode, OrOther, Record, RecordReader, RecordType, StatName, FORMAT_MINOR,
};

const NEWER: &str = include_str!("../fixtures/format/newer-minor.ndjson");

fn read_all(reader: &mut RecordReader<&[u8]>) -> Vec<Record> {
    let mut out = vec![];
    while let Some(r) = reader
        .next_record()
        .expect("a newer minor version must be readable")
    {
        out.push(r);
    }
    out
}

#[test]
fn an_older_minor_reader_accepts_a_newer_minor_stream() {
    const {
        assert!(
            FORMAT_MINOR < 11,
            "the fixture must stay newer than this build"
        )
    };
    let mut reader = RecordReader::new(NEWER.as_bytes(), "newer-minor.ndjson");
    let records = read_all(&mut reader);
    let types: Vec<&str> = records.iter().map(Record::type_name).collect();
    assert_eq!(
        types,
        [
            "header", "schedule", "request", "request", "header", "sent", "token", "stall", "done",
            "done", "summary", "stamp"
        ],
        "only the unknown \"checkpoint\" line is skipped"
    );
    let Record::Schedule(s) = &records[1] else {
        unreachable!()
    };
    assert_eq!(s.mode, OrOther::Other("ramp".into()));
    assert!(!s.mode.is(LoopMode::Open));
    let Record::Request(r) = &records[3] else {
        unreachable!()
    };
    assert_eq!(r.grouping.session.as_deref(), Some("s1"));
    assert_eq!(
        r.grouping.tags.get("class").map(String::as_str),
        Some("short")
    );
    assert_eq!(r.prompt_tokens, Some(2));
    let Record::Request(r) = &records[2] else {
        unreachable!()
    };
    assert_eq!(r.prompt_tokens, None, "prompt_tokens is optional");
    let Record::Header(h) = &records[4] else {
        unreachable!()
    };
    assert_eq!(
        (h.host.as_deref(), h.shard.map(|s| s.index)),
        (Some("node-7"), Some(1))
    );
    let Record::Done(d) = &records[8] else {
        unreachable!()
    };
    assert_eq!(d.error_kind, Some(OrOther::Other("rate_limited".into())));
    let Record::Done(d) = &records[9] else {
        unreachable!()
    };
    assert_eq!(d.error_kind, Some(OrOther::Known(ErrorKind::NotSent)));
    let Record::Summary(s) = &records[10] else {
        unreachable!()
    };
    assert_eq!(s.stat("ttft", StatName::Percentile(99.9)), Some(1.5));
    assert_eq!(s.percentiles, [50.0, 99.9]);
}

#[test]
fn a_reader_that_keeps_a_few_types_skips_the_rest() {
    let mut reader =
        RecordReader::new(NEWER.as_bytes(), "newer-minor.ndjson").keep(&[RecordType::Done]);
    let records = read_all(&mut reader);
    let types: Vec<&str> = records.iter().map(Record::type_name).collect();
    assert_eq!(types, ["header", "header", "done", "done"]);
}

#[test]
fn round_trips_keep_unknown_enum_values() {
    let mut reader = RecordReader::new(NEWER.as_bytes(), "newer-minor.ndjson");
    for record in read_all(&mut reader) {
        let text = serde_json::to_string(&record).expect("serialise");
        let back: Record = serde_json::from_str(&text).expect("parse back");
        assert_eq!(back, record, "{text}");
    }
}
