//! The `reduce` command line: flags, input files, and the loop that writes one header and then
//! one summary per input run.

use crate::run::{reduce_run, RunOutcome};
use crate::summary::{default_label, summarize};
use clap::Parser;
use std::io::{self, Write};
use std::path::PathBuf;
use tokenpipe_cli::Input;
use tokenpipe_format::{clock, Header, Record, RecordReader, RecordWriter};

const EXAMPLES: &str = "\
Examples:
    # Benchmark and summarise in one pipe
    arrivals --rate 4 --num-prompts 200 | fire --url http://127.0.0.1:8000/v1 | reduce | table

    # Summarise saved runs, one summary per file, with names for the table
    reduce --label fp8 --label awq run-fp8.ndjson run-awq.ndjson | table

    # Keep the summaries for later
    reduce run.ndjson > run.summary.ndjson";

/// Reduces fire's event streams to one summary of latency and throughput metrics per run.
#[derive(Debug, Parser)]
#[command(
    name = "reduce",
    version,
    about = "Reduce fire's event streams to one summary record per run",
    long_about = "Reads the sent/token/done records that fire writes and computes, per input run, \
        the metrics of `vllm bench serve` (TTFT, TPOT, ITL, E2EL: mean, std, p50, p90, p99, max; \
        request and token throughput) plus ITL jitter and dispatch lag. Each FILE is one run and \
        gives one summary record, in order, after a header. Only successful requests contribute \
        to latencies and token counts; docs/metrics.md defines every field.\n\n\
        Memory grows with the number of requests in flight, not with the length of the run.",
    after_help = EXAMPLES
)]
struct Args {
    /// Streams written by fire, one run per file; none or `-` reads stdin.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,

    /// Name of a run in tables; give once per input, in order. Default: the model fire was
    /// given, else the run id.
    #[arg(long, value_name = "NAME")]
    label: Vec<String>,
}

/// Runs `reduce` on the process's arguments, stdin and stdout.
pub fn main() -> anyhow::Result<()> {
    let Some(args) = tokenpipe_cli::parse_or_generate::<Args>()? else {
        return Ok(());
    };
    tokenpipe_cli::outlast_first_interrupt("reduce", &args.files);
    let input_count = args.files.len().max(1);
    if args.label.len() > input_count {
        return Err(tokenpipe_cli::bad_input(format!(
            "{} --label values for {input_count} input(s): give at most one per input",
            args.label.len()
        )));
    }
    let inputs = tokenpipe_cli::open_inputs(&args.files)?;
    let mut out = RecordWriter::new(io::stdout().lock());
    reduce_inputs(
        inputs,
        &args.label,
        tokenpipe_cli::argv(),
        &mut out,
        &mut io::stderr(),
    )?;
    out.flush()?;
    Ok(())
}

/// Reduces each input to one summary and writes them after a header. Warnings (runs cut short)
/// go to `warn`. `labels[i]` names input i; inputs past the end get their default label.
pub fn reduce_inputs<W: Write>(
    inputs: Vec<Input>,
    labels: &[String],
    argv: Vec<String>,
    out: &mut RecordWriter<W>,
    warn: &mut dyn Write,
) -> anyhow::Result<()> {
    for (i, input) in inputs.into_iter().enumerate() {
        let mut reader = RecordReader::new(input.reader, input.name);
        let header = reader.read_header()?;
        let outcome = reduce_run(&mut reader, header)?;
        if i == 0 {
            // Written once the first run is known good, so bad input leaves no partial stream.
            out.write(&Record::Header(output_header(
                &outcome.header,
                argv.clone(),
            )))?;
        }
        if outcome.unfinished > 0 {
            writeln!(
                warn,
                "reduce: {}: {} requests had no done record; counted as failed",
                reader.source_name(),
                outcome.unfinished
            )?;
        }
        let label = labels
            .get(i)
            .cloned()
            .unwrap_or_else(|| default_label(&outcome.header));
        write_summary(out, &outcome, label)?;
    }
    Ok(())
}

fn write_summary<W: Write>(
    out: &mut RecordWriter<W>,
    outcome: &RunOutcome,
    label: String,
) -> io::Result<()> {
    let summary = summarize(&outcome.stats, label, outcome.header.run_id.clone());
    out.write(&Record::Summary(Box::new(summary)))?;
    // A summary is the end of a run's work: let a consumer see it now.
    out.flush()
}

/// The header of reduce's output, chained onto the first input's header.
fn output_header(input: &Header, argv: Vec<String>) -> Header {
    let mut header = Header::new("reduce", format!("{}-reduce", input.run_id), argv);
    header.started_at = Some(clock::rfc3339_now());
    header.upstream = Header::chain(input);
    header
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_definition_is_valid() {
        tokenpipe_cli::command::<Args>().debug_assert();
    }
}
