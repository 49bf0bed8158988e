//! reduce as a library: [`reduce`] takes a plain [`Config`], the inputs and an output, and
//! writes a header and a summary for every run, the merged runs of sharded plans and the group
//! summaries of repeated runs. The command line ([`crate::cli`]) only builds the config.

use crate::aggregate::outcomes;
use crate::aggregate::timing::intervals::IntervalAggregator;
use crate::aggregate::timing::load::LoadAggregator;
use crate::aggregate::timing::window::Window;
use crate::aggregate::vllm::VllmAggregator;
use crate::aggregate::{Aggregator, LlamaBenchyAggregator, RunReducer, SummaryOptions};
use crate::error::Error;
use crate::run::{fold_run, FoldOptions};
use crate::sink::{warn_unfinished, RunSink, RunsOptions};
use std::io::{self, Write};
use tokenpipe_cli::Input;
use tokenpipe_format::{clock, Header, Record, RecordReader, RecordType, RecordWriter};

/// What a reduction computes and how it names what it writes.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// `labels[i]` names run i; runs past the end get their default label
    /// ([`crate::default_label`]), and one label alone names every run.
    pub labels: Vec<String>,
    /// What each run's summary carries.
    pub summary: SummaryOptions,
    /// What is done across runs.
    pub runs: RunsOptions,
    /// The command line recorded in every header written.
    pub argv: Vec<String>,
}

/// The aggregators beyond the summary's own that `opts` asks for, fresh for the run `header`
/// starts (some read its schedule's parameters), whose measured window is `window` (the whole
/// run when `None`) and whose own t = 0 lies at `origin_ns` of the clock its events are read
/// on (later than 0 only on the merged clock of a sharded run).
fn extras(
    opts: &SummaryOptions,
    header: &Header,
    window: Option<&Window>,
    origin_ns: u64,
) -> Vec<Box<dyn Aggregator>> {
    let mut extras: Vec<Box<dyn Aggregator>> = Vec::new();
    extras.extend(outcomes::aggregators(opts));
    // llama-benchy's figures: cheap, and nothing is added to a run that is neither a batch run
    // nor asked for.
    extras.push(Box::new(LlamaBenchyAggregator::new(
        opts.llama_benchy,
        header,
    )));
    if let Some(vllm) = &opts.vllm {
        // vLLM's duration runs from its clock's start: the run's, or the measured window's.
        let start_ns = window.map_or(origin_ns, |w| w.start_ns);
        extras.push(Box::new(VllmAggregator::new(
            vllm.clone(),
            header,
            start_ns,
        )));
    }
    // After the per-request metrics: it reads their `user_tps` mean from the summary.
    extras.push(Box::new(LoadAggregator::new(
        header,
        window.cloned(),
        origin_ns,
    )));
    if let Some(every_ns) = opts.every_ns {
        extras.push(Box::new(IntervalAggregator::new(every_ns)));
    }
    extras.push(Box::new(
        crate::aggregate::server_metrics::ServerMetricsAggregator::default(),
    ));
    extras
}

/// What reduce reads; other tools' records are refused with a pointer to the right tool.
/// How much of an input's start [`is_vllm_result`] looks at: vLLM writes its scalar figures
/// (`completed`, `duration`) before its per-request arrays.
const SNIFF_BYTES: usize = 64 * 1024;

/// Whether an input starts like a `vllm bench serve` result file (a JSON object whose first line
/// is not one of our records, with vLLM's `completed` and `duration` near its start). Looks at
/// the buffered start only, consuming nothing; an input that cannot be read is left to the
/// reader to report.
fn is_vllm_result(input: &mut Input) -> bool {
    let Ok(head) = input.reader.fill_buf() else {
        return false;
    };
    let head = String::from_utf8_lossy(&head[..head.len().min(SNIFF_BYTES)]);
    let text = head.trim_start();
    let first_line = text.lines().next().unwrap_or("");
    text.starts_with('{')
        && !first_line.contains("\"type\"")
        && text.contains(&format!("\"{}\"", tokenpipe_format::vllm::key::COMPLETED))
        && text.contains(&format!("\"{}\"", tokenpipe_format::vllm::key::DURATION))
}

fn event_reader(input: Input) -> RecordReader<Box<dyn io::BufRead + Send>> {
    RecordReader::new(input.reader, input.name)
        .keep(&[
            RecordType::Sent,
            RecordType::Token,
            RecordType::Done,
            RecordType::Stall,
            RecordType::Client,
            RecordType::ServerMetrics,
        ])
        .reject(
            &[
                RecordType::Schedule,
                RecordType::Request,
                RecordType::Summary,
                RecordType::Stamp,
                RecordType::Result,
            ],
            "fire's events (what fire writes, and reduce reads)",
        )
}

/// Reduces every run of every input to a header and a summary, merges the parts of a sharded
/// plan into one run, then writes a group summary for every configuration run more than once
/// (unless `config.runs` says not to). Warnings (runs cut short, a stalled output) go to `warn`.
/// The first fault of the input ends the reduction, after what was written before it.
pub fn reduce<W: Write>(
    config: Config,
    inputs: Vec<Input>,
    out: &mut RecordWriter<W>,
    warn: &mut dyn Write,
) -> Result<(), Error> {
    let Config {
        labels,
        summary: opts,
        runs,
        argv,
    } = config;
    let opts = &opts;
    let mut sink = RunSink::new(&labels, opts, runs, argv.clone());
    let mut warned_every = false;
    let several = inputs.len() > 1;
    // An empty input among several is a warning (a part whose host never wrote a line); the
    // error stands when no input held a run.
    let mut empty: Option<Error> = None;
    let mut any_run = false;
    for mut input in inputs {
        if is_vllm_result(&mut input) {
            return Err(Error::VllmResultFile { input: input.name });
        }
        let mut reader = event_reader(input);
        let first = match reader.read_header_or_empty()? {
            Some(h) => h,
            None => {
                let err = Error::from(tokenpipe_format::ReadError::NoHeader {
                    source_name: reader.source_name().to_string(),
                    message: "empty input: expected a stream starting with a header record".into(),
                });
                if !several {
                    return Err(err);
                }
                writeln!(
                    warn,
                    "reduce: warning: {} is empty (no header): left out; a part it should have held counts as missing",
                    reader.source_name()
                )?;
                empty.get_or_insert(err);
                continue;
            }
        };
        any_run = true;
        let mut header = Some(first);
        while let Some(run_header) = header.take() {
            let window = opts
                .window
                .resolve(&run_header)
                .map_err(|source| Error::Window {
                    input: reader.source_name().to_string(),
                    run: run_header.run_id.clone(),
                    source,
                })?;
            let reduce_header = |h: &Header| {
                let mut header = output_header(h, argv.clone());
                outcomes::meta::add_to_header(&mut header, &opts.outcomes.meta);
                header
            };
            let end = if run_header.shard.is_some() {
                // The parts of a plan share one clock whose zero lies `SLACK_NS` before the
                // first part's start (see crate::shard): the window moves with it.
                let origin_ns = crate::shard::SLACK_NS as u64;
                let window = window.map(|w| w.shifted(origin_ns));
                // The parts are read one after another, so no slice of a merged run could be
                // written before every part has been read: --every follows single runs only.
                if opts.every_ns.is_some() && !warned_every {
                    writeln!(
                        warn,
                        "reduce: warning: --every writes no intervals for the parts of a sharded run; reduce each part's output alone to watch it"
                    )?;
                    warned_every = true;
                }
                let part_opts = SummaryOptions {
                    every_ns: None,
                    ..opts.clone()
                };
                sink.fold_shard(
                    &mut reader,
                    &run_header,
                    &|| {
                        let mut agg = RunReducer::new(extras(
                            &part_opts,
                            &run_header,
                            window.as_ref(),
                            origin_ns,
                        ));
                        agg.summary.set_window(window.clone());
                        agg.summary
                            .set_warmup(opts.window.warmup(&run_header, origin_ns));
                        agg
                    },
                    &reduce_header,
                    out,
                    warn,
                )?
            } else {
                let mut agg = RunReducer::new(extras(opts, &run_header, window.as_ref(), 0));
                agg.summary.set_window(window);
                agg.summary.set_warmup(opts.window.warmup(&run_header, 0));
                let fold = FoldOptions {
                    keep_events: opts.keeps_events(&run_header),
                    offset_ns: 0,
                    empty_ok: false,
                };
                // The reduce header goes first, so that records written while the run is read
                // (per-request results, intervals) follow the header of their run.
                sink.start_run(out, &reduce_header(&run_header))?;
                let end = {
                    let mut emit = |record: Record| -> io::Result<()> {
                        out.write(&record)?;
                        // An interval is for someone watching the run: let them see it now.
                        if matches!(record, Record::Interval(_)) {
                            out.flush()?;
                        }
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
    match empty {
        Some(err) if !any_run => Err(err),
        _ => sink.end(out, warn),
    }
}

/// The header of one run's summary, chained onto that run's header.
fn output_header(input: &Header, argv: Vec<String>) -> Header {
    let mut header = Header::new("reduce", format!("{}-reduce", input.run_id), argv);
    header.started_at = Some(clock::rfc3339_now());
    header.upstream = Header::chain(input);
    header
}
