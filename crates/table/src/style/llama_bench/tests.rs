//! Snapshot tests of `--style llama-bench`: hand-built summaries with known figures, compared with
//! the exact expected tables.

use crate::{Format, Report, RunReport, Style};
use tokenpipe_cli::{Ending, ToolError};
use tokenpipe_format::{AcrossRuns, LlamaBenchy, SpreadFigure, Summary};

fn figure(mean: f64, std: f64, cv_pct: Option<f64>) -> SpreadFigure {
    SpreadFigure {
        mean,
        std,
        cv_pct,
        n: 50,
        per: "batch".into(),
    }
}

/// A batch run with llama-benchy's figures (seed 001's numbers).
fn benchy(label: &str, concurrency: u64, tg: (f64, f64, f64), pp: (f64, f64)) -> Summary {
    Summary {
        label: label.into(),
        run_id: format!("{label}-c{concurrency}"),
        // Every request of its batches ended ok: a comparable run.
        requests_ok: 50 * concurrency,
        llama_benchy: Some(LlamaBenchy {
            concurrency: Some(concurrency),
            batches: 50,
            tg_tps: Some(figure(tg.0, tg.1, Some(tg.2))),
            pp_tps: Some(figure(pp.0, pp.1, None)),
            ..LlamaBenchy::default()
        }),
        ..Summary::default()
    }
}

fn report(summaries: Vec<Summary>) -> Report {
    Report {
        runs: summaries
            .into_iter()
            .map(|summary| RunReport {
                header: None,
                summary,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// The text after llama-benchy's own table (checked byte for byte in `tests_own`): seed 001's
/// two tables. A run with llama-benchy's figures always has the own table first.
fn seed_tables(text: &str) -> &str {
    assert!(
        text.starts_with("| model "),
        "llama-benchy's own table first: {text}"
    );
    text.split_once("\n\n").map_or("", |(_, rest)| rest)
}

fn render(summaries: Vec<Summary>) -> Result<crate::Rendered, crate::Error> {
    Style::LlamaBench.render(&report(summaries), Format::Markdown, &Default::default())
}

#[test]
fn decode_and_prefill_tables_sorted_by_concurrency() {
    let got = render(vec![
        benchy("gpt", 16, (214.47, 3.139, 1.464), (6918.0, 224.56)),
        benchy("gpt", 2, (77.81, 0.9, 1.157), (3310.0, 50.93)),
        benchy("gpt", 1, (57.22, 0.15, 0.262), (3310.004, 50.926)),
    ])
    .unwrap();
    let want = "\
Decode throughput, from llama_benchy.tg_tps:

| Concurrency | t/s (total) | +/- stddev |  CV% |
|------------:|------------:|-----------:|-----:|
|           1 |       57.22 |       0.15 | 0.3% |
|           2 |       77.81 |       0.90 | 1.2% |
|          16 |      214.47 |       3.14 | 1.5% |

Prefill throughput, from llama_benchy.pp_tps:

| Concurrency | pp t/s (total) | +/- stddev |
|------------:|---------------:|-----------:|
|           1 |        3310.00 |      50.93 |
|           2 |        3310.00 |      50.93 |
|          16 |        6918.00 |     224.56 |";
    assert_eq!(seed_tables(&got.text), want);
    assert!(got.notes.is_empty(), "{:?}", got.notes);
}

#[test]
fn several_models_add_a_model_column_and_runs_without_figures_are_named() {
    let plain = Summary {
        label: "open-loop".into(),
        run_id: "r9".into(),
        requests_ok: 16,
        ..Summary::default()
    };
    let got = render(vec![
        benchy("b|2", 4, (100.0, 1.0, 1.0), (2000.0, 20.0)),
        plain,
        benchy("a", 4, (90.0, 0.0, 0.0), (1000.0, 10.0)),
        benchy("b|2", 1, (50.0, 0.5, 1.0), (900.0, 9.0)),
    ])
    .unwrap();
    let want = "\
Decode throughput, from llama_benchy.tg_tps:

| Model | Concurrency | t/s (total) | +/- stddev |  CV% |
|-------|------------:|------------:|-----------:|-----:|
| b\\|2  |           1 |       50.00 |       0.50 | 1.0% |
| b\\|2  |           4 |      100.00 |       1.00 | 1.0% |
| a     |           4 |       90.00 |       0.00 | 0.0% |

Prefill throughput, from llama_benchy.pp_tps:

| Model | Concurrency | pp t/s (total) | +/- stddev |
|-------|------------:|---------------:|-----------:|
| b\\|2  |           1 |         900.00 |       9.00 |
| b\\|2  |           4 |        2000.00 |      20.00 |
| a     |           4 |        1000.00 |      10.00 |";
    assert_eq!(seed_tables(&got.text), want);
    assert_eq!(got.notes.len(), 1);
    assert!(
        got.notes[0].contains("run open-loop (r9) has no llama-benchy figures"),
        "{:?}",
        got.notes
    );
}

#[test]
fn group_summaries_without_benchy_figures_use_across_runs_and_say_so() {
    let mut group = Summary {
        label: "m".into(),
        run_id: "g1".into(),
        runs: vec!["a".into(), "b".into(), "c".into()],
        requests_ok: 48,
        ..Summary::default()
    };
    group.across_runs.insert(
        "output_throughput_tokens_per_s".into(),
        AcrossRuns {
            n: 3,
            mean: 452.544,
            sd: 4.126,
            cv_pct: Some(0.9117),
            ci95: [442.3, 462.8],
        },
    );
    let member = |id: &str| Summary {
        label: "m".into(),
        run_id: id.into(),
        requests_ok: 16,
        ..Summary::default()
    };
    let mut r = report(vec![member("a"), member("b"), member("c"), group]);
    let mut h = tokenpipe_format::Header::new("reduce", "g1".into(), vec![]);
    let mut up = tokenpipe_format::Header::new("arrivals", "a".into(), vec![]);
    up.params.insert("batch".into(), 64.into());
    h.upstream.push(up);
    r.runs[3].header = Some(h);
    let got = Style::LlamaBench
        .render(&r, Format::Terminal, &Default::default())
        .unwrap();
    let want = "\
Decode throughput, from across_runs.output_throughput_tokens_per_s (mean and sample sd over repeated runs):

| Concurrency | t/s (total) | +/- stddev |  CV% |
|------------:|------------:|-----------:|-----:|
|          64 |      452.54 |       4.13 | 0.9% |";
    assert_eq!(got.text, want);
    assert!(
        got.notes.is_empty(),
        "pooled runs are in the group's row: {:?}",
        got.notes
    );
}

#[test]
fn no_run_with_figures_is_bad_input_naming_them() {
    let plain = |id: &str| Summary {
        run_id: id.into(),
        ..Summary::default()
    };
    let err = render(vec![plain("r1"), plain("r2")]).unwrap_err();
    assert_eq!(err.ending(), Ending::BadInput);
    let msg = err.to_string();
    assert!(msg.contains("no run has llama-benchy figures"), "{msg}");
    assert!(
        msg.contains("run r1 (r1)") && msg.contains("run r2 (r2)"),
        "{msg}"
    );
}

#[test]
fn a_run_that_is_not_comparable_is_named_on_stderr_and_left_as_it_is_in_the_tables() {
    let mut flaky = benchy("b", 4, (100.0, 1.0, 1.0), (2000.0, 20.0));
    flaky.requests_ok = 140;
    flaky.requests_failed = 60;
    flaky.errors.insert("http".into(), 60);
    let whole = render(vec![benchy("b", 4, (100.0, 1.0, 1.0), (2000.0, 20.0))]).unwrap();
    let got = render(vec![flaky]).unwrap();
    assert_eq!(got.text, whole.text, "llama-benchy's tables as they are");
    assert_eq!(
        got.notes,
        ["table: not comparable: b: incomplete: 60 of 200 failed (30.0 %: http: 60)"]
    );
}

#[test]
fn machine_formats_are_refused_with_the_style() {
    let r = report(vec![benchy("m", 1, (1.0, 0.0, 0.0), (1.0, 0.0))]);
    for format in [Format::Csv, Format::Json] {
        let err = Style::LlamaBench
            .render(&r, format, &Default::default())
            .unwrap_err();
        assert_eq!(err.ending(), Ending::BadInput);
    }
}
