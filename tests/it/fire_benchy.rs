//! llama-benchy's batch mode through the real binaries against simserve: `arrivals --batch`
//! writes a warm-up batch and the depth, `--corpus` cuts prompts as llama-benchy does, and
//! fire sends a batch schedule to the chat API after llama-benchy's two warm-up requests and
//! its latency probes, each part with a flag that turns it off.

use crate::common;
use common::*;
use serde_json::Value;
use tokenizers::Tokenizer;

const TOKENIZER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/arrivals/tokenizer.json"
);

fn schedule(args: &[&str]) -> Vec<Value> {
    let out = run(&cmd("arrivals", args), b"");
    assert_ok(&out, "arrivals");
    records(&out.stdout)
}

/// `arrivals ARGS | fire --url URL FIRE` against a server logging its requests: fire's
/// records and the request bodies the server received, in order.
fn fire_logged(arrivals: &[&str], fire: &[&str], name: &str) -> (Vec<Value>, Vec<Value>) {
    let log = temp_path(name);
    let log_arg = log.to_string_lossy().to_string();
    let server = Server::start(&[
        "--ttft-ms",
        "5",
        "--itl-ms",
        "1",
        "--log-requests",
        &log_arg,
    ]);
    let fire_args = [&["--url", server.url.as_str(), "-q"][..], fire].concat();
    let outs = pipeline(&[cmd("arrivals", arrivals), cmd("fire", &fire_args)], None);
    assert_ok(&outs[0], "arrivals");
    assert_ok(&outs[1], "fire");
    server.stop();
    let logged = records(&std::fs::read(&log).expect("the request log"));
    let _ = std::fs::remove_file(&log);
    let bodies = logged.into_iter().map(|l| l["body"].clone()).collect();
    (records(&outs[1].stdout), bodies)
}

const SMALL_BATCHES: [&str; 8] = [
    "--batch",
    "2",
    "--runs",
    "1",
    "--input-tokens",
    "6",
    "--output-tokens",
    "2",
];

#[test]
fn a_batch_schedule_warms_up_measures_the_latency_and_goes_to_chat() {
    let sched = schedule(&SMALL_BATCHES);
    let s = of_type(&sched, "schedule")[0];
    assert_eq!(
        (s["warmup_batches"].as_u64(), s["requests"].as_u64()),
        (Some(1), Some(4))
    );
    assert_eq!(of_type(&sched, "header")[0]["params"]["depth"], 0);

    let (recs, bodies) = fire_logged(&SMALL_BATCHES, &[], "benchy-default.jsonl");
    let params = &recs[0]["params"];
    assert_eq!(params["api"], "chat", "{params}");
    assert_eq!(params["latency_mode"], "api");
    let latency = params["net_latency_ms"]
        .as_f64()
        .expect("a measured latency");
    assert!(latency > 0.0 && latency < 10_000.0, "{latency}");
    let counts = params["warmup_prompt_tokens"]
        .as_array()
        .expect("warm-up counts");
    let (u, c) = (counts[0].as_u64().unwrap(), counts[1].as_u64().unwrap());
    assert!(u > 0 && c > u, "the system probe adds its `.`: {counts:?}");
    assert!(
        params.get("adapt_tokens").is_none(),
        "no tokenizer, no adapt"
    );

    // The two warm-up requests first, one token each and not streamed, then the 4 requests.
    assert_eq!(bodies.len(), 6, "{bodies:?}");
    let warmup = "Warmup ".repeat(10);
    assert_eq!(
        bodies[0]["messages"],
        serde_json::json!([{"role": "user", "content": warmup}])
    );
    assert_eq!(
        bodies[1]["messages"],
        serde_json::json!([{"role": "system", "content": warmup}, {"role": "user", "content": "."}])
    );
    for b in &bodies[..2] {
        assert_eq!(b["max_tokens"], 1);
        assert!(b.get("stream").is_none(), "{b}");
    }
    for b in &bodies[2..] {
        assert_eq!(b["stream"], true);
        assert!(b["messages"].is_array(), "chat: {b}");
    }
    // The warm-up batch is sent and recorded like the others.
    let mut batches: Vec<u64> = of_type(&recs, "done")
        .iter()
        .map(|d| d["batch"].as_u64().unwrap())
        .collect();
    batches.sort();
    assert_eq!(batches, [0, 0, 1, 1]);
}

#[test]
fn each_part_has_a_flag_that_turns_it_off() {
    let arrivals = [&SMALL_BATCHES[..], &["--no-warmup"]].concat();
    let s = of_type(&schedule(&arrivals), "schedule")[0].clone();
    assert!(s.get("warmup_batches").is_none(), "{s}");
    let fire = [
        "--api",
        "completions",
        "--no-warmup",
        "--latency-mode",
        "none",
    ];
    let (recs, bodies) = fire_logged(&arrivals, &fire, "benchy-off.jsonl");
    let params = &recs[0]["params"];
    assert_eq!(params["api"], "completions");
    assert_eq!(params["net_latency_ms"], 0.0);
    assert_eq!(params["latency_mode"], "none");
    assert!(params.get("warmup_prompt_tokens").is_none(), "{params}");
    assert_eq!(bodies.len(), 2, "no warm-up requests: {bodies:?}");
    assert!(bodies.iter().all(|b| b["prompt"].is_string()), "{bodies:?}");
    assert_eq!(of_type(&recs, "done").len(), 2);
}

#[test]
fn other_schedules_are_sent_as_before() {
    let (recs, bodies) = fire_logged(
        &["--concurrency", "2", "-n", "2", "--input-tokens", "4"],
        &[],
        "benchy-closed.jsonl",
    );
    let params = &recs[0]["params"];
    assert_eq!(params["api"], "completions");
    for key in ["net_latency_ms", "latency_mode", "warmup_prompt_tokens"] {
        assert!(params.get(key).is_none(), "{key}: {params}");
    }
    assert_eq!(bodies.len(), 2);
}

#[test]
fn a_depth_is_a_system_message_of_exactly_that_many_tokens_with_a_tokenizer() {
    let tokenizer = Tokenizer::from_file(TOKENIZER).unwrap();
    let args = [
        "--batch",
        "2",
        "--runs",
        "1",
        "--pp",
        "30",
        "--tg",
        "2",
        "--depth",
        "40",
        "--tokenizer",
        TOKENIZER,
        "--no-warmup",
    ];
    let sched = schedule(&args);
    assert_eq!(of_type(&sched, "header")[0]["params"]["depth"], 40);
    for r in of_type(&sched, "request") {
        let system = r["system"].as_str().expect("a system message");
        assert_eq!(tokenizer.encode(system, false).unwrap().get_ids().len(), 40);
        assert_eq!(r["prompt_tokens"], 70, "{r}");
    }
    // fire sends it as the system message, and the schedule's tokenizer turns the adapt step
    // on: simserve counts words, fewer than the tokenizer's tokens, so it cuts nothing.
    let (recs, bodies) = fire_logged(&args, &[], "benchy-depth.jsonl");
    assert_eq!(recs[0]["params"]["adapt_tokens"], 0);
    // The run's salt goes first, before the context a prefix cache would keep.
    let salt = recs[0]["params"]["salt"].as_str().expect("a salt");
    let sent = &bodies[2..];
    for (b, r) in sent.iter().zip(of_type(&sched, "request")) {
        assert_eq!(b["messages"][0]["role"], "system");
        let context = r["system"].as_str().unwrap();
        assert_eq!(b["messages"][0]["content"], format!("{salt} {context}"));
        assert_eq!(b["messages"][1]["content"], r["prompt"]);
    }
    let (recs, _) = fire_logged(&args, &["--no-adapt-prompt"], "benchy-noadapt.jsonl");
    assert!(recs[0]["params"].get("adapt_tokens").is_none());
}

#[test]
fn a_tokenizer_fire_cannot_load_is_bad_input_naming_it() {
    let copy = temp_path("benchy-tokenizer.json");
    std::fs::copy(TOKENIZER, &copy).unwrap();
    let path = copy.to_string_lossy().to_string();
    let sched = run(
        &cmd(
            "arrivals",
            &[
                "--batch",
                "1",
                "--runs",
                "1",
                "--pp",
                "8",
                "--tokenizer",
                &path,
            ],
        ),
        b"",
    );
    assert_ok(&sched, "arrivals");
    std::fs::remove_file(&copy).unwrap();
    let server = Server::start(&[]);
    let out = run(&cmd("fire", &["--url", server.url.as_str()]), &sched.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("the schedule's tokenizer {path}")),
        "{stderr}"
    );
    assert!(stderr.contains("--no-adapt-prompt"), "{stderr}");
    let out = run(
        &cmd(
            "fire",
            &["--url", server.url.as_str(), "-q", "--no-adapt-prompt"],
        ),
        &sched.stdout,
    );
    assert_ok(&out, "fire --no-adapt-prompt");
}

#[test]
fn corpus_cuts_are_consecutive_text_and_the_same_for_a_seed() {
    let text: String = (0..400).map(|i| format!("word{i} and more. ")).collect();
    let corpus = temp_path("benchy-corpus.txt");
    std::fs::write(&corpus, &text).unwrap();
    let path = corpus.to_string_lossy().to_string();
    let cut = |seed: &str| {
        let recs = schedule(&[
            "--batch",
            "3",
            "--runs",
            "1",
            "--pp",
            "25",
            "--depth",
            "15",
            "--tokenizer",
            TOKENIZER,
            "--corpus",
            &path,
            "--no-salt",
            "--seed",
            seed,
        ]);
        assert_eq!(
            of_type(&recs, "header")[0]["params"]["corpus"],
            path.as_str()
        );
        of_type(&recs, "request")
            .iter()
            .map(|r| {
                let system = r["system"].as_str().unwrap().to_string();
                let prompt = r["prompt"].as_str().unwrap().to_string();
                (system, prompt)
            })
            .collect::<Vec<_>>()
    };
    let a = cut("3");
    assert_eq!(a.len(), 6);
    assert_eq!(a, cut("3"));
    assert_ne!(a, cut("4"));
    for (system, prompt) in &a {
        // A byte-level tokenizer decodes a slice of an ASCII text's tokens to that very text.
        let whole = format!("{system}{prompt}");
        assert!(text.contains(&whole), "{whole:?}");
        assert!(!system.is_empty() && !prompt.is_empty());
    }
    let _ = std::fs::remove_file(&corpus);
}

#[test]
fn on_completions_the_warm_up_and_the_generation_probes_send_prompts() {
    let fire = ["--api", "completions", "--latency-mode", "generation"];
    let (recs, bodies) = fire_logged(&SMALL_BATCHES, &fire, "benchy-completions.jsonl");
    let params = &recs[0]["params"];
    assert_eq!(params["api"], "completions");
    assert_eq!(params["latency_mode"], "generation");
    assert!(params["net_latency_ms"].as_f64().unwrap() > 0.0, "{params}");
    // Two warm-up prompts, three one-token streamed probes, then the 4 requests.
    assert_eq!(bodies.len(), 9, "{bodies:?}");
    let warmup = "Warmup ".repeat(10);
    assert_eq!(bodies[0]["prompt"], warmup.as_str());
    assert_eq!(bodies[1]["prompt"], format!("{warmup}\n\n."));
    for b in &bodies[2..5] {
        assert_eq!(
            (&b["prompt"], &b["max_tokens"], &b["stream"]),
            (&"hello".into(), &1.into(), &true.into())
        );
    }
    assert!(bodies[5..].iter().all(|b| b["prompt"].is_string()));
}

#[test]
fn a_batch_of_token_ids_stays_on_completions() {
    let args = [&SMALL_BATCHES[..], &["--token-ids", "1000..2000"]].concat();
    let (recs, bodies) = fire_logged(&args, &["--no-warmup"], "benchy-ids.jsonl");
    assert_eq!(recs[0]["params"]["api"], "completions");
    assert_eq!(bodies.len(), 4);
    assert!(bodies.iter().all(|b| b["prompt"].is_array()), "{bodies:?}");
}

/// The whole pipe, as a user runs it: the warm-up batch is sent (and in the events) but no
/// figure counts it; reduce subtracts the latency fire measured; `--phase all` counts it again.
#[test]
fn reduce_leaves_the_warm_up_batch_out_and_subtracts_fires_latency() {
    let server = Server::start(&["--ttft-ms", "20", "--itl-ms", "2"]);
    let sched = [
        "--batch",
        "2",
        "--runs",
        "2",
        "--input-tokens",
        "8",
        "--output-tokens",
        "4",
    ];
    let summary = |reduce: &[&str]| {
        let outs = pipeline(
            &[
                cmd("arrivals", &sched),
                cmd("fire", &["--url", server.url.as_str(), "-q"]),
                cmd("reduce", reduce),
            ],
            None,
        );
        for (o, name) in outs.iter().zip(["arrivals", "fire", "reduce"]) {
            assert_ok(o, name);
        }
        of_type(&records(&outs[2].stdout), "summary")[0].clone()
    };
    let s = summary(&[]);
    let b = &s["llama_benchy"];
    assert_eq!(b["batches"], 2, "{b}");
    assert_eq!(s["requests_ok"], 4, "the measured batches only: {s}");
    let latency = b["net_latency_ms"].as_f64().expect("fire's latency");
    assert!(
        latency > 0.0,
        "fire measured a latency and reduce took it: {b}"
    );
    let (ttfr, est) = (
        b["ttfr_ms"]["mean"].as_f64(),
        b["est_ppt_ms"]["mean"].as_f64(),
    );
    let (ttfr, est) = (ttfr.expect("ttfr"), est.expect("est_ppt"));
    assert!(
        (ttfr - latency - est).abs() < 1e-6,
        "est_ppt = TTFR − latency: {b}"
    );
    assert!(
        ttfr >= 15.0,
        "the role chunk waits for the 20 ms prefill: {b}"
    );

    let all = summary(&["--phase", "all"]);
    assert_eq!(all["llama_benchy"]["batches"], 3, "{all}");
    assert_eq!(all["requests_ok"], 6, "{all}");
    server.stop();
}

/// The adapt step against a server that counts with the schedule's tokenizer plus a chat
/// template: fire finds the template's tokens and cuts them, so that the server sees the
/// prompt length asked for, as llama-benchy's adapt step means; against a server that counts
/// fewer tokens than the tokenizer it cuts nothing and says so.
#[test]
fn the_adapt_step_cuts_the_templates_tokens_and_warns_when_it_cannot() {
    let sched = [
        "--batch",
        "2",
        "--runs",
        "1",
        "--pp",
        "40",
        "--tg",
        "2",
        "--tokenizer",
        TOKENIZER,
    ];
    let fire_through = |server: &Server| {
        let outs = pipeline(
            &[
                cmd("arrivals", &sched),
                cmd("fire", &["--url", server.url.as_str(), "-q"]),
            ],
            None,
        );
        assert_ok(&outs[0], "arrivals");
        assert_ok(&outs[1], "fire");
        (
            records(&outs[1].stdout),
            String::from_utf8_lossy(&outs[1].stderr).into_owned(),
        )
    };
    let counting = Server::start(&[
        "--ttft-ms",
        "5",
        "--itl-ms",
        "1",
        "--tokenizer",
        TOKENIZER,
        "--template-tokens",
        "5",
    ]);
    let (recs, stderr) = fire_through(&counting);
    assert_eq!(recs[0]["params"]["adapt_tokens"], 5, "{}", recs[0]);
    assert!(!stderr.contains("warning"), "{stderr}");
    let done = of_type(&recs, "done");
    assert_eq!(done.len(), 4, "the warm-up batch and the measured one");
    for d in done {
        // The salt's tokens ride on top, as they would in llama-benchy's --no-cache suffix.
        let seen = d["prompt_tokens"].as_u64().expect("usage");
        assert!(
            (40..=48).contains(&seen),
            "the server saw {seen} tokens: {d}"
        );
    }
    counting.stop();

    let words = Server::start(&["--ttft-ms", "5", "--itl-ms", "1"]);
    let (recs, stderr) = fire_through(&words);
    assert_eq!(recs[0]["params"]["adapt_tokens"], 0);
    assert!(
        stderr.contains("warning") && stderr.contains("tokens fewer than the schedule's tokenizer"),
        "{stderr}"
    );
    words.stop();
}
