//! Pivots, rankings, pivot ratios and Mermaid charts, from hand-made summaries with exactly
//! known figures: a model × profile matrix with the output throughputs of a published one.

use crate::export::mermaid::{nice_max, quote};
use crate::layout::pivot::{key_text, Pivot};
use crate::layout::top::ranking;
use crate::options::Options;
use crate::report::{Report, RunReport};
use crate::{Error, Format, Rendered, Style};
use tokenpipe_cli::{Ending, ToolError};
use tokenpipe_format::{Header, StatName, Summary};

/// Output throughput by model and profile (five models, three profiles).
const MATRIX: &[(&str, &str, [f64; 3])] = &[
    ("Llama 4 Scout", "8x H200", [126.70, 1378.30, 404.41]),
    ("MiniMax M2.1", "8x H200", [145.94, 1358.19, 379.29]),
    ("Mistral Large 3", "8x H200", [93.07, 554.50, 199.59]),
    ("DeepSeek V4 Flash", "8x H200", [69.96, 543.13, 220.59]),
    ("Qwen 235B", "16x H200", [56.46, 643.56, 170.47]),
];

const PROFILES: [&str; 3] = [
    "latency-1024x256-c1",
    "serve-1024x256-c16",
    "longctx-8192x256-c4",
];

fn summary(label: &str, id: &str, tps: f64, meta: &[(&str, &str)]) -> Summary {
    Summary {
        label: label.into(),
        run_id: id.into(),
        requests_ok: 10,
        output_throughput_tokens_per_s: tps,
        meta: meta
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Summary::default()
    }
}

fn matrix() -> Report {
    let mut runs = Vec::new();
    for (m, (model, shape, tps)) in MATRIX.iter().enumerate() {
        for (p, profile) in PROFILES.iter().enumerate() {
            let s = summary(
                model,
                &format!("r{m}{p}"),
                tps[p],
                &[("model", model), ("profile", profile), ("shape", shape)],
            );
            runs.push(RunReport::new(None, s));
        }
    }
    Report {
        runs,
        ..Default::default()
    }
}

/// A run at `concurrency` (a schedule setting in its header chain).
fn at_concurrency(label: &str, concurrency: u64, tps: f64) -> RunReport {
    let mut h = Header::new("reduce", format!("{label}{concurrency}"), vec![]);
    let mut up = Header::new("arrivals", "a".into(), vec![]);
    up.params.insert("concurrency".into(), concurrency.into());
    h.upstream.push(up);
    RunReport::new(
        Some(h),
        summary(label, &format!("{label}-c{concurrency}"), tps, &[]),
    )
}

/// Seed 001's decode throughput, llama-benchy beside vLLM, at three concurrencies.
fn tools() -> Report {
    let mut runs = Vec::new();
    for (c, benchy, vllm) in [(16, 214.47, 207.22), (1, 57.22, 48.63), (4, 107.40, 101.54)] {
        runs.push(at_concurrency("llama-benchy", c, benchy));
        runs.push(at_concurrency("vLLM", c, vllm));
    }
    Report {
        runs,
        ..Default::default()
    }
}

fn opts(rows: &str, cols: &str) -> Options {
    Options {
        rows: Some(rows.into()),
        cols: Some(cols.into()),
        ..Options::default()
    }
}

/// The default style's output, as `table` renders it.
fn render(report: &Report, format: Format, opts: &Options) -> Result<Rendered, Error> {
    Style::Default.render(report, format, opts)
}

/// The Mermaid charts `opts` asks for.
fn charts(report: &Report, opts: &Options) -> Result<Rendered, Error> {
    render(report, Format::Mermaid, opts)
}

fn text(report: &Report, format: Format, opts: &Options) -> String {
    render(report, format, opts).unwrap().text
}

#[test]
fn keys_go_in_natural_order() {
    let p = Pivot::build(&tools(), &opts("concurrency", "label")).unwrap();
    let rows: Vec<String> = p.row_keys.iter().map(key_text).collect();
    assert_eq!(rows, ["1", "4", "16"], "numbers by value");
    let cols: Vec<String> = p.col_keys.iter().map(key_text).collect();
    assert_eq!(cols, ["llama-benchy", "vLLM"]);
    let report = Report {
        runs: ["c16", "c2", "c1"]
            .iter()
            .enumerate()
            .map(|(i, p)| RunReport::new(None, summary("m", &format!("r{i}"), 1.0, &[("p", p)])))
            .collect(),
        ..Default::default()
    };
    let p = Pivot::build(&report, &opts("label", "p")).unwrap();
    let cols: Vec<String> = p.col_keys.iter().map(key_text).collect();
    assert_eq!(cols, ["c1", "c2", "c16"], "text in natural order");
}

#[test]
fn two_runs_in_one_cell_is_bad_input_naming_both() {
    let err = Pivot::build(&matrix(), &opts("shape", "profile")).unwrap_err();
    assert_eq!(err.ending(), Ending::BadInput);
    let msg = err.to_string();
    assert!(
        msg.contains("Llama 4 Scout (r00)") && msg.contains("MiniMax M2.1 (r10)"),
        "{msg}"
    );
    assert!(
        msg.contains("shape=8x H200, profile=latency-1024x256-c1"),
        "{msg}"
    );
    assert!(msg.contains("--rows/--cols"), "{msg}");
}

#[test]
fn bad_fields_and_baselines_are_bad_input() {
    let err = Pivot::build(&matrix(), &opts("modle", "profile")).unwrap_err();
    assert_eq!(err.ending(), Ending::BadInput);
    let o = Options {
        baseline: Some("vllm".into()),
        ..opts("concurrency", "label")
    };
    let err = render(&tools(), Format::Terminal, &o).unwrap_err();
    assert_eq!(err.ending(), Ending::BadInput);
    assert!(err.to_string().contains("llama-benchy, vLLM"), "{err}");
    let err = render(&Report::default(), Format::Terminal, &opts("a", "b")).unwrap_err();
    assert_eq!(err.ending(), Ending::BadInput);
}

#[test]
fn pivot_terminal_snapshot() {
    let o = Options {
        columns: vec!["shape".into()],
        ..opts("model", "profile")
    };
    let want = "\
Output [tok/s] by model and profile
╭───────────────────┬──────────┬─────────────────────────────┬─────────────────────────────┬────────────────────────────╮
│ model             │ shape    │ latency-1024x256-c1 [tok/s] │ longctx-8192x256-c4 [tok/s] │ serve-1024x256-c16 [tok/s] │
├───────────────────┼──────────┼─────────────────────────────┼─────────────────────────────┼────────────────────────────┤
│ DeepSeek V4 Flash │ 8x H200  │                       69.96 │                      220.59 │                     543.13 │
│ Llama 4 Scout     │ 8x H200  │                      126.70 │                      404.41 │                    1378.30 │
│ MiniMax M2.1      │ 8x H200  │                      145.94 │                      379.29 │                    1358.19 │
│ Mistral Large 3   │ 8x H200  │                       93.07 │                      199.59 │                     554.50 │
│ Qwen 235B         │ 16x H200 │                       56.46 │                      170.47 │                     643.56 │
╰───────────────────┴──────────┴─────────────────────────────┴─────────────────────────────┴────────────────────────────╯";
    assert_eq!(text(&matrix(), Format::Terminal, &o), want);
}

#[test]
fn pivot_markdown_and_csv_snapshots() {
    let mut report = matrix();
    report.runs.retain(|r| r.summary.run_id.ends_with('0'));
    report.runs.truncate(2);
    let o = opts("model", "profile");
    let want = "\
Output [tok/s] by model and profile

| model         | latency-1024x256-c1 [tok/s] |
|---------------|----------------------------:|
| Llama 4 Scout |                      126.70 |
| MiniMax M2.1  |                      145.94 |";
    assert_eq!(text(&report, Format::Markdown, &o), want);
    let mut report = matrix();
    report.runs.truncate(5);
    let want = "\
model,latency-1024x256-c1,longctx-8192x256-c4,serve-1024x256-c16
Llama 4 Scout,126.7,404.41,1378.3
MiniMax M2.1,145.94,,1358.19";
    assert_eq!(
        text(&report, Format::Csv, &o),
        want,
        "a missing cell is empty"
    );
}

#[test]
fn top_three_reads_like_the_published_table() {
    let o = Options {
        top: Some(3),
        ..opts("model", "profile")
    };
    let want = "\
Top 3 by Output [tok/s] per profile

| profile             | #1                            | #2                           | #3                               |
|---------------------|-------------------------------|------------------------------|----------------------------------|
| latency-1024x256-c1 | MiniMax M2.1 (145.94 tok/s)   | Llama 4 Scout (126.70 tok/s) | Mistral Large 3 (93.07 tok/s)    |
| longctx-8192x256-c4 | Llama 4 Scout (404.41 tok/s)  | MiniMax M2.1 (379.29 tok/s)  | DeepSeek V4 Flash (220.59 tok/s) |
| serve-1024x256-c16  | Llama 4 Scout (1378.30 tok/s) | MiniMax M2.1 (1358.19 tok/s) | Qwen 235B (643.56 tok/s)         |";
    assert_eq!(text(&matrix(), Format::Markdown, &o), want);
    let csv = text(&matrix(), Format::Csv, &o);
    assert!(
        csv.starts_with(
            "profile,rank,model,output_tps,comparable\nlatency-1024x256-c1,1,MiniMax M2.1,145.94,true\n"
        ),
        "{csv}"
    );
}

#[test]
fn rankings_follow_the_better_direction_and_keep_ties_in_natural_order() {
    let mut report = Report::default();
    for (i, (label, ttft, tps)) in [("b", 30.0, 5.0), ("c10", 10.0, 7.0), ("c9", 30.0, 7.0)]
        .iter()
        .enumerate()
    {
        let mut s = summary(label, &format!("r{i}"), *tps, &[]);
        s.set_stat("ttft", StatName::Percentile(99.0), Some(*ttft));
        report.runs.push(RunReport::new(None, s));
    }
    let rank = |cell: &str| {
        let o = Options {
            top: Some(3),
            cell: Some(cell.into()),
            ..Options::default()
        };
        let p = Pivot::build(&report, &o).unwrap();
        ranking(&p, 0, 3)
            .into_iter()
            .map(|r| key_text(&p.row_keys[r]))
            .collect::<Vec<_>>()
    };
    assert_eq!(rank("ttft.p99"), ["c10", "b", "c9"], "lower latency first");
    assert_eq!(
        rank("output_tps"),
        ["c9", "c10", "b"],
        "ties in natural order"
    );
    let o = Options {
        top: Some(1),
        cell: Some("ok".into()),
        ..Options::default()
    };
    let out = text(&report, Format::Terminal, &o);
    assert!(out.starts_with("Top 1 by OK\n"), "{out}");
    let o = Options {
        top: Some(2),
        cell: Some("duration".into()),
        ..Options::default()
    };
    let out = text(&report, Format::Terminal, &o);
    assert!(out.contains("highest first"), "no better direction: {out}");
}

#[test]
fn baseline_pivot_snapshot() {
    let o = Options {
        baseline: Some("llama-benchy".into()),
        ..opts("concurrency", "label")
    };
    let want = "\
Output [tok/s] by concurrency and label

| Concurrency | llama-benchy [tok/s] | vLLM [tok/s] | vLLM ÷ llama-benchy |
|------------:|---------------------:|-------------:|--------------------:|
|           1 |                57.22 |        48.63 |               0.85x |
|           4 |               107.40 |       101.54 |               0.95x |
|          16 |               214.47 |       207.22 |               0.97x |

Ratios: each column's value ÷ the llama-benchy value in the same row.";
    assert_eq!(text(&tools(), Format::Markdown, &o), want);
    let csv = text(&tools(), Format::Csv, &o);
    assert!(
        csv.starts_with("concurrency,llama-benchy,vLLM,vLLM_ratio\n1,57.22,48.63,0.8498"),
        "{csv}"
    );
}

#[test]
fn a_cell_of_alternatives_sets_batch_decode_beside_sustained_output() {
    // The batch runs' own output throughput counts their prefill and the waits between
    // batches; llama-benchy's decode rate is what seed 001 compares.
    let mut report = tools();
    for run in report
        .runs
        .iter_mut()
        .filter(|r| r.summary.label == "llama-benchy")
    {
        let tg = run.summary.output_throughput_tokens_per_s;
        run.summary.output_throughput_tokens_per_s = tg * 0.8;
        run.summary.llama_benchy = Some(
            serde_json::from_value(serde_json::json!({
                "batches": 50, "net_latency_ms": 0.0,
                "tg_tps": {"mean": tg, "std": 1.0, "cv_pct": 1.0, "n": 50, "per": "batch"}
            }))
            .unwrap(),
        );
    }
    let o = Options {
        cell: Some("tg_tps|output_tps".into()),
        baseline: Some("llama-benchy".into()),
        ..opts("concurrency", "label")
    };
    let want = "\
Decode [t/s] or Output [tok/s] by concurrency and label

| Concurrency | llama-benchy [tok/s] | vLLM [tok/s] | vLLM ÷ llama-benchy |
|------------:|---------------------:|-------------:|--------------------:|
|           1 |         57.22 ± 1.00 |        48.63 |               0.85x |
|           4 |        107.40 ± 1.00 |       101.54 |               0.95x |
|          16 |        214.47 ± 1.00 |       207.22 |               0.97x |

Ratios: each column's value ÷ the llama-benchy value in the same row.

llama-benchy's figures: mean ± population standard deviation over the batches (or requests) of one run, as llama-benchy prints them.";
    let o_sd = Options {
        spread: crate::grid::SpreadMode::Sd,
        ..o.clone()
    };
    let got = text(&report, Format::Markdown, &o_sd);
    assert_eq!(
        got, want,
        "no note about repeated runs: the ± is llama-benchy's"
    );
    let plain = Options {
        cell: Some("output_tps".into()),
        ..o
    };
    assert!(
        text(&report, Format::Markdown, &plain).contains("|           1 |                45.78 |")
    );
}

#[test]
fn nice_maxima_sit_just_above_the_largest_value() {
    for (max, want) in [
        (145.94, 200.0),
        (1378.30, 2000.0),
        (404.41, 500.0),
        (2100.0, 2500.0),
        (0.21, 0.25),
        (100.0, 200.0),
        (0.0, 1.0),
        (f64::NAN, 1.0),
        // No nicer top a float holds: the largest value itself, never inf.
        (1e308, 1e308),
        (f64::MAX, f64::MAX),
    ] {
        assert_eq!(nice_max(max), want, "{max}");
    }
}

#[test]
fn mermaid_texts_are_quoted_and_escaped() {
    assert_eq!(quote(r#"8" disk"#), "\"8#quot; disk\"");
    assert_eq!(quote("a\nb"), "\"a b\"");
}

#[test]
fn mermaid_bar_snapshot() {
    let mut report = matrix();
    report.runs.retain(|r| r.summary.run_id.ends_with('0'));
    let want = "\
```mermaid
xychart-beta
  title \"latency-1024x256-c1: Output [tok/s] (higher = better)\"
  x-axis [\"MiniMax M2.1\", \"Llama 4 Scout\", \"Mistral Large 3\", \"DeepSeek V4 Flash\", \"Qwen 235B\"]
  y-axis \"tok/s\" 0 --> 200
  bar [145.94, 126.70, 93.07, 69.96, 56.46]
```";
    let r = charts(&report, &opts("model", "profile")).unwrap();
    assert_eq!(r.text, want);
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    let all = charts(&matrix(), &opts("model", "profile")).unwrap().text;
    assert_eq!(
        all.matches("```mermaid").count(),
        3,
        "one chart per profile"
    );
    assert!(all.contains("y-axis \"tok/s\" 0 --> 2000"), "{all}");
}

#[test]
fn mermaid_line_snapshot_and_skipped_points() {
    let want = "\
```mermaid
xychart-beta
  %% line 1 = llama-benchy; line 2 = vLLM
  title \"Output [tok/s] by concurrency: llama-benchy, vLLM (higher = better)\"
  x-axis \"Concurrency\" [\"1\", \"4\", \"16\"]
  y-axis \"tok/s\" 0 --> 250
  line [57.22, 107.40, 214.47]
  line [48.63, 101.54, 207.22]
```";
    assert_eq!(
        charts(&tools(), &opts("concurrency", "label"))
            .unwrap()
            .text,
        want
    );
    // Without a pivot, runs at several concurrencies are drawn the same way.
    let mut report = tools();
    assert_eq!(charts(&report, &Options::default()).unwrap().text, want);
    report.runs.remove(1); // vLLM at concurrency 16
    let r = charts(&report, &opts("concurrency", "label")).unwrap();
    assert!(r.text.contains("[\"1\", \"4\"]"), "{}", r.text);
    assert!(r.text.contains("  line [48.63, 101.54]\n"), "{}", r.text);
    assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
    assert!(
        r.notes[0].contains("concurrency 16 left out"),
        "{:?}",
        r.notes
    );
}

#[test]
fn mermaid_without_a_pivot_charts_the_runs_in_order() {
    let mut report = matrix();
    report.runs.truncate(2);
    let r = charts(&report, &Options::default()).unwrap();
    assert!(
        r.text
            .contains("  x-axis [\"Llama 4 Scout profile=latency-1024x256-c1\", \"Llama 4 Scout profile=serve-1024x256-c16\"]\n"),
        "{}",
        r.text
    );
    assert!(r.text.contains("  bar [126.70, 1378.30]\n"), "{}", r.text);
    assert!(r.text.contains("0 --> 2000"), "{}", r.text);
}

#[test]
fn group_summaries_show_their_spread_and_stand_for_their_runs() {
    let mut report = tools();
    report.runs.truncate(2); // concurrency 16: llama-benchy and vLLM
    let mut group = report.runs[0].clone();
    group.summary.run_id = "g".into();
    group.summary.runs = vec!["llama-benchy-c16".into(), "other".into()];
    group.summary.across_runs.insert(
        "output_throughput_tokens_per_s".into(),
        tokenpipe_format::AcrossRuns {
            n: 2,
            mean: 214.0,
            sd: 3.25,
            cv_pct: Some(1.467),
            ci95: [190.0, 238.0],
        },
    );
    report.runs.push(group);
    let o = Options {
        spread: crate::grid::SpreadMode::Sd,
        ..opts("concurrency", "label")
    };
    let md = text(&report, Format::Markdown, &o);
    assert!(
        md.contains("|        214.00 ± 3.25 |"),
        "the group, not its pooled run: {md}"
    );
    assert!(
        md.ends_with("Repeated runs: mean over runs ± sample standard deviation."),
        "{md}"
    );
    let csv = text(&report, Format::Csv, &o);
    assert_eq!(
        csv,
        "concurrency,llama-benchy,llama-benchy_sd,llama-benchy_cv_pct,vLLM\n16,214.0,3.25,1.467,207.22"
    );
}

#[test]
fn a_ranking_without_rows_ranks_the_runs_of_a_sweep_by_their_column_labels() {
    let sweep = Report {
        runs: [(1, 57.22), (4, 107.40), (16, 214.47)]
            .iter()
            .map(|&(c, tps)| at_concurrency("sim", c, tps))
            .collect(),
        ..Default::default()
    };
    let o = Options {
        top: Some(u64::MAX as usize),
        ..Options::default()
    };
    let got = text(&sweep, Format::Markdown, &o);
    // Three places, however many were asked for; the runs named as in the other layouts.
    assert!(
        got.contains("sim c=16 (214.47 tok/s)") && got.contains("sim c=1 (57.22 tok/s)"),
        "{got}"
    );
    assert!(got.contains("#3") && !got.contains("#4"), "{got}");
}
