//! `--style`: which published layout the runs are written in. `default` is the side-by-side
//! table in `--format`; the others reproduce, line for line, what another benchmark tool prints,
//! so that a run measured here can be pasted where that tool's output is expected.

use crate::export::{Exporter, Format};

pub mod vllm;

/// The layouts of `table`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Style {
    /// One column per run, one row per metric, in the layout `--format` names.
    #[default]
    Default,
    /// Each run as the "Serving Benchmark Result" block of `vllm bench serve`, one after
    /// another; `--format` is ignored.
    Vllm,
    /// The results table of `llama-bench`.
    LlamaBench,
}

impl Style {
    /// The exporter that writes this style; `format` matters only to the default style.
    pub fn exporter(self, format: Format) -> anyhow::Result<Box<dyn Exporter>> {
        match self {
            Style::Default => Ok(format.exporter()),
            Style::Vllm => Ok(Box::new(vllm::VllmBlocks)),
            Style::LlamaBench => Err(anyhow::anyhow!(
                "table: --style llama-bench is not yet implemented"
            )),
        }
    }
}
