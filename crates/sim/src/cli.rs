//! The command line of `simserve`: what clap parses (the doc comment of [`Args`] is the long
//! help) and how it becomes the plain [`Settings`] that [`crate::run`] takes. clap is known
//! here only; the value parsers of flags whose words the library also reads (`--fault`, the
//! curves) are the library's own parsing functions.

use crate::config::{self, Config, Settings, DEFAULT_ITL_MS, DEFAULT_TTFT_MS};
use crate::engine::batching::curve::Curve;
use crate::engine::profile::{self, EngineSettings, Overrides};
use crate::error::Error;
use crate::fault::select::{self, FaultFlag, FaultPlan};
use crate::spec_decode::SpecDecode;
use crate::transport::{TlsFiles, TransportOptions};
use clap::Parser;
use std::path::PathBuf;

mod prompt;
mod reasoning;

/// Serve a simulated OpenAI-compatible LLM endpoint with exact, deadline-driven token timing.
///
/// simserve answers /v1/completions and /v1/chat/completions the way vLLM does, streaming or
/// not, without a model: every request generates exactly `max_tokens` tokens, the first one
/// TTFT after the request body was read and each next one ITL after the previous deadline
/// (absolute deadlines, so errors never accumulate). A chat stream's role chunk leaves with the
/// first token, after the prefill, as vLLM's does. Prompts count whitespace-separated words, or
/// the tokens of --tokenizer. It is the reference that `fire` measures its own timing error
/// against: with --stamps it writes, per request, the instants at which it handed its first and
/// last token to the network stack, as a tokenpipe stream (a header, then `stamp` records; see
/// docs/format.md).
///
/// On start it prints one line on stdout, the base URL (http://127.0.0.1:PORT/v1), and runs
/// until SIGINT or SIGTERM. Tokens are timed on a shared high-resolution timer (a Linux
/// timerfd): a token leaves at its deadline or a fraction of a millisecond later (about 0.1 to
/// 0.3 ms at the median on a busy two-core machine), never earlier; the stamps record when it
/// really left.
///
/// With --fault it fails chosen requests the way real servers fail (an error status, a reset
/// or stalled connection, a broken event, an in-stream error, a stream cut short), so that a
/// client's handling of each failure can be checked end to end. A request can also ask for
/// its own fault with "tokenpipe_fault": "KIND" in its JSON body, or with the header
/// `x-tokenpipe-fault: KIND[;after=N]`, so one run can mix them.
///
/// Other routes: GET /v1/models lists the one model, GET /health answers 200, GET /metrics
/// answers in Prometheus text format with vLLM's metric names, POST /tokenize counts a
/// prompt's tokens as vLLM's /tokenize does (docs/simserve.md).
///
/// Every port speaks HTTP/1.1 and HTTP/2 (h2c with prior knowledge on plain TCP). With
/// --tls-cert and --tls-key it serves https instead, offering h2 and http/1.1 by ALPN, and
/// prints an https:// URL.
///
/// Examples:
///   # a server on a free port, 50 ms to the first token, then 100 tokens per second
///   simserve --port 0 --ttft-ms 50 --itl-ms 10
///
///   # https with a certificate for 127.0.0.1, one stderr line per connection
///   simserve --port 8443 --tls-cert cert.pem --tls-key key.pem --log-connections
///
///   # record the server's own send times to compare with what the client saw
///   simserve --port 8000 --stamps server-stamps.ndjson
///
///   # and every token's instant too, to check the gaps between tokens
///   simserve --port 8000 --stamps server-stamps.ndjson --token-stamps tokens.jsonl
///
///   # learn the port from the first line, then stream a chat answer
///   simserve --port 0 > url.txt & sleep 0.2
///   curl -sN "$(head -1 url.txt)/chat/completions" -H 'content-type: application/json' \
///     -d '{"model":"x","messages":[{"role":"user","content":"hi"}],"max_tokens":5,"stream":true}'
///
///   # one request in ten answered 503, one in twenty cut off after 3 tokens, same ones each run
///   simserve --port 0 --fault http=503:0.1 --fault reset:0.05 --fault-after 3 --fault-seed 1
///
///   # count prompts in the model's own tokens, and 21 more per chat request for its template
///   simserve --port 0 --profile spark-gpt-oss-120b --tokenizer tokenizer.json --template-tokens 21
///
///   # make exactly this request fail: a stream that ends without finish_reason or `[DONE]`
///   curl -sN "$(head -1 url.txt)/completions" -H 'content-type: application/json' \
///     -d '{"prompt":"hi","max_tokens":8,"stream":true,"tokenpipe_fault":"truncate"}'
#[derive(Debug, Parser)]
#[command(name = "simserve", version, verbatim_doc_comment)]
pub(crate) struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,

    /// Port to listen on; 0 picks a free port (printed on stdout).
    #[arg(long, default_value_t = 8000)]
    pub port: u16,

    /// Milliseconds from receiving a request's body to sending its first token, with the fixed
    /// timetable (giving it selects `--profile fixed`) [default: 50].
    #[arg(long, value_name = "MS", value_parser = parse_delay_ms,
          allow_negative_numbers = true)]
    pub ttft_ms: Option<f64>,

    /// Milliseconds between consecutive tokens, with the fixed timetable (giving it selects
    /// `--profile fixed`) [default: 10].
    #[arg(long, value_name = "MS", value_parser = parse_delay_ms,
          allow_negative_numbers = true)]
    pub itl_ms: Option<f64>,

    // --- engine: continuous batching and its profiles ---
    /// The engine's profile: small-gpu (default), spark-gpt-oss-120b, multinode-tp4, or fixed
    ///
    /// A batching profile runs a continuous-batching engine (docs/simserve.md): steps of one
    /// token per running sequence plus chunked prefill, a KV-cache capacity, a prefix cache.
    /// `fixed` is the timetable of --ttft-ms and --itl-ms, which giving either of them selects.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,

    /// Most sequences running at once [default: the profile's].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_num_seqs: Option<u64>,

    /// Tokens one step may process, prefill chunks and decodes together [default: the
    /// profile's].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_num_batched_tokens: Option<u64>,

    /// KV-cache capacity in tokens; also the longest prompt + completion served [default: the
    /// profile's].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub kv_cache_tokens: Option<u64>,

    /// Time of a step by sequences in it, in ms: `A+B` (A + B·batch, e.g. `8+0.5`) or points
    /// BATCH:MS (`1:17.5,8:53.1,64:141.4`) [default: the profile's].
    #[arg(long, value_name = "CURVE", value_parser = Curve::parse_cost)]
    pub decode_step_ms: Option<Curve>,

    /// Prefill tokens per second: a number, or points TOKENS_IN_STEP:TPS
    /// (`1024:3500,8192:7100`) [default: the profile's].
    #[arg(long, value_name = "CURVE", value_parser = Curve::parse_rate)]
    pub prefill_tps: Option<Curve>,

    /// Prompts that share leading 16-token blocks with recent ones skip their prefill (vLLM's
    /// automatic prefix caching) [default: on]. /metrics counts its lookups and hits
    /// (`vllm:prefix_cache_queries_total`, `vllm:prefix_cache_hits_total`, in prompt tokens);
    /// given as `on`, each stream's usage also says `prompt_tokens_details.cached_tokens`, as
    /// vLLM does with --enable-prompt-tokens-details.
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    pub prefix_cache: Option<bool>,
    // --- end engine ---
    /// Speculative decoding: each decode step drafts K tokens, each accepted with probability
    /// P until the first rejection, plus one token of the target model's
    ///
    /// So a step emits 1 to K+1 tokens in one SSE chunk (the first token, the prefill's, comes
    /// alone), and the engine times steps: ITL per chunk stays the step time, per token it
    /// shrinks. /metrics gains vLLM's counters vllm:spec_decode_num_drafts_total,
    /// _num_draft_tokens_total, _num_accepted_tokens_total and
    /// _num_accepted_tokens_per_pos_total{position="i"}. The draws are seeded by each request's
    /// number, so the same requests accept the same drafts in every run. K is 1 to 64, P 0 to 1.
    #[arg(long, value_name = "K:P", value_parser = SpecDecode::parse)]
    pub spec_decode: Option<SpecDecode>,

    /// Model N GPUs on /metrics in NVIDIA DCGM exporter's names (a simulation: no GPU is read)
    ///
    /// Per GPU (labels gpu, UUID, pci_bus_id, device, modelName, Hostname):
    /// DCGM_FI_DEV_POWER_USAGE, 100 W plus 25 W per request in flight shared over the N GPUs;
    /// DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, that power's exact integral in mJ since simserve
    /// started; DCGM_FI_DEV_GPU_UTIL, 100 while a request is in flight, else 0.
    #[arg(long, value_name = "N", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=i64::from(crate::dcgm::MAX_GPUS)))]
    pub gpus: u32,

    /// The name of the one model served (listed by /v1/models, echoed in every answer).
    #[arg(long, default_value = "tokenpipe-sim")]
    pub model: String,

    /// Write the server's own send stamps to FILE as a tokenpipe stream: a header (whose
    /// monotonic_origin_ns lines the stamps up with fire's), then one `stamp` record per finished
    /// request: request_id, received_ns, first_token_ns, last_token_ns, tokens, and late_max_ns
    /// and late_sum_ns, how far after their instants its tokens were handed over.
    #[arg(long, value_name = "FILE")]
    pub stamps: Option<PathBuf>,

    /// With --stamps, also write every token's hand-over instant to FILE, one JSON line per
    /// finished request: {"request_id": …, "token_ns": [t1, t2, …]}, nanoseconds from the
    /// stamps file's origin, one entry per token (tokens handed over together share an
    /// instant). A client's gaps between tokens can then be checked against the server's
    /// (the benchmark's ITL error); it costs 8 bytes per token of a request in flight.
    #[arg(long, value_name = "FILE", requires = "stamps")]
    pub token_stamps: Option<PathBuf>,

    /// Write every generation request to FILE as it arrives, one JSON line each:
    /// {"request_id": …, "headers": {name: value, …}, "body": <the JSON body as received>}.
    /// Lines are written whole and unbuffered, so the file can be read while the server runs.
    #[arg(long, value_name = "FILE")]
    pub log_requests: Option<PathBuf>,

    /// Make a FRACTION of the requests fail as KIND (repeatable; the kinds are in --help)
    ///
    /// Fails chosen generation requests the way real servers fail, to check that a client sees
    /// and classifies each failure. KIND is one of:
    ///   http[=STATUS]  answer STATUS (400 to 599, default 500) with an OpenAI-style JSON error
    ///   reset          close the connection mid-stream, without ending the chunked body
    ///   stall          stop sending mid-stream and keep the connection open
    ///   garbage        send one SSE data event that is not JSON, then go on
    ///   error          send `data: {"error":{...}}`, then `data: [DONE]` (as vLLM does)
    ///   truncate       end the body cleanly mid-answer: no finish_reason, no `[DONE]`
    ///   bare-done      send `data: [DONE]` without any finish_reason (as llama-cpp-python)
    ///   json           answer the whole JSON (application/json), ignoring `stream: true`
    ///   html           answer 200 with a text/html page at once (a proxy's, a login page)
    ///   stall=MS       pause MS ms mid-stream, then go on (the later tokens MS ms late)
    ///   slow-headers=MS  hold the status and headers back MS ms (tokens keep their schedule)
    ///   endless        never end: tokens keep coming past max_tokens, no finish_reason
    ///   long[=N]       answer N tokens (default 10000) whatever max_tokens says
    ///   uncounted      answer as asked, but leave the request out of /metrics' counters
    /// http=429 and http=503 carry `Retry-After: --retry-after`. The mid-stream kinds act after
    /// --fault-after tokens. FRACTION (0 to 1, default 1) of the requests fail; which ones is a
    /// hash of each request's number and --fault-seed, so the same seed fails the same
    /// requests. Repeatable; the fractions must add up to at most 1. A request can choose for
    /// itself with the body members "tokenpipe_fault": "KIND" (or "none") and
    /// "tokenpipe_fault_after": N, or with the header `x-tokenpipe-fault: KIND[;after=N]`,
    /// which beats the body members; both override these flags.
    #[arg(long, value_name = "KIND[:FRACTION]", value_parser = select::parse_flag,
          verbatim_doc_comment)]
    pub fault: Vec<FaultFlag>,

    /// Seed of the hash that picks the requests --fault fails.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub fault_seed: u64,

    /// Tokens sent before a mid-stream fault acts [default: half of max_tokens, at least 1;
    /// at most max_tokens].
    #[arg(long, value_name = "N")]
    pub fault_after: Option<u64>,

    // --- faults: per request, through a header; the kinds that reshape an answer ---
    /// Seconds the `Retry-After` header of an http=429 or http=503 fault says.
    #[arg(long, value_name = "S", default_value_t = select::DEFAULT_RETRY_AFTER_S)]
    pub retry_after: u64,

    /// Require `Authorization: Bearer KEY` on every /v1 route (GET /health stays open);
    /// other requests get 401 with an OpenAI-style error body.
    #[arg(
        long,
        value_name = "KEY",
        env = "SIMSERVE_API_KEY",
        hide_env_values = true
    )]
    pub api_key: Option<String>,

    /// Milliseconds a generation answer's status and headers are held back, as a server slow to
    /// answer at all (tokens stay on their own schedule and leave together once it is over).
    #[arg(long, value_name = "MS", default_value_t = 0.0, value_parser = parse_delay_ms)]
    pub headers_delay_ms: f64,

    /// TLS and the connection log (see the transport module).
    #[command(flatten)]
    pub transport: TransportArgs,

    /// How prompt tokens are counted: `--tokenizer`, `--template-tokens`.
    #[command(flatten)]
    pub prompt: prompt::PromptArgs,

    /// A thinking model's answers: `--reasoning-share`, `--reasoning-member`.
    #[command(flatten)]
    pub reasoning: reasoning::ReasoningArgs,

    /// Tokio worker threads.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    pub workers: u16,
}

/// The transport flags of simserve's command line.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct TransportArgs {
    /// Serve https with this certificate chain (PEM, the server's certificate first); needs
    /// --tls-key. ALPN offers h2 and http/1.1.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Print one line on stderr per accepted connection: its number, peer, protocol, and
    /// accept instant on the monotonic clock (the one fire's header and --stamps use).
    #[arg(long)]
    pub log_connections: bool,
}

/// `on` or `off` (also true/false, yes/no, 1/0).
fn parse_on_off(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("expected on or off, got `{s}`")),
    }
}

/// Accepts a finite, non-negative number of milliseconds up to an hour.
fn parse_delay_ms(s: &str) -> Result<f64, String> {
    let ms: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("expected a number of milliseconds, got `{s}`"))?;
    config::check_delay_ms(ms).map_err(|e| e.to_string())
}

/// Parses the process arguments into the settings [`crate::run`] takes; `None` when the hidden
/// `--generate` flag wrote an artefact instead. clap itself ends the process on a flag error.
pub(crate) fn parse() -> Result<Option<Settings>, Error> {
    match tokenpipe_cli::parse_or_generate::<Args>()? {
        Some(args) => settings(&args).map(Some),
        None => Ok(None),
    }
}

/// The settings for parsed arguments: the server's [`Config`], then where and how it runs.
fn settings(args: &Args) -> Result<Settings, Error> {
    let t = &args.transport;
    Ok(Settings {
        config: config(args)?,
        host: args.host.clone(),
        port: args.port,
        workers: args.workers,
        stamps: args.stamps.clone(),
        token_stamps: args.token_stamps.clone(),
        log_requests: args.log_requests.clone(),
        transport: TransportOptions {
            tls: match (&t.tls_cert, &t.tls_key) {
                (Some(cert), Some(key)) => Some(TlsFiles {
                    cert: cert.clone(),
                    key: key.clone(),
                }),
                _ => None,
            },
            log_connections: t.log_connections,
        },
    })
}

/// The server's settings for parsed arguments; bad input where the flags contradict each other.
fn config(args: &Args) -> Result<Config, Error> {
    let mut config = Config::from_ms(
        args.model.clone(),
        args.ttft_ms.unwrap_or(DEFAULT_TTFT_MS),
        args.itl_ms.unwrap_or(DEFAULT_ITL_MS),
    )?;
    config.engine = engine_settings(args)?;
    config.prompt_count = args.prompt.prompt_count()?;
    config.spec_decode = args.spec_decode;
    config.gpus = args.gpus;
    config.reasoning = args.reasoning.reasoning();
    config.cache_details = args.prefix_cache == Some(true);
    config.faults = FaultPlan::new(&args.fault, args.fault_seed, args.fault_after)?
        .with_retry_after(args.retry_after);
    config.access = crate::access::Access {
        api_key: args.api_key.clone(),
        headers_delay: config::delay("--headers-delay-ms", args.headers_delay_ms)?,
    };
    Ok(config)
}

/// The engine the flags ask for (see [`profile::choose`]).
fn engine_settings(args: &Args) -> Result<EngineSettings, profile::EngineError> {
    let overrides = Overrides {
        max_num_seqs: args
            .max_num_seqs
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        max_batched_tokens: args.max_num_batched_tokens,
        kv_tokens: args.kv_cache_tokens,
        decode_ms: args.decode_step_ms.clone(),
        prefill_tps: args.prefill_tps.clone(),
        prefix_cache: args.prefix_cache,
    };
    let timing_flags = args.ttft_ms.is_some() || args.itl_ms.is_some();
    profile::choose(args.profile.as_deref(), timing_flags, &overrides)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use std::time::Duration;
    use tokenpipe_cli::{Ending, ToolError};

    fn config_of(argv: &[&str]) -> Result<Config, Error> {
        config(&Args::try_parse_from(argv).unwrap())
    }

    #[test]
    fn clap_definition_is_consistent() {
        Args::command().debug_assert();
    }

    #[test]
    fn defaults() {
        let args = Args::try_parse_from(["simserve"]).unwrap();
        assert_eq!(args.host, "127.0.0.1");
        assert_eq!(args.port, 8000);
        assert_eq!(args.workers, 1);
        let settings = settings(&args).unwrap();
        assert_eq!(settings.transport, TransportOptions::default());
        let config = settings.config;
        assert_eq!(config.model, "tokenpipe-sim");
        assert_eq!(config.ttft, Duration::from_millis(50));
        assert_eq!(config.itl, Duration::from_millis(10));
        assert!(config.faults.is_empty());
        assert_eq!(config.spec_decode, None);
        assert_eq!(config.gpus, 0);
        let args = Args::try_parse_from(["simserve", "--spec-decode", "4:0.5", "--gpus", "2"]);
        let config = super::config(&args.unwrap()).unwrap();
        assert_eq!(config.spec_decode, Some(SpecDecode { k: 4, p: 0.5 }));
        assert_eq!(config.gpus, 2);
    }

    #[test]
    fn tls_flags_become_the_two_files() {
        let args = Args::try_parse_from([
            "simserve",
            "--tls-cert",
            "c.pem",
            "--tls-key",
            "k.pem",
            "--log-connections",
        ])
        .unwrap();
        let transport = settings(&args).unwrap().transport;
        assert_eq!(
            transport,
            TransportOptions {
                tls: Some(TlsFiles {
                    cert: "c.pem".into(),
                    key: "k.pem".into()
                }),
                log_connections: true,
            }
        );
        assert!(Args::try_parse_from(["simserve", "--tls-cert", "c.pem"]).is_err());
    }

    #[test]
    fn faults_are_parsed_and_checked() {
        let args = Args::try_parse_from([
            "simserve",
            "--fault",
            "http=503:0.25",
            "--fault=reset:0.5",
            "--fault-seed",
            "9",
            "--fault-after",
            "3",
        ])
        .unwrap();
        assert_eq!(args.fault.len(), 2);
        assert_eq!(args.fault[0].fraction, 0.25);
        let config = config(&args).unwrap();
        assert!(!config.faults.is_empty());
        for bad in ["boom", "reset:2", "http=200", "stall:0"] {
            assert!(
                Args::try_parse_from(["simserve", "--fault", bad]).is_err(),
                "{bad} accepted"
            );
        }
        let e = config_of(&["simserve", "--fault", "stall", "--fault", "reset:0.5"]).unwrap_err();
        assert!(matches!(e, Error::Faults(_)), "{e:?}");
        assert!(e.to_string().contains("more than 1"), "{e}");
        assert_eq!(e.ending(), Ending::BadInput);
    }

    #[test]
    fn contradicting_engine_flags_are_bad_input() {
        for argv in [
            &["simserve", "--profile", "h100"][..],
            &["simserve", "--itl-ms", "3", "--max-num-seqs", "4"],
            &["simserve", "--profile", "small-gpu", "--ttft-ms", "5"],
        ] {
            let e = config_of(argv).unwrap_err();
            assert!(matches!(e, Error::Engine(_)), "{argv:?}: {e:?}");
            assert_eq!(e.ending(), Ending::BadInput, "{argv:?}");
        }
    }

    #[test]
    fn bad_values_are_refused() {
        for bad in [
            ["--ttft-ms", "-1"],
            ["--itl-ms", "nan"],
            ["--itl-ms", "inf"],
            ["--ttft-ms", "abc"],
            ["--ttft-ms", "1e12"],
            ["--workers", "0"],
            ["--port", "70000"],
            ["--headers-delay-ms", "-1"],
            ["--prefix-cache", "maybe"],
            ["--spec-decode", "3"],
            ["--spec-decode", "3:2"],
            ["--gpus", "-1"],
            ["--gpus", "5000"],
        ] {
            let args = ["simserve", bad[0], bad[1]];
            assert!(Args::try_parse_from(args).is_err(), "{args:?} accepted");
        }
    }

    #[test]
    fn long_help_has_examples() {
        let help = Args::command().render_long_help().to_string();
        assert!(help.contains("Examples:"), "{help}");
        assert!(help.contains("simserve --port 0 --ttft-ms 50 --itl-ms 10"));
        let example = "simserve --port 0 --fault http=503:0.1 --fault reset:0.05 --fault-after 3";
        assert!(help.contains(example), "{help}");
        // The example's flags parse as written.
        let words: Vec<_> = example
            .split_whitespace()
            .chain(["--fault-seed", "1"])
            .collect();
        let args = Args::try_parse_from(words).unwrap();
        assert!(config(&args).is_ok());
        assert!(help.contains(r#""tokenpipe_fault":"truncate""#), "{help}");
    }
}
