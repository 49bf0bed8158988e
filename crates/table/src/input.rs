//! Reads the runs to render: every `summary` record of every input, each with the header of its
//! run. Summary lines without a header (picked out of a stream with `jq`) are read too; other
//! tools' records are refused with a pointer to the tool that reads them.

use crate::report::{Report, RunReport};
use std::io::BufRead;
use tokenpipe_cli::Input;
use tokenpipe_format::{Record, RecordReader, RecordType};

/// Reads every summary of `inputs`, in order. No summaries at all is bad input.
pub fn read_report(inputs: Vec<Input>) -> anyhow::Result<Report> {
    let mut report = Report::default();
    for input in inputs {
        read_one(input.reader, input.name, &mut report)?;
    }
    if report.runs.is_empty() {
        return Err(tokenpipe_cli::bad_input(
            "no summary records in input (pipe the output of reduce into table)",
        ));
    }
    Ok(report)
}

fn read_one<R: BufRead>(reader: R, name: String, report: &mut Report) -> anyhow::Result<()> {
    let mut reader = RecordReader::new(reader, name)
        .headerless()
        .keep(&[RecordType::Summary])
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
    while let Some(record) = reader.next_record()? {
        match record {
            Record::Header(h) => header = Some(h),
            Record::Summary(s) => report.runs.push(RunReport {
                header: header.clone(),
                summary: *s,
            }),
            _ => {}
        }
    }
    tokenpipe_cli::warn_truncated("table", reader.source_name(), reader.truncated_tail());
    Ok(())
}
