//! Collects the `summary` records of one or more streams, skipping every other record type.

use std::io::BufRead;
use tokenpipe_cli::Input;
use tokenpipe_format::{Record, RecordReader, Summary};

/// Reads every summary of `inputs`, in order. Each input must be a tokenpipe stream (header
/// first); headers met later, as in `cat a b`, are skipped like any other non-summary record.
/// No summaries at all is bad input.
pub fn read_summaries(inputs: Vec<Input>) -> anyhow::Result<Vec<Summary>> {
    let mut summaries = Vec::new();
    for input in inputs {
        read_one(input.reader, input.name, &mut summaries)?;
    }
    if summaries.is_empty() {
        return Err(tokenpipe_cli::bad_input(
            "no summary records in input (pipe the output of reduce into table)",
        ));
    }
    Ok(summaries)
}

fn read_one<R: BufRead>(reader: R, name: String, out: &mut Vec<Summary>) -> anyhow::Result<()> {
    let mut reader = RecordReader::new(reader, name);
    reader.read_header()?;
    while let Some(record) = reader.next_record()? {
        if let Record::Summary(s) = record {
            out.push(*s);
        }
    }
    Ok(())
}
