//! The recipes in recipes/ run against `simserve` with `QUICK=1` (short counts and durations),
//! through the real binaries of this build, so that none can rot: each must exit 0, keep the
//! raw events of every run and its summaries, and print the tables its header promises.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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
fn ctrl_c_stops_the_run_then_prints_what_finished_and_exits_130() {
    use std::os::unix::process::CommandExt;
    // QUICK: closed loops of 8 requests, 4 in flight; 16 tokens 200 ms apart for 01, 8 for
    // 02, so each run lasts seconds.
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "200"]);
    let results = Results::new("arena-ctrl-c");
    let env = [("ONLY", "01 02 03"), ("RUNS", "1")];
    let child = recipe_command("arena", &[&server.url], &results, &env)
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let group = child.id() as i32;
    // Once 02's run has sent its first requests, Ctrl-C: the terminal signals the whole
    // process group.
    let started = std::time::Instant::now();
    let events = results.path("runs/02-rag-8k-1.ndjson");
    while !std::fs::read_to_string(&events).is_ok_and(|t| t.contains("\"type\":\"sent\"")) {
        assert!(started.elapsed().as_secs() < 60, "02 never sent a request");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    send_signal(-group, libc::SIGINT);
    let (out, timed_out) = read_until_exit(child, std::time::Duration::from_secs(60));
    assert!(!timed_out);
    let (text, err) = (stdout(&out), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted: the tables of the benchmarks that finished"),
        "{err}"
    );
    // The table of 01, the one benchmark that finished; 03 never ran.
    let rows = markdown_rows(&text);
    assert_eq!(rows.len(), 2, "{text}");
    assert_eq!(cell(&rows, 1, "Label"), "01 chat", "{text}");
    assert!(text.contains("- 01-chat: "), "{text}");
    for other in ["02 rag", "02-rag", "03 long", "03-long"] {
        assert!(!text.contains(other), "{other}: {text}");
    }
    assert_eq!(
        std::fs::read_to_string(results.path("arena.md")).unwrap(),
        text
    );
    assert_eq!(
        results.files("runs"),
        ["01-chat-1.ndjson", "02-rag-8k-1.ndjson"]
    );
    assert_eq!(results.files("summaries"), ["01-chat.ndjson"]);
    // fire stopped 02's run and wrote a done record for each of its requests, none a failure.
    let events = records(&std::fs::read(results.path("runs/02-rag-8k-1.ndjson")).unwrap());
    let done = of_type(&events, "done");
    assert_eq!(done.len(), 8, "{events:?}");
    assert!(
        done.iter()
            .all(|d| d["error_kind"] == "cancelled" || d["error_kind"] == "not_sent"),
        "{done:?}"
    );
    assert!(
        done.iter().any(|d| d["error_kind"] == "cancelled"),
        "{done:?}"
    );
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
    for run in ["B1-c2", "B1-c4", "D-c2", "D-c4"] {
        assert!(text.contains(&format!("\n- {run}: ")), "{run}: {text}");
    }
    let csv = std::fs::read_to_string(results.path("closed-loop.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5, "{csv}");
    for svg in ["load.svg", "load-B1.svg", "load-D.svg"] {
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

const SHAREGPT_FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/arrivals/sharegpt.json"
);

#[test]
fn arena_runs_its_nine_benchmarks_into_one_table_of_means_over_runs() {
    let server = Server::start(&["--profile", "small-gpu"]);
    let results = Results::new("arena");
    let out = recipe(
        "arena",
        &[&server.url],
        &results,
        &[("SHAREGPT", SHAREGPT_FIXTURE)],
    );
    let text = stdout(&out);
    let rows = markdown_rows(&text);
    let names = [
        "01 chat",
        "02 rag 8k",
        "03 long output",
        "04 context 25k",
        "05 multi-turn",
        "06 office",
        "07 sharegpt",
        "08 peak",
        "09 reasoning",
    ];
    assert_eq!(rows.len(), 1 + names.len(), "{text}");
    for heading in [
        "Runs",
        "Output [tok/s]",
        "TTFT p50 [ms]",
        "TTFT p95 [ms]",
        "TTFT p99 [ms]",
        "User generation mean [tok/s]",
        "Mean concurrency",
        "Peak concurrency",
        "Dispatch lag p99 [ms]",
    ] {
        assert!(rows[0].iter().any(|h| h == heading), "{heading}: {text}");
    }
    for (i, name) in names.iter().enumerate() {
        let row = i + 1;
        assert_eq!(cell(&rows, row, "Label"), *name, "{text}");
        // QUICK: two runs of each, all requests answered, the spread over them shown.
        assert_eq!(cell(&rows, row, "Runs"), "2", "{name}: {text}");
        assert!(cell(&rows, row, "Workload").ends_with("×2 runs"), "{text}");
        assert_eq!(cell(&rows, row, "Failed"), "0", "{name}: {text}");
        assert!(cell(&rows, row, "TTFT p95 [ms]").contains(" ± "), "{text}");
        assert!(leading_number(cell(&rows, row, "Output [tok/s]")) > 0.0);
        let (p50, p99) = (
            leading_number(cell(&rows, row, "TTFT p50 [ms]")),
            leading_number(cell(&rows, row, "TTFT p99 [ms]")),
        );
        assert!(0.0 < p50 && p50 <= p99, "{name}: {text}");
    }
    // Closed loops keep 4 in flight (QUICK); 05 is five-turn conversations; 08 is capped at
    // 2 (QUICK), and what waits for a slot shows as queue time.
    assert_eq!(cell(&rows, 1, "Peak concurrency"), "4", "{text}");
    assert!(cell(&rows, 5, "Workload").contains("c4"), "{text}");
    assert_eq!(cell(&rows, 8, "Peak concurrency"), "2", "{text}");
    let queue = |row| leading_number(cell(&rows, row, "Dispatch lag p99 [ms]"));
    assert!(queue(8) > 50.0 && queue(1) < queue(8) / 4.0, "{text}");

    let mut runs: Vec<String> = Vec::new();
    let mut summaries: Vec<String> = Vec::new();
    for name in names {
        let slug = name.replace(' ', "-");
        runs.extend([format!("{slug}-1.ndjson"), format!("{slug}-2.ndjson")]);
        summaries.push(format!("{slug}.ndjson"));
    }
    runs.sort();
    assert_eq!(results.files("runs"), runs);
    assert_eq!(results.files("summaries"), summaries);
    // 05's runs are conversations: 4 (one per slot, QUICK) of 5 turns each.
    let events = std::fs::read(results.path("runs/05-multi-turn-1.ndjson")).unwrap();
    assert_eq!(of_type(&records(&events), "done").len(), 20);
    // Each benchmark's summaries: its two runs and their group, with the arena's percentiles.
    let group = std::fs::read(results.path("summaries/08-peak.ndjson")).unwrap();
    let group = records(&group);
    let sums = of_type(&group, "summary");
    assert_eq!(sums.len(), 3);
    assert_eq!(sums[2]["runs"].as_array().unwrap().len(), 2);
    assert!(sums[2]["ttft_p95_ms"].as_f64().unwrap() > 0.0);

    assert_eq!(
        std::fs::read_to_string(results.path("arena.md")).unwrap(),
        text
    );
    let csv = std::fs::read_to_string(results.path("arena.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&header[..3], ["label", "runs", "workload"]);
    assert!(header.contains(&"output_tps_sd") && header.contains(&"ttft.p99"));
    let body: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(body.len(), names.len(), "{csv}");
    assert!(body.iter().all(|r| r[1] == "2"), "{csv}");
}

#[test]
fn arena_skips_07_without_sharegpt_and_runs_what_only_names() {
    let server = Server::start(&["--profile", "small-gpu"]);
    let results = Results::new("arena-only");
    let out = recipe(
        "arena",
        &[&server.url],
        &results,
        &[("ONLY", "01 07"), ("RUNS", "3")],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("07 skipped") && err.contains("SHAREGPT=path/to/ShareGPT_V3"),
        "{err}"
    );
    let rows = markdown_rows(&stdout(&out));
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(cell(&rows, 1, "Label"), "01 chat");
    assert_eq!(cell(&rows, 1, "Runs"), "3", "as many runs as asked");
    assert_eq!(
        results.files("runs"),
        ["01-chat-1.ndjson", "01-chat-2.ndjson", "01-chat-3.ndjson"]
    );

    let bad = Command::new("recipes/arena.sh")
        .arg(&server.url)
        .env("TOKENPIPE_BIN", bin_dir())
        .env("OUT", &results.0)
        .env("ONLY", "01 10")
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("ONLY: no benchmark 10"));
    let help = Command::new("recipes/arena.sh")
        .arg("--help")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("seed 000"));
}

#[test]
fn sweep_prints_llama_benchys_tables_then_batch_beside_sustained_load() {
    let server = Server::start(&["--profile", "small-gpu"]);
    let results = Results::new("sweep");
    let out = recipe("sweep", &[&server.url], &results, &[]);
    let text = stdout(&out);
    // llama-benchy's own table first (checked in table_styles and llama_benchy_fixture).
    let (own, tables): (Vec<&str>, Vec<&str>) = text
        .split("\n\n")
        .filter(|t| t.starts_with('|'))
        .partition(|t| t.starts_with("| model "));
    assert_eq!(own.len(), 1, "{text}");
    assert_eq!(tables.len(), 5, "{text}");

    // llama-benchy's decode and prefill tables, concurrency 1 2 4 (QUICK).
    let decode = markdown_rows(tables[0]);
    assert_eq!(
        decode[0],
        ["Concurrency", "t/s (total)", "+/- stddev", "CV%"]
    );
    let prefill = markdown_rows(tables[1]);
    assert_eq!(prefill[0], ["Concurrency", "pp t/s (total)", "+/- stddev"]);
    for rows in [&decode, &prefill] {
        let c: Vec<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
        assert_eq!(c, ["1", "2", "4"], "{text}");
    }
    assert!(leading_number(&decode[3][1]) > leading_number(&decode[1][1]));

    // Batch against sustained load, with the ratio column.
    let side = markdown_rows(tables[2]);
    assert_eq!(
        side[0],
        [
            "concurrency",
            "batch [tok/s]",
            "poisson [tok/s]",
            "poisson ÷ batch"
        ]
    );
    for row in 1..=3 {
        // The batch column is llama-benchy's decode rate, the same as its own table's.
        assert_eq!(side[row][1], decode[row][1], "{text}");
        let (batch, poisson) = (leading_number(&side[row][1]), leading_number(&side[row][2]));
        let ratio = leading_number(&side[row][3]);
        assert!((ratio - poisson / batch).abs() < 0.01, "{text}");
        assert!(0.2 < ratio && ratio < 1.5, "{text}");
    }
    assert_eq!(markdown_rows(tables[3])[0][1], "batch [ms]");
    assert_eq!(markdown_rows(tables[4])[0][2], "poisson [ms]");

    let csv = std::fs::read_to_string(results.path("decode.csv")).unwrap();
    assert!(
        csv.starts_with("concurrency,batch,poisson,poisson_ratio\n"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 4, "{csv}");

    assert_eq!(
        results.files("runs"),
        [
            "batch-c1.ndjson",
            "batch-c2.ndjson",
            "batch-c4.ndjson",
            "poisson-c1.ndjson",
            "poisson-c2.ndjson",
            "poisson-c4.ndjson"
        ]
    );
    assert_eq!(results.files("summaries").len(), 6);
    // The sustained run at 4: 4 × 2 runs of requests, never more than 4 in flight.
    let events = records(&std::fs::read(results.path("runs/poisson-c4.ndjson")).unwrap());
    assert_eq!(of_type(&events, "done").len(), 8);
    assert!(peak_in_flight(&events) <= 4);
    for file in ["llama-bench.md", "decode.md", "ttft.md", "tpot.md"] {
        let kept = std::fs::read_to_string(results.path(file)).unwrap();
        assert!(text.contains(kept.trim_end()), "{file}");
    }
}
