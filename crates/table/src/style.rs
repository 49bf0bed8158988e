//! The `--style` flag: whose layout `table` prints. The default is this tool's own (the layouts
//! of [`crate::layout`], in `--format`); the others reproduce, line for line, what another
//! benchmark tool prints, so a result can be pasted beside theirs.

use crate::export::Format;
use crate::llama_bench::LlamaBenchTables;
use crate::options::Options;
use crate::report::Report;

pub mod vllm;

/// The layouts of `table`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Style {
    /// This tool's layouts (runs as columns or rows, pivots, rankings), in the chosen
    /// `--format`.
    #[default]
    Default,
    /// Each run as the "Serving Benchmark Result" block of `vllm bench serve`, one after
    /// another, the same in every text format (charts are refused).
    Vllm,
    /// llama-benchy's two Markdown tables: decode and prefill throughput by concurrency.
    LlamaBench,
}

/// What a style rendered: the text for stdout and notes for stderr (runs it had to leave out).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rendered {
    /// The output, without a final newline.
    pub text: String,
    /// One line per run left out, and why.
    pub notes: Vec<String>,
}

impl Style {
    /// Renders `report` in this style; `format` and the layout flags `opts` apply to the default
    /// style, the others have a fixed layout (llama-bench refuses a machine format, which would
    /// not be that layout, and both refuse charts and `--columns`).
    pub fn render(
        self,
        report: &Report,
        format: Format,
        opts: &Options,
    ) -> anyhow::Result<Rendered> {
        if self != Style::Default {
            opts.refuse_for(&format!("--style {}", self.name()))?;
        }
        if self != Style::Default && matches!(format, Format::Svg | Format::Html | Format::Mermaid)
        {
            return Err(tokenpipe_cli::bad_input(format!(
                "--format svg, html and mermaid draw the default layout and its charts; --style {} \
                 reproduces another tool's fixed layout, so drop one of the two",
                self.name()
            )));
        }
        match self {
            Style::Default => crate::layout::render(report, format, opts),
            Style::Vllm => {
                use crate::export::Exporter;
                Ok(Rendered {
                    text: vllm::VllmBlocks.export(report)?,
                    notes: Vec::new(),
                })
            }
            Style::LlamaBench => {
                if matches!(format, Format::Csv | Format::Json) {
                    return Err(tokenpipe_cli::bad_input(
                        "--style llama-bench writes Markdown tables; use --format csv or json \
                         without --style for machine-readable output",
                    ));
                }
                let tables = LlamaBenchTables::from_report(report)?;
                Ok(Rendered {
                    text: tables.to_markdown(),
                    notes: tables.left_out,
                })
            }
        }
    }
}

impl Style {
    /// The style's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Style::Default => "default",
            Style::Vllm => "vllm",
            Style::LlamaBench => "llama-bench",
        }
    }
}
