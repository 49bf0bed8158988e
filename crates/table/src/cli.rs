//! The `table` command line: flags, inputs, and writing the rendered table to stdout.

use crate::chart::ChartKind;
use crate::export::Format;
use crate::input::read_report;
use crate::style::Style;
use clap::Parser;
use std::io::{self, Write};
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
    # The whole pipe, ending in a table on the terminal
    arrivals --rate 4 --num-prompts 200 | fire --url http://127.0.0.1:8000/v1 | reduce | table

    # Compare two saved runs side by side, as Markdown for a pull request
    reduce --label fp8 --label awq fp8.ndjson awq.ndjson | table --format markdown

    # llama-benchy's decode and prefill tables from a batch sweep
    arrivals --batch 4 --runs 10 | fire --url http://127.0.0.1:8000/v1 | reduce | table --style llama-bench

    # One row per run for a spreadsheet or a dataframe
    table --format csv runs.summary.ndjson > runs.csv

    # Combine summaries saved earlier
    table fp8.summary.ndjson awq.summary.ndjson

    # Each run as vLLM's result block, a vLLM result file beside a run of ours
    table --style vllm vllm-result.json ours.summary.ndjson

    # Throughput and latency against concurrency as an SVG chart, from a sweep
    for c in 1 2 4 8; do arrivals --concurrency $c -n 64 | fire --url $URL; done | reduce | table --format svg > load.svg

    # The TTFT distribution of each run, or a run's tokens/s over time (needs reduce --every)
    table --format svg --chart ttft-cdf sweep.ndjson > ttft.svg
    arrivals --rate 4 -n 200 | fire --url $URL | reduce --every 1s | table --format svg --chart timeline > timeline.svg

    # One self-contained HTML page with the table and every chart, to open offline
    table --format html sweep.ndjson > report.html";

/// Renders reduce's summaries as a table with one column per run.
#[derive(Debug, Parser)]
#[command(
    name = "table",
    version,
    about = "Render summary records as a table, one column per run",
    long_about = "Reads the summary records that reduce writes from each FILE in order (with or \
        without their headers, so lines picked out with jq work too) and prints one table: a row \
        per metric, with its unit in the name, and a column per summary, headed by its label; \
        runs that share a label get the settings that differ between them appended. It is the \
        result block of `vllm bench serve` turned sideways so that runs compare side by side, \
        with a row for every percentile the summaries carry. Counts are whole numbers, other \
        values have two decimals, and `-` marks a metric a run has no value for. A FILE may also \
        be the result file of `vllm bench serve --save-result` (one JSON object, or one per \
        line), told apart by its content; its runs sit beside ours.",
    after_help = EXAMPLES
)]
struct Args {
    /// Streams holding summary records; none or `-` reads stdin.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Terminal)]
    format: Format,

    /// Layout: `default` is one column per run in the chosen format; `vllm` writes each run as
    /// the "Serving Benchmark Result" block of `vllm bench serve`, line for line (the summary's
    /// `vllm` member when it has one, from `reduce --vllm-compatible` or a vLLM result file,
    /// else our own figures; `--format` is then ignored); `llama-bench` prints llama-benchy's
    /// decode and prefill tables (Markdown) from each summary's llama-benchy figures, one row
    /// per run sorted by concurrency.
    #[arg(long, value_enum, default_value_t = Style::Default)]
    style: Style,

    // --- charts ---
    /// The chart `--format svg` draws: `load` (output throughput and latency against the load
    /// setting that differs between runs: concurrency, rate or batch), `ttft-cdf` and `itl-cdf`
    /// (one cumulative distribution per run, from the summaries' histograms), `timeline` (output
    /// tokens/s and requests in flight over time, from `reduce --every`). Default: `load` when
    /// the runs differ in a load setting, else `ttft-cdf`. `--format html` shows every chart
    /// the runs have data for.
    #[arg(long, value_enum, value_name = "KIND")]
    chart: Option<ChartKind>,
}

/// Runs `table` on the process's arguments, stdin and stdout.
pub fn main() -> anyhow::Result<()> {
    let Some(args) = tokenpipe_cli::parse_or_generate::<Args>()? else {
        return Ok(());
    };
    tokenpipe_cli::outlast_first_interrupt("table", &args.files);
    let inputs = tokenpipe_cli::open_inputs(&args.files)?;
    let report = read_report(inputs)?;
    let rendered = match args.chart {
        Some(kind) => chart_only(&report, args.format, args.style, kind)?,
        None => args.style.render(&report, args.format)?,
    };
    for note in &rendered.notes {
        eprintln!("{note}");
    }
    let text = rendered.text;
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// The one chart `--chart` asks for, which only `--format svg` draws.
fn chart_only(
    report: &crate::report::Report,
    format: Format,
    style: Style,
    kind: ChartKind,
) -> anyhow::Result<crate::style::Rendered> {
    if format != Format::Svg || style != Style::Default {
        return Err(tokenpipe_cli::bad_input(
            "--chart picks the chart of --format svg (and takes no --style); --format html \
             shows every chart",
        ));
    }
    use crate::export::Exporter;
    Ok(crate::style::Rendered {
        text: crate::export::svg::Svg { chart: Some(kind) }.export(report)?,
        notes: Vec::new(),
    })
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
}
