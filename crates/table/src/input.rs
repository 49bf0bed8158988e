//! Reads the runs to render: every `summary` record of every input, each with the header of its
//! run. Summary lines without a header (picked out of a stream with `jq`) are read too; other
//! tools' records are refused with a pointer to the tool that reads them. An input that is a
//! `vllm bench serve` result file instead is told apart by its content (see [`sniff`]) and read
//! by [`crate::vllm_file`].

use crate::error::Error;
use crate::report::{Report, RunReport};
use crate::vllm_file::run_from_vllm;
use serde_json::{Map, Value};
use std::io::{BufRead, Cursor, Read};
use tokenpipe_cli::Input;
use tokenpipe_format::reader::MAX_LINE_BYTES;
use tokenpipe_format::vllm::ResultFile;
use tokenpipe_format::{ReadError, Record, RecordReader, RecordType};

/// Reads every summary of `inputs`, in order. No summaries at all is bad input.
pub fn read_report(inputs: Vec<Input>) -> Result<Report, Error> {
    let mut report = Report::default();
    for input in inputs {
        match sniff(input.reader, &input.name)? {
            Content::Records(reader) => read_one(reader, input.name, &mut report)?,
            Content::Vllm(objects) => {
                let numbered = objects.len() > 1;
                for (line, object) in objects {
                    let line = numbered.then_some(line);
                    report.runs.push(run_from_vllm(object, &input.name, line)?);
                }
            }
        }
    }
    if report.runs.is_empty() {
        return Err(match report.sweeps.last() {
            Some(sweep) => Error::EmptySweep(sweep.reason.clone()),
            None => Error::NoSummaries,
        });
    }
    Ok(report)
}

/// What an input holds.
enum Content {
    /// Our NDJSON records, with the bytes read to tell put back in front.
    Records(Box<dyn BufRead + Send>),
    /// vLLM result objects, each with the line it starts on.
    Vllm(Vec<(usize, Map<String, Value>)>),
}

/// Tells a vLLM result file from our records by its first non-blank line. A line that is a
/// whole JSON object with a `type` is one of our records; one with vLLM's `completed` and
/// `duration` and no `type` starts a file of vLLM results, one per line (`--append-result`);
/// a line `{` alone starts one pretty-printed object, read whole. Anything else is left to the
/// record reader, whose messages name the line and field.
fn sniff(mut reader: Box<dyn BufRead + Send>, name: &str) -> Result<Content, Error> {
    let mut seen = Vec::new();
    let mut line_no = 0;
    let first = loop {
        let mut line = Vec::new();
        if !read_capped_line(&mut reader, &mut line, name, line_no + 1)? {
            break None;
        }
        line_no += 1;
        seen.extend_from_slice(&line);
        if !line.iter().all(u8::is_ascii_whitespace) {
            break Some(line);
        }
    };
    let records = |seen: Vec<u8>, rest: Box<dyn BufRead + Send>| {
        Ok(Content::Records(Box::new(Cursor::new(seen).chain(rest))))
    };
    let Some(first) = first else {
        return records(seen, reader);
    };
    let trimmed = first.trim_ascii();
    if !trimmed.starts_with(b"{") {
        return records(seen, reader);
    }
    if let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(trimmed) {
        if object.contains_key("type") {
            return records(seen, reader);
        }
        let mut objects = vec![(line_no, checked(object, name, line_no)?)];
        let mut line = Vec::new();
        loop {
            line.clear();
            if !read_capped_line(&mut reader, &mut line, name, line_no + 1)? {
                break;
            }
            line_no += 1;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let object = match serde_json::from_slice::<Value>(&line) {
                Ok(Value::Object(o)) => o,
                Ok(_) => return Err(neither(name, line_no)),
                Err(source) => {
                    return Err(Error::NotJson {
                        input: name.to_string(),
                        line: line_no,
                        source,
                    })
                }
            };
            objects.push((line_no, checked(object, name, line_no)?));
        }
        return Ok(Content::Vllm(objects));
    }
    // A pretty-printed object: read it whole (it is one run's result), a line at a time so that
    // a tail without newlines is refused at the cap.
    let mut all = seen;
    let mut next_line = line_no + 1;
    while read_capped_line(&mut reader, &mut all, name, next_line)? {
        next_line += 1;
    }
    match serde_json::from_slice::<Value>(&all) {
        Ok(Value::Object(object)) if !object.contains_key("type") => Ok(Content::Vllm(vec![(
            line_no,
            checked(object, name, line_no)?,
        )])),
        _ => records(all, Box::new(std::io::empty())),
    }
}

/// Reads one line, newline included, into `line`; false at the end of the input. A line longer
/// than the record reader's cap ([`MAX_LINE_BYTES`]) is refused once the cap is passed, in the
/// record reader's words, so that an input without newlines never fills memory.
fn read_capped_line(
    reader: &mut dyn BufRead,
    line: &mut Vec<u8>,
    name: &str,
    line_no: usize,
) -> Result<bool, Error> {
    let cap = MAX_LINE_BYTES as u64 + 1;
    let read = reader.take(cap).read_until(b'\n', line)?;
    if read > MAX_LINE_BYTES && line.last() != Some(&b'\n') {
        return Err(ReadError::line_too_long(name, line_no, MAX_LINE_BYTES).into());
    }
    Ok(read > 0)
}

/// A JSON object without `type` must be a vLLM result.
fn checked(
    object: Map<String, Value>,
    name: &str,
    line: usize,
) -> Result<Map<String, Value>, Error> {
    if ResultFile::is_result(&object) {
        Ok(object)
    } else {
        Err(neither(name, line))
    }
}

fn neither(name: &str, line: usize) -> Error {
    Error::Unrecognised {
        input: name.to_string(),
        line,
    }
}

fn read_one<R: BufRead>(reader: R, name: String, report: &mut Report) -> Result<(), Error> {
    let mut reader = RecordReader::new(reader, name.clone())
        .headerless()
        .keep(&[RecordType::Summary, RecordType::Interval, RecordType::Sweep])
        .reject(
            &[
                RecordType::Schedule,
                RecordType::Request,
                RecordType::Sent,
                RecordType::Token,
                RecordType::Done,
                RecordType::Stall,
                RecordType::Stamp,
            ],
            "summaries (what reduce writes, and table reads)",
        );
    let mut header = None;
    let mut intervals = Vec::new();
    while let Some(record) = reader.next_record().map_err(with_next_step)? {
        match record {
            Record::Header(h) => {
                header = Some(h);
                intervals.clear();
            }
            Record::Interval(i) => intervals.push(i),
            Record::Sweep(s) => report.sweeps.push(*s),
            Record::Summary(s) => report.runs.push(RunReport {
                header: header.clone(),
                summary: *s,
                source: name.clone(),
                intervals: std::mem::take(&mut intervals),
            }),
            _ => {}
        }
    }
    tokenpipe_cli::warn_truncated("table", reader.source_name(), reader.truncated_tail());
    Ok(())
}

/// A stream of another stage, refused with the tools to run first: a schedule goes through
/// `fire` and `reduce`, fire's events through `reduce`.
fn with_next_step(e: tokenpipe_format::ReadError) -> Error {
    let next = match &e {
        tokenpipe_format::ReadError::WrongInput { found, .. } if *found == RecordType::Schedule => {
            "send it with fire and summarise the events with reduce: arrivals | fire --url URL | \
             reduce | table"
        }
        tokenpipe_format::ReadError::WrongInput { .. } => {
            "summarise the events with reduce first: fire --url URL | reduce | table"
        }
        _ => return e.into(),
    };
    Error::WrongStage { read: e, next }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cap is the record reader's: a line of exactly `MAX_LINE_BYTES` is read, one byte more
    /// is refused naming the input and the line.
    #[test]
    fn capped_lines_stop_one_byte_past_the_record_readers_cap() {
        let mut text = vec![b'x'; MAX_LINE_BYTES];
        text.push(b'\n');
        let mut reader: &[u8] = &text;
        let mut line = Vec::new();
        assert!(read_capped_line(&mut reader, &mut line, "<t>", 1).unwrap());
        assert_eq!(line.len(), MAX_LINE_BYTES + 1);
        line.clear();
        assert!(!read_capped_line(&mut reader, &mut line, "<t>", 2).unwrap());

        let text = vec![b'x'; MAX_LINE_BYTES + 1];
        let mut reader: &[u8] = &text;
        let err = read_capped_line(&mut reader, &mut Vec::new(), "<t>", 3).unwrap_err();
        assert_eq!(
            err.to_string(),
            "<t>: line 3: line is longer than 64 MiB; is this NDJSON?"
        );
    }
}
