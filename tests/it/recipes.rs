//! The recipes in recipes/ run against `simserve` with `QUICK=1` (short counts and durations),
//! through the real binaries of this build, so that none can rot: each must exit 0, keep the
//! raw events of every run and its summaries, and print the tables its header promises.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod arena;
mod capacity;
mod sweep;

/// The directory holding this build's binaries (what `TOKENPIPE_BIN` names for a recipe).
pub(crate) fn bin_dir() -> PathBuf {
    Path::new(&bin("fire"))
        .parent()
        .expect("the binaries' directory")
        .to_path_buf()
}

/// A fresh results folder for one recipe run, removed when dropped.
pub(crate) struct Results(pub(crate) PathBuf);

impl Results {
    pub(crate) fn new(name: &str) -> Self {
        let dir = temp_path(&format!("recipe-{name}"));
        let _ = std::fs::remove_dir_all(&dir);
        Results(dir)
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }

    /// The files directly in folder `rel`, sorted.
    pub(crate) fn files(&self, rel: &str) -> Vec<String> {
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

/// `recipes/NAME.sh args...` with QUICK=1, this build's tools and `out` as its results.
pub(crate) fn recipe_command(
    name: &str,
    args: &[&str],
    out: &Results,
    env: &[(&str, &str)],
) -> Command {
    let mut command = Command::new(format!("recipes/{name}.sh"));
    command
        .args(args)
        .env("QUICK", "1")
        .env("TOKENPIPE_BIN", bin_dir())
        .env("OUT", &out.0)
        .env_remove("FIRE_ARGS")
        .envs(env.iter().copied());
    command
}

/// Runs `recipes/NAME.sh args...` (see [`recipe_command`]), which must succeed.
pub(crate) fn recipe(name: &str, args: &[&str], out: &Results, env: &[(&str, &str)]) -> Output {
    let output = recipe_command(name, args, out, env)
        .output()
        .expect("run the recipe");
    assert_ok(&output, name);
    output
}

pub(crate) fn stdout(out: &Output) -> String {
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
fn a_server_that_is_down_fails_every_run_and_the_recipe_with_exit_1() {
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
    for n in [1, 4, 8] {
        assert!(err.contains(&format!("run prompts-{n} failed")), "{err}");
        assert!(
            err.contains(&format!("prompts-{n}: did not finish")),
            "{err}"
        );
    }
    assert!(err.contains("no run finished"), "{err}");
    assert!(out.stdout.is_empty(), "{}", stdout(&out));
}

/// simserve failing only its first generation request with a 500: `--fault http:0.1` with
/// `--fault-seed 1487` fails request 1 and spares requests 2 to 39.
const FIRST_REQUEST_FAILS: &[&str] = &["--fault", "http:0.1", "--fault-seed", "1487"];

#[test]
fn a_recipe_goes_on_past_a_failed_benchmark_and_exits_1() {
    let mut args = vec!["--profile", "small-gpu"];
    args.extend_from_slice(FIRST_REQUEST_FAILS);
    let server = Server::start(&args);
    let results = Results::new("serve-goes-on");
    let out = recipe_command("serve", &[&server.url], &results, &[])
        .output()
        .unwrap();
    let (text, err) = (stdout(&out), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{err}");
    // prompts-1's one request failed, so fire failed; prompts-4 and prompts-8 ran after it.
    assert!(
        err.contains("run prompts-1 failed: arrivals | fire exited 1"),
        "{err}"
    );
    assert_eq!(
        text.matches("Serving Benchmark Result").count(),
        2,
        "{text}"
    );
    for n in [4, 8] {
        assert!(
            text.contains(&format!("Successful requests:                     {n} ")),
            "{text}"
        );
        assert!(text.contains(&format!("- prompts-{n}: ")), "{text}");
    }
    assert!(
        text.contains("- prompts-1: did not finish (arrivals | fire exited 1)"),
        "{text}"
    );
    assert_eq!(
        results.files("runs"),
        ["prompts-1.ndjson", "prompts-4.ndjson", "prompts-8.ndjson"]
    );
    assert_eq!(
        results.files("summaries"),
        ["prompts-4.ndjson", "prompts-8.ndjson"]
    );
    assert_eq!(
        std::fs::read_to_string(results.path("blocks.txt")).unwrap(),
        text
    );
}

#[test]
fn closed_loop_measures_each_scenario_and_concurrency_over_its_measure_phase() {
    let server = Server::start(&["--profile", "small-gpu", "--prefix-cache", "on"]);
    let results = Results::new("closed-loop");
    let out = recipe(
        "closed-loop",
        &[&server.url],
        &results,
        &[("SCENARIOS", "A1 B1 D"), ("CONCURRENCY", "2 4")],
    );
    let text = stdout(&out);
    // The prefix cache's hit ratio per scenario: identical prompts hit it, distinct ones never.
    let rows = markdown_rows(&text);
    let column = rows[0].iter().position(|h| h == "Cache hit ratio");
    let column = column.unwrap_or_else(|| panic!("no hit ratio column: {text}"));
    for row in &rows[1..] {
        let ratio: f64 = row[column].parse().unwrap_or_else(|_| panic!("{row:?}"));
        if row[0].starts_with("A1") {
            assert!(ratio > 0.5, "{row:?}");
        } else if row[0].starts_with("B1") {
            assert_eq!(ratio, 0.0, "{row:?}");
        }
    }
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
        [
            "A1-c2.ndjson",
            "A1-c4.ndjson",
            "B1-c2.ndjson",
            "B1-c4.ndjson",
            "D-c2.ndjson",
            "D-c4.ndjson"
        ]
    );
    // Measured over the measure phase: the summaries say which window they cover.
    let summary = std::fs::read_to_string(results.path("summaries/D-c4.ndjson")).unwrap();
    assert!(
        summary.contains("\"window\":{\"name\":\"measure\""),
        "{summary}"
    );
    for run in ["B1-c2", "B1-c4", "D-c2", "D-c4"] {
        assert!(text.contains(&format!("\n- {run}: ")), "{run}: {text}");
    }
    let csv = std::fs::read_to_string(results.path("closed-loop.csv")).unwrap();
    assert_eq!(csv.lines().count(), 7, "{csv}");
    for svg in ["load.svg", "load-A1.svg", "load-B1.svg", "load-D.svg"] {
        let chart = std::fs::read_to_string(results.path(svg)).unwrap();
        assert!(chart.starts_with("<svg") || chart.contains("<svg"), "{svg}");
    }
}

/// The rows of the first Markdown table in `text` (heading first), cells trimmed; separator
/// lines left out.
pub(crate) fn markdown_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter(|l| !l.starts_with("|-") && !l.starts_with("|:"))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// The cell of `row` under `heading`.
pub(crate) fn cell<'a>(rows: &'a [Vec<String>], row: usize, heading: &str) -> &'a str {
    let col = rows[0]
        .iter()
        .position(|h| h == heading)
        .unwrap_or_else(|| panic!("no column {heading} in {:?}", rows[0]));
    &rows[row][col]
}

/// The number a cell starts with (`12.34 ± 0.56` is 12.34).
fn leading_number(cell: &str) -> f64 {
    cell.split_whitespace()
        .next()
        .and_then(|n| n.trim_end_matches('x').parse().ok())
        .unwrap_or_else(|| panic!("no number in {cell:?}"))
}
