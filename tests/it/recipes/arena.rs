//! recipes/arena.sh: seed 000's nine benchmarks, 01–05 as llama-benchy batches and 06–09 as
//! `vllm bench serve` runs them.

use super::*;

const SHAREGPT_FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/arrivals/sharegpt.json"
);

/// The rows (see [`markdown_rows`]) of the Markdown table in `text` whose heading row begins
/// with the cells `heading`, wherever it is among the tables printed.
pub(super) fn table_starting(text: &str, heading: &[&str]) -> Vec<Vec<String>> {
    text.split("\n\n")
        .map(markdown_rows)
        .find(|rows| {
            rows.first().is_some_and(|h| {
                h.len() >= heading.len() && h.iter().zip(heading).all(|(a, b)| a == b)
            })
        })
        .unwrap_or_else(|| panic!("no table headed {heading:?} in {text}"))
}

/// How many requests `arrivals ARGS...` schedules (llama-benchy's warm-up batch included).
fn scheduled(args: &[&str]) -> usize {
    let out = Command::new(bin("arrivals")).args(args).output().unwrap();
    assert_ok(&out, "arrivals");
    of_type(&records(&out.stdout), "request").len()
}

const BATCHES: [&str; 5] = [
    "01 chat",
    "02 rag 8k",
    "03 long output",
    "04 context 25k",
    "05 multi-turn",
];
const OPEN_LOOPS: [&str; 4] = ["06 office", "07 sharegpt", "08 peak", "09 reasoning"];

#[test]
fn arena_runs_01_to_05_as_llama_benchy_batches_and_06_to_09_as_vllm_bench_serve() {
    let server = Server::start(&["--profile", "small-gpu"]);
    let results = Results::new("arena");
    let out = recipe(
        "arena",
        &[&server.url],
        &results,
        &[("SHAREGPT", SHAREGPT_FIXTURE)],
    );
    let (text, err) = (stdout(&out), String::from_utf8_lossy(&out.stderr));

    // 01–05: llama-benchy's decode and prefill tables, a row per benchmark, batches of 4 (QUICK).
    for heading in [
        &["Model", "Concurrency", "t/s (total)"][..],
        &["Model", "Concurrency", "pp t/s (total)"][..],
    ] {
        let rows = table_starting(&text, heading);
        assert_eq!(rows.len(), 1 + BATCHES.len(), "{text}");
        for (i, name) in BATCHES.iter().enumerate() {
            assert_eq!(cell(&rows, i + 1, "Model"), *name, "{text}");
            assert_eq!(cell(&rows, i + 1, "Concurrency"), "4", "{text}");
            assert!(leading_number(&rows[i + 1][2]) > 0.0, "{text}");
        }
    }
    // Above them, what each benchmark sends, as the arena's cards give it (QUICK's sizes).
    for line in [
        "- 01 chat: pp 16, tg 16, depth 0, concurrency 4, runs 2",
        "- 05 multi-turn: pp 32, tg 8, depth 4, concurrency 4, runs 2",
    ] {
        assert!(text.contains(&format!("\n{line}\n")), "{line}: {text}");
    }
    // Each is one llama-benchy run: batches of 4 requests, 2 measured (QUICK's --runs 2).
    let batch = ["--batch", "4", "--runs", "2"];
    assert!(
        err.contains("run 01-chat: arrivals --batch 4 --runs 2 --input-tokens 16 --output-tokens 16 --seed 42 | fire"),
        "{err}"
    );
    // 05's "depth 4" is llama-benchy's: four tokens of context before its prompt.
    assert!(
        err.contains("run 05-multi-turn: arrivals --batch 4 --runs 2 --input-tokens 32 --output-tokens 8 --depth 4 --seed 42"),
        "{err}"
    );
    let events = records(&std::fs::read(results.path("runs/01-chat.ndjson")).unwrap());
    let args = [
        &batch[..],
        &["--input-tokens", "16", "--output-tokens", "16"][..],
    ]
    .concat();
    assert_eq!(
        of_type(&events, "done").len(),
        scheduled(&args),
        "{events:?}"
    );
    let summary = |name: &str| {
        let all =
            records(&std::fs::read(results.path(&format!("summaries/{name}.ndjson"))).unwrap());
        of_type(&all, "summary").last().copied().cloned().unwrap()
    };
    let multi_turn = summary("05-multi-turn");
    assert_eq!(multi_turn["llama_benchy"]["batches"], 2, "{multi_turn}");
    assert!(
        multi_turn["input_tokens"].as_u64().unwrap() > 2 * 4 * 32,
        "{multi_turn}"
    );

    // 06–09: vllm bench serve's open loops, mean ± sd over 2 runs (QUICK).
    let rows = table_starting(&text, &["Label", "Runs"]);
    assert_eq!(rows.len(), 1 + OPEN_LOOPS.len(), "{text}");
    for heading in [
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
    for (i, name) in OPEN_LOOPS.iter().enumerate() {
        let row = i + 1;
        assert_eq!(cell(&rows, row, "Label"), *name, "{text}");
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
    // vLLM's own schedule for seed 42 (QUICK: 8 prompts at 50 times the rate); 08 is capped at
    // 2 (QUICK), and what waits for a slot shows as queue time.
    assert!(
        err.contains(
            "run 06-office-1: arrivals --vllm-compatible --rate 15 --burstiness 0.7 -n 8 "
        ),
        "{err}"
    );
    assert_eq!(cell(&rows, 3, "Peak concurrency"), "2", "{text}");
    let queue = |row| leading_number(cell(&rows, row, "Dispatch lag p99 [ms]"));
    let uncapped = queue(1).min(queue(2)).min(queue(4));
    assert!(queue(3) > 50.0 && uncapped < queue(3) / 4.0, "{text}");

    let mut runs: Vec<String> = BATCHES
        .iter()
        .map(|n| format!("{}.ndjson", n.replace(' ', "-")))
        .collect();
    for name in OPEN_LOOPS {
        let slug = name.replace(' ', "-");
        runs.extend([format!("{slug}-1.ndjson"), format!("{slug}-2.ndjson")]);
    }
    runs.sort();
    assert_eq!(results.files("runs"), runs);
    let summaries: Vec<String> = BATCHES
        .iter()
        .chain(OPEN_LOOPS.iter())
        .map(|n| format!("{}.ndjson", n.replace(' ', "-")))
        .collect();
    assert_eq!(results.files("summaries"), summaries);
    // Each open loop's summaries: its two runs and their group, with the arena's percentiles.
    let group = records(&std::fs::read(results.path("summaries/08-peak.ndjson")).unwrap());
    let sums = of_type(&group, "summary");
    assert_eq!(sums.len(), 3);
    assert_eq!(sums[2]["runs"].as_array().unwrap().len(), 2);
    assert!(sums[2]["ttft_p95_ms"].as_f64().unwrap() > 0.0);
    for name in BATCHES.iter().chain(OPEN_LOOPS.iter()) {
        let slug = name.replace(' ', "-");
        assert!(text.contains(&format!("\n- {slug}: ")), "{slug}: {text}");
    }

    assert_eq!(
        std::fs::read_to_string(results.path("arena.md")).unwrap(),
        text
    );
    for file in ["llama-bench.md", "vllm.md"] {
        let kept = std::fs::read_to_string(results.path(file)).unwrap();
        assert!(text.contains(kept.trim_end()), "{file}");
    }
    let csv = std::fs::read_to_string(results.path("arena.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&header[..3], ["label", "runs", "workload"]);
    assert!(header.contains(&"output_tps_sd") && header.contains(&"ttft.p99"));
    let body: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(body.len(), OPEN_LOOPS.len(), "{csv}");
    assert!(body.iter().all(|r| r[1] == "2"), "{csv}");
    let csv = std::fs::read_to_string(results.path("llama-benchy.csv")).unwrap();
    assert!(
        csv.starts_with("label,workload,failed,pp_tps,tg_tps,ttfr\n01 chat,"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 1 + BATCHES.len(), "{csv}");
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
    let text = stdout(&out);
    // One benchmark: llama-benchy's table has no Model column, and the line above it says
    // which benchmark its row is.
    let rows = table_starting(&text, &["Concurrency", "t/s (total)"]);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(cell(&rows, 1, "Concurrency"), "4");
    assert!(
        text.contains("\n- 01 chat: pp 16, tg 16, depth 0, concurrency 4, runs 3\n"),
        "{text}"
    );
    assert!(!text.contains("| Label "), "no open loop ran: {text}");
    assert_eq!(results.files("runs"), ["01-chat.ndjson"]);
    // As many llama-benchy runs (batches) as asked.
    let summary = records(&std::fs::read(results.path("summaries/01-chat.ndjson")).unwrap());
    assert_eq!(
        of_type(&summary, "summary")[0]["llama_benchy"]["batches"],
        3
    );

    let bad = |env: (&str, &str), why: &str| {
        let out = Command::new("recipes/arena.sh")
            .arg(&server.url)
            .env("TOKENPIPE_BIN", bin_dir())
            .env("OUT", &results.0)
            .env(env.0, env.1)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{env:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{env:?}: {err}");
    };
    bad(("ONLY", "01 10"), "ONLY: no benchmark 10");
    bad(("SCALE", "0"), "SCALE=0: a number above 0");
    bad(("SCALE", "a tenth"), "SCALE=a tenth: a number above 0");
    let help = Command::new("recipes/arena.sh")
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("seed 000") && help.contains("SCALE"),
        "{help}"
    );
}

#[test]
fn arena_scale_shrinks_the_prompt_counts_and_keeps_rates_and_lengths() {
    // Not QUICK: 08 at the arena's 1.5 req/s, 4000 → 500 tokens and its cap of 25, with a
    // hundredth of its 300 prompts, against a server fast enough that a run takes seconds.
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "1"]);
    let results = Results::new("arena-scale");
    let env = [
        ("QUICK", "0"),
        ("ONLY", "08"),
        ("RUNS", "1"),
        ("SCALE", "0.01"),
    ];
    let out = recipe("arena", &[&server.url], &results, &env);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("run 08-peak-1: arrivals --vllm-compatible --rate 1.5 --burstiness 1.0 -n 3 --max-concurrency 25 --input-tokens 4000 --output-tokens 500 --seed 42"),
        "{err}"
    );
    let events = records(&std::fs::read(results.path("runs/08-peak-1.ndjson")).unwrap());
    let done = of_type(&events, "done");
    assert_eq!(done.len(), 3, "{events:?}");
    assert!(done.iter().all(|d| d["ok"] == true), "{done:?}");
    let rows = table_starting(&stdout(&out), &["Label", "Runs"]);
    assert_eq!(cell(&rows, 1, "Label"), "08 peak");
    assert_eq!(cell(&rows, 1, "Runs"), "1");
}

/// A TOKENPIPE_BIN whose `arrivals` predates `--depth`: this build's tools, but an `arrivals`
/// whose help lacks the flag.
struct OldArrivals(PathBuf);

impl OldArrivals {
    fn new() -> Self {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp_path("old-arrivals");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for tool in ["fire", "reduce", "table"] {
            std::os::unix::fs::symlink(bin(tool), dir.join(tool)).unwrap();
        }
        let script = format!(
            "#!/bin/sh\n\"{}\" \"$@\" | sed 's/--depth/--deep/g'\n",
            bin("arrivals")
        );
        let arrivals = dir.join("arrivals");
        std::fs::write(&arrivals, script).unwrap();
        std::fs::set_permissions(&arrivals, std::fs::Permissions::from_mode(0o755)).unwrap();
        OldArrivals(dir)
    }
}

impl Drop for OldArrivals {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn arena_05_with_tools_without_depth_stops_before_any_run_naming_the_flag() {
    let old = OldArrivals::new();
    let results = Results::new("arena-old-tools");
    let out = Command::new("recipes/arena.sh")
        .arg(format!("http://127.0.0.1:{}/v1", dead_port()))
        .env("QUICK", "1")
        .env("TOKENPIPE_BIN", &old.0)
        .env("OUT", &results.0)
        .env("ONLY", "01 05")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("has no --depth, which arena 05 (llama-benchy's --depth 4) needs"),
        "{err}"
    );
    assert!(!err.contains("run 01-chat"), "{err}");
}

#[test]
fn ctrl_c_stops_the_run_then_prints_what_finished_and_exits_130() {
    use std::os::unix::process::CommandExt;
    // QUICK: batches of 4, one measured (RUNS=1); 16 tokens 200 ms apart for 01, 8 for 02, so
    // each run lasts seconds.
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
    let events = results.path("runs/02-rag-8k.ndjson");
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
    let rows = table_starting(&text, &["Concurrency", "t/s (total)"]);
    assert_eq!(rows.len(), 2, "{text}");
    assert!(
        text.contains("\n- 01 chat: pp 16, tg 16, depth 0, concurrency 4, runs 1\n"),
        "{text}"
    );
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
        ["01-chat.ndjson", "02-rag-8k.ndjson"]
    );
    assert_eq!(results.files("summaries"), ["01-chat.ndjson"]);
    // fire stopped 02's run and wrote a done record for each of its requests, none a failure.
    let events = records(&std::fs::read(results.path("runs/02-rag-8k.ndjson")).unwrap());
    let done = of_type(&events, "done");
    let args = [
        "--batch",
        "4",
        "--runs",
        "1",
        "--input-tokens",
        "128",
        "--output-tokens",
        "8",
    ];
    assert_eq!(done.len(), scheduled(&args), "{events:?}");
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
