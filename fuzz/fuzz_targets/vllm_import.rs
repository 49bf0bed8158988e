//! The importer of vLLM's result files (`reduce --from-vllm FILE`): no panic on any file; what
//! it accepts is a stream of records in time order that reads back whole and (for one mode
//! byte in four) goes through reduce and table without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tokenpipe_format::writer::encode_record;
use tokenpipe_format::Record;
use tokenpipe_fuzz::same_json;

/// The time of an event record, if it has one.
fn at(r: &Record) -> Option<u64> {
    match r {
        Record::Sent(s) => Some(s.sent_ns),
        Record::Token(t) => Some(t.at_ns),
        _ => None,
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, file)) = data.split_first() else {
        return;
    };
    let Ok(records) = tokenpipe_reduce::import_vllm(file, "result.json", vec!["reduce".into()])
    else {
        return;
    };
    assert!(
        matches!(records.first(), Some(Record::Header(_))),
        "no header first"
    );
    let times: Vec<u64> = records.iter().filter_map(at).collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "events out of time order: {times:?}"
    );
    // Each request is sent before its tokens and its end, which come no earlier.
    let mut sent = std::collections::HashMap::new();
    for r in &records {
        match r {
            Record::Sent(s) => assert!(sent.insert(s.id, s.sent_ns).is_none(), "sent twice: {r:?}"),
            Record::Token(t) => assert!(
                sent.get(&t.id).is_some_and(|&s| s <= t.at_ns),
                "{r:?} before its sent"
            ),
            Record::Done(d) => assert!(
                sent.get(&d.id).is_some_and(|&s| s <= d.at_ns),
                "{r:?} before its sent"
            ),
            _ => {}
        }
    }
    let mut stream = Vec::new();
    for r in &records {
        encode_record(&mut stream, r);
    }
    let mut reader = tokenpipe_fuzz::reader(0, &stream);
    let mut read = 0;
    while let Some(r) = reader.next_record().expect("an imported stream reads back") {
        // The same record, where a float may come back one ulp off: serde_json's default float
        // parser is best-effort (BENCHMARKS.md, "Fuzzing"; a header's `duration_s` of
        // 20.144584858999902 read back as …906 was this target's first finding).
        let (back, sent) = (
            serde_json::to_value(&r),
            serde_json::to_value(&records[read]),
        );
        let (back, sent) = (back.expect("a record"), sent.expect("a record"));
        assert!(same_json(&back, &sent), "{back} read back for {sent}");
        read += 1;
    }
    assert_eq!(read, records.len());
    // One input in four goes on through reduce and table (the reduce_events target covers
    // those in depth; they cost three times the import).
    if mode & 0xc0 == 0 {
        let span = times.last().zip(times.first()).map_or(0, |(l, f)| l - f);
        tokenpipe_fuzz::reduce_and_render_over(mode, stream, span);
    }
});
