//! `arrivals --dataset`: prompts taken from the fixture files, through the real binary and, for
//! ShareGPT, on through `fire` to the simulated server by a real pipe.

use crate::common;
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;

const SHAREGPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/arrivals/sharegpt.json"
);
const JSONL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/arrivals/prompts.jsonl"
);

/// Tokens by the approximation arrivals uses without a tokenizer: a quarter of the characters.
fn approx(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

fn arrivals(args: &[&str]) -> std::process::Output {
    run(&cmd("arrivals", args), b"")
}

/// The fixture's first human messages, each with its answer.
fn sharegpt_pairs() -> BTreeMap<String, String> {
    let data: Value = serde_json::from_str(&std::fs::read_to_string(SHAREGPT).unwrap()).unwrap();
    data.as_array()
        .unwrap()
        .iter()
        .filter_map(|e| {
            let c = e["conversations"].as_array()?;
            Some((
                c.first()?["value"].as_str()?.into(),
                c.get(1)?["value"].as_str()?.into(),
            ))
        })
        .collect()
}

#[test]
fn sharegpt_prompts_are_the_files_first_turns_with_their_answer_lengths() {
    let dataset = format!("sharegpt:{SHAREGPT}");
    let args = [
        "--rate",
        "50",
        "-n",
        "6",
        "--seed",
        "3",
        "--dataset",
        &dataset,
    ];
    let out = arrivals(&args);
    assert_ok(&out, "arrivals");
    assert_eq!(out.stdout, arrivals(&args).stdout, "same seed, same bytes");
    let other = arrivals(&[
        "--rate",
        "50",
        "-n",
        "6",
        "--seed",
        "4",
        "--dataset",
        &dataset,
    ]);
    assert_ne!(out.stdout, other.stdout);

    let recs = records(&out.stdout);
    let params = &recs[0]["params"];
    assert_eq!(params["dataset"], "sharegpt");
    assert_eq!(params["dataset_path"], SHAREGPT);
    assert_eq!(params["exact_lengths"], false);
    let pairs = sharegpt_pairs();
    let requests = of_type(&recs, "request");
    assert_eq!(requests.len(), 6);
    for r in &requests {
        let prompt = r["prompt"].as_str().unwrap();
        let answer = pairs
            .get(prompt)
            .unwrap_or_else(|| panic!("{prompt:?} not a first turn"));
        // The salt's 4 tokens are counted in the first prompt's length.
        assert_eq!(r["prompt_tokens"], approx(prompt) + 4, "{r}");
        assert_eq!(r["max_tokens"], approx(answer), "{r}");
        assert!(approx(prompt) >= 4 && approx(answer) >= 4);
    }

    // And on through fire: every request is sent and answered.
    let server = Server::start(&["--ttft-ms", "1", "--itl-ms", "1"]);
    let outs = pipeline(
        &[
            cmd("arrivals", &args),
            cmd("fire", &["--url", server.url.as_str()]),
        ],
        None,
    );
    assert_ok(&outs[0], "arrivals");
    assert_ok(&outs[1], "fire");
    let events = records(&outs[1].stdout);
    let done = of_type(&events, "done");
    assert_eq!(done.len(), 6);
    assert!(done.iter().all(|d| d["ok"] == true), "{done:?}");
}

#[test]
fn sharegpt_fixed_output_and_a_short_file() {
    let dataset = format!("sharegpt:{SHAREGPT}");
    let out = arrivals(&["-n", "3", "--output-tokens", "7", "--dataset", &dataset]);
    assert_ok(&out, "arrivals");
    let recs = records(&out.stdout);
    assert!(of_type(&recs, "request")
        .iter()
        .all(|r| r["max_tokens"] == 7));
    assert_eq!(recs[0]["params"]["output_tokens"], 7);

    let short = arrivals(&["-n", "19", "--dataset", &dataset]);
    assert_eq!(short.status.code(), Some(2));
    let err = String::from_utf8_lossy(&short.stderr);
    assert!(err.contains("18 of its 20 conversations"), "{err}");
    assert!(
        short.stdout.is_empty(),
        "a short file fails before any output"
    );
}

#[test]
fn jsonl_prompts_come_in_order_and_round_again() {
    let dataset = format!("jsonl:{JSONL}");
    let out = arrivals(&[
        "--concurrency",
        "2",
        "-n",
        "8",
        "--no-salt",
        "--dataset",
        &dataset,
    ]);
    assert_ok(&out, "arrivals");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("starting again from the first"), "{err}");
    let recs = records(&out.stdout);
    let got: Vec<(String, u64, u64)> = of_type(&recs, "request")
        .iter()
        .map(|r| {
            let p = r["prompt"].as_str().unwrap().to_string();
            (
                p,
                r["max_tokens"].as_u64().unwrap(),
                r["prompt_tokens"].as_u64().unwrap(),
            )
        })
        .collect();
    let lines: Vec<Value> = std::fs::read_to_string(JSONL)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got.len(), 8);
    for (i, (prompt, max_tokens, prompt_tokens)) in got.iter().enumerate() {
        let line = &lines[i % lines.len()];
        assert_eq!(prompt, line["prompt"].as_str().unwrap());
        let own = line["output_tokens"]
            .as_u64()
            .or(line["max_tokens"].as_u64());
        assert_eq!(*max_tokens, own.unwrap_or(128), "{line}");
        assert_eq!(*prompt_tokens, approx(prompt));
    }
}

#[test]
fn bad_dataset_input_exits_2_naming_the_file() {
    let path = temp_path("bad.jsonl");
    std::fs::write(&path, "{\"prompt\": \"fine\"}\n{\"prompt\": [1]}\n").unwrap();
    let out = arrivals(&["-n", "3", "--dataset", &format!("jsonl:{}", path.display())]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.jsonl: line 2: field \"prompt\": expected a string"),
        "{err}"
    );
    std::fs::remove_file(&path).unwrap();

    let missing = arrivals(&["--dataset", "sharegpt:/nonexistent/sharegpt.json"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/sharegpt.json"));
}
