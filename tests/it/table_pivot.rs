//! `table --rows --cols --cell`, `--top`, `--baseline` and `--format mermaid` through the real
//! binaries: runs of two models (a fast and a slow simulated server) at two profiles, tagged with
//! `reduce --meta model=… --meta profile=…`.

use crate::common;
use common::*;

/// One run's summary stream: `arrivals --concurrency C | fire | reduce --meta …`.
fn run_at(server: &Server, model: &str, concurrency: u32) -> Vec<u8> {
    let c = concurrency.to_string();
    let model_meta = format!("model={model}");
    let profile_meta = format!("profile=c{concurrency}");
    let outs = pipeline(
        &[
            cmd(
                "arrivals",
                &["--concurrency", &c, "-n", "4", "--output-tokens", "8"],
            ),
            cmd("fire", &["--url", server.url.as_str()]),
            cmd(
                "reduce",
                &[
                    "--label",
                    model,
                    "--meta",
                    &model_meta,
                    "--meta",
                    &profile_meta,
                ],
            ),
        ],
        None,
    );
    for (o, what) in outs.iter().zip(["arrivals", "fire", "reduce"]) {
        assert_ok(o, what);
    }
    outs[2].stdout.clone()
}

/// Four runs: model `fast` and model `slow`, each at concurrency 1 and 2.
fn matrix() -> Vec<u8> {
    let fast = Server::start(&["--ttft-ms", "5", "--itl-ms", "2"]);
    let slow = Server::start(&["--ttft-ms", "40", "--itl-ms", "25"]);
    let mut all = Vec::new();
    for c in [2, 1] {
        all.extend(run_at(&slow, "slow", c));
        all.extend(run_at(&fast, "fast", c));
    }
    all
}

fn table(input: &[u8], args: &[&str]) -> (Option<i32>, String, String) {
    let out = run(&cmd("table", args), input);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn pivots_rankings_ratios_and_charts_of_real_runs() {
    let input = matrix();

    let (code, out, err) = table(
        &input,
        &[
            "--rows",
            "model",
            "--cols",
            "profile",
            "--cell",
            "output_tps",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.starts_with("Output [tok/s] by model and profile\n"),
        "{out}"
    );
    assert!(
        out.contains("c1 [tok/s]") && out.contains("c2 [tok/s]"),
        "{out}"
    );
    let fast = out.find("│ fast").expect("a row for fast");
    let slow = out.find("│ slow").expect("a row for slow");
    assert!(fast < slow, "rows in natural order: {out}");

    let (code, out, err) = table(
        &input,
        &[
            "--rows", "model", "--cols", "profile", "--top", "2", "--format", "markdown",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.starts_with("Top 2 by Output [tok/s] per profile\n"),
        "{out}"
    );
    for profile in ["c1", "c2"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("| {profile} ")))
            .unwrap_or_else(|| panic!("a row for {profile}: {out}"));
        let (first, second) = (line.find("fast (").unwrap(), line.find("slow (").unwrap());
        assert!(first < second, "the fast server ranks first: {line}");
    }

    let (code, out, err) = table(
        &input,
        &[
            "--rows", "model", "--cols", "profile", "--format", "mermaid",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        out.matches("```mermaid\nxychart-beta\n").count(),
        2,
        "{out}"
    );
    assert!(
        out.contains("title \"c1: Output [tok/s] (higher = better)\""),
        "{out}"
    );
    assert!(out.contains("x-axis [\"fast\", \"slow\"]"), "{out}");

    let (code, out, err) = table(
        &input,
        &["--rows", "model", "--cols", "profile", "--baseline", "c1"],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("c2 ÷ c1"), "{out}");
    // A ratio cell (`0.42x`) on each model's row.
    let ratio_cell = |l: &&str| {
        l.split('│').any(|c| {
            let c = c.trim();
            c.strip_suffix('x')
                .is_some_and(|n| n.parse::<f64>().is_ok() && n.contains('.'))
        })
    };
    assert_eq!(out.lines().filter(ratio_cell).count(), 2, "{out}");

    let (code, out, err) = table(
        &input,
        &["--rows", "model", "--cols", "profile", "--baseline", "c9"],
    );
    assert_eq!(code, Some(2), "{out}");
    assert!(err.contains("c9") && err.contains("c1, c2"), "{err}");
}

#[test]
fn two_runs_in_one_cell_and_empty_input_exit_2() {
    let input = matrix();
    let (code, _, err) = table(&input, &["--rows", "model", "--cols", "label"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("runs slow (") && err.contains("and slow ("),
        "names both runs: {err}"
    );
    let (code, _, err) = table(b"", &["--rows", "model"]);
    assert_eq!(code, Some(2), "{err}");
    let (code, _, err) = table(&input, &["--rows", "modle"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("`modle`"), "{err}");
}
