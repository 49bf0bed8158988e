//! What the real-engine tests share (tests/it/real_*.rs, docs/real-engines.md): the server and
//! tokenizer the make target passes in, one run of the whole pipe with everything it recorded,
//! the prompts a server sees (chat template, multi-turn history) counted with the model's own
//! tokenizer, and a stream fetched with curl.

#![allow(dead_code)]

use super::*;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use tokenizers::Tokenizer;

/// What the make target passes in: the server's base URL (`…/v1`) and the tiny model's
/// tokenizer.
pub struct Real {
    pub url: String,
    pub tokenizer_path: String,
    pub tokenizer: Tokenizer,
}

impl Real {
    /// The server named by `url_var` and the model in `TOKENPIPE_TINY_DIR`; a panic that names
    /// `target`, the make target that sets them both, when they are missing.
    pub fn from_env(url_var: &str, target: &str) -> Real {
        let var = |name: &str| {
            std::env::var(name).unwrap_or_else(|_| {
                panic!(
                    "{name} is not set: run `make {target}`, which installs the engine, makes \
                     the tiny model, starts the server and sets it (docs/real-engines.md)"
                )
            })
        };
        let url = var(url_var);
        let dir = var("TOKENPIPE_TINY_DIR");
        let tokenizer_path = format!("{dir}/tokenizer.json");
        let tokenizer = Tokenizer::from_file(&tokenizer_path)
            .unwrap_or_else(|e| panic!("{tokenizer_path}: {e} (run scripts/real/tiny-model.sh)"));
        Real {
            url,
            tokenizer_path,
            tokenizer,
        }
    }

    /// Tokens of `text` as the server counts a prompt: special tokens written in the text (the
    /// chat template's) are one token each, and nothing is added.
    pub fn count(&self, text: &str) -> u64 {
        self.tokenizer
            .encode(text, false)
            .expect("encode")
            .get_ids()
            .len() as u64
    }

    /// The tokens the chat template adds around one user message: arrivals counts the message
    /// alone, the server the rendered conversation.
    pub fn chat_overhead(&self) -> u64 {
        self.count(&chatml(&[("user", "")]))
    }
}

/// The tiny model's ChatML template (scripts/real/tiny_model.py) applied to `messages`, with
/// the assistant's turn opened, as the engines render it.
pub fn chatml(messages: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (role, content) in messages {
        out.push_str(&format!("<|im_start|>{role}\n{content}<|im_end|>\n"));
    }
    out.push_str("<|im_start|>assistant\n");
    out
}

/// One run of `arrivals | fire [--server-metrics] --record-text --save EVENTS | reduce
/// --per-request | table`.
pub struct Run {
    pub requests: BTreeMap<u64, Value>,
    pub events: Vec<Value>,
    /// reduce's `result` records, one per request.
    pub results: Vec<Value>,
    pub summary: Value,
}

/// The series' name without its labels: `vllm:x_bucket{le="0.1",…}` → `vllm:x_bucket`.
pub fn series_name(series: &str) -> &str {
    series.split('{').next().unwrap()
}

/// The value of label `label` in a series, if it has one.
pub fn series_label<'a>(series: &'a str, label: &str) -> Option<&'a str> {
    let labels = series.split_once('{')?.1.trim_end_matches('}');
    let key = format!("{label}=\"");
    let at = labels.find(&key)? + key.len();
    Some(labels[at..].split('"').next().unwrap())
}

impl Run {
    pub fn dones(&self) -> Vec<&Value> {
        of_type(&self.events, "done")
    }

    /// The samples of fire's two `/metrics` scrapes, before and after the run.
    pub fn scrapes(&self) -> [&Map<String, Value>; 2] {
        let scrapes = of_type(&self.events, "server_metrics");
        assert_eq!(scrapes.len(), 2, "fire scraped /metrics before and after");
        [0, 1].map(|i| scrapes[i]["samples"].as_object().unwrap())
    }

    /// The change of a server metric between fire's two scrapes, summed over its series (vLLM
    /// labels each with its engine and model; llama-server's have no labels).
    pub fn server_delta(&self, name: &str) -> f64 {
        let [before, after] = self.scrapes();
        let sum = |s: &Map<String, Value>| -> Option<f64> {
            let values: Vec<f64> = s
                .iter()
                .filter(|(k, _)| series_name(k) == name)
                .map(|(_, v)| v.as_f64().unwrap())
                .collect();
            (!values.is_empty()).then(|| values.iter().sum())
        };
        let after = sum(after).unwrap_or_else(|| panic!("no {name} in the scrape after the run"));
        after - sum(before).unwrap_or(0.0)
    }

    /// fire's salt (the words it put before each session's first prompt), from its header.
    pub fn salt(&self) -> String {
        let header = &self.events[0];
        assert_eq!(header["type"], "header");
        header["params"]["salt"]
            .as_str()
            .unwrap_or_else(|| panic!("fire's salt in {header}"))
            .to_string()
    }

    /// Each turn's prompt as the server saw it: the earlier turns (the first with fire's salt)
    /// with the answers fire recorded, then the turn's own prompt (with no answer yet).
    pub fn history(&self, req: &Value) -> Vec<(String, Option<String>)> {
        let salt = self.salt();
        let session = &req["session"];
        let turn = req["turn"].as_u64().unwrap();
        let answers: BTreeMap<u64, String> = self
            .dones()
            .into_iter()
            .filter(|d| &d["session"] == session)
            .map(|d| {
                (
                    d["turn"].as_u64().unwrap(),
                    d["text"].as_str().unwrap().into(),
                )
            })
            .collect();
        let mut turns: Vec<&Value> = self
            .requests
            .values()
            .filter(|r| &r["session"] == session && r["turn"].as_u64().unwrap() <= turn)
            .collect();
        turns.sort_by_key(|r| r["turn"].as_u64());
        turns
            .iter()
            .map(|r| {
                let t = r["turn"].as_u64().unwrap();
                let prompt = r["prompt"].as_str().unwrap();
                let prompt = if t == 0 {
                    format!("{salt} {prompt}")
                } else {
                    prompt.to_string()
                };
                (prompt, (t < turn).then(|| answers[&t].clone()))
            })
            .collect()
    }

    /// The prompt tokens of a multi-turn chat request: its whole history in the template.
    pub fn chat_history_tokens(&self, real: &Real, req: &Value) -> u64 {
        let turns = self.history(req);
        let mut messages = vec![];
        for (prompt, answer) in &turns {
            messages.push(("user", prompt.as_str()));
            if let Some(answer) = answer {
                messages.push(("assistant", answer.as_str()));
            }
        }
        real.count(&chatml(&messages))
    }

    /// The prompt tokens of a multi-turn completions request: fire's completions history, each
    /// earlier prompt directly followed by its answer, a blank line after each turn.
    pub fn completions_history_tokens(&self, real: &Real, req: &Value) -> u64 {
        let joined: String = self
            .history(req)
            .iter()
            .map(|(prompt, answer)| match answer {
                Some(answer) => format!("{prompt}{answer}\n\n"),
                None => prompt.clone(),
            })
            .collect();
        real.count(&joined)
    }
}

/// How a test's pipe runs beyond its `arrivals` and `fire` arguments.
pub struct PipeOptions<'a> {
    /// reduce's label for the run.
    pub label: &'a str,
    /// arrivals' seed.
    pub seed: &'a str,
    /// Whether fire scrapes the server's `/metrics` before and after (`--server-metrics`).
    pub server_metrics: bool,
    /// The exit status fire must end with (0: some request succeeded, 1: none did).
    pub fire_status: i32,
}

/// Runs the pipe against `real` with `arrivals` and `fire` arguments added to the tests' own
/// (the model's tokenizer, seed 7; fire's URL, `/metrics` scrapes and saved events); reduce
/// labels the run `label`, and table must render it.
pub fn pipe(real: &Real, label: &str, arrivals: &[&str], fire: &[&str]) -> Run {
    let options = PipeOptions {
        label,
        seed: "7",
        server_metrics: true,
        fire_status: 0,
    };
    pipe_with(real, &options, arrivals, fire)
}

/// [`pipe`] with its options given.
pub fn pipe_with(real: &Real, options: &PipeOptions, arrivals: &[&str], fire: &[&str]) -> Run {
    let mut args = vec![
        "--tokenizer",
        real.tokenizer_path.as_str(),
        "--seed",
        options.seed,
    ];
    args.extend_from_slice(arrivals);
    let schedule = run(&cmd("arrivals", &args), b"");
    assert_ok(&schedule, "arrivals");
    let requests = records(&schedule.stdout)
        .into_iter()
        .filter(|r| r["type"] == "request")
        .map(|r| (r["id"].as_u64().unwrap(), r))
        .collect();

    let label = options.label;
    let saved = temp_path(&format!("real-{label}-{}.ndjson", fire.join("-")));
    let saved_str = saved.to_str().unwrap();
    let mut fire_args = vec!["--url", real.url.as_str()];
    if options.server_metrics {
        fire_args.push("--server-metrics");
    }
    fire_args.extend_from_slice(&["--record-text", "--quiet", "--save", saved_str]);
    fire_args.extend_from_slice(fire);
    let outs = pipeline(
        &[
            cmd("arrivals", &args),
            cmd("fire", &fire_args),
            cmd("reduce", &["--label", label, "--per-request"]),
        ],
        None,
    );
    assert_eq!(
        outs[1].status.code(),
        Some(options.fire_status),
        "fire: {}",
        String::from_utf8_lossy(&outs[1].stderr)
    );
    assert_ok(&outs[2], "reduce");
    let events = records(&std::fs::read(&saved).unwrap());
    let _ = std::fs::remove_file(&saved);
    let reduced = records(&outs[2].stdout);
    let summary = of_type(&reduced, "summary")[0].clone();
    let results = of_type(&reduced, "result").into_iter().cloned().collect();
    let table = run(&cmd("table", &[]), &outs[2].stdout);
    assert_ok(&table, "table");
    Run {
        requests,
        events,
        results,
        summary,
    }
}

/// arrivals' flags for the multi-turn tests: 4 sessions of 3 turns, 2 at a time.
pub fn multi_turn_args() -> [&'static str; 10] {
    [
        "--concurrency",
        "2",
        "-n",
        "4",
        "--turns",
        "3",
        "--input-tokens",
        "80",
        "--output-tokens",
        "24",
    ]
}

/// The `data:` chunks of one streamed answer, fetched with curl (no tokenpipe code involved).
pub fn raw_stream(url: &str, path: &str, body: &Value) -> Vec<Value> {
    let out = std::process::Command::new("curl")
        .args([
            "-sSfN",
            "--max-time",
            "60",
            "-H",
            "Content-Type: application/json",
        ])
        .args(["-d", &body.to_string(), &format!("{url}{path}")])
        .output()
        .expect("run curl (the real-engine tests need it)");
    assert_ok(&out, "curl");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("chunk {d:?}: {e}")))
        .collect()
}

/// A server a test starts itself, configured otherwise than the one its make target runs (a
/// thinking template, a reasoning parser), on a free port: stopped with its whole process
/// group when dropped, since an engine may run its work in child processes (vLLM's engine core).
pub struct OwnServer {
    child: std::process::Child,
    /// Its base URL, `…/v1`.
    pub url: String,
    log: std::path::PathBuf,
}

impl OwnServer {
    /// Starts `command` with `--host 127.0.0.1 --port PORT` added, its output in a log file,
    /// and waits until `/v1/models` answers; a panic with the log's tail when the server exits
    /// first or does not answer within `limit`. `what` names it in messages.
    pub fn start(mut command: std::process::Command, what: &str, limit: Duration) -> OwnServer {
        use std::os::unix::process::CommandExt;
        let port = free_port().to_string();
        let log = temp_path(&format!("{what}-{port}.log"));
        let file = std::fs::File::create(&log).expect("server log");
        let child = command
            .args(["--host", "127.0.0.1", "--port", &port])
            .stdin(std::process::Stdio::null())
            .stdout(file.try_clone().expect("server log"))
            .stderr(file)
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut server = OwnServer {
            child,
            url: format!("http://127.0.0.1:{port}/v1"),
            log,
        };
        let started = Instant::now();
        loop {
            let up = std::process::Command::new("curl")
                .args(["-sf", "-o", "/dev/null", &format!("{}/models", server.url)])
                .status()
                .is_ok_and(|s| s.success());
            if up {
                return server;
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!(
                    "{what} exited ({status}) before answering:\n{}",
                    server.log_tail()
                );
            }
            if started.elapsed() > limit {
                panic!("{what} did not answer in {limit:?}:\n{}", server.log_tail());
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// The last 25 lines of the server's log.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(25)..].join("\n")
    }
}

impl Drop for OwnServer {
    /// SIGTERM to the group; once the leader has ended (or after 30 s), SIGKILL to whatever is
    /// left of the group.
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let signal = |name: &str| {
            let _ = std::process::Command::new("kill")
                .args([name, "--", &group])
                .stderr(std::process::Stdio::null())
                .status();
        };
        signal("-TERM");
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(30) {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        signal("-KILL");
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// A thinking-model test's run against `real`: 4 chat requests of 32 tokens, 16 out, 2 at a
/// time, with `fire` flags added, no `/metrics` scrapes.
pub fn thinking_run(real: &Real, fire: &[&str]) -> Run {
    let options = PipeOptions {
        label: "thinking",
        seed: "7",
        server_metrics: false,
        fire_status: 0,
    };
    let arrivals = [
        "--concurrency",
        "2",
        "-n",
        "4",
        "--input-tokens",
        "32",
        "--output-tokens",
        "16",
    ];
    let mut fire_args = vec!["--api", "chat"];
    fire_args.extend_from_slice(fire);
    pipe_with(real, &options, &arrivals, &fire_args)
}

/// A thinking model's run, whose server closes the thinking after at most `budget` tokens: each
/// of the `n` requests succeeded, its reasoning events (1 to `budget` tokens, `done`'s
/// `reasoning_tokens`) all came before its answer events, of which there was at least one, and
/// `answer_tokens` is the rest of the output; reduce's time to first answer is later than its
/// TTFT, and its reasoning tokens are the requests' sum.
pub fn check_reasoning_then_answer(run: &Run, n: usize, budget: u64) {
    let dones = run.dones();
    assert_eq!(dones.len(), n);
    for d in &dones {
        assert_eq!(d["ok"], true, "{d}");
        let reasoning = d["reasoning_tokens"].as_u64().unwrap_or(0);
        assert!((1..=budget).contains(&reasoning), "{d}");
        let completion = d["completion_tokens"].as_u64().unwrap();
        assert_eq!(
            d["answer_tokens"].as_u64(),
            Some(completion - reasoning),
            "{d}"
        );
        let kinds: Vec<bool> = run
            .events
            .iter()
            .filter(|r| r["type"] == "token" && r["id"] == d["id"])
            .map(|t| t["reasoning"] == Value::Bool(true))
            .collect();
        let thinking = kinds.iter().take_while(|&&r| r).count();
        assert_eq!(
            thinking as u64, reasoning,
            "reasoning events first: {kinds:?}"
        );
        assert!(
            kinds.len() > thinking,
            "an answer after the reasoning: {kinds:?}"
        );
        assert!(kinds[thinking..].iter().all(|&r| !r), "{kinds:?}");
    }
    let s = &run.summary;
    let ms = |key: &str| s[key].as_f64().unwrap_or_else(|| panic!("{key} in {s}"));
    assert!(ms("ttfa_p50_ms") > ms("ttft_p50_ms"), "{s}");
    assert!(ms("reasoning_duration_p50_ms") > 0.0, "{s}");
    let reasoning: u64 = dones
        .iter()
        .map(|d| d["reasoning_tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(s["reasoning_tokens"].as_u64(), Some(reasoning), "{s}");
}
