//! `arrivals --tokenizer`: every prompt of the real binary's schedule has exactly its length
//! under the checked-in test tokenizer, salt included, and a bad file is a clear bad input.

use crate::common;
use common::*;
use tokenizers::Tokenizer;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/arrivals/tokenizer.json"
);

fn tokens(tokenizer: &Tokenizer, text: &str) -> u64 {
    tokenizer.encode(text, false).unwrap().get_ids().len() as u64
}

fn schedule(args: &[&str]) -> Vec<serde_json::Value> {
    let out = run(&cmd("arrivals", args), b"");
    assert_ok(&out, "arrivals");
    records(&out.stdout)
}

#[test]
fn every_prompt_and_its_salt_have_the_asked_length() {
    let tokenizer = Tokenizer::from_file(FIXTURE).unwrap();
    let recs = schedule(&[
        "--tokenizer",
        FIXTURE,
        "--num-prompts",
        "20",
        "--input-tokens",
        "300",
        "--prefix-tokens",
        "40",
        "--prefix-groups",
        "2",
    ]);
    let header = of_type(&recs, "header")[0];
    assert_eq!(header["params"]["tokenizer"], FIXTURE);
    assert_eq!(header["params"]["exact_lengths"], true);
    let salt = &of_type(&recs, "schedule")[0]["salt"];
    assert_eq!(salt["tokens"], 4);
    let words: Vec<&str> = salt["words"]
        .as_array()
        .expect("the tokenizer's salt words")
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    // What `fire` sends: four salt words, a space, the prompt.
    let salt_text = words[..4].join(" ");
    let requests = of_type(&recs, "request");
    assert_eq!(requests.len(), 20);
    for r in requests {
        let prompt = r["prompt"].as_str().unwrap();
        assert_eq!(tokens(&tokenizer, prompt), 336, "{r}");
        // The intended length is that of the prompt as sent, salt included.
        assert_eq!(r["prompt_tokens"], 340);
        assert_eq!(tokens(&tokenizer, &format!("{salt_text} {prompt}")), 340);
    }
}

#[test]
fn drawn_lengths_are_exact_too() {
    let tokenizer = Tokenizer::from_file(FIXTURE).unwrap();
    let recs = schedule(&[
        "--tokenizer",
        FIXTURE,
        "--num-prompts",
        "30",
        "--input-tokens",
        "200",
        "--input-range",
        "0.9",
        "--no-salt",
    ]);
    let mut lengths = std::collections::BTreeSet::new();
    for r in of_type(&recs, "request") {
        let n = r["prompt_tokens"].as_u64().unwrap();
        assert_eq!(tokens(&tokenizer, r["prompt"].as_str().unwrap()), n, "{r}");
        lengths.insert(n);
    }
    assert!(lengths.len() > 10, "lengths were drawn: {lengths:?}");
}

#[test]
fn a_missing_tokenizer_is_bad_input_naming_the_file() {
    let path = temp_path("no-such-tokenizer.json");
    let path = path.to_str().unwrap();
    let out = run(&cmd("arrivals", &["--tokenizer", path]), b"");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!("arrivals: {path}: ")),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn tokenizer_and_token_ids_conflict() {
    let out = run(
        &cmd("arrivals", &["--tokenizer", FIXTURE, "--token-ids", "1..9"]),
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
}
