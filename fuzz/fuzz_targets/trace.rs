//! The trace readers of `arrivals --trace` (Mooncake and generic JSONL, BurstGPT and generic
//! CSV, or told from the first line): no panic on any file, and the arrivals a file gives are
//! in time order with lengths in range, whatever the layout, unit and scale.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::io::Cursor;
use std::path::PathBuf;
use tokenpipe_arrivals::process::{
    ArrivalProcess, Columns, TimeUnit, TraceFormat, TraceReplay, TraceSpec,
};
use tokenpipe_arrivals::prompts::MAX_TOKENS;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, file)) = data.split_first() else {
        return;
    };
    let format = [
        TraceFormat::Auto,
        TraceFormat::Mooncake,
        TraceFormat::BurstGpt,
        TraceFormat::Jsonl,
        TraceFormat::Csv,
    ][usize::from(mode % 5)];
    let columns = if mode & 8 != 0 {
        Columns {
            time: Some("t".into()),
            input: Some("in".into()),
            output: None,
        }
    } else {
        Columns::default()
    };
    let spec = TraceSpec {
        path: PathBuf::from(if mode & 16 != 0 {
            "trace.csv"
        } else {
            "trace.jsonl"
        }),
        format,
        columns,
        time_unit: (mode & 32 != 0).then_some(TimeUnit::Us),
        time_scale: if mode & 64 != 0 { 1e-3 } else { 1.0 },
        skip_failed: mode & 128 != 0,
    };
    let Ok(mut replay) = TraceReplay::from_reader(&spec, Cursor::new(file.to_vec())) else {
        return;
    };
    let _ = replay.header_params();
    let mut last = 0;
    for _ in 0..=file.len() {
        match replay.next_arrival() {
            Ok(Some(a)) => {
                let at = a.offset_ns.expect("a trace row has a send time");
                assert!(at >= last, "offset {at} after {last}");
                last = at;
                assert!(a.input_tokens.is_some_and(|n| n <= MAX_TOKENS), "{a:?}");
                assert!(
                    a.output_tokens
                        .is_some_and(|n| (1..=MAX_TOKENS).contains(&n)),
                    "{a:?}"
                );
            }
            Ok(None) | Err(_) => break,
        }
    }
});
