//! The reader against hand-written streams: every rule of the module docs, and no panic on any
//! cut of a valid stream.

use super::*;
use crate::records::*;

const HEADER: &str =
    r#"{"type":"header","format_major":1,"tool":"t","tool_version":"0","run_id":"r"}"#;

fn read_all(text: &str) -> Result<Vec<Record>, ReadError> {
    let mut r = RecordReader::new(text.as_bytes(), "<test>");
    let mut out = vec![];
    while let Some(rec) = r.next_record()? {
        out.push(rec);
    }
    Ok(out)
}

#[test]
fn reads_known_and_skips_unknown() {
    let text = format!(
        "{HEADER}\n\n{{\"type\":\"future\",\"x\":1}}\n{{\"type\":\"token\",\"id\":3,\"at_ns\":10,\"tokens\":1,\"extra\":true}}\n"
    );
    let recs = read_all(&text).unwrap();
    assert_eq!(recs.len(), 2);
    assert_eq!(
        recs[1],
        Record::Token(Token {
            id: 3,
            at_ns: 10,
            tokens: 1,
            empty: false,
            reasoning: false,
        })
    );
}

#[test]
fn names_line_and_field() {
    let text = format!("{HEADER}\n{{\"type\":\"token\",\"id\":3,\"at_ns\":\"x\",\"tokens\":1}}\n");
    let err = read_all(&text).unwrap_err().to_string();
    assert!(err.contains("line 2"), "{err}");
    assert!(err.contains("field \"at_ns\""), "{err}");
}

#[test]
fn names_missing_field() {
    let text = format!("{HEADER}\n{{\"type\":\"token\",\"id\":3,\"tokens\":1}}\n");
    let err = read_all(&text).unwrap_err().to_string();
    assert!(err.contains("line 2") && err.contains("at_ns"), "{err}");
}

#[test]
fn rejects_bad_json_with_line() {
    let text = format!("{HEADER}\n{{\"type\":\"token\",\n");
    let err = read_all(&text).unwrap_err();
    assert!(err.is_bad_input());
    assert!(err.to_string().contains("line 2"), "{err}");
}

#[test]
fn rejects_newer_major() {
    let err = read_all(
        r#"{"type":"header","format_major":9,"tool":"t","tool_version":"0","run_id":"r"}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("major version 9"), "{err}");
}

#[test]
fn requires_header_first() {
    let err = read_all("{\"type\":\"token\",\"id\":1,\"at_ns\":1,\"tokens\":1}\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("header"), "{err}");
    let mut r = RecordReader::new(&b""[..], "<test>");
    assert!(r
        .read_header()
        .unwrap_err()
        .to_string()
        .contains("empty input"));
}

#[test]
fn truncated_stream_never_panics() {
    let full = format!(
        "{HEADER}\n{{\"type\":\"done\",\"id\":1,\"at_ns\":5,\"ok\":true,\"events\":2,\"error\":\"a\\\"b\"}}\n"
    );
    for cut in 0..full.len() {
        let _ = read_all(&full[..cut]);
    }
}

fn read_with(reader: RecordReader<&[u8]>) -> (Result<Vec<Record>, ReadError>, Option<usize>) {
    let mut r = reader;
    let mut out = vec![];
    loop {
        match r.next_record() {
            Ok(Some(rec)) => out.push(rec),
            Ok(None) => return (Ok(out), r.truncated_tail()),
            Err(e) => return (Err(e), r.truncated_tail()),
        }
    }
}

#[test]
fn a_cut_last_line_ends_the_stream_and_is_reported() {
    let text = format!("{HEADER}\n{{\"type\":\"token\",\"id\":3,\"at_ns\":10,\"tokens\":1}}\n{{\"type\":\"token\",\"id\":3,\"at");
    let (recs, cut) = read_with(RecordReader::new(text.as_bytes(), "<t>"));
    assert_eq!(recs.unwrap().len(), 2);
    assert_eq!(cut, Some(3));
    // A whole last line without its newline is a record like any other.
    let text = format!("{HEADER}\n{{\"type\":\"token\",\"id\":3,\"at_ns\":10,\"tokens\":1}}");
    let (recs, cut) = read_with(RecordReader::new(text.as_bytes(), "<t>"));
    assert_eq!(recs.unwrap().len(), 2);
    assert_eq!(cut, None);
    // The same damage in the middle of a stream is an error.
    let text = format!("{HEADER}\n{{\"type\":\"token\",\"id\":3,\"at\n{HEADER}\n");
    let (recs, _) = read_with(RecordReader::new(text.as_bytes(), "<t>"));
    assert!(recs.unwrap_err().to_string().contains("line 2"));
}

#[test]
fn a_line_past_the_cap_is_refused_without_buffering_it_whole() {
    let long = format!(
        "{HEADER}\n{{\"type\":\"x\",\"pad\":\"{}\"}}\n",
        "a".repeat(5000)
    );
    let (recs, _) = read_with(RecordReader::new(long.as_bytes(), "<t>").max_line_bytes(1024));
    let err = recs.unwrap_err().to_string();
    assert!(
        err.contains("line 2") && err.contains("longer than"),
        "{err}"
    );
    // An endless line without a newline stops at the cap too.
    struct Endless;
    impl std::io::Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            buf.fill(b'x');
            Ok(buf.len())
        }
    }
    let mut r = RecordReader::new(std::io::BufReader::new(Endless), "<t>").max_line_bytes(1 << 20);
    assert!(r
        .next_record()
        .unwrap_err()
        .to_string()
        .contains("longer than"));
}

#[test]
fn kept_types_only_and_skipped_lines_are_not_parsed() {
    // The token line is invalid as a token, but it is skipped without a full parse.
    let text = format!(
        "{HEADER}\n{{\"type\":\"token\",\"id\":\"not a number\"}}\n{{\"type\":\"done\",\"id\":1,\"at_ns\":5,\"ok\":true,\"events\":0}}\n"
    );
    let (recs, _) = read_with(RecordReader::new(text.as_bytes(), "<t>").keep(&[RecordType::Done]));
    let recs = recs.unwrap();
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[1].record_type(), RecordType::Done);
}

#[test]
fn wrong_input_names_what_it_is_and_who_reads_it() {
    let text = format!("{HEADER}\n{{\"type\":\"sent\",\"id\":1,\"sent_ns\":5}}\n");
    let (recs, _) = read_with(
        RecordReader::new(text.as_bytes(), "run.ndjson")
            .keep(&[RecordType::Request])
            .reject(&[RecordType::Sent], "a schedule (what arrivals writes)"),
    );
    let err = recs.unwrap_err();
    assert!(err.is_bad_input());
    assert_eq!(
        err.to_string(),
        "run.ndjson: line 2: this is not a schedule (what arrivals writes): it holds \"sent\" records, which fire writes and reduce reads"
    );
}

#[test]
fn headerless_streams_when_allowed() {
    let text = "{\"type\":\"done\",\"id\":1,\"at_ns\":5,\"ok\":true,\"events\":0}\n";
    let (recs, _) = read_with(RecordReader::new(text.as_bytes(), "<t>").headerless());
    assert_eq!(recs.unwrap().len(), 1);
    let (recs, _) = read_with(RecordReader::new(text.as_bytes(), "<t>"));
    assert!(recs.is_err());
}

#[test]
fn every_header_starts_a_run_and_is_version_checked() {
    let newer = HEADER.replace("\"format_major\":1", "\"format_major\":2");
    let text = format!("{HEADER}\n{HEADER}\n");
    let (recs, _) = read_with(RecordReader::new(text.as_bytes(), "<t>"));
    assert_eq!(recs.unwrap().len(), 2);
    let text = format!("{HEADER}\n{newer}\n");
    let (recs, _) = read_with(RecordReader::new(text.as_bytes(), "<t>"));
    assert!(recs.unwrap_err().to_string().contains("line 2"));
}

#[test]
fn type_probe_fast_path_and_fallback_agree() {
    for (line, want) in [
        (&br#"{"type":"token","id":1}"#[..], Some("token")),
        (br#"{ "id":1, "type":"token"}"#, Some("token")),
        (br#"{"type":"to\"ken"}"#, Some("to\"ken")),
        (br#"{"id":1}"#, None),
    ] {
        assert_eq!(record_kind(line).unwrap().as_deref(), want);
    }
    assert!(record_kind(b"{oops").is_err());
}

#[test]
fn a_second_type_member_is_named_with_its_column() {
    for line in [
        r#"{"type":"sent","type":"sent","id":0,"sent_ns":5}"#,
        r#"{"type":"sent","id":0,"type":"token","sent_ns":5}"#,
    ] {
        let err = read_all(&format!("{HEADER}\n{line}\n"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 2") && err.contains("duplicate field \"type\" (column "),
            "{err}"
        );
    }
}
