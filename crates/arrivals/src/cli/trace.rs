//! The flags that replay a recorded trace (`--trace FILE`) instead of drawing arrivals.

use crate::process::{parse_columns, Columns, TimeUnit, TraceFormat};
use clap::Args;
use std::path::PathBuf;

/// Trace replay.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Trace replay")]
pub struct TraceFlags {
    /// Replay this trace (JSONL or CSV): each row is a request sent at its timestamp's
    /// distance from the first row's, with the row's prompt and answer lengths. Streamed, so
    /// any size fits; the whole trace unless --num-prompts or --duration cut it.
    #[arg(long, value_name = "FILE",
          conflicts_with_all = ["rate", "burstiness", "arrival", "concurrency", "batch", "ramp", "vllm_compatible"])]
    pub trace: Option<PathBuf>,

    /// The trace's layout: told from the extension and the first line's columns (`auto`),
    /// Mooncake JSONL, BurstGPT CSV, or any JSONL/CSV with --trace-columns.
    #[arg(long, value_enum, default_value_t = TraceFormatArg::Auto, requires = "trace")]
    pub trace_format: TraceFormatArg,

    /// Which columns hold the send time, the prompt length and the answer length; any left
    /// out come from the built-in layout.
    #[arg(long, value_name = "time=COL,input=COL,output=COL", value_parser = parse_columns,
          requires = "trace")]
    pub trace_columns: Option<Columns>,

    /// Unit of the time column [default: the layout's: ms for Mooncake, s otherwise].
    #[arg(long, value_enum, value_name = "UNIT", requires = "trace")]
    pub trace_time_unit: Option<TimeUnitArg>,

    /// Multiply every offset by F: 0.5 replays twice as fast, 2 half as fast.
    #[arg(long, value_name = "F", default_value_t = 1.0, value_parser = parse_scale,
          requires = "trace")]
    pub time_scale: f64,

    /// Leave out rows with 0 output tokens (BurstGPT's failed requests) instead of sending
    /// them with max_tokens 1.
    #[arg(long, requires = "trace")]
    pub trace_skip_failed: bool,
}

/// `--trace-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceFormatArg {
    /// By extension and by the first line's columns.
    Auto,
    /// Mooncake JSONL: timestamp (ms), input_length, output_length.
    Mooncake,
    /// BurstGPT CSV: Timestamp (s), Request tokens, Response tokens.
    Burstgpt,
    /// JSON lines, columns from --trace-columns or a known layout.
    Jsonl,
    /// CSV with a header, columns from --trace-columns or a known layout.
    Csv,
}

impl From<TraceFormatArg> for TraceFormat {
    fn from(f: TraceFormatArg) -> Self {
        match f {
            TraceFormatArg::Auto => TraceFormat::Auto,
            TraceFormatArg::Mooncake => TraceFormat::Mooncake,
            TraceFormatArg::Burstgpt => TraceFormat::BurstGpt,
            TraceFormatArg::Jsonl => TraceFormat::Jsonl,
            TraceFormatArg::Csv => TraceFormat::Csv,
        }
    }
}

/// `--trace-time-unit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TimeUnitArg {
    /// Seconds.
    S,
    /// Milliseconds.
    Ms,
    /// Microseconds.
    Us,
    /// Nanoseconds.
    Ns,
}

impl From<TimeUnitArg> for TimeUnit {
    fn from(u: TimeUnitArg) -> Self {
        match u {
            TimeUnitArg::S => TimeUnit::S,
            TimeUnitArg::Ms => TimeUnit::Ms,
            TimeUnitArg::Us => TimeUnit::Us,
            TimeUnitArg::Ns => TimeUnit::Ns,
        }
    }
}

/// A positive, finite factor.
fn parse_scale(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f.is_finite() && f > 0.0 => Ok(f),
        _ => Err(format!("expected a positive number, got `{s}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_scale_is_positive_and_finite() {
        assert_eq!(parse_scale("0.5"), Ok(0.5));
        for bad in ["0", "-1", "inf", "nan", "fast"] {
            assert!(parse_scale(bad).is_err(), "{bad}");
        }
    }
}
