//! recipes/sweep.sh: seed 001's llama-benchy sweep beside `vllm bench serve` at each
//! concurrency, with the seed's tables.

use super::arena::table_starting;
use super::*;

#[test]
fn sweep_sets_llama_benchy_beside_vllm_bench_serve_keeping_c_in_flight() {
    let server = Server::start(&["--profile", "small-gpu"]);
    let results = Results::new("sweep");
    let out = recipe("sweep", &[&server.url], &results, &[]);
    let text = stdout(&out);

    // llama-benchy's decode and prefill tables, concurrency 1 2 4 (QUICK).
    let decode = table_starting(&text, &["Concurrency", "t/s (total)", "+/- stddev", "CV%"]);
    let prefill = table_starting(&text, &["Concurrency", "pp t/s (total)", "+/- stddev"]);
    for rows in [&decode, &prefill] {
        let c: Vec<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
        assert_eq!(c, ["1", "2", "4"], "{text}");
    }
    assert!(leading_number(&decode[3][1]) > leading_number(&decode[1][1]));

    // The seed's side by side: llama-benchy's t/s, vllm bench serve's output throughput and
    // their ratio. With C kept in flight the open loop loses only the prefill time that
    // llama-benchy's decode rate leaves out (the seed's 0.85–0.98), not the idle time of an
    // open loop at the batch run's request rate (0.70 at c4 here).
    let side = table_starting(&text, &["concurrency", "llama-benchy [tok/s]"]);
    assert_eq!(
        side[0],
        [
            "concurrency",
            "llama-benchy [tok/s]",
            "vllm bench serve [tok/s]",
            "vllm bench serve ÷ llama-benchy"
        ]
    );
    assert_eq!(side.len(), 4, "{text}");
    for row in 1..=3 {
        // The llama-benchy column is its decode rate, the same as its own table's.
        assert_eq!(side[row][1], decode[row][1], "{text}");
        let (benchy, serve) = (leading_number(&side[row][1]), leading_number(&side[row][2]));
        let ratio = leading_number(&side[row][3]);
        assert!((ratio - serve / benchy).abs() < 0.01, "{text}");
        assert!(0.85 < ratio && ratio < 1.15, "{text}");
    }
    let ttft = table_starting(&text, &["concurrency", "llama-benchy [ms]"]);
    assert_eq!(ttft[0][2], "vllm bench serve [ms]", "{text}");
    let tpot = std::fs::read_to_string(results.path("tpot.md")).unwrap();
    assert!(
        tpot.starts_with("TPOT p50 [ms] by concurrency and label"),
        "{tpot}"
    );
    // The peak table: vllm bench serve's busiest second beside llama-benchy's t/s.
    let peak = std::fs::read_to_string(results.path("peak.md")).unwrap();
    assert!(
        peak.starts_with("Decode [t/s] or Peak output [tok/s]"),
        "{peak}"
    );
    let peak = markdown_rows(&peak);
    assert_eq!(peak[0][3], "vllm bench serve ÷ llama-benchy", "{peak:?}");
    for row in 1..=3 {
        assert_eq!(peak[row][1], side[row][1], "{peak:?}");
        // The busiest second of a run longer than a second holds at least its mean rate.
        let (busiest, mean) = (leading_number(&peak[row][2]), leading_number(&side[row][2]));
        assert!(busiest >= 0.9 * mean, "{peak:?} {side:?}");
    }

    let csv = std::fs::read_to_string(results.path("decode.csv")).unwrap();
    assert!(
        csv.starts_with("concurrency,llama-benchy,vllm bench serve,vllm bench serve_ratio\n"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 4, "{csv}");

    assert_eq!(
        results.files("runs"),
        [
            "batch-c1.ndjson",
            "batch-c2.ndjson",
            "batch-c4.ndjson",
            "serve-c1.ndjson",
            "serve-c2.ndjson",
            "serve-c4.ndjson"
        ]
    );
    assert_eq!(results.files("summaries").len(), 6);
    for c in [1, 2, 4] {
        // vllm bench serve at --max-concurrency C, --request-rate inf: C × 2 runs of requests,
        // exactly C in flight, and close to C on average.
        let events =
            records(&std::fs::read(results.path(&format!("runs/serve-c{c}.ndjson"))).unwrap());
        assert_eq!(of_type(&events, "done").len(), 2 * c, "{events:?}");
        assert_eq!(peak_in_flight(&events), c as i32);
        let summary =
            records(&std::fs::read(results.path(&format!("summaries/serve-c{c}.ndjson"))).unwrap());
        let summary = of_type(&summary, "summary")[0];
        assert_eq!(summary["label"], "vllm bench serve");
        let mean = summary["mean_concurrency"].as_f64().unwrap();
        assert!(mean > 0.85 * c as f64, "c{c}: mean concurrency {mean}");
        assert!(text.contains(&format!("\n- serve-c{c}: ")), "{text}");
        assert!(text.contains(&format!("\n- batch-c{c}: ")), "{text}");
    }
    for file in [
        "llama-bench.md",
        "decode.md",
        "ttft.md",
        "tpot.md",
        "peak.md",
    ] {
        let kept = std::fs::read_to_string(results.path(file)).unwrap();
        assert!(text.contains(kept.trim_end()), "{file}");
    }
}

#[test]
fn sweep_without_a_run_long_enough_for_a_peak_leaves_the_peak_table_out() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "1"]);
    let results = Results::new("sweep-no-peak");
    let env = [("CONCURRENCY", "2"), ("OUTPUT", "8")];
    let out = recipe("sweep", &[&server.url], &results, &env);
    let (text, err) = (stdout(&out), String::from_utf8_lossy(&out.stderr));
    assert!(
        err.contains("no peak table: no vllm bench serve run lasted the 1 s"),
        "{err}"
    );
    assert!(!results.path("peak.md").exists());
    assert!(!text.contains("Peak output"), "{text}");
    // The verdicts go under the last table printed.
    let tpot = std::fs::read_to_string(results.path("tpot.md")).unwrap();
    assert!(tpot.contains("\nComparable:\n- batch-c2: "), "{tpot}");
}
