//! The `sweep` command line: its flags, read and checked here (the variable's values, the SLO,
//! the command's placeholders), turned into a [`Config`] before anything runs.

use crate::config::{Config, Plan};
use crate::error::Error;
use crate::slo::{self, Bound};
use crate::values::{self, Spec};
use clap::Parser;
use std::io;
use std::time::Duration;
use tokenpipe_format::RecordWriter;

const EXAMPLES: &str = "\
Examples:
    # How many concurrent users stay within TTFT p99 <= 2 s and TPOT p50 <= 50 ms
    sweep --find concurrency=1..256 --slo 'ttft.p99<=2s,tpot.p50<=50ms' -- \\
      'arrivals --concurrency {concurrency} -n 200 --input-tokens 1024 --output-tokens 256 \\
         | fire --url $URL --save runs/c{concurrency}.ndjson' | tee capacity.ndjson | table

    # A geometric concurrency scan that stops where throughput stops growing
    sweep --scan concurrency=1..512x2 --stop-at-knee -- \\
      'arrivals --concurrency {concurrency} -n 100 | fire --url $URL' | table

    # Rates as decimals, an SLO judged at every point, vLLM's prefix cache reset between runs
    sweep --scan rate=0.5,1,2,4,8 --slo 'e2el.p99<=10s' \\
      --between 'curl -s -X POST $URL_BASE/reset_prefix_cache' -- \\
      'arrivals --rate {rate} -n 300 | fire --url $URL' | table

    # The answer alone
    sweep --find concurrency=1..128 --slo 'tpot.p50<=30ms' -- '…' | jq 'select(.type == \"sweep\") | .capacity'";

/// Runs a benchmark pipe over one load variable and finds the largest load that meets an SLO.
#[derive(Debug, Parser)]
#[command(
    name = "sweep",
    version,
    about = "Run a benchmark pipe over one load variable; find the load that meets an SLO",
    long_about = "Runs the command after `--` under `sh -c` once per value of one load \
        variable, with `{NAME}` replaced by the value, and reduces its stdout (fire's events) \
        with reduce's library: each point's headers and summaries are written as soon as the \
        point ends, so `sweep … | table` shows one row per point, and a last `sweep` record says \
        what was found: the capacity (the largest value that meets the SLO), the bracket around \
        it, the saturation knee, every point with its status and reason, and the runs it took.\n\n\
        --scan runs every value of a list or range; --find searches: it doubles from the low \
        end while the value passes (up to the range's geometric middle, then tries the high \
        end), then bisects the bracket to --resolution. A point passes when the 95 % bootstrap \
        interval of every bounded percentile lies within its bound and fails when one lies \
        beyond it; when an interval straddles a bound the point is run again (up to --repeat) \
        and, still unsure, decided by the estimate, which the record says. Only runs whose \
        verdict says comparable are judged. docs/sweep.md states the search, the pass rule and \
        the knee rule.\n\n\
        A failing command ends the sweep with exit status 1 after the record; Ctrl-C or SIGTERM \
        stops the running command, which writes what it measured, and ends with 130 or 143 \
        after the record. Progress goes to stderr.",
    after_help = EXAMPLES
)]
struct Args {
    /// Run every value: NAME=LIST (`1,2,4,8`, `0.5,1,2`), NAME=A..B (every whole number) or
    /// NAME=A..BxK (A, A·K, A·K², … up to B, rounded to whole numbers when A and B are whole).
    /// Values are numbers above zero, run in increasing order, each once.
    #[arg(long, value_name = "NAME=VALUES", conflicts_with = "find")]
    scan: Option<String>,

    /// Search NAME=A..B for the largest value that meets --slo (required with it). Whole
    /// numbers when A and B are written without a point (a concurrency), decimals otherwise
    /// (a rate).
    #[arg(long, value_name = "NAME=A..B")]
    find: Option<String>,

    /// The SLO, METRIC.pQ<=DURATION, comma-separated or repeated: percentile Q of the metric
    /// over a point's requests at most DURATION (`ttft.p99<=2s`, `tpot.p50<=50ms`). METRIC is
    /// one of reduce --slo's: ttft, ttfr, tpot, e2el, itl, ttft_sched, e2el_sched, ttfa.
    #[arg(long, value_name = "BOUND,...", value_delimiter = ',', value_parser = slo::parse_bound)]
    slo: Vec<Bound>,

    /// How narrow --find's bracket gets: a whole step for whole numbers (default 1), a relative
    /// step for decimals (default 5%; `2%` or `0.02`).
    #[arg(long, value_name = "STEP")]
    resolution: Option<String>,

    /// The most runs a point gets: while a bounded percentile's interval straddles its bound,
    /// the point is run again and its comparable runs pooled. Default 3 with --slo; without
    /// one, every point runs this many times (default 1).
    #[arg(long, value_name = "R", value_parser = clap::value_parser!(u32).range(1..=100))]
    repeat: Option<u32>,

    /// A command run under `sh -c` before every run but the first (a cache reset, a cool-down
    /// `sleep 5`); its failure ends the sweep.
    #[arg(long, value_name = "CMD")]
    between: Option<String>,

    /// Run the first value once before the sweep, unmeasured and not written.
    #[arg(long)]
    warmup: bool,

    /// Start no run after this many measured runs; the record says the sweep stopped short.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_runs: Option<u64>,

    /// Start no run once this long has passed since the first (`30m`).
    #[arg(long, value_name = "DURATION", value_parser = tokenpipe_cli::parse_duration)]
    max_time: Option<Duration>,

    /// Stop a scan at the saturation knee: once a load's output tokens/s gained less than
    /// --knee-gain per doubling over the load below it while the median E2EL grew by at least
    /// as much.
    #[arg(long, conflicts_with = "find")]
    stop_at_knee: bool,

    /// The gain per doubling of load below which the knee is marked (default 10%; `0.1`).
    #[arg(long, value_name = "FRACTION", value_parser = parse_gain)]
    knee_gain: Option<f64>,

    /// Name of the sweep's runs in tables and charts (reduce's `--label`): a model, a serving
    /// shape (`8xH200`). Default: the model fire was given, else the run id.
    #[arg(long, value_name = "NAME")]
    label: Option<String>,

    /// Run metadata carried on every point's summary (reduce's `--meta`: model, shape, engine,
    /// `gpus=N` for `table --chart pareto` per GPU); repeat for several keys, each once.
    #[arg(long, value_name = "KEY=VALUE", value_parser = tokenpipe_reduce::parse_meta_pair)]
    meta: Vec<(String, String)>,

    /// The command, after `--`: a pipe whose stdout is fire's events, with `{NAME}` where the
    /// value goes. Several words are joined with spaces.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

fn parse_gain(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let value = match t.strip_suffix('%') {
        Some(pct) => pct.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    };
    match value {
        Ok(g) if g > 0.0 && g < 10.0 => Ok(g),
        _ => Err(format!("expected a gain such as 10% or 0.1, got `{s}`")),
    }
}

/// Turns the flags into a [`Config`], refusing what cannot run.
fn config(args: Args) -> Result<Config, String> {
    let (spec, find): (Spec, bool) = match (&args.scan, &args.find) {
        (Some(scan), _) => (values::parse_scan(scan)?, false),
        (None, Some(find)) => (values::parse_find(find)?, true),
        (None, None) => {
            return Err("give --scan NAME=VALUES or --find NAME=A..B (sweep --help)".into())
        }
    };
    if args.command.iter().all(|w| w.trim().is_empty()) {
        return Err(format!(
            "give the command after `--`, with {{{}}} where the value goes",
            spec.name
        ));
    }
    if find && args.slo.is_empty() {
        return Err("--find needs --slo: the SLO is what the capacity meets".into());
    }
    if !find && args.resolution.is_some() {
        return Err("--resolution: only --find narrows a bracket; a scan runs every value".into());
    }
    slo::check_unique(&args.slo)?;
    let mut meta = std::collections::BTreeMap::new();
    for (key, value) in &args.meta {
        if meta.insert(key.clone(), value.clone()).is_some() {
            return Err(format!(
                "--meta: `{key}` is given twice; give each key once"
            ));
        }
    }
    let domain = values::parse_resolution(args.resolution.as_deref(), spec.integer)?;
    let command = args.command.join(" ");
    values::check_template(&command, &spec.name)?;
    let plan = if find {
        Plan::Find {
            low: spec.values[0],
            high: spec.values[1],
        }
    } else {
        Plan::Scan(spec.values)
    };
    Ok(Config {
        variable: spec.name,
        domain,
        plan,
        repeat: args
            .repeat
            .unwrap_or(if args.slo.is_empty() { 1 } else { 3 }),
        slo: args.slo,
        between: args.between,
        warmup: args.warmup,
        max_runs: args.max_runs,
        max_time: args.max_time,
        stop_at_knee: args.stop_at_knee,
        knee_gain: args.knee_gain.unwrap_or(crate::knee::DEFAULT_GAIN),
        command,
        label: args.label,
        meta,
        argv: tokenpipe_cli::argv(),
    })
}

/// Runs `sweep` on the process's arguments, writing records to stdout and progress to stderr.
pub fn main() -> Result<(), Error> {
    let Some(args) = tokenpipe_cli::parse_or_generate::<Args>()? else {
        return Ok(());
    };
    let config = config(args).map_err(Error::Flags)?;
    crate::signals::install()?;
    let mut out = RecordWriter::new(io::stdout().lock());
    crate::sweep::run(&config, &mut out, &mut io::stderr()).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Config, String> {
        let argv = std::iter::once("sweep").chain(args.iter().copied());
        config(Args::try_parse_from(argv).map_err(|e| e.to_string())?)
    }

    #[test]
    fn flags_make_a_config_and_bad_ones_name_what_is_wrong() {
        let c = parse(&["--find", "c=1..64", "--slo", "ttft.p99<=2s", "--", "x {c}"]).unwrap();
        assert_eq!(
            c.plan,
            Plan::Find {
                low: 1.0,
                high: 64.0
            }
        );
        assert_eq!((c.repeat, c.variable.as_str()), (3, "c"));
        let c = parse(&["--scan", "c=1,2", "--", "x", "{c}"]).unwrap();
        assert_eq!((c.repeat, c.command.as_str()), (1, "x {c}"));
        assert_eq!((c.label, c.meta.len()), (None, 0));
        let c = parse(&[
            "--scan", "c=1", "--label", "8xH200", "--meta", "gpus=8", "--", "x {c}",
        ])
        .unwrap();
        assert_eq!(c.label.as_deref(), Some("8xH200"));
        assert_eq!(c.meta["gpus"], "8");
        for (args, says) in [
            (
                &["--find", "c=1..64", "--", "x {c}"][..],
                "--find needs --slo",
            ),
            (&["--scan", "c=1,2", "--", "x {c} {d}"], "{d}"),
            (&["--scan", "c=1,2", "--", "x"], "never uses {c}"),
            (
                &["--scan", "c=1,2", "--resolution", "2", "--", "x {c}"],
                "--resolution",
            ),
            (
                &[
                    "--find",
                    "c=1..9",
                    "--slo",
                    "ttft.p9<=1s,ttft.p9<=2s",
                    "--",
                    "x {c}",
                ],
                "twice",
            ),
            (
                &[
                    "--scan", "c=1", "--meta", "a=1", "--meta", "a=2", "--", "x {c}",
                ],
                "--meta: `a` is given twice",
            ),
            (
                &["--scan", "c=1", "--meta", "a", "--", "x {c}"],
                "KEY=VALUE",
            ),
        ] {
            let e = parse(args).unwrap_err();
            assert!(e.contains(says), "{args:?}: {e}");
        }
        assert_eq!(parse_gain("5%"), Ok(0.05));
        assert!(parse_gain("0").is_err());
    }
}
