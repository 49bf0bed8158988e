//! Trace replay (`--trace FILE`): an open loop whose arrivals are a recorded trace's rows, each
//! sent at its timestamp's distance from the first row's (times `--time-scale`) with the row's
//! prompt and answer lengths.
//!
//! The file is streamed: one row is read per arrival, so a trace of any size replays in
//! constant memory. JSONL and CSV are read by [`jsonl`] and [`csv`]; [`layout`] says which
//! columns hold what (Mooncake, BurstGPT, or `--trace-columns`). Rows must be in time order: a
//! row earlier than the one before it is an error, never a silent reorder.

mod csv;
mod jsonl;
mod layout;

pub use layout::{parse_columns, Columns, TimeUnit, TraceFormat};

use super::{Arrival, ArrivalProcess, ProcessError};
use layout::{Container, Layout};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::PathBuf;
use tokenpipe_format::LoopMode;

/// What to replay and how: the library-level form of the trace flags.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSpec {
    /// The trace file.
    pub path: PathBuf,
    /// Its format, or `Auto`.
    pub format: TraceFormat,
    /// Column names that replace the layout's.
    pub columns: Columns,
    /// The timestamps' unit, where it is not the layout's.
    pub time_unit: Option<TimeUnit>,
    /// Every offset is multiplied by this: 0.5 replays twice as fast.
    pub time_scale: f64,
    /// Drop rows with 0 output tokens (failed requests in BurstGPT) instead of asking for 1.
    pub skip_failed: bool,
}

/// Why one row cannot be read, before the file name is put in front.
#[derive(Debug)]
pub(super) struct RowError {
    line: u64,
    field: Option<String>,
    what: String,
}

impl RowError {
    fn line(line: u64, what: String) -> Self {
        Self {
            line,
            field: None,
            what,
        }
    }

    fn field(line: u64, field: &str, what: String) -> Self {
        Self {
            line,
            field: Some(field.to_string()),
            what,
        }
    }
}

/// A row reader: fills time, input and output as text, and says on which line it found them.
pub(super) trait Rows {
    /// The next row's cells and line, or `None` at the end of the file.
    fn next_row(&mut self, cells: &mut [String; 3]) -> Result<Option<u64>, RowError>;
}

/// A timestamp as written: integers are kept exact, so that epoch nanoseconds do not lose
/// their last digits to a float.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stamp {
    Int(i64),
    Float(f64),
}

impl Stamp {
    /// `self - earlier`, in the trace's unit.
    fn since(self, earlier: Stamp) -> f64 {
        match (self, earlier) {
            (Stamp::Int(a), Stamp::Int(b)) => (i128::from(a) - i128::from(b)) as f64,
            (a, b) => a.float() - b.float(),
        }
    }

    fn float(self) -> f64 {
        match self {
            Stamp::Int(i) => i as f64,
            Stamp::Float(f) => f,
        }
    }
}

/// Replays a trace file row by row (see the module documentation).
pub struct TraceReplay {
    file: String,
    rows: Box<dyn Rows>,
    layout: Layout,
    scale: f64,
    skip_failed: bool,
    cells: [String; 3],
    first: Option<Stamp>,
    previous: Option<Stamp>,
}

impl TraceReplay {
    /// Opens `spec.path`; a file that cannot be opened or whose layout cannot be told is bad
    /// input naming the path.
    pub fn open(spec: &TraceSpec) -> Result<Self, ProcessError> {
        let file = std::fs::File::open(&spec.path).map_err(|e| {
            ProcessError::Input(format!(
                "{}: cannot open the trace: {e}",
                spec.path.display()
            ))
        })?;
        Self::from_reader(spec, BufReader::new(file))
    }

    /// Replays `input` as the file `spec.path` (whose extension still counts for `Auto`).
    pub fn from_reader(
        spec: &TraceSpec,
        mut input: impl BufRead + 'static,
    ) -> Result<Self, ProcessError> {
        let file = spec.path.display().to_string();
        let fail = |what: String| ProcessError::Input(format!("{file}: {what}"));
        if !(spec.time_scale.is_finite() && spec.time_scale > 0.0) {
            return Err(ProcessError::Parameters(format!(
                "--time-scale must be positive, got {}",
                spec.time_scale
            )));
        }
        // The lines up to the first non-blank one are read to detect the layout, then put
        // back in front of the rest, so that line numbers stay right.
        let mut head = Vec::new();
        let first_line = loop {
            let start = head.len();
            let read = input
                .read_until(b'\n', &mut head)
                .map_err(|e| fail(format!("cannot read the trace: {e}")))?;
            let line = String::from_utf8_lossy(&head[start..]).trim().to_string();
            if read == 0 || !line.is_empty() {
                break line;
            }
        };
        if first_line.is_empty() {
            return Err(fail("the trace is empty".into()));
        }
        let layout = layout::resolve(
            spec.format,
            &spec.path,
            &first_line,
            &spec.columns,
            spec.time_unit,
        )
        .map_err(fail)?;
        let whole = Cursor::new(head).chain(input);
        let rows: Box<dyn Rows> = match layout.container {
            Container::Jsonl => Box::new(jsonl::JsonlRows::new(whole, layout.columns.clone())),
            Container::Csv => Box::new(
                csv::CsvRows::new(whole, layout.columns.clone())
                    .map_err(|e| Self::row_error(&file, e))?,
            ),
        };
        Ok(Self {
            file,
            rows,
            layout,
            scale: spec.time_scale,
            skip_failed: spec.skip_failed,
            cells: Default::default(),
            first: None,
            previous: None,
        })
    }

    fn row_error(file: &str, e: RowError) -> ProcessError {
        ProcessError::Input(match e.field {
            Some(field) => format!("{file}: line {}: field \"{field}\": {}", e.line, e.what),
            None => format!("{file}: line {}: {}", e.line, e.what),
        })
    }

    fn error(&self, line: u64, role: usize, what: String) -> ProcessError {
        Self::row_error(
            &self.file,
            RowError::field(line, &self.layout.columns[role], what),
        )
    }

    /// How to sort this file by its time column, for the out-of-order error.
    fn sort_hint(&self) -> String {
        let column = &self.layout.columns[0];
        match self.layout.container {
            Container::Jsonl => format!("jq -c -s 'sort_by(.{column})[]' FILE"),
            Container::Csv => format!(
                "keep the header line and `sort -t, -k N,N -n` the rest, N being column \"{column}\"'s position"
            ),
        }
    }
}

/// Parses a timestamp cell: an integer, or a finite decimal.
fn parse_stamp(cell: &str) -> Result<Stamp, String> {
    if let Ok(i) = cell.parse::<i64>() {
        return Ok(Stamp::Int(i));
    }
    match cell.parse::<f64>() {
        Ok(f) if f.is_finite() => Ok(Stamp::Float(f)),
        _ => Err(format!("expected a number, got `{cell}`")),
    }
}

/// Parses a length cell: a whole number from 0 to 2^24.
fn parse_length(cell: &str) -> Result<u64, String> {
    let max = crate::prompts::MAX_TOKENS;
    match cell.parse::<u64>() {
        Ok(n) if n <= max => Ok(n),
        Ok(n) => Err(format!("{n} tokens is more than the {max} (2^24) allowed")),
        Err(_) => match cell.parse::<f64>() {
            Ok(f) if f < 0.0 => Err(format!("a length cannot be negative, got {cell}")),
            Ok(f) if f.is_finite() && f.fract() == 0.0 && f <= max as f64 => Ok(f as u64),
            Ok(f) if f.is_finite() && f.fract() == 0.0 => Err(format!(
                "{cell} tokens is more than the {max} (2^24) allowed"
            )),
            Ok(_) => Err(format!("expected a whole number of tokens, got {cell}")),
            Err(_) => Err(format!("expected a number of tokens, got `{cell}`")),
        },
    }
}

impl ArrivalProcess for TraceReplay {
    fn mode(&self) -> LoopMode {
        LoopMode::Open
    }

    fn next_arrival(&mut self) -> Result<Option<Arrival>, ProcessError> {
        loop {
            let Some(line) = self
                .rows
                .next_row(&mut self.cells)
                .map_err(|e| Self::row_error(&self.file, e))?
            else {
                return Ok(None);
            };
            let stamp = parse_stamp(&self.cells[0]).map_err(|e| self.error(line, 0, e))?;
            let input = parse_length(&self.cells[1]).map_err(|e| self.error(line, 1, e))?;
            let output = parse_length(&self.cells[2]).map_err(|e| self.error(line, 2, e))?;
            if let Some(previous) = self.previous {
                if stamp.since(previous) < 0.0 {
                    return Err(self.error(
                        line,
                        0,
                        format!(
                            "{} is earlier than the row before ({}); replay needs rows in time order: sort the file first ({})",
                            self.cells[0],
                            previous.float(),
                            self.sort_hint()
                        ),
                    ));
                }
            }
            self.previous = Some(stamp);
            // The first row of the file is the origin, kept or not, so that skipping failed
            // rows does not move the others.
            let first = *self.first.get_or_insert(stamp);
            if output == 0 && self.skip_failed {
                continue;
            }
            let ns = stamp.since(first) * self.layout.unit.ns() * self.scale;
            let offset = ns.round();
            // u64::MAX as f64 rounds up to 2^64, so below it the cast is exact and in range (the
            // stamps and the scale are finite, so the offset is never NaN).
            if offset >= u64::MAX as f64 {
                return Err(self.error(
                    line,
                    0,
                    "the offset from the first row, times --time-scale, passes 2^64 ns".into(),
                ));
            }
            return Ok(Some(Arrival {
                offset_ns: Some(offset as u64),
                input_tokens: Some(input),
                // A failed request (0 tokens) is still sent, asking for the least an answer
                // can be.
                output_tokens: Some(output.max(1)),
            }));
        }
    }

    fn header_params(&self) -> BTreeMap<String, Value> {
        let [time, input, output] = &self.layout.columns;
        let mut params = BTreeMap::new();
        params.insert("trace_format".into(), json!(self.layout.name));
        params.insert(
            "trace_columns".into(),
            json!({"time": time, "input": input, "output": output}),
        );
        params.insert("trace_time_unit".into(), json!(self.layout.unit.name()));
        if self.skip_failed {
            params.insert("trace_skip_failed".into(), json!(true));
        }
        params
    }
}

#[cfg(test)]
mod tests;
