//! Whole-run tests: hand-written event streams with known timings, checked field by field
//! against docs/metrics.md ([`metrics`] and a file per kind of figure), the multi-input driver
//! ([`runs`], [`groups`], [`shards`]), and every bad-input rule with its line number
//! ([`bad_input`]). This file holds the stream-building and driving helpers.

mod bad_input;
mod fast_path;
mod groups;
mod llama_benchy;
mod llama_benchy_plan;
mod metrics;
mod outcomes;
mod reasoning;
mod runs;
mod shards;
mod telemetry;
mod timing;
mod vllm;

pub(super) use crate::{fold_run, FoldOptions, RunReducer, SummaryOptions};
pub(super) use tokenpipe_format::{RecordReader, StatName, Summary};

pub(super) const MS: u64 = 1_000_000;

/// Reads the header of the run `text` starts and folds the run into `agg`; records the
/// aggregators write while the run is read go to `emit`. Returns the header.
pub(super) fn fold_text(
    text: &str,
    agg: &mut dyn crate::Aggregator,
    emit: &mut crate::Emit<'_>,
) -> Result<tokenpipe_format::Header, crate::Error> {
    let mut reader = RecordReader::new(text.as_bytes(), "<test>");
    let header = reader.read_header()?;
    fold_run(&mut reader, &header, agg, &FoldOptions::default(), emit)?;
    Ok(header)
}

/// Runs reduce's whole driver over `inputs` (name, text) as the command line would; returns
/// the records written and the warnings.
pub(super) fn drive(
    inputs: Vec<(&str, String)>,
    labels: &[String],
    opts: &SummaryOptions,
    runs: crate::RunsOptions,
) -> Result<(Vec<tokenpipe_format::Record>, String), crate::Error> {
    let inputs = inputs
        .into_iter()
        .map(|(name, text)| tokenpipe_cli::Input {
            reader: Box::new(std::io::Cursor::new(text.into_bytes())),
            name: name.into(),
        })
        .collect();
    let (mut bytes, mut warn) = (Vec::new(), Vec::new());
    {
        let mut out = tokenpipe_format::RecordWriter::new(&mut bytes);
        let config = crate::Config {
            labels: labels.to_vec(),
            summary: opts.clone(),
            runs,
            argv: vec!["reduce".into()],
        };
        crate::reduce(config, inputs, &mut out, &mut warn)?;
        out.flush()?;
    }
    let mut reader = RecordReader::new(&bytes[..], "<out>");
    let mut records = vec![];
    while let Some(r) = reader.next_record()? {
        records.push(r);
    }
    Ok((records, String::from_utf8(warn).expect("warnings in UTF-8")))
}

pub(super) fn header(run_id: &str) -> String {
    format!(
        r#"{{"type":"header","format_major":1,"tool":"fire","tool_version":"0.1.0","run_id":"{run_id}","params":{{"url":"http://x"}},"upstream":[{{"format_major":1,"tool":"arrivals","tool_version":"0.1.0","run_id":"a","params":{{"model":"m-7b"}}}}]}}"#
    )
}

pub(super) fn sent(id: u64, scheduled_ns: u64, sent_ns: u64) -> String {
    format!(r#"{{"type":"sent","id":{id},"scheduled_ns":{scheduled_ns},"sent_ns":{sent_ns}}}"#)
}

pub(super) fn token(id: u64, at_ns: u64, tokens: u32) -> String {
    format!(r#"{{"type":"token","id":{id},"at_ns":{at_ns},"tokens":{tokens}}}"#)
}

pub(super) fn done(id: u64, at_ns: u64, ok: bool, extra: &str) -> String {
    format!(r#"{{"type":"done","id":{id},"at_ns":{at_ns},"ok":{ok},"events":0{extra}}}"#)
}

pub(super) fn stream(lines: &[String]) -> String {
    let mut s = header("run-1");
    s.push('\n');
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    s
}

pub(super) fn summary_of(text: &str) -> Result<Summary, crate::Error> {
    let mut agg = RunReducer::default();
    let header = fold_text(text, &mut agg, &mut |_| Ok(()))?;
    Ok(agg.finish_summary(
        "l".into(),
        header.run_id,
        &SummaryOptions::default(),
        &mut Vec::new(),
    ))
}

/// Relative tolerance of the HDR percentiles (3 significant figures).
pub(super) fn assert_pct(got: Option<f64>, want: f64) {
    let got = got.expect("a percentile");
    assert!(
        (got - want).abs() <= want * 1e-3,
        "percentile {got} not within 0.1% of {want}"
    );
}

/// Two successful requests with TTFT 50 and 70 ms, 5 single-token events 10 ms apart, E2EL 100
/// and 120 ms; interleaved.
pub(super) fn two_requests() -> Vec<String> {
    let (a, b) = (1_000 * MS, 1_020 * MS);
    vec![
        sent(1, a - MS, a),
        sent(2, b - 3 * MS, b),
        token(1, a + 50 * MS, 1),
        token(1, a + 60 * MS, 1),
        token(2, b + 70 * MS, 1),
        token(1, a + 70 * MS, 1),
        token(1, a + 80 * MS, 1),
        token(2, b + 80 * MS, 1),
        token(1, a + 90 * MS, 1),
        token(2, b + 90 * MS, 1),
        done(
            1,
            a + 100 * MS,
            true,
            r#","prompt_tokens":100,"completion_tokens":5"#,
        ),
        token(2, b + 100 * MS, 1),
        token(2, b + 110 * MS, 1),
        // No usage: n is the sum of the token events.
        done(2, b + 120 * MS, true, r#","prompt_tokens":200"#),
    ]
}
