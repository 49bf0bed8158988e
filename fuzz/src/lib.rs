//! What the fuzz targets share: the record readers configured as each tool configures its own,
//! a comparison of JSON values that forgives the last bit of a float, the chunk readers'
//! agreement check, a reference SSE splitter written from the grammar alone, and a scratch file
//! for the readers that take a path.

use serde_json::Value;
use std::io::Cursor;
use std::path::PathBuf;
use tokenpipe_fire::api::{reference, scan};
use tokenpipe_format::{RecordReader, RecordType};

/// A reader over `bytes` set up as one of the tools sets up its own (`mode` picks which, any
/// byte will do): every record, fire's schedule reader, reduce's event reader, table's
/// headerless summary reader. Odd modes above 3 also cap lines at 4 KiB.
pub fn reader(mode: u8, bytes: &[u8]) -> RecordReader<Cursor<&[u8]>> {
    use RecordType::*;
    let r = RecordReader::new(Cursor::new(bytes), "<fuzz>");
    let r = match mode % 4 {
        0 => r,
        1 => r.keep(&[Schedule, Request]).reject(
            &[Sent, Token, Done, Stall, Summary, Stamp],
            "a schedule (what arrivals writes, and fire reads)",
        ),
        2 => r
            .keep(&[Sent, Token, Done, Stall, Client, ServerMetrics])
            .reject(
                &[Schedule, Request, Summary, Stamp, Result],
                "fire's events (what fire writes, and reduce reads)",
            ),
        _ => r.headerless().keep(&[Summary, Interval]).reject(
            &[Schedule, Request, Sent, Token, Done, Stall],
            "summaries (what reduce writes, and table reads)",
        ),
    };
    if mode >= 4 && mode % 2 == 1 {
        r.max_line_bytes(4096)
    } else {
        r
    }
}

/// Equal JSON values, where two floats may differ in their last bits: serde_json's default
/// float parser is best-effort, so a float written and read back may move by one ulp.
pub fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) => x == y || (x - y).abs() <= 1e-12 * x.abs().max(y.abs()),
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// Checks one event's data: whatever the allocation-free scanner answers, the serde reference
/// answers the same, and `read_chunk` (scanner, then reference) never panics.
pub fn check_chunk(data: &[u8]) {
    if let Some(fast) = scan::scan(data) {
        match reference::parse(data) {
            Ok(full) => assert!(
                fast.agrees_with(&full),
                "scanner and serde disagree on {:?}: {fast:?} vs {full:?}",
                String::from_utf8_lossy(data)
            ),
            Err(e) => panic!(
                "scanner accepted what serde refuses ({e}): {:?}",
                String::from_utf8_lossy(data)
            ),
        }
    }
    let _ = tokenpipe_fire::api::read_chunk(data);
}

/// The events of a whole body by the SSE grammar `sse_split` documents, written as plainly as
/// possible: lines end in `\n`, `\r\n` or `\r`; `data:` lines (one optional space after the
/// colon) gather, joined by `\n`; a blank line dispatches the event if it has data; other
/// lines are ignored; an unterminated last line and an undispatched event are dropped.
pub fn reference_events(body: &[u8]) -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'\n' => {
                lines.push(&body[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&body[start..i]);
                if body.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    let mut events = Vec::new();
    let mut data: Option<Vec<u8>> = None;
    for line in lines {
        if line.is_empty() {
            events.extend(data.take());
        } else if let Some(value) = line.strip_prefix(b"data:") {
            let value = value.strip_prefix(b" ").unwrap_or(value);
            match &mut data {
                Some(d) => {
                    d.push(b'\n');
                    d.extend_from_slice(value);
                }
                None => data = Some(value.to_vec()),
            }
        }
    }
    events
}

/// A file of this process's own, holding `bytes`, for the readers that take a path; `ext` is
/// its extension. It lives in `/dev/shm` where there is one (a memory file system: writing a
/// file per input on a disk's file system costs more than reading it), else under the
/// temporary directory.
pub fn scratch_file(ext: &str, bytes: &[u8]) -> PathBuf {
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let path = dir.join(format!("tokenpipe-fuzz-{}.{ext}", std::process::id()));
    std::fs::write(&path, bytes).expect("the temporary directory is writable");
    path
}

/// `bytes` as one input of a tool, named `name`.
pub fn input(name: &str, bytes: Vec<u8>) -> tokenpipe_cli::Input {
    tokenpipe_cli::Input {
        reader: Box::new(Cursor::new(bytes)),
        name: name.to_string(),
    }
}

/// Runs `reduce` over `events` with the options `mode` picks (per-request results, an SLO,
/// vLLM's figures, histograms, intervals, groups); its output, when it has one, must read back
/// as records and go through `table` ([`render`]) without a panic.
pub fn reduce_and_render(mode: u8, events: Vec<u8>) {
    reduce_and_render_over(mode, events, 0);
}

/// [`reduce_and_render`] for events that span `span_ns`: `--every` widens past 1 s so that a
/// run gets at most [`MAX_INTERVALS`] intervals. A result file with a gap of ten days is a
/// ten-day run, and `--every 1s` over it writes 864,000 intervals as asked: output volume, not
/// a defect, and a minute per input for the fuzzer.
pub fn reduce_and_render_over(mode: u8, events: Vec<u8>, span_ns: u64) {
    use tokenpipe_reduce::{
        Config, OutcomeOptions, SloBound, SloMetric, SummaryOptions, VllmOptions,
    };
    let slo = vec![SloBound {
        metric: SloMetric::Ttft,
        bound_ns: 2e8,
    }];
    let config = Config {
        labels: Vec::new(),
        summary: SummaryOptions {
            percentiles: vec![50.0, 99.0],
            histograms: mode & 1 != 0,
            outcomes: OutcomeOptions {
                per_request: mode & 2 != 0,
                slo: if mode & 4 != 0 {
                    slo.clone()
                } else {
                    Vec::new()
                },
                ..OutcomeOptions::default()
            },
            vllm: (mode & 8 != 0).then(|| VllmOptions {
                percentiles: vec![99.0],
                slos: slo,
            }),
            every_ns: (mode & 16 != 0).then_some((span_ns / MAX_INTERVALS).max(1_000_000_000)),
            ..SummaryOptions::default()
        },
        runs: tokenpipe_reduce::RunsOptions {
            groups: mode & 32 == 0,
        },
        argv: vec!["reduce".into()],
    };
    let mut written = Vec::new();
    let reduced = {
        let mut out = tokenpipe_format::RecordWriter::new(&mut written);
        let reduced = tokenpipe_reduce::reduce(
            config,
            vec![input("<fuzz>", events)],
            &mut out,
            &mut std::io::sink(),
        );
        out.flush().expect("writing to a Vec cannot fail");
        reduced
    };
    if reduced.is_err() {
        return;
    }
    let mut back = RecordReader::new(Cursor::new(&written[..]), "<reduce>");
    loop {
        match back.next_record() {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) => panic!("reduce wrote what it cannot read back: {e}"),
        }
    }
    render(mode, written);
}

/// The most `--every` intervals [`reduce_and_render_over`] asks of a run.
pub const MAX_INTERVALS: u64 = 10_000;

/// Reads `bytes` as `table` reads an input (summaries, or a vLLM result file) and renders it
/// in the style and format `mode` picks; errors are fine, panics are not.
pub fn render(mode: u8, bytes: Vec<u8>) {
    use tokenpipe_table::{Format, Options, Style};
    let Ok(report) = tokenpipe_table::read_report(vec![input("<fuzz>", bytes)]) else {
        return;
    };
    let style = [Style::Default, Style::Vllm, Style::LlamaBench][usize::from(mode % 3)];
    let format = [
        Format::Terminal,
        Format::Markdown,
        Format::Csv,
        Format::Json,
        Format::Mermaid,
        Format::Svg,
        Format::Html,
    ][usize::from((mode >> 2) % 7)];
    let _ = style.render(&report, format, &Options::default());
}
