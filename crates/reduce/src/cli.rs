//! The `reduce` command line: flags, input files, and the loop that writes a header and a
//! summary for every run of every input.

use crate::aggregate::{Aggregator, RunReducer, SummaryOptions};
use crate::run::{fold_run, FoldOptions};
use crate::sink::{warn_unfinished, RunSink, RunsOptions};
use clap::Parser;
use std::io::{self, Write};
use std::path::PathBuf;
use tokenpipe_cli::Input;
use tokenpipe_format::{clock, Header, Record, RecordReader, RecordType, RecordWriter};

const EXAMPLES: &str = "\
Examples:
    # Benchmark and summarise in one pipe
    arrivals --rate 4 --num-prompts 200 | fire --url http://127.0.0.1:8000/v1 | reduce | table

    # A concurrency sweep: every run in one stream, one summary each
    for c in 1 2 4 8; do arrivals --concurrency $c -n 64 | fire --url http://127.0.0.1:8000/v1; done \\
      | reduce | table

    # Summarise saved runs, with names for the table and the tail percentiles
    reduce --label fp8 --label awq --percentiles 50,90,99,99.9 run-fp8.ndjson run-awq.ndjson | table

    # Keep the summaries for later
    reduce run.ndjson > run.summary.ndjson";

/// Reduces fire's event streams to one summary of latency and throughput metrics per run.
#[derive(Debug, Parser)]
#[command(
    name = "reduce",
    version,
    about = "Reduce fire's event streams to one summary record per run",
    long_about = "Reads the sent/token/done records that fire writes and computes, per run, the \
        metrics of `vllm bench serve` (TTFT, TPOT, ITL, E2EL: mean, std, min, max and \
        percentiles; request and token throughput) plus ITL jitter and dispatch lag. Every \
        header in the input starts a run, so several runs may come in one stream or in several \
        files; each gives a header and a summary record, in order. Only successful requests \
        contribute to latencies and token counts; docs/metrics.md defines every field.\n\n\
        Memory grows with the number of requests in flight, not with the length of the run or \
        of its answers.",
    after_help = EXAMPLES
)]
struct Args {
    /// Streams written by fire; none or `-` reads stdin.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,

    /// Name of a run in tables; give once per run, in order. Default: the model fire was
    /// given, else the run id.
    #[arg(long, value_name = "NAME")]
    label: Vec<String>,

    /// Percentiles of every latency metric, from 0 to 100, comma-separated.
    #[arg(long, value_name = "P,...", value_delimiter = ',', default_value = "50,90,99",
          value_parser = parse_percentile)]
    percentiles: Vec<f64>,

    /// Leave out the histograms that let summaries of shards or repeated runs merge exactly.
    #[arg(long)]
    no_histograms: bool,

    // --- several runs ---
    /// Write no group summaries. By default, after the last input, every configuration run two
    /// or more times (same label and same parameters in every header of the chain) gets a
    /// header and a group summary: latencies pooled over its runs, every figure's mean, sample
    /// sd, CV % and 95 % t interval over the runs, and bootstrap intervals of the percentiles.
    #[arg(long)]
    no_group: bool,
}

fn parse_percentile(s: &str) -> Result<f64, String> {
    let p: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("expected a percentile from 0 to 100, got `{s}`"))?;
    if !(0.0..=100.0).contains(&p) {
        return Err(format!("a percentile is from 0 to 100, got `{s}`"));
    }
    Ok(p)
}

/// Runs `reduce` on the process's arguments, stdin and stdout.
pub fn main() -> anyhow::Result<()> {
    let Some(args) = tokenpipe_cli::parse_or_generate::<Args>()? else {
        return Ok(());
    };
    tokenpipe_cli::outlast_first_interrupt("reduce", &args.files);
    let mut percentiles = args.percentiles.clone();
    percentiles.sort_by(f64::total_cmp);
    percentiles.dedup();
    let opts = SummaryOptions {
        percentiles,
        histograms: !args.no_histograms,
    };
    let inputs = tokenpipe_cli::open_inputs(&args.files)?;
    let mut out = RecordWriter::new(io::stdout().lock());
    reduce_runs(
        inputs,
        &args.label,
        &opts,
        RunsOptions {
            groups: !args.no_group,
        },
        tokenpipe_cli::argv(),
        &mut out,
        &mut io::stderr(),
    )?;
    out.flush()?;
    Ok(())
}

/// The aggregators beyond the summary's own that `opts` asks for, fresh for one run.
fn extras(_opts: &SummaryOptions) -> Vec<Box<dyn Aggregator>> {
    Vec::new()
}

/// What reduce reads; other tools' records are refused with a pointer to the right tool.
fn event_reader(input: Input) -> RecordReader<Box<dyn io::BufRead + Send>> {
    RecordReader::new(input.reader, input.name)
        .keep(&[
            RecordType::Sent,
            RecordType::Token,
            RecordType::Done,
            RecordType::Stall,
            RecordType::Client,
        ])
        .reject(
            &[
                RecordType::Schedule,
                RecordType::Request,
                RecordType::Summary,
                RecordType::Stamp,
            ],
            "fire's events (what fire writes, and reduce reads)",
        )
}

/// Reduces every run of every input to a header and a summary, then writes a group summary
/// for every configuration run more than once. Warnings (runs cut short, a stalled output) go
/// to `warn`. `labels[i]` names run i; runs past the end get their default label.
pub fn reduce_inputs<W: Write>(
    inputs: Vec<Input>,
    labels: &[String],
    opts: &SummaryOptions,
    argv: Vec<String>,
    out: &mut RecordWriter<W>,
    warn: &mut dyn Write,
) -> anyhow::Result<()> {
    reduce_runs(
        inputs,
        labels,
        opts,
        RunsOptions::default(),
        argv,
        out,
        warn,
    )
}

/// [`reduce_inputs`] with the choices across runs: the parts of a sharded plan are merged into
/// one run, and `runs` says whether repeated runs get a group summary.
pub fn reduce_runs<W: Write>(
    inputs: Vec<Input>,
    labels: &[String],
    opts: &SummaryOptions,
    runs: RunsOptions,
    argv: Vec<String>,
    out: &mut RecordWriter<W>,
    warn: &mut dyn Write,
) -> anyhow::Result<()> {
    let mut sink = RunSink::new(labels, opts, runs, argv.clone());
    for input in inputs {
        let mut reader = event_reader(input);
        let mut header = Some(reader.read_header()?);
        while let Some(run_header) = header.take() {
            let end = if run_header.shard.is_some() {
                sink.fold_shard(
                    &mut reader,
                    &run_header,
                    &|| RunReducer::new(extras(opts)),
                    &|h| output_header(h, argv.clone()),
                    out,
                    warn,
                )?
            } else {
                let mut agg = RunReducer::new(extras(opts));
                let fold = FoldOptions {
                    keep_events: false,
                    offset_ns: 0,
                };
                // The reduce header goes first, so that records written while the run is read
                // (per-request results, intervals) follow the header of their run.
                sink.start_run(out, &output_header(&run_header, argv.clone()))?;
                let end = {
                    let mut emit = |record: Record| -> anyhow::Result<()> {
                        out.write(&record)?;
                        Ok(())
                    };
                    fold_run(&mut reader, &run_header, &mut agg, &fold, &mut emit)?
                };
                let source = reader.source_name().to_string();
                warn_unfinished(warn, &source, &run_header, &end)?;
                let label = sink.next_label(&run_header);
                let mut last = Vec::new();
                let run_id = run_header.run_id.clone();
                let summary = agg.finish_summary(label, run_id, sink.build_options(), &mut last);
                sink.write_run(out, warn, &source, &run_header, summary, last)?;
                end
            };
            header = end.next_header;
        }
        if let Some(line) = reader.truncated_tail() {
            let message = tokenpipe_cli::truncated_message(reader.source_name(), line);
            writeln!(warn, "reduce: warning: {message}")?;
        }
    }
    sink.end(out, warn)
}

/// The label a run gets without `--label`: the model named in its header chain (fire's `model`
/// parameter), else its run id.
pub fn default_label(header: &Header) -> String {
    match header.param("model") {
        Some(serde_json::Value::String(s)) if !s.is_empty() => s.clone(),
        Some(v) if !v.is_null() && !v.is_string() => v.to_string(),
        _ => header.run_id.clone(),
    }
}

/// The header of one run's summary, chained onto that run's header.
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

    #[test]
    fn percentiles_parse_and_are_checked() {
        let a = Args::try_parse_from(["reduce", "--percentiles", "99.9,50"]).unwrap();
        assert_eq!(a.percentiles, [99.9, 50.0]);
        let a = Args::try_parse_from(["reduce"]).unwrap();
        assert_eq!(a.percentiles, [50.0, 90.0, 99.0]);
        for bad in ["101", "-1", "x", "nan"] {
            assert!(
                Args::try_parse_from(["reduce", "--percentiles", bad]).is_err(),
                "{bad}"
            );
        }
    }
}
