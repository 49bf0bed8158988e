//! The NDJSON record reader, set up as each tool sets up its own (every record; fire's
//! schedule; reduce's events; table's summaries): no panic on any input, every record it
//! returns is what serde reads from that line (the hand parser of fire's hot lines included),
//! and every record written back reads as the same record.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tokenpipe_format::writer::encode_record;
use tokenpipe_format::Record;
use tokenpipe_fuzz::{reader, same_json};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, text)) = data.split_first() else {
        return;
    };
    let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    let mut r = reader(mode, text);
    for _ in 0..lines.len() + 1 {
        let record = match r.next_record() {
            Ok(Some(record)) => record,
            Ok(None) | Err(_) => break,
        };
        let line = lines[r.line() - 1];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let by_serde: Record =
            serde_json::from_slice(line).expect("serde reads what the reader read");
        assert_eq!(
            record,
            by_serde,
            "the reader and serde differ on {:?}",
            String::from_utf8_lossy(line)
        );
        let mut written = Vec::new();
        encode_record(&mut written, &record);
        let back: Record = serde_json::from_slice(&written).expect("a written record reads back");
        let (a, b) = (
            serde_json::to_value(&record).expect("a record is JSON"),
            serde_json::to_value(&back).expect("a record is JSON"),
        );
        assert!(
            same_json(&a, &b),
            "{record:?} was written as {:?} and read back as {back:?}",
            String::from_utf8_lossy(&written)
        );
    }
});
