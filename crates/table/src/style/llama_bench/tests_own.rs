//! `--style llama-bench`'s first table, llama-benchy's own: compared byte for byte with what
//! llama-benchy 0.4.0's `_generate_md_report` printed for the same figures (tabulate 0.9.0 and
//! 0.10.0 print the same), fed through `BenchmarkRun`s with the numbers below.

use super::benchy_md::{pipe_table, render, BenchyRun};
use crate::{Format, Report, RunReport, Style};
use tokenpipe_format::{Header, LlamaBenchy, MeanStd, SpreadFigure, Summary};

type Pair = Option<(f64, f64)>;

fn spread(p: Pair) -> Option<SpreadFigure> {
    p.map(|(mean, std)| SpreadFigure {
        mean,
        std,
        ..SpreadFigure::default()
    })
}

fn ms(p: Pair) -> Option<MeanStd> {
    p.map(|(mean, std)| MeanStd { mean, std })
}

/// A run of `model` at `pp`/`tg`/`depth` and concurrency `c`, with llama-benchy's nine figures
/// in its order: pp, pp (req), tg, tg (req), peak, peak (req), ttfr, est_ppt, e2e_ttft.
fn run(model: &str, c: u64, depth: u64, pp: u64, tg: u64, v: [Pair; 9]) -> RunReport {
    let mut header = Header::new("reduce", format!("r-c{c}-d{depth}"), vec![]);
    let mut arrivals = Header::new("arrivals", "a".into(), vec![]);
    for (key, value) in [
        ("input_tokens", pp),
        ("output_tokens", tg),
        ("depth", depth),
    ] {
        arrivals.params.insert(key.into(), value.into());
    }
    arrivals.params.insert("model".into(), model.into());
    header.upstream.push(arrivals);
    let summary = Summary {
        label: "not the model".into(),
        run_id: format!("r-c{c}-d{depth}"),
        requests_ok: 10,
        llama_benchy: Some(LlamaBenchy {
            concurrency: Some(c),
            batches: 5,
            pp_tps: spread(v[0]),
            pp_tps_request: spread(v[1]),
            tg_tps: spread(v[2]),
            tg_tps_request: spread(v[3]),
            peak_tps: spread(v[4]),
            peak_tps_request: spread(v[5]),
            ttfr_ms: ms(v[6]),
            est_ppt_ms: ms(v[7]),
            e2e_ttft_ms: ms(v[8]),
            ..LlamaBenchy::default()
        }),
        ..Summary::default()
    };
    RunReport::new(Some(header), summary)
}

const C1: [Pair; 9] = [
    Some((3310.004, 50.926)),
    Some((3310.004, 50.926)),
    Some((57.2249, 0.15)),
    Some((57.2249, 0.15)),
    Some((59.0, 1.0)),
    Some((58.5, 0.995)),
    Some((311.4, 3.2)),
    Some((308.0, 3.2)),
    Some((312.5, 3.25)),
];
const C4: [Pair; 9] = [
    Some((4579.1, 359.07)),
    Some((2100.5, 12.345)),
    Some((107.4, 1.99)),
    Some((53.7, 0.5)),
    Some((120.0, 2.0)),
    Some((60.0, 0.0)),
    Some((682.0, 100.0)),
    Some((679.0, 100.0)),
    Some((690.0, 101.0)),
];
/// 98.125 is a tie: Python's `.2f` and Rust's both write 98.12.
const C4_D1024: [Pair; 9] = [
    Some((6918.0, 224.56)),
    Some((1730.25, 20.0)),
    Some((98.125, 2.5)),
    Some((24.5, 0.25)),
    Some((110.0, 3.0)),
    Some((30.0, 1.0)),
    Some((2112.0, 500.0)),
    Some((2109.0, 500.0)),
    Some((2120.0, 501.0)),
];
const GPT: &str = "openai/gpt-oss-120b";

fn own(runs: &[RunReport]) -> String {
    let runs: Vec<BenchyRun> = runs.iter().filter_map(BenchyRun::of).collect();
    render(&runs).expect("a table")
}

#[test]
fn concurrency_one_has_llama_benchys_seven_columns() {
    let want = WANT_C1;
    assert_eq!(own(&[run(GPT, 1, 0, 2048, 128, C1)]), want);
}

#[test]
fn above_concurrency_one_every_column_and_the_c_suffix_in_llama_benchys_order() {
    // Given out of order: llama-benchy's loops run depth, pp, tg, concurrency.
    let runs = [
        run(GPT, 4, 1024, 2048, 128, C4_D1024),
        run(GPT, 4, 0, 2048, 128, C4),
        run(GPT, 1, 0, 2048, 128, C1),
    ];
    assert_eq!(own(&runs), WANT_MIXED);
}

#[test]
fn a_run_without_pp_has_its_tg_row_only_with_empty_cells() {
    let mut v = [None; 9];
    v[2] = Some((77.81, 0.9));
    v[3] = Some((38.9, 0.45));
    assert_eq!(own(&[run("m", 2, 0, 512, 32, v)]), WANT_SPARSE);
}

#[test]
fn the_style_prints_llama_benchys_table_first_then_seed_001s_two() {
    let report = Report {
        runs: vec![run(GPT, 1, 0, 2048, 128, C1)],
        ..Default::default()
    };
    let got = Style::LlamaBench
        .render(&report, Format::Markdown, &Default::default())
        .unwrap();
    let (first, rest) = got.text.split_once("\n\n").expect("several tables");
    assert_eq!(first, WANT_C1);
    assert!(
        rest.starts_with("Decode throughput, from llama_benchy.tg_tps:"),
        "{rest}"
    );
    assert!(
        rest.contains("Prefill throughput, from llama_benchy.pp_tps:"),
        "{rest}"
    );
}

#[test]
fn the_pipe_layout_pads_headings_by_two_and_marks_alignment() {
    let rows = vec![vec!["a".to_string(), String::new()]];
    assert_eq!(
        pipe_table(&["x", "long heading"], &rows),
        "| x   |   long heading |\n|:----|---------------:|\n| a   |                |"
    );
}

const WANT_C1: &str = r#"| model               |   test |             t/s |     peak t/s |     ttfr (ms) |   est_ppt (ms) |   e2e_ttft (ms) |
|:--------------------|-------:|----------------:|-------------:|--------------:|---------------:|----------------:|
| openai/gpt-oss-120b | pp2048 | 3310.00 ± 50.93 |              | 311.40 ± 3.20 |  308.00 ± 3.20 |   312.50 ± 3.25 |
| openai/gpt-oss-120b |  tg128 |    57.22 ± 0.15 | 59.00 ± 1.00 |               |                |                 |"#;

const WANT_MIXED: &str = r#"| model               |                test |      t/s (total) |       t/s (req) |      peak t/s |   peak t/s (req) |        ttfr (ms) |     est_ppt (ms) |    e2e_ttft (ms) |
|:--------------------|--------------------:|-----------------:|----------------:|--------------:|-----------------:|-----------------:|-----------------:|-----------------:|
| openai/gpt-oss-120b |         pp2048 (c1) |  3310.00 ± 50.93 | 3310.00 ± 50.93 |               |                  |    311.40 ± 3.20 |    308.00 ± 3.20 |    312.50 ± 3.25 |
| openai/gpt-oss-120b |          tg128 (c1) |     57.22 ± 0.15 |    57.22 ± 0.15 |  59.00 ± 1.00 |     58.50 ± 0.99 |                  |                  |                  |
| openai/gpt-oss-120b |         pp2048 (c4) | 4579.10 ± 359.07 | 2100.50 ± 12.35 |               |                  |  682.00 ± 100.00 |  679.00 ± 100.00 |  690.00 ± 101.00 |
| openai/gpt-oss-120b |          tg128 (c4) |    107.40 ± 1.99 |    53.70 ± 0.50 | 120.00 ± 2.00 |     60.00 ± 0.00 |                  |                  |                  |
| openai/gpt-oss-120b | pp2048 @ d1024 (c4) | 6918.00 ± 224.56 | 1730.25 ± 20.00 |               |                  | 2112.00 ± 500.00 | 2109.00 ± 500.00 | 2120.00 ± 501.00 |
| openai/gpt-oss-120b |  tg128 @ d1024 (c4) |     98.12 ± 2.50 |    24.50 ± 0.25 | 110.00 ± 3.00 |     30.00 ± 1.00 |                  |                  |                  |"#;

const WANT_SPARSE: &str = r#"| model   |      test |   t/s (total) |    t/s (req) |   peak t/s |   peak t/s (req) |   ttfr (ms) |   est_ppt (ms) |   e2e_ttft (ms) |
|:--------|----------:|--------------:|-------------:|-----------:|-----------------:|------------:|---------------:|----------------:|
| m       | tg32 (c2) |  77.81 ± 0.90 | 38.90 ± 0.45 |            |                  |             |                |                 |"#;
