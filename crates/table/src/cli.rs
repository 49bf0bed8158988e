//! The `table` command line: flags, inputs, and writing what [`crate::render`] rendered to
//! stdout (coloured on a terminal) and its notes to stderr. The only module that knows clap:
//! the library's value enums get their possible values and help texts here.

use crate::chart::ChartKind;
use crate::error::Error;
use crate::export::Format;
use crate::grid::SpreadMode;
use crate::input::read_report;
use crate::options::{Layout, Options, PartsBy};
use crate::render::Style;
use clap::builder::PossibleValue;
use clap::{Parser, ValueEnum};
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
    # The whole pipe, ending in a table on the terminal
    arrivals --rate 4 --num-prompts 200 | fire --url http://127.0.0.1:8000/v1 | reduce | table

    # Compare two saved runs side by side, as Markdown for a pull request
    reduce --label fp8 --label awq fp8.ndjson awq.ndjson | table --format markdown

    # llama-benchy's table, then its decode and prefill tables, from a batch sweep
    arrivals --batch 4 --runs 10 | fire --url http://127.0.0.1:8000/v1 | reduce | table --style llama-bench

    # One row per run for a spreadsheet or a dataframe
    table --format csv runs.summary.ndjson > runs.csv

    # Combine summaries saved earlier; the one labelled fp8 is the baseline of ratio columns
    table --baseline fp8 fp8.summary.ndjson awq.summary.ndjson

    # A sweep as rows with chosen columns, fastest first
    table --columns concurrency,output_tps,ttft.p99,tpot.p50 --sort output_tps:desc sweep.ndjson

    # Models by profile (reduce --meta model=... --meta profile=...), a top 3, a GitHub chart
    table --rows model --cols profile --cell output_tps matrix/*.ndjson
    table --rows model --cols profile --top 3 matrix/*.ndjson
    table --rows model --cols profile --format mermaid matrix/*.ndjson

    # Each run as vLLM's result block, a vLLM result file beside a run of ours
    table --style vllm vllm-result.json ours.summary.ndjson

    # vLLM's block as `vllm bench serve --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,99` prints it
    reduce --vllm-compatible --percentiles 50,90,99 run.ndjson | table --style vllm --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,99

    # Throughput and latency against concurrency as an SVG chart, from a sweep
    for c in 1 2 4 8; do arrivals --concurrency $c -n 64 | fire --url $URL; done | reduce | table --format svg > load.svg

    # Per-user speed against total throughput per GPU, one point per concurrency, the frontier drawn
    for c in 1 2 4 8 16 32; do arrivals --concurrency $c -n 64 | fire --url $URL | reduce --label vllm --meta gpus=8; done | table --format svg --chart pareto > pareto.svg

    # The TTFT distribution of each run, or a run's tokens/s over time (needs reduce --every)
    table --format svg --chart ttft-cdf sweep.ndjson > ttft.svg
    arrivals --rate 4 -n 200 | fire --url $URL | reduce --every 1s | table --format svg --chart timeline > timeline.svg

    # One self-contained HTML page with the table and every chart, to open offline
    table --format html sweep.ndjson > report.html

    # The parts of a plan run on several hosts: which host lost what, started when
    reduce part0.ndjson part1.ndjson part2.ndjson | table --by host";

/// Renders reduce's summaries as the tables and charts results are published with.
#[derive(Debug, Parser)]
#[command(
    name = "table",
    version,
    about = "Render summary records as tables and charts for people and machines",
    long_about = "Reads the summary records that reduce writes from each FILE in order (with or \
        without their headers, so lines picked out with jq work too) and prints them as the \
        tables and charts benchmark results are published with. By default, a few runs read \
        side by side (a row per metric, units in the names, a column per run: the result block \
        of `vllm bench serve` turned sideways, with a row for every percentile the summaries \
        carry and the workload on top); many runs, or `--columns`, give a row per run and a \
        column per field. `--rows`/`--cols`/`--cell` pivot on metadata or settings, `--top` \
        ranks, `--baseline` adds ratios. Every run says whether it is comparable (docs/verdict.md: \
        every request ended with the server's answer, the client kept up, the server agrees): a \
        `Comparable` row or column, a `†` in pivots and rankings, each reason in a note; \
        `--only-comparable` leaves the others out. `Failed` counts the server's and the \
        network's failures only; requests the run cancelled or never sent are shown apart. A \
        group summary of repeated runs reads `mean ± sd (CV %)`, and stands for the runs it \
        pools. A label shared by several runs gets what tells \
        them apart appended (metadata, settings, the file name). Counts are whole numbers, other \
        values have two decimals, and `-` marks a value a run does not have; from 1e15 on a number \
        is written in scientific notation (`1.00e308`), never in hundreds of digits. A FILE may also be \
        the result file of `vllm bench serve --save-result` (one JSON object, or one per line), \
        told apart by its content; its runs sit beside ours.",
    after_help = EXAMPLES
)]
struct Args {
    /// Streams holding summary records; none or `-` reads stdin.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Terminal)]
    format: Format,

    /// Layout: `default` is this tool's own (see --layout); `vllm` writes each run as the
    /// "Serving Benchmark Result" block of `vllm bench serve`, line for line (the summary's
    /// `vllm` member when it has one, from `reduce --vllm-compatible` or a vLLM result file,
    /// else our own figures; its latency sections as `--percentile-metrics` and
    /// `--metric-percentiles` choose them, by default vLLM's: TTFT, TPOT and ITL with their P99;
    /// every text format prints the same block, and charts are refused);
    /// `llama-bench` prints llama-benchy's own Markdown table byte for byte (a pp and a tg row
    /// per run, every column in its order), then the decode and prefill tables its users post,
    /// one row per run sorted by concurrency, from each summary's llama-benchy figures.
    #[arg(long, value_enum, default_value_t = Style::Default)]
    style: Style,

    /// Runs as columns (`wide`: a row per metric) or as rows (`long`: a row per run, a column
    /// per field); `auto` is wide unless `--columns` is given or there are more than 6 runs.
    #[arg(long, value_enum, default_value_t = Layout::Auto)]
    layout: Layout,

    /// The fields to show, comma-separated, in order: `ttft.p50,tpot.p99,output_tps`. A field
    /// is `METRIC.STAT` (ttft, tpot, itl, e2el, ttfr, user_tps, … with mean, sd, min, max,
    /// median, p90, p99.9, …), a short name (output_tps, total_tps, request_rate, ok, failed,
    /// cancelled, not_sent, comparable, verdict, duration, jitter, goodput, peak_tps, tg_tps,
    /// pp_tps), a setting (concurrency, rate,
    /// burstiness, batch, isl, osl, model), `meta.KEY`, `label`, `file`, `workload` or `runs`
    /// (the runs a group summary pools, else 1). `A|B` is A where a run has it, else B
    /// (`tg_tps|output_tps`). `--list-fields` lists those of the input.
    #[arg(long, value_name = "FIELD,...", value_delimiter = ',')]
    columns: Vec<String>,

    /// Orders runs by these fields (`concurrency`, `output_tps:desc`); without it runs keep the
    /// order of their labels' first appearance, then go by their load, in natural order (c2
    /// before c16).
    #[arg(long, value_name = "FIELD[:desc],...", value_delimiter = ',')]
    sort: Vec<String>,

    /// How the figures of a group summary (repeated runs) read: `cv` is `mean ± sd (CV %)`,
    /// `sd` is `mean ± sd`, `ci` is `mean [lo, hi]` (95 % confidence interval of the mean),
    /// `none` the mean alone.
    #[arg(long, value_enum, default_value_t = SpreadMode::Cv)]
    spread: SpreadMode,

    /// Adds ratio columns against the run labelled LABEL (in a pivot, the column LABEL): each
    /// run is compared with the baseline run of the same workload (`0.85x`).
    #[arg(long, value_name = "LABEL")]
    baseline: Option<String>,

    /// Pivot: one row per value of this field (`model`, `meta.shape`, `concurrency`).
    #[arg(long, value_name = "FIELD")]
    rows: Option<String>,

    /// Pivot: one column per value of this field (`profile`, `label`).
    #[arg(long, value_name = "FIELD")]
    cols: Option<String>,

    /// Pivot: the field in each cell (default `output_tps`); also what `--format mermaid`
    /// charts. `A|B` takes A where a run has it, else B: `tg_tps|output_tps` sets llama-benchy's
    /// decode rate of batch runs beside the output throughput of other runs.
    #[arg(long, value_name = "FIELD")]
    cell: Option<String>,

    /// Pivot: instead of the table, the best N rows of each column by the cell's field (higher
    /// throughput, lower latency): "Top 3 by Output [tok/s] per profile". A run that is not
    /// comparable is marked `†`, with its reason under the table.
    #[arg(long, value_name = "N")]
    top: Option<usize>,

    /// A row per part of each run merged from shards (`reduce` of `arrivals --shard` parts):
    /// its host, status (`ok`, `lost`: no client record, `missing`), start after the earliest
    /// part, lateness against `fire --start-at`, requests planned, seen and lost, whether its
    /// client kept up and its clock's offset to the server's; a line per run under the table
    /// gives the start spread, the clock skew and the verdict on the parts. `host` orders the
    /// rows by host, `shard` by run and shard. Takes no other layout flag.
    #[arg(long, value_enum, value_name = "KEY")]
    by: Option<PartsBy>,

    /// Leaves out the runs that are not comparable (docs/verdict.md: a request failed, was
    /// cancelled or not sent, the client fell behind, the server counted otherwise) from every
    /// table, pivot, ranking and chart, and names each on stderr with its reason: `table: left
    /// out LABEL: REASON`. Without it they are shown, marked (`Comparable: no`, `†`).
    #[arg(long)]
    only_comparable: bool,

    /// Lists the fields the input has, for `--columns`, `--sort`, `--rows`, `--cols` and
    /// `--cell`, and exits.
    #[arg(long)]
    list_fields: bool,

    /// The chart `--format svg` draws: `load` (output throughput, TTFT and TPOT against the
    /// load setting that differs between runs, concurrency, rate or batch: a panel per metric,
    /// a log₂ axis for a doubling sweep, more than 8 series split over further panels),
    /// `pareto` (per-user output tok/s against total output tok/s, each point labelled with its
    /// load, the frontier drawn; per GPU when every run has `reduce --meta gpus=N`), `capacity`
    /// (each SLO bound's figure against the load of a `sweep`, with the bound and the capacity
    /// it found), `ttft-cdf` and `itl-cdf` (one cumulative distribution per run, from the
    /// summaries' histograms), `timeline` (output tokens/s and requests in flight over time,
    /// from `reduce --every`). Default: `load` when the runs differ in a load setting, else
    /// `ttft-cdf`. `--format html` shows every chart the runs have data for.
    #[arg(long, value_enum, value_name = "KIND")]
    chart: Option<ChartKind>,

    /// `--style vllm`: the latency sections of each block, as `vllm bench serve
    /// --percentile-metrics` chooses them: ttft, tpot, itl, e2el, comma-separated. Sections
    /// keep vLLM's order (TTFT, TPOT, ITL, E2EL) whatever the order given. Default, as vLLM's:
    /// ttft,tpot,itl (no End-to-end Latency).
    #[arg(long, value_name = "METRIC,...", value_delimiter = ',', value_parser = metric_name)]
    percentile_metrics: Option<Vec<String>>,

    /// `--style vllm`: the `P…` line of each section for these percentiles, in the order given,
    /// as `vllm bench serve --metric-percentiles` prints them (`50,90,99`, `99.9` → `P99.9`).
    /// Each must be among the run's figures: a vLLM result's own, or `reduce --percentiles`.
    /// Default, as vLLM's: 99.
    #[arg(long, value_name = "P,...", value_delimiter = ',', value_parser = tokenpipe_cli::parse_percentile)]
    metric_percentiles: Option<Vec<f64>>,
}

/// Reads one of vLLM's latency metric names, for `--percentile-metrics`.
fn metric_name(s: &str) -> Result<String, String> {
    let name = s.trim();
    match tokenpipe_format::vllm::metric(name) {
        Some(m) => Ok(m.name.to_string()),
        None => {
            let known: Vec<&str> = tokenpipe_format::vllm::METRICS
                .iter()
                .map(|m| m.name)
                .collect();
            Err(format!(
                "`{s}` is not one of vLLM's metrics ({})",
                known.join(", ")
            ))
        }
    }
}

impl Args {
    /// The layout flags (and `--chart`), for the library.
    fn options(&self) -> Options {
        Options {
            layout: self.layout,
            columns: self.columns.clone(),
            sort: self.sort.clone(),
            spread: self.spread,
            baseline: self.baseline.clone(),
            rows: self.rows.clone(),
            cols: self.cols.clone(),
            cell: self.cell.clone(),
            top: self.top,
            chart: self.chart,
            only_comparable: self.only_comparable,
            percentile_metrics: self.percentile_metrics.clone(),
            metric_percentiles: self.metric_percentiles.clone(),
            by: self.by,
        }
    }
}

/// Implements clap's `ValueEnum` for one of the library's value enums: the variants in the order
/// `--help` lists them, each under the library's `name()`, with the help text clap's derive made
/// of its doc comment (one line, no final period). The match makes a new variant a compile
/// error here until it has its help.
macro_rules! value_enum {
    ($ty:ident { $($variant:ident => $help:literal,)+ }) => {
        impl ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                &[$($ty::$variant),+]
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                let help = match self {
                    $($ty::$variant => $help,)+
                };
                Some(PossibleValue::new(self.name()).help(help))
            }
        }
    };
}

value_enum!(Format {
    Terminal => "A box-drawn table for a terminal, numbers right-aligned",
    Markdown => "A GitHub-flavoured Markdown table, for reports and pull requests",
    Csv => "Comma-separated values: one row per run and a column per summary member, or the \
            chosen layout's rows (`--columns`, `--sort`, `--baseline`, pivots, rankings) with \
            raw numbers",
    Json => "A JSON array of objects with the members of the CSV columns",
    Mermaid => "Mermaid `xychart-beta` bar or line charts of `--cell` (default output \
                throughput) in fenced blocks, which GitHub renders: one chart per `--cols` value \
                with a pivot",
    Svg => "One chart as an SVG document (`--chart` picks which)",
    Html => "One self-contained HTML page: the table and every chart the runs have data for",
});

value_enum!(Style {
    Default => "This tool's layouts (runs as columns or rows, pivots, rankings), in the chosen \
                `--format`",
    Vllm => "Each run as the \"Serving Benchmark Result\" block of `vllm bench serve`, one \
             after another, the same in every text format (charts are refused)",
    LlamaBench => "llama-benchy's own Markdown table, then its users' decode and prefill \
                   throughput tables by concurrency",
});

value_enum!(PartsBy {
    Host => "By host, then run and shard: what each machine did",
    Shard => "By run, then shard: each plan's parts in order",
});

value_enum!(Layout {
    Auto => "Wide while it stays readable, long when `--columns` is given or there are many runs",
    Wide => "One column per run, one row per metric (`vllm bench serve`'s block turned sideways)",
    Long => "One row per run, one column per field",
});

value_enum!(SpreadMode {
    Cv => "`mean ± sd (CV %)`: the mean over runs, its sample standard deviation and \
           coefficient of variation",
    Sd => "`mean ± sd`, as the arena and hyperfine print it",
    Ci => "`mean [lo, hi]`: the 95 % Student-t interval of the mean over runs",
    None => "The mean alone",
});

value_enum!(ChartKind {
    Load => "Output throughput, TTFT and TPOT (p50 solid, p99 dashed) against the load setting \
             that differs between runs (concurrency, else request rate, else batch size), a panel \
             per metric",
    Pareto => "Per-user output tok/s (user_tps p50) against total output tok/s, per GPU with \
               `reduce --meta gpus=N`: a point per load, a line per series, the Pareto frontier",
    Capacity => "Each SLO bound's figure against the load a `sweep` varied: the points with \
                 their 95 % intervals, the bound, and the capacity found (from `sweep`'s record)",
    TtftCdf => "The distribution of time to first token, one line per run",
    ItlCdf => "The distribution of inter-token latency, one line per run",
    Timeline => "Output tokens/s and requests in flight over a run's time, from `reduce --every`",
});

/// Runs `table` on the process's arguments, stdin and stdout.
/// Reads the inputs the arguments name and writes what the flags ask for.
pub fn main() -> Result<(), Error> {
    let Some(args) = tokenpipe_cli::parse_or_generate::<Args>()? else {
        return Ok(());
    };
    tokenpipe_cli::outlast_first_interrupt("table", &args.files);
    let inputs = tokenpipe_cli::open_inputs(&args.files)?;
    let report = read_report(inputs)?;
    if args.list_fields {
        let mut out = io::stdout().lock();
        for (name, heading) in crate::field::list_fields(&report) {
            writeln!(out, "{name}\t{heading}")?;
        }
        out.flush()?;
        return Ok(());
    }
    let rendered = args.style.render(&report, args.format, &args.options())?;
    for note in &rendered.notes {
        eprintln!("{note}");
    }
    let mut text = rendered.text;
    let on_terminal = io::stdout().is_terminal();
    if args.format == Format::Terminal
        && args.style == Style::Default
        && crate::colour::use_colour(on_terminal, std::env::var_os("NO_COLOR").as_deref())
    {
        text = crate::colour::paint(&text);
    }
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_definition_is_valid() {
        tokenpipe_cli::command::<Args>().debug_assert();
    }

    #[test]
    fn format_flag_parses() {
        let a = Args::try_parse_from(["table", "--format", "markdown", "a", "-"]).unwrap();
        assert_eq!(a.format, Format::Markdown);
        assert_eq!(a.files.len(), 2);
        let a = Args::try_parse_from(["table"]).unwrap();
        assert_eq!(a.format, Format::Terminal);
        assert!(Args::try_parse_from(["table", "--format", "xml"]).is_err());
        let a = Args::try_parse_from(["table", "--format", "svg", "--chart", "itl-cdf"]).unwrap();
        assert_eq!((a.format, a.chart), (Format::Svg, Some(ChartKind::ItlCdf)));
        assert_eq!(Args::try_parse_from(["table"]).unwrap().chart, None);
        assert!(Args::try_parse_from(["table", "--chart", "pie"]).is_err());
    }

    #[test]
    fn style_flag_parses() {
        let a = Args::try_parse_from(["table", "--style", "llama-bench", "--format", "csv"]);
        assert_eq!(
            a.map(|a| (a.style, a.format)).ok(),
            Some((Style::LlamaBench, Format::Csv))
        );
        let a = Args::try_parse_from(["table", "--style", "vllm"]).unwrap();
        assert_eq!(a.style, Style::Vllm);
        assert_eq!(
            Args::try_parse_from(["table"]).unwrap().style,
            Style::Default
        );
        assert!(Args::try_parse_from(["table", "--style", "llama-benchy"]).is_err());
        assert!(Args::try_parse_from(["table", "--style", "sglang"]).is_err());
    }

    #[test]
    fn vllm_section_flags_parse_with_vllms_names() {
        let a = Args::try_parse_from([
            "table",
            "--style",
            "vllm",
            "--percentile-metrics",
            "ttft,e2el",
            "--metric-percentiles",
            "50,99.9",
        ])
        .unwrap();
        let opts = a.options();
        assert_eq!(
            opts.percentile_metrics,
            Some(vec!["ttft".to_string(), "e2el".to_string()])
        );
        assert_eq!(opts.metric_percentiles, Some(vec![50.0, 99.9]));
        let a = Args::try_parse_from(["table"]).unwrap().options();
        assert_eq!((a.percentile_metrics, a.metric_percentiles), (None, None));
        assert!(Args::try_parse_from(["table", "--percentile-metrics", "ttft,ttfr"]).is_err());
        assert!(Args::try_parse_from(["table", "--metric-percentiles", "101"]).is_err());
        assert!(Args::try_parse_from(["table", "--metric-percentiles", "p99"]).is_err());
    }

    /// Each value is listed once, under the name the library gives it, and parses back to itself.
    fn names_round_trip<T: ValueEnum + PartialEq + std::fmt::Debug>(name: fn(&T) -> &'static str) {
        let values = T::value_variants();
        for (i, v) in values.iter().enumerate() {
            let shown = v.to_possible_value().unwrap();
            assert_eq!(shown.get_name(), name(v));
            assert!(shown.get_help().is_some(), "{v:?} has no help");
            assert_eq!(T::from_str(name(v), false).as_ref(), Ok(v));
            assert!(!values[..i].contains(v), "{v:?} listed twice");
        }
    }

    #[test]
    fn value_enums_show_the_library_names() {
        names_round_trip::<Format>(|v| v.name());
        names_round_trip::<Style>(|v| v.name());
        names_round_trip::<Layout>(|v| v.name());
        names_round_trip::<SpreadMode>(|v| v.name());
        names_round_trip::<ChartKind>(|v| v.name());
        assert_eq!(
            ChartKind::value_variants(),
            ChartKind::ALL,
            "--help lists them as HTML does"
        );
    }
}
