//! Snapshot tests of the layouts: runs as rows in every format, runs as columns with a group
//! summary, a 21-run sweep, and ratios against a baseline.

use crate::grid::SpreadMode;
use crate::options::{Layout, Options};
use crate::report::{Report, RunReport};
use crate::{Format, Style};
use tokenpipe_format::{AcrossRuns, Header, StatName, Summary};

fn run(label: &str, concurrency: u64, tps: f64, ttft_p99: f64) -> RunReport {
    let mut h = Header::new("reduce", "r".into(), vec![]);
    let mut up = Header::new("arrivals", "a".into(), vec![]);
    up.params.insert("concurrency".into(), concurrency.into());
    up.params.insert("input_tokens".into(), 1024.into());
    up.params.insert("output_tokens".into(), 128.into());
    h.upstream.push(up);
    let mut s = Summary {
        label: label.into(),
        run_id: format!("{label}-{concurrency}"),
        requests_ok: 64,
        output_throughput_tokens_per_s: tps,
        percentiles: vec![50.0, 99.0],
        ..Summary::default()
    };
    s.set_stat("ttft", StatName::Percentile(99.0), Some(ttft_p99));
    RunReport::new(Some(h), s)
}

fn group(mut g: RunReport, sd: f64) -> RunReport {
    g.summary.runs = vec!["a".into(), "b".into(), "c".into()];
    let mean = g.summary.output_throughput_tokens_per_s;
    g.summary.across_runs.insert(
        "output_throughput_tokens_per_s".into(),
        AcrossRuns {
            n: 3,
            mean,
            sd,
            cv_pct: Some(100.0 * sd / mean),
            ci95: [mean - 2.0 * sd, mean + 2.0 * sd],
        },
    );
    g
}

fn sweep() -> Report {
    Report {
        runs: vec![
            run("sglang", 16, 1500.123456, 80.5),
            run("vllm", 2, 400.0, 40.25),
            run("sglang", 2, 420.0, 38.0),
            run("vllm", 16, 1400.0, 90.0),
        ],
        ..Default::default()
    }
}

fn render(report: &Report, format: Format, opts: &Options) -> String {
    Style::Default.render(report, format, opts).unwrap().text
}

fn columns(list: &str) -> Options {
    Options {
        columns: list.split(',').map(String::from).collect(),
        ..Options::default()
    }
}

#[test]
fn long_terminal_snapshot() {
    let got = render(
        &sweep(),
        Format::Terminal,
        &columns("concurrency,output_tps,ttft.p99"),
    );
    let want = "\
╭─────────────┬─────────────┬─────────┬──────────╮
│ Label       │ Concurrency │ Output  │ TTFT p99 │
│             │             │ [tok/s] │ [ms]     │
├─────────────┼─────────────┼─────────┼──────────┤
│ sglang c=2  │           2 │  420.00 │    38.00 │
│ sglang c=16 │          16 │ 1500.12 │    80.50 │
│ vllm c=2    │           2 │  400.00 │    40.25 │
│ vllm c=16   │          16 │ 1400.00 │    90.00 │
╰─────────────┴─────────────┴─────────┴──────────╯";
    assert_eq!(got, want, "\n{got}");
}

#[test]
fn long_markdown_snapshot() {
    let got = render(
        &sweep(),
        Format::Markdown,
        &columns("workload,output_tps,ttft.p99"),
    );
    let want = "\
| Label       | Workload     | Output [tok/s] | TTFT p99 [ms] |
|-------------|--------------|---------------:|--------------:|
| sglang c=2  | 1024→128 c2  |         420.00 |         38.00 |
| sglang c=16 | 1024→128 c16 |        1500.12 |         80.50 |
| vllm c=2    | 1024→128 c2  |         400.00 |         40.25 |
| vllm c=16   | 1024→128 c16 |        1400.00 |         90.00 |";
    assert_eq!(got, want, "\n{got}");
}

#[test]
fn long_csv_and_json_snapshots() {
    let mut report = sweep();
    report.runs[0] = group(report.runs[0].clone(), 30.0);
    let opts = columns("concurrency,output_tps");
    let got = render(&report, Format::Csv, &opts);
    let want = "\
label,concurrency,output_tps,output_tps_sd,output_tps_cv_pct
sglang c=2,2,420.0,,
sglang c=16,16,1500.123456,30.0,1.9998354055467817
vllm c=2,2,400.0,,
vllm c=16,16,1400.0,,";
    assert_eq!(got, want, "\n{got}");
    let got = render(
        &report,
        Format::Json,
        &Options {
            layout: Layout::Long,
            ..columns("output_tps")
        },
    );
    let want = "\
[
  {
    \"label\": \"sglang c=2\",
    \"output_tps\": 420.0,
    \"output_tps_sd\": null,
    \"output_tps_cv_pct\": null
  },
  {
    \"label\": \"sglang c=16\",
    \"output_tps\": 1500.123456,
    \"output_tps_sd\": 30.0,
    \"output_tps_cv_pct\": 1.9998354055467817
  },
  {
    \"label\": \"vllm c=2\",
    \"output_tps\": 400.0,
    \"output_tps_sd\": null,
    \"output_tps_cv_pct\": null
  },
  {
    \"label\": \"vllm c=16\",
    \"output_tps\": 1400.0,
    \"output_tps_sd\": null,
    \"output_tps_cv_pct\": null
  }
]";
    assert_eq!(got, want, "\n{got}");
}

#[test]
fn wide_with_a_group_summary_snapshot() {
    let report = Report {
        runs: vec![
            group(run("sim", 4, 238.89, 31.1), 0.05),
            run("sim", 16, 459.0, 32.4),
        ],
        ..Default::default()
    };
    let got = render(&report, Format::Markdown, &Options::default());
    let want = "\
| Metric                          |              sim c=4 |     sim c=16 |
|---------------------------------|---------------------:|-------------:|
| Workload                        |  1024→128 c4 ×3 runs | 1024→128 c16 |
| Runs                            |                    3 |            1 |
| Comparable                      |                  yes |          yes |
| Successful requests             |                   64 |           64 |
| Failed requests                 |                    0 |            0 |
| Duration (s)                    |                 0.00 |         0.00 |
| Request throughput (req/s)      |                 0.00 |         0.00 |
| Output token throughput (tok/s) | 238.89 ± 0.05 (0.0%) |       459.00 |
| Total token throughput (tok/s)  |                 0.00 |         0.00 |
| Mean TTFT (ms)                  |                    - |            - |
| Median TTFT (ms)                |                    - |            - |
| P99 TTFT (ms)                   |                31.10 |        32.40 |
| Mean TPOT (ms)                  |                    - |            - |
| Median TPOT (ms)                |                    - |            - |
| P99 TPOT (ms)                   |                    - |            - |
| Mean ITL (ms)                   |                    - |            - |
| Median ITL (ms)                 |                    - |            - |
| P99 ITL (ms)                    |                    - |            - |
| ITL jitter (p99/p50)            |                    - |            - |
| Mean E2EL (ms)                  |                    - |            - |
| Median E2EL (ms)                |                    - |            - |
| P99 E2EL (ms)                   |                    - |            - |
| Dispatch lag p99 (ms)           |                    - |            - |

Repeated runs: mean over runs ± sample standard deviation (coefficient of variation).";
    assert_eq!(got, want, "\n{got}");
}

#[test]
fn baseline_ratios_snapshot() {
    let opts = Options {
        baseline: Some("vllm".into()),
        ..columns("output_tps,ttft.p99")
    };
    let got = render(&sweep(), Format::Markdown, &opts);
    let want = "\
| Label       | Output [tok/s] | Output ×vllm | TTFT p99 [ms] | TTFT p99 ×vllm |
|-------------|---------------:|-------------:|--------------:|---------------:|
| sglang c=2  |         420.00 |        1.05x |         38.00 |          0.94x |
| sglang c=16 |        1500.12 |        1.07x |         80.50 |          0.89x |
| vllm c=2    |         400.00 |        1.00x |         40.25 |          1.00x |
| vllm c=16   |        1400.00 |        1.00x |         90.00 |          1.00x |";
    assert_eq!(got, want, "\n{got}");
    let wide = Options {
        baseline: Some("vllm".into()),
        layout: Layout::Wide,
        ..columns("output_tps")
    };
    let got = render(&sweep(), Format::Markdown, &wide);
    let want = "\
| Metric         | sglang c=2 | sglang c=2 ×vllm | sglang c=16 | sglang c=16 ×vllm | vllm c=2 | vllm c=16 |
|----------------|-----------:|-----------------:|------------:|------------------:|---------:|----------:|
| Output [tok/s] |     420.00 |            1.05x |     1500.12 |             1.07x |   400.00 |   1400.00 |";
    assert_eq!(got, want, "\n{got}");
    let missing = Options {
        baseline: Some("trt".into()),
        ..Options::default()
    };
    assert!(Style::Default
        .render(&sweep(), Format::Terminal, &missing)
        .is_err());
}

#[test]
fn twenty_one_runs_fit_a_terminal_as_rows() {
    // Seven concurrencies, three seeds each, every default column filled: what a sweep with
    // repeats reduced with --no-group gives.
    let report = Report {
        runs: (0..21)
            .map(|i| {
                let c = [1, 2, 4, 8, 16, 32, 64][i / 3];
                let mut r = run("sim", c, 1234.56 + i as f64, 130.0 + i as f64);
                if let Some(h) = r.header.as_mut() {
                    h.upstream[0].seed = Some(1 + (i % 3) as u64);
                }
                let s = &mut r.summary;
                s.run_id = format!("sim-{i}");
                s.set_stat("ttft", StatName::Percentile(50.0), Some(30.12));
                for m in ["tpot", "itl"] {
                    s.set_stat(m, StatName::Percentile(50.0), Some(10.01));
                    s.set_stat(m, StatName::Percentile(99.0), Some(10.99));
                }
                s.set_stat("e2el", StatName::Percentile(99.0), Some(1410.5));
                r
            })
            .collect(),
        ..Default::default()
    };
    let got = render(&report, Format::Terminal, &Options::default());
    assert!(got.lines().all(|l| l.chars().count() <= 120), "\n{got}");
    let lines: Vec<&str> = got.lines().collect();
    assert_eq!(
        lines.len(),
        3 + 21 + 2,
        "runs as rows, units under the headings\n{got}"
    );
    assert!(
        lines[1].starts_with("│ Label           │ Workload     │ OK │ Output "),
        "{got}"
    );
    assert!(
        lines[4].starts_with("│ sim c=1 seed=1  │ 1024→128 c1  │ 64 │ "),
        "{got}"
    );
    assert!(
        lines[24].starts_with("│ sim c=64 seed=3 │ 1024→128 c64 │ 64 │ "),
        "{got}"
    );
    assert!(
        !got.contains("Failed"),
        "no run failed, so no Failed column\n{got}"
    );
}

#[test]
fn columns_with_another_style_is_refused() {
    let e = crate::Style::Vllm
        .render(&sweep(), Format::Terminal, &columns("output_tps"))
        .unwrap_err();
    assert!(e.to_string().contains("--columns"), "{e}");
    let _ = SpreadMode::Cv;
}
