//! recipes/capacity.sh: how many users a shape serves within an SLO, one sentence per workload,
//! and matrix.sh's capacity column, against an engine whose capacity is known: with `simserve
//! --decode-step-ms 10+5` a decoding step of b sequences takes 10 + 5·b ms, so TPOT p50 ≤ 32 ms
//! holds up to 4 users (30 ms) and not at 5 (35 ms).

use super::*;

const ENGINE: [&str; 4] = ["--profile", "small-gpu", "--decode-step-ms", "10+5"];

#[test]
fn capacity_finds_the_users_a_shape_serves_and_says_it_in_a_sentence() {
    let server = Server::start(&ENGINE);
    let results = Results::new("capacity");
    let out = recipe(
        "capacity",
        &[&server.url],
        &results,
        &[("SLO", "tpot.p50<=32ms"), ("SHAPES", "chat office")],
    );
    let text = stdout(&out);
    assert!(
        text.starts_with("Capacity within TPOT p50 ≤ 32ms:"),
        "{text}"
    );
    assert!(
        text.contains("chat: serves 4 concurrent users (bracket 4–5, "),
        "{text}"
    );
    // The open loop's decodes rarely overlap at these rates: every rate meets the SLO.
    assert!(
        text.contains("office: sustains at least 8 requests/s (the top of the range, "),
        "{text}"
    );
    assert_eq!(results.files("summaries"), ["chat.ndjson", "office.ndjson"]);
    for f in ["capacity.md", "capacity.svg"] {
        assert!(results.path(f).exists(), "no {f}");
    }
    let svg = std::fs::read_to_string(results.path("capacity.svg")).unwrap();
    assert!(svg.contains("capacity 4"), "the chart marks the capacity");
    // Each point's events are kept, by load.
    let runs = results.files("runs");
    assert!(runs.contains(&"chat-c4.ndjson".to_string()), "{runs:?}");
    assert!(runs.contains(&"office-2.ndjson".to_string()), "{runs:?}");
}

#[test]
fn matrix_with_capacity_reports_the_users_each_shape_serves() {
    let server = Server::start(&ENGINE);
    let with = Results::new("matrix-capacity");
    recipe(
        "matrix",
        &[&server.url, "m1", "8x sim"],
        &with,
        &[
            ("CAPACITY", "tpot.p50<=32ms"),
            ("PROFILES", "latency-1024x256-c1"),
        ],
    );
    let without = Results::new("matrix-no-capacity");
    recipe(
        "matrix",
        &[&server.url, "m2", "16x sim"],
        &without,
        &[("PROFILES", "latency-1024x256-c1")],
    );
    let report = Results::new("matrix-capacity-report");
    std::fs::create_dir_all(&report.0).unwrap();
    let out = recipe_command(
        "matrix",
        &[
            "--report",
            with.0.to_str().unwrap(),
            without.0.to_str().unwrap(),
        ],
        &report,
        &[("REPORT", report.path("report.md").to_str().unwrap())],
    )
    .output()
    .unwrap();
    // Exit 1: the folders lack two of the three profiles.
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    let rows = markdown_rows(&text[text.find("| Model").expect("the side-by-side table")..]);
    let col = rows[0]
        .iter()
        .position(|h| h == "Capacity [users]")
        .expect("a capacity column");
    assert_eq!(rows[1][0], "m1");
    assert_eq!(rows[1][col], "4 (4–5)", "{text}");
    assert_eq!(rows[2][col], "-", "{text}");
}
