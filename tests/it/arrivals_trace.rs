//! `arrivals --trace`: the real binary replays the crate's trace fixtures, and the requests it
//! writes carry each row's offset and lengths.

use crate::common;

use common::*;

const MOONCAKE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/arrivals/mooncake-10.jsonl"
);
const BURSTGPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/arrivals/burstgpt-10.csv"
);

/// (offset_ns, prompt_tokens, max_tokens) of every request `arrivals args` writes.
fn requests(args: &[&str]) -> (serde_json::Value, Vec<(u64, u64, u64)>) {
    let out = run(&cmd("arrivals", args), b"");
    assert_ok(&out, "arrivals");
    let recs = records(&out.stdout);
    let rows = of_type(&recs, "request")
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
            (n("offset_ns"), n("prompt_tokens"), n("max_tokens"))
        })
        .collect();
    (recs[0]["params"].clone(), rows)
}

#[test]
fn a_mooncake_trace_replays_every_row_at_its_scaled_offset() {
    let (params, got) = requests(&["--trace", MOONCAKE, "--time-scale", "0.5"]);
    let ms = 1_000_000 / 2;
    let want: Vec<(u64, u64, u64)> = [
        (27482, 6955, 52),
        (30535, 6472, 26),
        (30535, 512, 8),
        (31000, 1024, 128),
        (32750, 300, 1),
        (33000, 8192, 400),
        (35125, 77, 12),
        (36000, 2048, 64),
        (39999, 15, 3),
        (42482, 4096, 256),
    ]
    .iter()
    .map(|&(t, i, o)| ((t - 27482) * ms, i, o))
    .collect();
    assert_eq!(got, want);
    assert_eq!(params["trace_format"], "mooncake");
    assert_eq!(params["time_scale"], 0.5);
    assert_eq!(params["trace_time_unit"], "ms");
}

#[test]
fn a_burstgpt_trace_is_cut_by_num_prompts_and_duration() {
    let s = 1_000_000_000;
    let (_, got) = requests(&["--trace", BURSTGPT, "-n", "3"]);
    assert_eq!(got, [(0, 472, 18), (40 * s, 1087, 227), (113 * s, 417, 1)]);
    let (_, got) = requests(&["--trace", BURSTGPT, "--duration", "115s"]);
    // Rows at 0, 40, 113 and 113 s; the one at 115 s is at the cut, so not sent.
    assert_eq!(got.len(), 4, "{got:?}");
    let (params, got) = requests(&["--trace", BURSTGPT, "--trace-skip-failed"]);
    assert_eq!(got.len(), 8);
    assert!(got.iter().all(|&(_, _, out)| out > 1));
    assert_eq!(params["trace_skip_failed"], true);
}

#[test]
fn a_bad_trace_is_bad_input_naming_file_line_and_field() {
    let out = run(
        &cmd(
            "arrivals",
            &["--trace", BURSTGPT, "--trace-columns", "output=Answer"],
        ),
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("burstgpt-10.csv: line 1: field \"Answer\": no such column"),
        "{err}"
    );
    let out = run(&cmd("arrivals", &["--trace", "/nonexistent.jsonl"]), b"");
    assert_eq!(out.status.code(), Some(2));
}
