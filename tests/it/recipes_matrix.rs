//! recipes/matrix.sh (seed 003) against `simserve`: the three profiles of one model on one
//! shape, and the report across result folders, whose rows are a run's identity (model, shape,
//! engine), whose profiles keep the matrix's order, and which ranks comparable runs only.

use crate::common;
use crate::recipes::{bin_dir, cell, markdown_rows, recipe, recipe_command, stdout, Results};
use common::*;
use std::path::Path;
use std::process::{Command, Output};

/// The matrix's profiles, in its (the seed's) order.
const PROFILES: [&str; 3] = [
    "latency-1024x256-c1",
    "serve-1024x256-c16",
    "longctx-8192x256-c4",
];

/// Runs `matrix.sh --report DIRS...` writing `file`.
fn matrix_report(dirs: &[&Path], file: &Path) -> Output {
    Command::new("recipes/matrix.sh")
        .arg("--report")
        .args(dirs)
        .env("TOKENPIPE_BIN", bin_dir())
        .env("REPORT", file)
        .output()
        .unwrap()
}

/// The lines of the report's section headed `heading`, up to the next section.
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text
        .find(&format!("## {heading}"))
        .unwrap_or_else(|| panic!("no section {heading}: {text}"));
    let rest = &text[start + 3..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

#[test]
fn matrix_measures_three_profiles_per_model_and_reports_across_models() {
    let server = Server::start(&["--profile", "small-gpu"]);
    let (a, b, c) = (
        Results::new("matrix-a"),
        Results::new("matrix-a16"),
        Results::new("matrix-b"),
    );
    let out = recipe(
        "matrix",
        &[&server.url, "model-a", "8x H200"],
        &a,
        &[("ENGINE", "vllm 0.19")],
    );
    let text = stdout(&out);
    for profile in PROFILES {
        assert!(text.contains(&format!("| {profile} ")), "{profile}: {text}");
    }
    assert!(
        text.contains("| 8x H200 ") && text.contains("| vllm 0.19 "),
        "{text}"
    );
    // Requests that failed have their column, and each profile its verdict under the table.
    let rows = markdown_rows(&text);
    for row in 1..rows.len() {
        assert_eq!(cell(&rows, row, "Failed"), "0", "{text}");
    }
    assert!(text.contains("\nComparable:\n"), "{text}");
    for profile in PROFILES {
        assert!(
            text.contains(&format!("\n- {profile}: ")),
            "{profile}: {text}"
        );
    }
    assert_eq!(
        a.files("summaries"),
        [
            "latency-1024x256-c1.ndjson",
            "longctx-8192x256-c4.ndjson",
            "serve-1024x256-c16.ndjson"
        ]
    );
    let summary = std::fs::read_to_string(a.path("summaries/serve-1024x256-c16.ndjson")).unwrap();
    assert!(
        summary.contains("\"timestamp\":\"20"),
        "a UTC timestamp: {summary}"
    );
    // The same model on a second shape, with a note and a prompt count of its own for c1.
    let out = recipe(
        "matrix",
        &[&server.url, "model-a", "16x H200"],
        &b,
        &[
            ("ENGINE", "vllm 0.19"),
            ("NOTE", "16x scaling regressed"),
            ("PROMPTS", "latency-1024x256-c1=3"),
        ],
    );
    let rows = markdown_rows(&stdout(&out));
    let c1 = (1..rows.len())
        .find(|&r| cell(&rows, r, "profile") == PROFILES[0])
        .expect("the c1 row");
    assert_eq!(cell(&rows, c1, "OK"), "3", "{rows:?}");
    recipe("matrix", &[&server.url, "model-b", "8x H200"], &c, &[]);

    // One model on two shapes is a normal comparison: the report runs to the end.
    let report = Results::new("matrix-report");
    std::fs::create_dir_all(&report.0).unwrap();
    let file = report.path("report.md");
    let out = matrix_report(&[&a.0, &b.0, &c.0], &file);
    assert_ok(&out, "matrix --report");
    let text = stdout(&out);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);

    // The top 3 per profile, profiles in the matrix's order, each run named by model and shape.
    let top = section(&text, "Top 3 by output throughput (tok/s) per profile");
    let rows = markdown_rows(top);
    assert_eq!(rows[0], ["Profile", "#1", "#2", "#3"], "{top}");
    let profiles: Vec<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(profiles, PROFILES, "{top}");
    for row in &rows[1..] {
        let mut lanes: Vec<&str> = row[1..]
            .iter()
            .map(|c| c.split(" (").next().unwrap())
            .collect();
        lanes.sort();
        assert_eq!(
            lanes,
            ["model-a, 16x H200", "model-a, 8x H200", "model-b, 8x H200"],
            "{top}"
        );
        assert!(row[1].ends_with(" tok/s)"), "{top}");
    }

    // Side by side: a row per model and shape in the order given, the profiles in the
    // matrix's order, the failed requests and the notes.
    let side = section(&text, "Every model side by side (output tok/s)");
    let rows = markdown_rows(side);
    assert_eq!(
        rows[0],
        [
            "Model",
            "Hardware shape",
            "Engine",
            "latency-1024x256-c1 [tok/s]",
            "serve-1024x256-c16 [tok/s]",
            "longctx-8192x256-c4 [tok/s]",
            "Failed",
            "Notes"
        ],
        "{side}"
    );
    let lanes: Vec<(&str, &str)> = rows[1..]
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str()))
        .collect();
    assert_eq!(
        lanes,
        [
            ("model-a", "8x H200"),
            ("model-a", "16x H200"),
            ("model-b", "8x H200")
        ],
        "{side}"
    );
    assert_eq!(cell(&rows, 2, "Notes"), "16x scaling regressed", "{side}");
    assert_eq!(cell(&rows, 1, "Notes"), "", "{side}");
    for row in 1..rows.len() {
        assert_eq!(cell(&rows, row, "Failed"), "0", "{side}");
        for profile in PROFILES {
            let tps = cell(&rows, row, &format!("{profile} [tok/s]"));
            assert!(tps.parse::<f64>().unwrap() > 0.0, "{side}");
        }
    }

    // A chart per profile in the matrix's order, every run in each.
    let charts: Vec<&str> = text.split("```mermaid").skip(1).collect();
    assert_eq!(charts.len(), 3, "{text}");
    for (chart, profile) in charts.iter().zip(PROFILES) {
        assert!(chart.contains(&format!("title \"{profile}:")), "{chart}");
        assert!(chart.contains("\"model-a, 16x H200\""), "{chart}");
    }

    // The same results given twice are refused before anything is printed, naming both.
    let out = matrix_report(&[&a.0, &b.0, &a.0], &file);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("one model, shape and engine measured twice for a profile")
            && err.contains("model-a (8x H200, vllm 0.19), latency-1024x256-c1: "),
        "{err}"
    );
}

#[test]
fn matrix_sends_the_seeds_prompt_counts_and_refuses_a_bad_one() {
    // A server with no latency, so that the full counts take a moment.
    let server = Server::start(&["--ttft-ms", "0", "--itl-ms", "0"]);
    let results = Results::new("matrix-full");
    let out = recipe(
        "matrix",
        &[&server.url, "model-a", "8x H200"],
        &results,
        &[("QUICK", "0")],
    );
    let text = stdout(&out);
    let rows = markdown_rows(&text);
    let counts: Vec<(&str, &str)> = (1..rows.len())
        .map(|r| (cell(&rows, r, "profile"), cell(&rows, r, "OK")))
        .collect();
    assert_eq!(
        counts,
        [
            ("latency-1024x256-c1", "20"),
            ("longctx-8192x256-c4", "50"),
            ("serve-1024x256-c16", "200")
        ],
        "{text}"
    );
    for pairs in ["c1=3", "latency-1024x256-c1=none", "latency-1024x256-c1"] {
        let bad = Results::new("matrix-bad-prompts");
        let out = recipe_command("matrix", &[&server.url, "m", "8x H200"], &bad, &[])
            .env("PROMPTS", pairs)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{pairs}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("matrix: PROMPTS: "), "{err}");
        assert!(!bad.path("runs/latency-1024x256-c1.ndjson").exists());
    }
}

#[test]
fn matrix_against_a_failing_server_exits_1_and_ranks_no_incomplete_profile() {
    let healthy = Server::start(&["--profile", "small-gpu"]);
    let failing = Server::start(&["--profile", "small-gpu", "--fault", "http:0.3"]);
    let (a, b) = (Results::new("matrix-ok"), Results::new("matrix-failing"));
    recipe("matrix", &[&healthy.url, "model-a", "8x H200"], &a, &[]);
    let out = recipe_command("matrix", &[&failing.url, "model-b", "16x H200"], &b, &[])
        .output()
        .unwrap();
    let (text, err) = (stdout(&out), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{err}");
    // Every profile ran; the table has a Failed column and the verdict of each profile.
    let rows = markdown_rows(&text);
    assert_eq!(rows.len(), 4, "{text}");
    let mut incomplete = Vec::new();
    for row in 1..rows.len() {
        let profile = cell(&rows, row, "profile").to_string();
        let failed: u64 = cell(&rows, row, "Failed").parse().unwrap();
        let ok: u64 = cell(&rows, row, "OK").parse().unwrap();
        if failed > 0 {
            let line = format!(
                "- {profile}: no, incomplete: {failed} of {} failed (",
                ok + failed
            );
            assert!(text.contains(&line), "{line}: {text}");
            assert!(err.contains(&format!("incomplete: {profile}: ")), "{err}");
            incomplete.push(profile);
        }
    }
    // 30 % of the 32 requests of serve-1024x256-c16 (QUICK) failed, as in the issue.
    assert!(
        incomplete.contains(&"serve-1024x256-c16".to_string()),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(b.path("profiles.md")).unwrap(),
        text
    );

    let report = Results::new("matrix-failing-report");
    std::fs::create_dir_all(&report.0).unwrap();
    let file = report.path("report.md");
    let out = matrix_report(&[&a.0, &b.0], &file);
    let (text, err) = (stdout(&out), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("missing or incomplete"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    let (ranked, rest) = text
        .split_once("## Every model side by side")
        .expect("the side-by-side section");
    let (_, charts) = rest
        .split_once("## Output throughput per profile")
        .expect("the charts");
    let (charts, excluded) = charts
        .split_once("## Not comparable (left out of the top 3 and the charts)")
        .expect("the list of runs left out");
    for profile in &incomplete {
        // Not in its profile's ranking row, nor in its chart.
        let row = ranked
            .lines()
            .find(|l| l.starts_with(&format!("| {profile} ")))
            .unwrap_or_else(|| panic!("no ranking of {profile}: {text}"));
        assert!(!row.contains("model-b"), "{row}");
        let chart = charts
            .split("```mermaid")
            .find(|c| c.contains(&format!("title \"{profile}:")))
            .unwrap_or_else(|| panic!("no chart of {profile}: {text}"));
        assert!(!chart.contains("model-b"), "{chart}");
        assert!(
            excluded.contains(&format!("- model-b (16x H200), {profile}: incomplete: ")),
            "{excluded}"
        );
    }
    // Both models stay side by side, the incomplete run's figures with them, marked †, and
    // its failed requests counted.
    assert!(
        rest.contains("| model-a ") && rest.contains("| model-b "),
        "{text}"
    );
    let rows = markdown_rows(rest);
    let b_row = rows
        .iter()
        .position(|r| r[0] == "model-b")
        .expect("model-b");
    let failed: u64 = cell(&rows, b_row, "Failed").parse().unwrap();
    assert!(failed > 0, "{rest}");
    for profile in &incomplete {
        let tps = cell(&rows, b_row, &format!("{profile} [tok/s]"));
        assert!(tps.ends_with(" †"), "{profile}: {rest}");
    }
    assert_eq!(cell(&rows, 1, "Failed"), "0", "{rest}");

    // A folder whose matrix lacks a profile fails the report too, naming it.
    let out = matrix_report(&[&a.0], &file);
    assert_ok(&out, "matrix --report of a whole matrix");
    std::fs::remove_file(a.path("summaries/longctx-8192x256-c4.ndjson")).unwrap();
    let out = matrix_report(&[&a.0], &file);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("## Missing profiles")
            && text.contains(&format!(
                "- model-a ({}), longctx-8192x256-c4: no summary",
                a.0.display()
            )),
        "{text}"
    );
}
