//! Several runs and shards through the real binaries: two `fire` processes, each sending one
//! shard of a plan to one simulated server, reduce to one run; three repeats of a configuration
//! reduce to three summaries and a group summary (and none with `--no-group`), named together by
//! one `--label`.

use crate::common;
use common::*;

const PLAN: &[&str] = &[
    "--rate",
    "50",
    "--num-prompts",
    "12",
    "--input-tokens",
    "8",
    "--output-tokens",
    "5",
    "--seed",
    "11",
];

/// `arrivals PLAN extra | fire --url`, returning fire's output.
fn arrivals_fire(server: &Server, extra: &[&str]) -> Vec<u8> {
    let mut arrivals: Vec<&str> = PLAN.to_vec();
    arrivals.extend_from_slice(extra);
    let outs = pipeline(
        &[
            cmd("arrivals", &arrivals),
            cmd("fire", &["--url", &server.url]),
        ],
        None,
    );
    assert_ok(&outs[0], "arrivals");
    assert_ok(&outs[1], "fire");
    outs[1].stdout.clone()
}

#[test]
fn two_fire_processes_of_one_sharded_plan_reduce_to_one_run() {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "5"]);
    // Both parts run at once, as on two hosts.
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| arrivals_fire(&server, &["--shard", "0/2"]));
        let b = s.spawn(|| arrivals_fire(&server, &["--shard", "1/2"]));
        (a.join().expect("shard 0"), b.join().expect("shard 1"))
    });
    let both = [a.clone(), b.clone()].concat();
    let out = run(&cmd("reduce", &[]), &both);
    assert_ok(&out, "reduce");
    let recs = records(&out.stdout);
    let summaries = of_type(&recs, "summary");
    assert_eq!(summaries.len(), 1, "{recs:?}");
    let s = summaries[0];
    assert_eq!(s["requests_ok"], 12);
    assert_eq!(s["output_tokens"], 60);
    assert_eq!(s["shards"], 2);
    assert_eq!(s["shard_runs"].as_array().map(Vec::len), Some(2));
    let ttft = s["ttft_p50_ms"].as_f64().expect("ttft p50");
    assert!((18.0..40.0).contains(&ttft), "ttft p50 {ttft}");
    // One part alone: a warning naming the missing one, and a summary of what is there.
    let out = run(&cmd("reduce", &[]), &a);
    assert_ok(&out, "reduce one part");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("shard(s) 1 of 2 missing"), "{stderr}");
    let recs = records(&out.stdout);
    assert_eq!(of_type(&recs, "summary")[0]["requests_ok"], 6);
}

#[test]
fn three_repeats_give_three_summaries_and_a_group() {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "5"]);
    // for i in 1 2 3; do arrivals ... | fire ...; done | reduce
    let stream: Vec<u8> = (0..3).flat_map(|_| arrivals_fire(&server, &[])).collect();
    let out = run(&cmd("reduce", &[]), &stream);
    assert_ok(&out, "reduce");
    let recs = records(&out.stdout);
    let summaries = of_type(&recs, "summary");
    assert_eq!(summaries.len(), 4, "{recs:?}");
    let group = summaries[3];
    let ids: Vec<&serde_json::Value> = summaries[..3].iter().map(|s| &s["run_id"]).collect();
    assert_eq!(
        group["runs"]
            .as_array()
            .map(|r| r.iter().collect::<Vec<_>>()),
        Some(ids)
    );
    assert_eq!(group["requests_ok"], 36);
    let tput = &group["across_runs"]["output_throughput_tokens_per_s"];
    assert_eq!(tput["n"], 3);
    let (lo, mean, hi) = (
        tput["ci95"][0].as_f64().unwrap(),
        tput["mean"].as_f64().unwrap(),
        tput["ci95"][1].as_f64().unwrap(),
    );
    assert!(
        lo <= mean && mean <= hi && tput["sd"].as_f64().unwrap() >= 0.0,
        "{tput}"
    );
    let ci = &group["percentile_ci95"]["ttft_p99_ms"];
    let p99 = group["ttft_p99_ms"].as_f64().unwrap();
    assert!(
        ci[0].as_f64().unwrap() <= p99 && p99 <= ci[1].as_f64().unwrap(),
        "{ci} {p99}"
    );
    let out = run(&cmd("reduce", &["--no-group"]), &stream);
    assert_ok(&out, "reduce --no-group");
    assert_eq!(of_type(&records(&out.stdout), "summary").len(), 3);
    // One --label names every repeat, so they still form one group under that name.
    let out = run(&cmd("reduce", &["--label", "sim"]), &stream);
    assert_ok(&out, "reduce --label sim");
    let recs = records(&out.stdout);
    let labels: Vec<&serde_json::Value> = of_type(&recs, "summary")
        .iter()
        .map(|s| &s["label"])
        .collect();
    assert_eq!(labels, ["sim"; 4], "{recs:?}");
}
