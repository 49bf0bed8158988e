//! `table --columns`, `--sort`, `--baseline` and `--layout long` through the real pipe: a
//! concurrency sweep of repeated runs against the simulated server.

use crate::common;
use common::*;

/// Three concurrencies × three seeds, each concurrency reduced into a group summary with
/// `--label LABEL`.
fn sweep(server: &Server, label: &str, seeds: &[&str]) -> Vec<u8> {
    let mut all = Vec::new();
    for c in ["16", "2", "4"] {
        let mut events = Vec::new();
        for seed in seeds {
            let outs = pipeline(
                &[
                    cmd(
                        "arrivals",
                        &[
                            "--concurrency",
                            c,
                            "-n",
                            "6",
                            "--output-tokens",
                            "8",
                            "--seed",
                            seed,
                        ],
                    ),
                    cmd("fire", &["--url", server.url.as_str()]),
                ],
                None,
            );
            assert_ok(&outs[1], "fire");
            events.extend_from_slice(&outs[1].stdout);
        }
        let out = run(&cmd("reduce", &["--label", label]), &events);
        assert_ok(&out, "reduce");
        all.extend_from_slice(&out.stdout);
    }
    all
}

#[test]
fn columns_sort_and_baseline_through_the_pipe() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "1"]);
    let mut input = sweep(&server, "sim", &["1", "2", "3"]);
    input.extend(sweep(&server, "ref", &["1"]));
    let table = |args: &[&str]| {
        let out = run(&cmd("table", args), &input);
        assert_ok(&out, "table");
        String::from_utf8(out.stdout).unwrap()
    };
    let long = table(&[
        "--layout",
        "long",
        "--format",
        "markdown",
        "--columns",
        "concurrency,output_tps,ttft.p99",
        "--baseline",
        "ref",
    ]);
    assert!(
        long.contains("| Label ") && long.contains("Output [tok/s]"),
        "{long}"
    );
    assert!(
        long.contains("TTFT p99 [ms]") && long.contains("Output ×ref"),
        "{long}"
    );
    let order: Vec<&str> = long
        .lines()
        .skip(2)
        .filter_map(|l| l.split('|').nth(1).map(str::trim))
        .collect();
    assert_eq!(
        order,
        ["sim c=2", "sim c=4", "sim c=16", "ref c=2", "ref c=4", "ref c=16"],
        "natural order: {long}"
    );
    let sim_c2 = long.lines().find(|l| l.contains("| sim c=2 ")).unwrap();
    assert!(sim_c2.contains(" ± "), "a group shows its spread: {sim_c2}");
    assert!(
        sim_c2
            .split('|')
            .filter(|c| c.trim().ends_with('x'))
            .count()
            == 2,
        "ratio cells: {sim_c2}"
    );
    let ref_c2 = long.lines().find(|l| l.contains("| ref c=2 ")).unwrap();
    assert!(ref_c2.contains("1.00x"), "{ref_c2}");

    let sorted = table(&[
        "--columns",
        "concurrency",
        "--sort",
        "concurrency:desc,label",
        "--format",
        "csv",
    ]);
    let labels: Vec<&str> = sorted
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(sorted.lines().next(), Some("label,concurrency"));
    assert_eq!(
        labels,
        ["ref c=16", "sim c=16", "ref c=4", "sim c=4", "ref c=2", "sim c=2"]
    );

    let bad = run(&cmd("table", &["--baseline", "nope"]), &input);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--baseline nope"));
    let bad = run(&cmd("table", &["--sort", "ttft.p98"]), &input);
    assert_eq!(bad.status.code(), Some(2));
    let bad = run(
        &cmd("table", &["--style", "vllm", "--columns", "ok"]),
        &input,
    );
    assert_eq!(bad.status.code(), Some(2));
    server.stop();
}

#[test]
fn raw_events_are_refused_with_the_tool_to_run() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "1"]);
    let outs = pipeline(
        &[
            cmd(
                "arrivals",
                &["--concurrency", "1", "-n", "1", "--output-tokens", "2"],
            ),
            cmd("fire", &["--url", server.url.as_str()]),
        ],
        None,
    );
    let out = run(&cmd("table", &[]), &outs[1].stdout);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("with reduce first"));
    let schedule = run(
        &cmd(
            "arrivals",
            &["--concurrency", "1", "-n", "1", "--output-tokens", "2"],
        ),
        b"",
    );
    assert_ok(&schedule, "arrivals");
    let out = run(&cmd("table", &[]), &schedule.stdout);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("send it with fire"));
    server.stop();
}
