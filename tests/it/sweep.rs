//! `sweep` through the real binaries against simserve engines whose capacity is known
//! analytically: `--find` returns what an exhaustive `--scan` returns, `sweep | table` shows one
//! row per point, and a scan stops at the saturation knee.

use crate::common;
use common::*;

/// The pipe a point runs: a closed loop of `{c}` users, two full waves of requests (so every
/// step of a wave decodes `{c}` sequences), short prompts and `output_tokens`-token answers.
fn pipe_of(server: &Server, output_tokens: u32) -> String {
    format!(
        "{} --concurrency {{c}} -n $(({{c}} * 2)) --input-tokens 16 --output-tokens {output_tokens} | {} --url {}",
        bin("arrivals"),
        bin("fire"),
        server.url
    )
}

fn pipe(server: &Server) -> String {
    pipe_of(server, 6)
}

/// Runs `sweep` with `args` and returns its output, its stderr and its sweep record.
fn sweep(args: &[&str]) -> (std::process::Output, serde_json::Value) {
    let out = run(&cmd("sweep", args), b"");
    let recs = records(&out.stdout);
    let last = recs.last().cloned().unwrap_or_default();
    assert_eq!(last["type"], "sweep", "the sweep record comes last: {last}");
    (out, last)
}

fn values_of(record: &serde_json::Value) -> Vec<f64> {
    record["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["value"].as_f64().unwrap())
        .collect()
}

/// small-gpu with a decode step of 2 + 8·batch ms: a closed loop of c users has a TPOT of about
/// 2 + 8c ms, so `tpot.p50<=37ms` holds up to c = 4 (34 ms) and not at 5 (42 ms).
///
/// The bound sits between the two, away from both. A wave's requests reach the engine over a
/// millisecond or so; those that miss the first step start a step later and finish in a step
/// of fewer sequences, so their last gap is short and their TPOT below 2 + 8c. With six tokens
/// (five gaps) c = 5 came out at 39.8 ms against a bound of 40. Answers of 16 tokens dilute the
/// short gap to a fifteenth: at c = 5 a wave split 2 + 2 + 1 gives its last request 38.8 ms,
/// the others 40.9 or more. A busy machine makes a token late but not the engine's steps, which
/// run on the model's own clock, so it moves a TPOT of 15 gaps by a fifteenth of its lateness.
#[test]
fn find_returns_the_capacity_an_exhaustive_scan_returns() {
    let server = Server::start(&["--profile", "small-gpu", "--decode-step-ms", "2+8"]);
    let command = pipe_of(&server, 16);
    let slo = "tpot.p50<=37ms";
    let (out, found) = sweep(&["--find", "c=1..16", "--slo", slo, "--", &command]);
    assert_ok(&out, "sweep --find");
    let (out, scanned) = sweep(&["--scan", "c=1..8", "--slo", slo, "--", &command]);
    assert_ok(&out, "sweep --scan");
    for record in [&found, &scanned] {
        assert_eq!(record["capacity"], 4.0, "{record}");
        assert_eq!(record["bracket"]["last_pass"], 4.0);
        assert_eq!(record["bracket"]["first_fail"], 5.0);
        assert_eq!(record["ended"], "done");
        assert_eq!(record["sure"], true, "{record}");
    }
    assert_eq!(
        values_of(&scanned),
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    );
    // Doubling to the range's geometric middle (4), the high end, then bisection of 4..16.
    assert_eq!(
        values_of(&found),
        [1.0, 2.0, 4.0, 16.0, 10.0, 7.0, 5.0],
        "{found}"
    );
    let point_runs = |record: &serde_json::Value| -> Vec<u64> {
        let points = record["points"].as_array().unwrap();
        points.iter().map(|p| p["runs"].as_u64().unwrap()).collect()
    };
    let runs: u64 = point_runs(&found).iter().sum();
    assert_eq!(found["runs"], runs, "every run belongs to a point");
    for p in found["points"].as_array().unwrap() {
        let tpot = p["slo"][0]["value"].as_f64().unwrap();
        let c = p["value"].as_f64().unwrap();
        let want = 2.0 + 8.0 * c;
        assert!(
            (tpot - want).abs() <= 0.15 * want,
            "c={c}: TPOT p50 {tpot} ms, model {want} ms"
        );
        let [lo, hi] = [
            p["slo"][0]["ci95"][0].as_f64().unwrap(),
            p["slo"][0]["ci95"][1].as_f64().unwrap(),
        ];
        assert!(
            lo <= tpot && tpot <= hi,
            "c={c}: {tpot} outside [{lo}, {hi}]"
        );
        let status = if c <= 4.0 { "pass" } else { "fail" };
        assert_eq!(p["status"], status, "{p}");
        // A point run once was decided by its interval: it did not straddle the bound.
        if p["runs"] == 1 {
            assert!(p["sure"] == true && !p["slo"][0]["met"].is_null(), "{p}");
        }
    }
    // Every point's header and summary came before the record: one summary per run, and a
    // group summary for each point run more than once (a busy machine may widen an interval).
    let recs = records(&out.stdout);
    let scan_runs = point_runs(&scanned);
    let groups = scan_runs.iter().filter(|&&r| r > 1).count();
    assert_eq!(
        of_type(&recs, "summary").len(),
        scan_runs.iter().sum::<u64>() as usize + groups,
        "{scanned}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said = format!(
        "sweep: capacity c=4 (bracket 4–5, {} runs)",
        scanned["runs"]
    );
    assert!(stderr.contains(&said), "{stderr}");
}

#[test]
fn sweep_into_table_shows_one_row_per_point() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "2"]);
    let command = pipe(&server);
    let stages = [
        cmd("sweep", &["--scan", "c=1,2,3", "--", &command]),
        cmd("table", &["--format", "csv"]),
    ];
    let outs = pipeline(&stages, Some(b""));
    assert_ok(&outs[0], "sweep");
    assert_ok(&outs[1], "table");
    let csv = String::from_utf8_lossy(&outs[1].stdout);
    assert_eq!(
        csv.lines().count(),
        1 + 3,
        "a heading and one row per point:\n{csv}"
    );
}

/// Two sequences at a time at 10 ms a step: output tokens/s doubles from one user to two and
/// stays flat past two, while the median E2EL doubles with each doubling of users. Answers of
/// 60 tokens keep the gap between a wave's end and the next wave's prefill (which costs two
/// users more than four, whose next requests already wait) to a few per cent, even on a busy
/// machine.
#[test]
fn a_scan_stops_at_the_saturation_knee() {
    let server = Server::start(&[
        "--profile",
        "small-gpu",
        "--decode-step-ms",
        "10+0",
        "--max-num-seqs",
        "2",
    ]);
    let command = pipe_of(&server, 60);
    let (out, record) = sweep(&["--scan", "c=1..64x2", "--stop-at-knee", "--", &command]);
    assert_ok(&out, "sweep --stop-at-knee");
    assert_eq!(record["ended"], "knee", "{record}");
    assert_eq!(
        values_of(&record),
        [1.0, 2.0, 4.0],
        "it stops once the knee is seen"
    );
    let knee = &record["knee"];
    assert_eq!(
        (knee["value"].as_f64(), knee["next"].as_f64()),
        (Some(2.0), Some(4.0)),
        "{knee}"
    );
    assert!(knee["gain_per_doubling"].as_f64().unwrap() < 0.10, "{knee}");
    assert!(
        knee["latency_growth_per_doubling"].as_f64().unwrap() > 0.5,
        "{knee}"
    );
    assert_eq!(
        record["capacity"],
        serde_json::Value::Null,
        "no SLO, no capacity"
    );
    assert!(record["points"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["status"] == "measured"));
}

/// The pipe of the pass-rule tests: four users prefilling 256-token prompts one after another,
/// so TTFTs run from about 42 ms (the first) to about 149 ms (the rest): the median of one run's
/// eight requests is 149 ms, but a bootstrap of so few draws the fast ones often enough that its
/// interval straddles 100 ms.
fn prefill_queue(server: &Server) -> String {
    format!(
        "{} --concurrency {{c}} -n $(({{c}} * 2)) --input-tokens 256 --output-tokens 4 | {} --url {}",
        bin("arrivals"),
        bin("fire"),
        server.url
    )
}

#[test]
fn an_unsure_point_is_repeated_and_pooled_or_decided_by_its_estimate() {
    let server = Server::start(&["--profile", "small-gpu"]);
    let command = prefill_queue(&server);
    let slo = "ttft.p50<=100ms";
    // One run allowed: the straddling interval cannot be narrowed, so the estimate decides.
    let (out, once) = sweep(&[
        "--scan", "c=4", "--slo", slo, "--repeat", "1", "--", &command,
    ]);
    assert_ok(&out, "sweep --repeat 1");
    let point = &once["points"][0];
    assert_eq!(
        (point["runs"].as_u64(), point["status"].as_str()),
        (Some(1), Some("fail")),
        "{point}"
    );
    assert_eq!(point["sure"], false, "{point}");
    assert!(point["slo"][0]["met"].is_null(), "{point}");
    assert!(
        point["reason"]
            .as_str()
            .unwrap()
            .ends_with("the estimate decides"),
        "{point}"
    );
    assert_eq!(
        once["sure"], false,
        "the record says its answer rests on an estimate"
    );
    // Three allowed: the point is run again and its runs pooled until the interval clears 100.
    let (out, pooled) = sweep(&["--scan", "c=4", "--slo", slo, "--", &command]);
    assert_ok(&out, "sweep --repeat 3");
    let point = &pooled["points"][0];
    let runs = point["runs"].as_u64().unwrap();
    assert!(runs >= 2, "an unsure point is repeated: {point}");
    assert_eq!(point["comparable_runs"], runs);
    assert_eq!(point["status"], "fail", "{point}");
    let recs = records(&out.stdout);
    let summaries = of_type(&recs, "summary");
    assert_eq!(
        summaries.len() as u64,
        runs + 1,
        "each run's summary, then the group's"
    );
    let group = summaries.last().unwrap();
    assert_eq!(group["runs"].as_array().map(Vec::len), Some(runs as usize));
    assert_eq!(
        point["slo"][0]["value"], group["ttft_p50_ms"],
        "judged on the pooled runs"
    );
}

#[test]
fn runs_that_are_not_comparable_are_reported_not_judged() {
    // Half the requests fail, so no run's verdict says comparable.
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "2", "--fault", "http=500:0.5"]);
    let command = format!(
        "{} --concurrency {{c}} -n 8 --output-tokens 4 | {} --url {}",
        bin("arrivals"),
        bin("fire"),
        server.url
    );
    let args = [
        "--find",
        "c=1..8",
        "--slo",
        "ttft.p99<=1s",
        "--repeat",
        "2",
        "--",
        &command,
    ];
    let (out, record) = sweep(&args);
    assert_ok(&out, "sweep over failing requests");
    let point = &record["points"][0];
    assert_eq!(
        (point["runs"].as_u64(), point["comparable_runs"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(point["status"], "unusable");
    assert!(
        point["reason"]
            .as_str()
            .unwrap()
            .starts_with("no comparable run: "),
        "{point}"
    );
    assert_eq!(
        point["run_ids"].as_array().unwrap().len(),
        2,
        "both runs are written"
    );
    assert_eq!(record["capacity"], serde_json::Value::Null);
    assert_eq!(
        record["bracket"]["first_fail"], 1.0,
        "the search goes no higher: {record}"
    );
    assert_eq!(of_type(&records(&out.stdout), "summary").len(), 2);
}

/// The library with no command line: a `Config` built in code, records written to memory.
#[test]
fn the_library_runs_a_config_built_in_code() {
    let server = Server::start(&["--ttft-ms", "5", "--itl-ms", "2"]);
    let saved = temp_path("sweep-library.ndjson");
    let argv = [
        cmd(
            "arrivals",
            &["--concurrency", "2", "-n", "4", "--output-tokens", "4"],
        ),
        cmd(
            "fire",
            &["--url", &server.url, "--save", saved.to_str().unwrap()],
        ),
    ];
    assert_ok(&pipeline(&argv, Some(b""))[1], "the saved run");
    let config = tokenpipe_sweep::Config {
        variable: "c".into(),
        domain: tokenpipe_sweep::Domain::Integer { step: 1 },
        plan: tokenpipe_sweep::Plan::Scan(vec![1.0, 2.0]),
        slo: vec![tokenpipe_sweep::parse_bound("ttft.p99<=1s").unwrap()],
        repeat: 1,
        between: None,
        warmup: false,
        max_runs: None,
        max_time: None,
        stop_at_knee: false,
        knee_gain: tokenpipe_sweep::DEFAULT_GAIN,
        command: format!("cat {}; : {{c}}", saved.display()),
        label: Some("8xH200".into()),
        meta: [("gpus".to_string(), "8".to_string())].into(),
        argv: vec!["sweep".into()],
    };
    let mut bytes = Vec::new();
    let mut progress = Vec::new();
    let sweep = {
        let mut out = tokenpipe_format::RecordWriter::new(&mut bytes);
        tokenpipe_sweep::run(&config, &mut out, &mut progress).unwrap()
    };
    assert_eq!((sweep.capacity, sweep.runs), (Some(2.0), 2));
    let recs = records(&bytes);
    let summaries = of_type(&recs, "summary");
    assert_eq!(summaries.len(), 2);
    // --label and --meta reach every point's summary, as reduce's own flags do.
    for s in summaries {
        assert_eq!(s["label"], "8xH200", "{s}");
        assert_eq!(s["meta"]["gpus"], "8", "{s}");
    }
    assert_eq!(recs.last().unwrap()["capacity"], 2.0);
    let progress = String::from_utf8(progress).unwrap();
    assert!(
        progress.contains("every value run meets the SLO, up to c=2 (2 runs)"),
        "{progress}"
    );
}
