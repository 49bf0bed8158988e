//! Reasoning and answer apart, and the prefix cache's hits, end to end: simserve's
//! `--reasoning-share` and `--prefix-cache on` through `arrivals | fire | reduce`, with values
//! known exactly (the reasoning tokens, the cached blocks) and timings from a constant-timing
//! server.

use crate::common;
use common::*;

fn num(v: &serde_json::Value, field: &str) -> f64 {
    v[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} missing in {v}"))
}

/// `arrivals ARGS | fire --url URL FIRE_ARGS`, then `reduce REDUCE_ARGS`: fire's records and
/// reduce's.
fn pipe(
    url: &str,
    arrivals: &[&str],
    fire: &[&str],
    reduce: &[&str],
) -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
    let mut fire_args = vec!["--url", url, "--quiet"];
    fire_args.extend_from_slice(fire);
    let outs = pipeline(&[cmd("arrivals", arrivals), cmd("fire", &fire_args)], None);
    assert_ok(&outs[1], "fire");
    let reduced = run(&cmd("reduce", reduce), &outs[1].stdout);
    assert_ok(&reduced, "reduce");
    (records(&outs[1].stdout), records(&reduced.stdout))
}

#[test]
fn a_quarter_reasoning_is_25_of_100_tokens_and_the_answer_starts_25_itls_later() {
    let server = Server::start(&[
        "--ttft-ms",
        "50",
        "--itl-ms",
        "4",
        "--reasoning-share",
        "0.25",
    ]);
    let arrivals = [
        "--concurrency",
        "2",
        "--num-prompts",
        "2",
        "--input-tokens",
        "16",
        "--output-tokens",
        "100",
    ];
    let (events, out) = pipe(
        &server.url,
        &arrivals,
        &["--api", "chat"],
        &["--per-request"],
    );
    let tokens = of_type(&events, "token");
    let reasoning = tokens.iter().filter(|t| t["reasoning"] == true).count();
    assert_eq!((tokens.len(), reasoning), (200, 50));
    for done in of_type(&events, "done") {
        assert_eq!(done["reasoning_tokens"], 25, "{done}");
        assert_eq!(done["answer_tokens"], 75, "{done}");
        assert!(done.get("cached_tokens").is_none(), "{done}");
    }
    let s = of_type(&out, "summary")[0];
    assert_eq!(
        (num(s, "reasoning_tokens"), num(s, "answer_tokens")),
        (50.0, 150.0)
    );
    // TTFT is the first token of either kind; the answer starts 25 ITLs (100 ms) later.
    let (ttft, ttfa) = (num(s, "ttft_mean_ms"), num(s, "ttfa_mean_ms"));
    assert!((45.0..90.0).contains(&ttft), "ttft {ttft}");
    let thinking = ttfa - ttft;
    assert!((90.0..115.0).contains(&thinking), "ttfa − ttft {thinking}");
    let duration = num(s, "reasoning_duration_mean_ms");
    assert!((90.0..115.0).contains(&duration), "{duration}");
    let tpot = num(s, "answer_tpot_mean_ms");
    assert!((3.0..6.0).contains(&tpot), "answer tpot {tpot}");
    assert_eq!(num(&s["samples"], "answer_itl"), 2.0 * 74.0);
    for r in of_type(&out, "result") {
        assert_eq!(r["reasoning_tokens"], 25, "{r}");
        let gap = num(r, "ttfa_ms") - num(r, "ttft_ms");
        assert!((90.0..115.0).contains(&gap), "{r}");
    }
    // The same without reasoning: none of these members.
    let plain = Server::start(&["--ttft-ms", "50", "--itl-ms", "4"]);
    let (events, out) = pipe(&plain.url, &arrivals, &["--api", "chat"], &[]);
    let text = serde_json::to_string(&out).unwrap();
    assert!(
        !text.contains("ttfa") && !text.contains("reasoning"),
        "{text}"
    );
    assert!(of_type(&events, "token")
        .iter()
        .all(|t| t.get("reasoning").is_none()));
}

#[test]
fn the_reasoning_member_vllm_0_10_and_llama_cpp_name_reads_the_same() {
    let server = Server::start(&[
        "--ttft-ms",
        "5",
        "--itl-ms",
        "1",
        "--reasoning-share",
        "0.5",
        "--reasoning-member",
        "reasoning",
    ]);
    let arrivals = [
        "--num-prompts",
        "1",
        "--input-tokens",
        "8",
        "--output-tokens",
        "10",
    ];
    let (events, _) = pipe(
        &server.url,
        &arrivals,
        &["--api", "chat", "--record-text"],
        &[],
    );
    let done = of_type(&events, "done")[0];
    assert_eq!(
        (
            done["reasoning_tokens"].clone(),
            done["answer_tokens"].clone()
        ),
        (5.into(), 5.into())
    );
    // The recorded text is the answer's, reasoning left out: tokens 6 to 10.
    assert_eq!(done["text"], " over the lazy dog. the");
}

#[test]
fn identical_prompts_hit_the_prefix_cache_and_distinct_ones_do_not() {
    let server = Server::start(&["--prefix-cache", "on"]);
    let ratio = |scenario: &str| {
        let arrivals = [
            "--scenario",
            scenario,
            "--concurrency",
            "1",
            "--num-prompts",
            "6",
            "--output-tokens",
            "4",
            "--seed",
            "3",
        ];
        let (events, out) = pipe(&server.url, &arrivals, &["--server-metrics"], &[]);
        let cached: Vec<u64> = of_type(&events, "done")
            .iter()
            .map(|d| d["cached_tokens"].as_u64().expect("cached_tokens"))
            .collect();
        let s = of_type(&out, "summary")[0].clone();
        (cached, s)
    };
    // A1: six identical 50-token prompts, one at a time. The first fills the cache; each later
    // one finds its three whole 16-token blocks there: 48 of 50 tokens.
    let (cached, a1) = ratio("A1");
    assert_eq!(cached, [0, 48, 48, 48, 48, 48]);
    assert_eq!(num(&a1, "cached_prompt_tokens"), 240.0);
    let prompt = num(&a1, "input_tokens");
    assert_eq!(num(&a1, "cache_hit_ratio"), 240.0 / prompt);
    assert!(num(&a1, "cache_hit_ratio") > 0.75, "{a1}");
    // The server's own counters say the same.
    assert_eq!(num(&a1, "server_prefix_cache_hits"), 240.0);
    assert_eq!(num(&a1, "server_prefix_cache_queries"), prompt);
    // B1: distinct prompts share no block.
    let (cached, b1) = ratio("B1");
    assert_eq!(cached, [0; 6]);
    assert_eq!(num(&b1, "cache_hit_ratio"), 0.0);
    assert_eq!(num(&b1, "server_prefix_cache_hit_ratio"), 0.0);
}
