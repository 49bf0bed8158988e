//! The recipes in recipes/ run against `simserve` with `QUICK=1` (short counts and durations),
//! through the real binaries of this build, so that none can rot: each must exit 0, keep the
//! raw events of every run and its summaries, and print the tables its header promises.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The directory holding this build's binaries (what `TOKENPIPE_BIN` names for a recipe).
fn bin_dir() -> PathBuf {
    Path::new(&bin("fire"))
        .parent()
        .expect("the binaries' directory")
        .to_path_buf()
}

/// A fresh results folder for one recipe run, removed when dropped.
struct Results(PathBuf);

impl Results {
    fn new(name: &str) -> Self {
        let dir = temp_path(&format!("recipe-{name}"));
        let _ = std::fs::remove_dir_all(&dir);
        Results(dir)
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }

    /// The files directly in folder `rel`, sorted.
    fn files(&self, rel: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(rel))
            .unwrap_or_else(|e| panic!("{}: {e}", self.path(rel).display()))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for Results {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `recipes/NAME.sh args...` with QUICK=1, this build's tools and `out` as its results.
fn recipe(name: &str, args: &[&str], out: &Results, env: &[(&str, &str)]) -> Output {
    let output = Command::new(format!("recipes/{name}.sh"))
        .args(args)
        .env("QUICK", "1")
        .env("TOKENPIPE_BIN", bin_dir())
        .env("OUT", &out.0)
        .env_remove("FIRE_ARGS")
        .envs(env.iter().copied())
        .output()
        .expect("run the recipe");
    assert_ok(&output, name);
    output
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn serve_prints_one_vllm_block_per_prompt_count() {
    let server = Server::start(&["--profile", "small-gpu"]);
    let results = Results::new("serve");
    let out = recipe("serve", &[&server.url], &results, &[]);
    let text = stdout(&out);
    assert_eq!(
        text.matches("Serving Benchmark Result").count(),
        3,
        "{text}"
    );
    // QUICK: 1, 4 and 8 prompts of 64 tokens, all succeeded.
    for (n, input) in [(1, 64), (4, 256), (8, 512)] {
        let block = text
            .split("============ Serving Benchmark Result")
            .find(|b| b.contains(&format!("Successful requests:                     {n} ")))
            .unwrap_or_else(|| panic!("no block of {n} requests in {text}"));
        assert!(block.contains("Failed requests:                         0 "));
        assert!(block.contains(&format!(
            "Total input tokens:                      {input} "
        )));
        assert!(block.contains(&format!("Peak concurrent requests:                {n}.00")));
    }
    assert_eq!(
        results.files("runs"),
        ["prompts-1.ndjson", "prompts-4.ndjson", "prompts-8.ndjson"]
    );
    assert_eq!(results.files("summaries").len(), 3);
    assert_eq!(
        std::fs::read_to_string(results.path("blocks.txt")).unwrap(),
        text
    );
}

#[test]
fn a_recipe_without_a_url_says_how_to_call_it() {
    let results = Results::new("usage");
    let out = Command::new("recipes/serve.sh")
        .env("TOKENPIPE_BIN", bin_dir())
        .env("OUT", &results.0)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("usage: recipes/serve.sh URL [MODEL]"), "{err}");
    let help = Command::new("recipes/serve.sh")
        .arg("--help")
        .output()
        .unwrap();
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("seed 002"));
}

#[test]
fn a_server_that_is_down_stops_the_recipe_with_exit_1() {
    let results = Results::new("down");
    let url = format!("http://127.0.0.1:{}/v1", dead_port());
    let out = Command::new("recipes/serve.sh")
        .arg(&url)
        .env("QUICK", "1")
        .env("TOKENPIPE_BIN", bin_dir())
        .env("OUT", &results.0)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("run prompts-1 failed"), "{err}");
}

#[test]
fn closed_loop_measures_each_scenario_and_concurrency_over_its_measure_phase() {
    let server = Server::start(&["--profile", "small-gpu"]);
    let results = Results::new("closed-loop");
    let out = recipe(
        "closed-loop",
        &[&server.url],
        &results,
        &[("SCENARIOS", "B1 D"), ("CONCURRENCY", "2 4")],
    );
    let text = stdout(&out);
    // One Markdown row per scenario and concurrency, in that order.
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| B1") || l.starts_with("| D"))
        .collect();
    assert_eq!(rows.len(), 4, "{text}");
    assert!(
        rows[0].starts_with("| B1 c=2") && rows[3].starts_with("| D c=4"),
        "{text}"
    );
    for heading in ["Server from users", "User generation mean", "ITL jitter"] {
        assert!(text.contains(heading), "{heading}: {text}");
    }
    assert_eq!(
        results.files("runs"),
        ["B1-c2.ndjson", "B1-c4.ndjson", "D-c2.ndjson", "D-c4.ndjson"]
    );
    // Measured over the measure phase: the summaries say which window they cover.
    let summary = std::fs::read_to_string(results.path("summaries/D-c4.ndjson")).unwrap();
    assert!(
        summary.contains("\"window\":{\"name\":\"measure\""),
        "{summary}"
    );
    let csv = std::fs::read_to_string(results.path("closed-loop.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5, "{csv}");
    for svg in ["load.svg", "load-B1.svg", "load-D.svg"] {
        let chart = std::fs::read_to_string(results.path(svg)).unwrap();
        assert!(chart.starts_with("<svg") || chart.contains("<svg"), "{svg}");
    }
}

#[test]
fn matrix_measures_three_profiles_per_model_and_reports_across_models() {
    let server = Server::start(&["--profile", "small-gpu"]);
    let (a, b) = (Results::new("matrix-a"), Results::new("matrix-b"));
    let out = recipe(
        "matrix",
        &[&server.url, "model-a", "8x H200"],
        &a,
        &[("ENGINE", "vllm 0.19")],
    );
    let text = stdout(&out);
    for profile in [
        "latency-1024x256-c1",
        "serve-1024x256-c16",
        "longctx-8192x256-c4",
    ] {
        assert!(text.contains(&format!("| {profile} ")), "{profile}: {text}");
    }
    assert!(
        text.contains("| 8x H200 ") && text.contains("| vllm 0.19 "),
        "{text}"
    );
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
    recipe("matrix", &[&server.url, "model-b", "16x H200"], &b, &[]);

    let report = Results::new("matrix-report");
    std::fs::create_dir_all(&report.0).unwrap();
    let file = report.path("report.md");
    let out = Command::new("recipes/matrix.sh")
        .arg("--report")
        .args([&a.0, &b.0])
        .env("TOKENPIPE_BIN", bin_dir())
        .env("REPORT", &file)
        .output()
        .unwrap();
    assert_ok(&out, "matrix --report");
    let text = stdout(&out);
    assert!(
        text.contains("Top 2 by Output [tok/s] per profile"),
        "{text}"
    );
    let side_by_side = text
        .lines()
        .filter(|l| l.starts_with("| model-a") || l.starts_with("| model-b"))
        .collect::<Vec<_>>();
    assert_eq!(side_by_side.len(), 2, "{text}");
    assert!(side_by_side[0].contains("| 8x H200 "), "{text}");
    assert!(side_by_side[1].contains("| 16x H200 "), "{text}");
    assert_eq!(text.matches("```mermaid").count(), 3, "{text}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}
