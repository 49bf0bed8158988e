//! The `reduce` command line: its flags, read and checked here (the values of `--slo`,
//! `--meta`, `--percentiles`, and what they may not say together), turned into a [`Config`] for
//! [`crate::driver`], and its inputs (files, stdin, imported vLLM results).

use crate::aggregate::outcomes::slo::{SloBound, SloMetric};
use crate::aggregate::outcomes::OutcomeOptions;
use crate::aggregate::timing::window::WindowChoice;
use crate::aggregate::vllm::VllmOptions;
use crate::aggregate::{LlamaBenchyOptions, SummaryOptions};
use crate::driver::{reduce, Config};
use crate::error::Error;
use crate::sink::RunsOptions;
use clap::Parser;
use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;
use std::time::Duration;
use tokenpipe_format::RecordWriter;

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
        (--vllm-compatible holds every chunk's time).\n\n\
        Bad input stops reduce with exit status 2 and names the file, the line and the field: a \
        malformed line, events out of order, and a time or a count that no real run holds (a \
        time past ten years, or past the run's end by more than the run itself, the end being \
        fire's client.wall_ns or else the run's other records plus a day; more than a billion \
        tokens a second of a request). docs/format.md, \"Plausible values\", has the rules.",
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
    #[arg(long, value_name = "P,...", value_delimiter = ',', value_parser = tokenpipe_cli::parse_percentile)]
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
    /// prompt processing time (`est_ppt`), e.g. `3ms`. Default: the one fire measured before
    /// its first request (its header's `net_latency_ms`, llama-benchy's method: the mean of
    /// three `GET /models`), else 0. Give llama-benchy's printed latency to reproduce its run.
    #[arg(long, value_name = "DURATION", value_parser = tokenpipe_cli::parse_duration)]
    net_latency: Option<std::time::Duration>,

    // --- per-request records, goodput, metadata ---
    /// Also write a `result` record per request as soon as it ends (after its run's header,
    /// before its summary): every per-request value, failed requests included.
    #[arg(long)]
    per_request: bool,

    /// SLO bounds for goodput, METRIC=DURATION, comma-separated or repeated; METRIC is one of
    /// ttft, ttfr, tpot, e2el, itl (the request's mean gap), ttft_sched, e2el_sched, ttfa (time
    /// to first answer token: a thinking model's first token after its reasoning). A request
    /// is good when it is ok and within every bound; one without a value for a metric (no TPOT
    /// for a one-token answer) meets that bound. With --vllm-compatible, vLLM's goodput takes
    /// the ttft, tpot and e2el bounds (its `--goodput ttft:200` is `--slo ttft=200ms`).
    #[arg(long, value_name = "METRIC=DURATION,...", value_delimiter = ',',
          value_parser = parse_slo_bound)]
    slo: Vec<SloBound>,

    /// Run metadata (model, hardware, engine, topology), carried on every summary and in the
    /// reduce header's `params.meta`; repeat for several keys, each once.
    #[arg(long, value_name = "KEY=VALUE", value_parser = parse_meta_pair)]
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
    /// A batch run's warm-up batches (the schedule's `warmup_batches`, llama-benchy's discarded
    /// run) are left out of every figure unless `all`.
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

/// Reads one `METRIC=DURATION` bound (`ttft=200ms`, `e2el=2s`, `itl=500us`); public so that
/// the fuzz targets (`fuzz/`) reach the `--slo` parser without a command line.
pub fn parse_slo_bound(s: &str) -> Result<SloBound, String> {
    let (name, duration) = s
        .split_once('=')
        .ok_or_else(|| format!("expected METRIC=DURATION such as ttft=200ms, got `{s}`"))?;
    let name = name.trim();
    let metric = SloMetric::ALL
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(m, _)| *m)
        .ok_or_else(|| {
            let names: Vec<&str> = SloMetric::ALL.iter().map(|(_, n)| *n).collect();
            format!(
                "unknown SLO metric `{name}`; use one of {}",
                names.join(", ")
            )
        })?;
    let bound = tokenpipe_cli::parse_duration(duration)?;
    Ok(SloBound {
        metric,
        bound_ns: bound.as_nanos() as f64,
    })
}

/// Refuses a metric bounded twice, which would leave the intended bound unclear.
fn check_unique(bounds: &[SloBound]) -> Result<(), Error> {
    for (i, b) in bounds.iter().enumerate() {
        if bounds[..i].iter().any(|a| a.metric == b.metric) {
            return Err(Error::Flags(format!(
                "--slo: `{}` is bounded twice; give each metric one bound",
                b.metric.name()
            )));
        }
    }
    Ok(())
}

/// The settings of `--vllm-compatible` from `--percentiles` (sorted; empty when not given,
/// which takes vLLM's default, 99) and `--slo` (one bound per metric), which may bound only
/// what vLLM's goodput bounds.
pub(crate) fn vllm_options(percentiles: &[f64], slos: &[SloBound]) -> Result<VllmOptions, Error> {
    // vLLM's goodput knows three metrics; a bound on another has no vLLM figure to match.
    if let Some(other) = slos.iter().find(|b| {
        !matches!(
            b.metric,
            SloMetric::Ttft | SloMetric::Tpot | SloMetric::E2el
        )
    }) {
        return Err(Error::Flags(format!(
            "--slo: `{}` has no counterpart in vLLM's goodput, which bounds ttft, tpot and e2el",
            other.metric.name()
        )));
    }
    Ok(VllmOptions {
        percentiles: if percentiles.is_empty() {
            tokenpipe_format::vllm::DEFAULT_METRIC_PERCENTILES.to_vec()
        } else {
            percentiles.to_vec()
        },
        slos: slos.to_vec(),
    })
}

/// Reads one `KEY=VALUE` pair of `--meta`; the value is everything after the first `=`. Public
/// so that `sweep --meta` reads the pairs as reduce does.
pub fn parse_meta_pair(s: &str) -> Result<(String, String), String> {
    let (key, value) = s
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE such as model=llama-70b, got `{s}`"))?;
    let key = key.trim();
    if key.is_empty() {
        return Err(format!("the key is empty in `{s}`"));
    }
    Ok((key.to_string(), value.to_string()))
}

/// The pairs as a map; a key given twice is refused, since one of its values would be lost.
fn collect_meta(pairs: &[(String, String)]) -> Result<BTreeMap<String, String>, Error> {
    let mut meta = BTreeMap::new();
    for (key, value) in pairs {
        if meta.insert(key.clone(), value.clone()).is_some() {
            return Err(Error::Flags(format!(
                "--meta: `{key}` is given twice; give each key once"
            )));
        }
    }
    Ok(meta)
}

/// Runs `reduce` on the process's arguments, stdin and stdout.
pub fn main() -> Result<(), Error> {
    let Some(args) = tokenpipe_cli::parse_or_generate::<Args>()? else {
        return Ok(());
    };
    tokenpipe_cli::outlast_first_interrupt("reduce", &args.files);
    let mut percentiles = args.percentiles.clone();
    percentiles.sort_by(f64::total_cmp);
    percentiles.dedup();
    check_unique(&args.slo)?;
    let vllm = args
        .vllm_compatible
        .then(|| vllm_options(&percentiles, &args.slo))
        .transpose()?;
    if percentiles.is_empty() {
        percentiles = SummaryOptions::default().percentiles;
    }
    let opts = SummaryOptions {
        percentiles,
        histograms: !args.no_histograms,
        llama_benchy: LlamaBenchyOptions {
            always: args.llama_benchy,
            net_latency_ns: args
                .net_latency
                .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
        },
        outcomes: OutcomeOptions {
            per_request: args.per_request,
            slo: args.slo.clone(),
            meta: collect_meta(&args.meta)?,
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
    let config = Config {
        labels: args.label.clone(),
        summary: opts,
        runs: RunsOptions {
            groups: !args.no_group,
        },
        argv: tokenpipe_cli::argv(),
    };
    reduce(config, inputs, &mut out, &mut io::stderr())?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_cli::{Ending, ToolError};

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

    #[test]
    fn bounds_take_a_metric_and_a_duration_with_its_unit() {
        let b = parse_slo_bound("ttft=200ms").unwrap();
        assert_eq!((b.metric, b.bound_ns), (SloMetric::Ttft, 200e6));
        assert_eq!(parse_slo_bound("e2el=2s").unwrap().bound_ns, 2e9);
        assert_eq!(parse_slo_bound("itl=250us").unwrap().bound_ns, 250e3);
        let b = parse_slo_bound("ttft_sched=1.5s").unwrap();
        assert_eq!((b.metric, b.bound_ns), (SloMetric::TtftSched, 1.5e9));
        for (metric, name) in SloMetric::ALL {
            assert_eq!(metric.name(), *name);
            assert_eq!(
                parse_slo_bound(&format!("{name}=1ms")).unwrap().metric,
                *metric
            );
        }
        for bad in ["ttft", "ttft=", "ttft=fast", "speed=1s", "=1s", "ttft=-1ms"] {
            assert!(parse_slo_bound(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_metric_bounded_twice_is_a_bad_flag() {
        let two = [
            parse_slo_bound("ttft=1s").unwrap(),
            parse_slo_bound("ttft=2s").unwrap(),
        ];
        let err = check_unique(&two).unwrap_err();
        assert!(err.to_string().contains("`ttft` is bounded twice"), "{err}");
        assert_eq!(err.ending(), Ending::BadInput);
        assert!(check_unique(&two[..1]).is_ok());
    }

    #[test]
    fn vllm_bounds_only_what_vllm_bounds() {
        let itl = [parse_slo_bound("itl=1ms").unwrap()];
        let err = vllm_options(&[], &itl).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--slo: `itl` has no counterpart in vLLM's goodput, which bounds ttft, tpot and e2el"
        );
        assert_eq!(err.ending(), Ending::BadInput);
        let ttft = [parse_slo_bound("ttft=1ms").unwrap()];
        assert_eq!(vllm_options(&[], &ttft).unwrap().percentiles, [99.0]);
        assert_eq!(vllm_options(&[50.0], &ttft).unwrap().percentiles, [50.0]);
    }

    #[test]
    fn meta_pairs_split_at_the_first_equals_and_keys_are_unique() {
        assert_eq!(
            parse_meta_pair("engine=vllm --tp=2"),
            Ok(("engine".into(), "vllm --tp=2".into()))
        );
        assert_eq!(parse_meta_pair("note="), Ok(("note".into(), String::new())));
        assert!(parse_meta_pair("model").is_err());
        assert!(parse_meta_pair("=x").is_err());
        let pairs = [
            ("gpu".to_string(), "h100".to_string()),
            ("gpu".to_string(), "a100".to_string()),
        ];
        let err = collect_meta(&pairs).unwrap_err();
        assert!(err.to_string().contains("`gpu` is given twice"), "{err}");
        assert_eq!(err.ending(), Ending::BadInput);
        assert_eq!(collect_meta(&pairs[..1]).unwrap().len(), 1);
    }
}
