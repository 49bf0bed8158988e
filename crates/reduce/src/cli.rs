//! The `reduce` command line: flags, input files, and the loop that writes a header and a
//! summary for every run of every input.

use crate::aggregate::outcomes::{self, meta, slo, OutcomeOptions};
use crate::aggregate::timing::intervals::IntervalAggregator;
use crate::aggregate::timing::load::LoadAggregator;
use crate::aggregate::timing::window::{Window, WindowChoice};
use crate::aggregate::vllm::VllmAggregator;
use crate::aggregate::{
    Aggregator, LlamaBenchyAggregator, LlamaBenchyOptions, RunReducer, SummaryOptions,
};
use crate::run::{fold_run, FoldOptions};
use crate::sink::{warn_unfinished, RunSink, RunsOptions};
use clap::Parser;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;
use tokenpipe_cli::Input;
use tokenpipe_format::{clock, Header, Record, RecordReader, RecordType, RecordWriter};

const EXAMPLES: &str = "\
Examples:
    # Benchmark and summarise in one pipe
    arrivals --rate 4 --num-prompts 200 | fire --url http://127.0.0.1:8000/v1 | reduce | table

    # A concurrency sweep: every run in one stream, one summary each
    for c in 1 2 4 8; do arrivals --concurrency $c -n 64 | fire --url http://127.0.0.1:8000/v1; done \\
      | reduce | table

    # Three repeats of one configuration: three summaries, then their mean ± sd and 95 % CI
    for i in 1 2 3; do arrivals --rate 2 -n 100 --seed 42 | fire --url http://127.0.0.1:8000/v1; done \\
      | reduce --meta model=llama-3-8b --meta gpu=h100 > repeats.ndjson

    # A closed loop with fill, stabilize, measure and drain: the measure phase is what counts
    arrivals --concurrency 32 --fill 1s --stabilize 60s --measure 120s \\
      | fire --url http://127.0.0.1:8000/v1 | reduce | table

    # Live tokens/s every second while the run goes on
    arrivals --rate 5 --duration 10m | fire --url http://127.0.0.1:8000/v1 \\
      | reduce --every 1s | jq -c 'select(.type == \"interval\") | [.end_s, .output_tps]'

    # One record per request, failures included, for jq or pandas; goodput against SLOs
    reduce --per-request --slo ttft=200ms,tpot=50ms run.ndjson | jq -c 'select(.type == \"result\")'

    # Summarise saved runs, with names for the table and the tail percentiles
    reduce --label fp8 --label awq --percentiles 50,90,99,99.9 run-fp8.ndjson run-awq.ndjson | table

    # vLLM's own figures beside ours, and a published vLLM run (--save-detailed) beside it
    reduce --vllm-compatible --slo ttft=200ms run.ndjson --from-vllm vllm-result.json | table";

/// Reduces fire's event streams to one summary of latency and throughput metrics per run.
#[derive(Debug, Parser)]
#[command(
    name = "reduce",
    version,
    about = "Reduce fire's event streams to one summary record per run",
    long_about = "Reads the sent/token/done records that fire writes and computes, per run, \
        TTFT, time to first response, TPOT, ITL (per event and per token), E2EL, latencies from \
        the scheduled instant, queue time and per-request token rates (mean, population and \
        sample std, min, max, percentiles), counts by error kind, throughput, peak tokens/s and \
        concurrency, jitter, goodput against --slo, and llama-benchy's batch figures. Every \
        header in the input starts a run, so several runs may come in one stream or in several \
        files; each gives a header and a summary record, in order. Runs of one configuration \
        also get a group summary (mean ± sd, CV %, 95 % intervals); the parts of a sharded plan \
        merge into one run. A run whose schedule marks a measure phase is summarised over that \
        phase. --vllm-compatible adds vLLM's own figures under its key names, and --from-vllm \
        reads a `vllm bench serve` result as a run. docs/metrics.md defines every field.\n\n\
        Memory grows with the requests in flight and, by a few bytes per request and per \
        millisecond of run, with the run's length; never with the number of tokens or events \
        (--vllm-compatible holds every chunk's time).",
    after_help = EXAMPLES
)]
struct Args {
    /// Streams written by fire; none or `-` reads stdin.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,

    /// Name of a run in tables. Given once, it names every run of the input (the repeats of a
    /// loop); given several times, it names the runs in order. Default: the model fire was
    /// given, else the run id.
    #[arg(long, value_name = "NAME")]
    label: Vec<String>,

    /// Percentiles of every latency metric, from 0 to 100, comma-separated. Default: 50,90,99
    /// (and 99 alone for the figures of --vllm-compatible, as vLLM's default).
    #[arg(long, value_name = "P,...", value_delimiter = ',', value_parser = parse_percentile)]
    percentiles: Vec<f64>,

    /// Leave out the histograms that let summaries of shards or repeated runs merge exactly.
    #[arg(long)]
    no_histograms: bool,

    // --- llama-benchy ---
    /// Add llama-benchy's figures (the summary's `llama_benchy`) to every run, not only to
    /// batch runs (`arrivals --batch N --runs R`), which always carry them. A run whose
    /// requests have no batch index gets the per-request figures only.
    #[arg(long)]
    llama_benchy: bool,

    /// The network round trip that llama-benchy measures and subtracts from TTFR to estimate
    /// prompt processing time (`est_ppt`), e.g. `3ms`; give llama-benchy's measured latency
    /// to reproduce its figures.
    #[arg(long, value_name = "DURATION", default_value = "0",
          value_parser = tokenpipe_cli::parse_duration)]
    net_latency: std::time::Duration,

    // --- per-request records, goodput, metadata ---
    /// Also write a `result` record per request as soon as it ends (after its run's header,
    /// before its summary): every per-request value, failed requests included.
    #[arg(long)]
    per_request: bool,

    /// SLO bounds for goodput, METRIC=DURATION, comma-separated or repeated; METRIC is one of
    /// ttft, ttfr, tpot, e2el, itl (the request's mean gap), ttft_sched, e2el_sched. A request
    /// is good when it is ok and within every bound; one without a value for a metric (no TPOT
    /// for a one-token answer) meets that bound. With --vllm-compatible, vLLM's goodput takes
    /// the ttft, tpot and e2el bounds (its `--goodput ttft:200` is `--slo ttft=200ms`).
    #[arg(long, value_name = "METRIC=DURATION,...", value_delimiter = ',',
          value_parser = slo::parse_slo_bound)]
    slo: Vec<slo::SloBound>,

    /// Run metadata (model, hardware, engine, topology), carried on every summary and in the
    /// reduce header's `params.meta`; repeat for several keys, each once.
    #[arg(long, value_name = "KEY=VALUE", value_parser = meta::parse_meta_pair)]
    meta: Vec<(String, String)>,

    // --- vllm-compatible ---
    /// Also compute every figure of `vllm bench serve` with vLLM's own definitions (its
    /// chunks, numpy's interpolated percentiles, duration from the run start, peaks, goodput)
    /// into the summary's `vllm` member, under vLLM's key names; the other fields keep ours.
    /// docs/metrics.md lists each difference.
    #[arg(long)]
    vllm_compatible: bool,

    /// A result file of `vllm bench serve --save-result --save-detailed` to read as a run, after
    /// the FILEs; repeat for several. Its per-request arrays become our events.
    #[arg(long, value_name = "FILE")]
    from_vllm: Vec<PathBuf>,

    /// Write the events imported with --from-vllm instead of reducing them, so that a vLLM run
    /// can go through any tool that reads fire's output.
    #[arg(long, requires = "from_vllm", conflicts_with = "files")]
    emit_events: bool,

    // --- windows and intervals ---
    /// Measure only this phase of each run: one that arrivals marked (`fill`, `stabilize`,
    /// `measure`, `drain`), or `all` for the whole run. Default: `measure` when the run marks
    /// one, else the whole run. A request belongs to the phase it was sent in and is measured
    /// whole; throughputs count what was stamped in the phase (docs/metrics.md, "Windows").
    #[arg(long, value_name = "NAME", conflicts_with_all = ["warmup", "measure"])]
    phase: Option<String>,

    /// Leave out requests sent in this first stretch of each run (`60s`); measure from there.
    #[arg(long, value_name = "DURATION", value_parser = tokenpipe_cli::parse_duration)]
    warmup: Option<Duration>,

    /// Measure this long after --warmup (or the run start); default: to the end of the run.
    #[arg(long, value_name = "DURATION", value_parser = tokenpipe_cli::parse_duration)]
    measure: Option<Duration>,

    /// Also write an `interval` record for every DURATION of the run clock (`10s`), as soon as
    /// the run has passed it by a second, so a live pipe shows the run as it goes.
    #[arg(long, value_name = "DURATION", value_parser = parse_every)]
    every: Option<Duration>,

    // --- several runs ---
    /// Write no group summaries. By default, after the last input, every configuration run two
    /// or more times (same label and same parameters in every header of the chain) gets a
    /// header and a group summary: latencies pooled over its runs, every figure's mean, sample
    /// sd, CV % and 95 % t interval over the runs, and bootstrap intervals of the percentiles.
    #[arg(long)]
    no_group: bool,
}

fn parse_every(s: &str) -> Result<Duration, String> {
    let d = tokenpipe_cli::parse_duration(s)?;
    if d.as_nanos() == 0 {
        return Err(format!("--every needs a duration above zero, got `{s}`"));
    }
    Ok(d)
}

/// The window the flags ask for.
fn window_choice(args: &Args) -> WindowChoice {
    let ns = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    match (&args.phase, args.warmup, args.measure) {
        (Some(p), _, _) if p == "all" => WindowChoice::All,
        (Some(p), _, _) => WindowChoice::Phase(p.clone()),
        (None, None, None) => WindowChoice::Default,
        (None, warmup, measure) => WindowChoice::Manual {
            warmup_ns: warmup.map_or(0, ns),
            measure_ns: measure.map(ns),
        },
    }
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
    slo::check_unique(&args.slo).map_err(tokenpipe_cli::bad_input)?;
    let vllm = args
        .vllm_compatible
        .then(|| crate::aggregate::vllm::options(&percentiles, &args.slo))
        .transpose()
        .map_err(|e| {
            tokenpipe_cli::failure(tokenpipe_cli::EXIT_BAD_INPUT, format!("--slo: {e}"))
        })?;
    if percentiles.is_empty() {
        percentiles = SummaryOptions::default().percentiles;
    }
    let opts = SummaryOptions {
        percentiles,
        histograms: !args.no_histograms,
        llama_benchy: LlamaBenchyOptions {
            always: args.llama_benchy,
            net_latency_ns: u64::try_from(args.net_latency.as_nanos()).unwrap_or(u64::MAX),
        },
        outcomes: OutcomeOptions {
            per_request: args.per_request,
            slo: args.slo.clone(),
            meta: meta::collect_meta(&args.meta).map_err(tokenpipe_cli::bad_input)?,
        },
        vllm,
        window: window_choice(&args),
        every_ns: args
            .every
            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
    };
    let mut out = RecordWriter::new(io::stdout().lock());
    if args.emit_events {
        for path in &args.from_vllm {
            for record in crate::vllm_import::import_file(path, tokenpipe_cli::argv())? {
                out.write(&record)?;
            }
        }
        out.flush()?;
        return Ok(());
    }
    let mut inputs = if args.files.is_empty() && !args.from_vllm.is_empty() {
        Vec::new()
    } else {
        tokenpipe_cli::open_inputs(&args.files)?
    };
    for path in &args.from_vllm {
        inputs.push(crate::vllm_import::import_input(
            path,
            tokenpipe_cli::argv(),
        )?);
    }
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

/// Reduces every run of every input to a header and a summary, then writes a group summary
/// for every configuration run more than once. Warnings (runs cut short, a stalled output) go
/// to `warn`. `labels[i]` names run i; runs past the end get their default label, and one label
/// alone names every run.
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
    let mut warned_every = false;
    for input in inputs {
        let mut reader = event_reader(input);
        let mut header = Some(reader.read_header()?);
        while let Some(run_header) = header.take() {
            let window = opts.window.resolve(&run_header).map_err(|m| {
                tokenpipe_cli::bad_input(format!(
                    "{}: run {}: {m}",
                    reader.source_name(),
                    run_header.run_id
                ))
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
                        agg
                    },
                    &reduce_header,
                    out,
                    warn,
                )?
            } else {
                let mut agg = RunReducer::new(extras(opts, &run_header, window.as_ref(), 0));
                agg.summary.set_window(window);
                let fold = FoldOptions {
                    // vLLM's figures need every chunk's time.
                    keep_events: opts.vllm.is_some(),
                    offset_ns: 0,
                };
                // The reduce header goes first, so that records written while the run is read
                // (per-request results, intervals) follow the header of their run.
                sink.start_run(out, &reduce_header(&run_header))?;
                let end = {
                    let mut emit = |record: Record| -> anyhow::Result<()> {
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
    sink.end(out, warn)
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
        // Not given: empty here, so that --vllm-compatible can tell; main applies 50,90,99.
        let a = Args::try_parse_from(["reduce"]).unwrap();
        assert!(a.percentiles.is_empty());
        for bad in ["101", "-1", "x", "nan"] {
            assert!(
                Args::try_parse_from(["reduce", "--percentiles", bad]).is_err(),
                "{bad}"
            );
        }
    }
}
