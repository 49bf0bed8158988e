//! `fire`'s command line, the only place that knows clap: the flags, their help, the checks
//! clap makes while parsing, and the [`Config`] they become. What the values mean together is
//! checked by the library (`config`), so that a program that builds a `Config` gets the same.

mod start;
mod transport;
mod values;

use crate::api::{Api, StreamUsage};
use crate::benchy::LatencyMode;
use crate::config::Config;
use crate::error::Error;
use crate::sink::DEFAULT_OUTPUT_BUFFER;
use clap::Parser;
use start::StartArgs;
use std::path::PathBuf;
use std::time::Duration;
use transport::TransportArgs;

/// Parses the process arguments and runs (or writes what `--generate` asks for).
pub fn main() -> Result<(), Error> {
    let Some(args) = tokenpipe_cli::parse_or_generate::<Args>()? else {
        return Ok(());
    };
    tokenpipe_cli::raise_fd_limit();
    crate::run(args.into_config(tokenpipe_cli::argv()))
}

/// Execute a request schedule against an OpenAI-compatible streaming endpoint.
///
/// Reads the NDJSON schedule written by `arrivals` (stdin, or FILE) and runs it as written: an
/// open loop at the scheduled instants (with its concurrency cap, if any), a closed loop with N
/// in flight (with its fill ramp and its duration, if any), batches (N together, wait for all,
/// repeat), and multi-turn sessions, whose later turns leave their think time after the turn
/// before ends and carry the text it actually generated (docs/fire/workloads.md). It writes
/// NDJSON events to stdout: a `sent` record per request, a `token` record per streamed event
/// that stands for tokens (stamped when its bytes are read), exactly one `done` record per
/// request, failures included, and last a `client` record: what fire itself cost and whether it
/// kept up with its schedule (docs/fire/self-check.md). Nothing is written until the input is
/// known to be a schedule.
///
/// A batch schedule is run as llama-benchy runs its tests: on the chat API unless --api says,
/// after llama-benchy's two warm-up requests and its network latency probes, with prompts
/// adapted by the warm-up's token delta when the schedule names its tokenizer (see the
/// llama-benchy options below and docs/fire/workloads.md).
///
/// Ctrl-C (or SIGTERM) stops sending, ends requests in flight as `cancelled` and the requests
/// still readable without waiting as `not_sent`, and exits 130 (143) after writing everything
/// measured; during model discovery it skips discovery and does the same. A schedule that ends
/// mid-line then gets up to 1 s for the rest of the line (the Ctrl-C makes arrivals finish it);
/// a line still cut is dropped with a warning. A second Ctrl-C quits at once: what is buffered
/// is written (whole lines only), requests in flight get no `done`.
///
/// A reader slower than the run (a `tee` to a slow disk, a stopped pager) is buffered up to
/// --output-buffer bytes; past that, fire waits for it, which delays its time stamps, and writes
/// a `stall` record for every such wait.
#[derive(Debug, Parser)]
#[command(name = "fire", version, after_help = AFTER_HELP)]
struct Args {
    /// Base URL of the API, up to and including `/v1` (http:// or https://). Credentials in it
    /// (`http://alice:pw@host/v1`) are sent as HTTP Basic auth to that host only and written
    /// as `alice:***` (also in --endpoint and --server-metrics); they win over --api-key, an
    /// `-H Authorization` wins over them.
    #[arg(long, env = "TOKENPIPE_URL", required_unless_present = "generate")]
    url: Option<String>,

    /// Which endpoint to call [default: chat for a batch schedule, as llama-benchy always
    /// calls it; completions otherwise].
    #[arg(long, value_enum)]
    api: Option<Api>,

    /// Model name to send; by default the first model listed by `GET {url}/models`.
    #[arg(long)]
    model: Option<String>,

    /// Bearer token for the `Authorization` header (never written anywhere: the output records
    /// only that one was given).
    #[arg(long, env = "OPENAI_API_KEY", hide_env_values = true)]
    api_key: Option<String>,

    /// Path of the generation endpoint on the host of --url, for servers whose API is not at
    /// `{url}/completions` (`{url}/chat/completions`): e.g. `/openai/deployments/m/completions`.
    /// A full `http://` URL is taken as it is. --url stays the base of `GET {url}/models`.
    #[arg(long, value_name = "PATH")]
    endpoint: Option<String>,

    /// Extra HTTP header on every request, models list included: "Name: value" (repeatable).
    /// Values of headers whose name looks secret (authorization, *key*, *token*, cookie) are
    /// recorded as `***`. An `Authorization` header replaces --api-key.
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    header: Vec<String>,

    /// JSON object merged into every request body (`'{"top_p":0.9}'`). A request's own
    /// `extra_body` wins for a member both give; fire's own members (model, prompt, messages,
    /// max_tokens, stream, stream_options, ignore_eos) cannot be set this way.
    #[arg(long, value_name = "JSON")]
    extra_body: Option<String>,

    /// Sampling temperature sent in every body; it replaces a `temperature` from --extra-body or
    /// a request's `extra_body`. Not sent unless given (the server's default applies).
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    temperature: Option<f64>,

    /// Usage reporting asked of the stream: `on` (`stream_options.include_usage`), `continuous`
    /// (also vLLM's `continuous_usage_stats`, usage on every event), `off` (no `stream_options`,
    /// for servers that refuse it; tokens are then counted one per event).
    #[arg(long, value_enum, value_name = "HOW", default_value = "on")]
    stream_usage: StreamUsage,

    /// Closed loop: requests kept in flight, overriding the schedule's concurrency (ignored, with
    /// a warning, for open-loop schedules). At most 1,000,000, as in a schedule.
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=tokenpipe_format::MAX_IN_FLIGHT))]
    concurrency: Option<u64>,

    /// Longest a request may take from send to the end of its stream (`timeout`): a duration
    /// such as 500ms, 90s, 30m, or plain seconds.
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = positive_duration)]
    timeout: Duration,

    /// Longest wait for a TCP connection to be made (`connect_timeout`).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = positive_duration)]
    connect_timeout: Duration,

    /// Longest wait from the send to the first event with content (`first_token_timeout`);
    /// off unless given, since queueing on a loaded server is a wait worth measuring.
    #[arg(long, value_name = "DURATION", value_parser = positive_duration)]
    first_token_timeout: Option<Duration>,

    /// Longest silence between two reads of a response body, once its first byte came
    /// (`idle_timeout`), so that a stalled stream fails in a minute rather than at --timeout;
    /// 0 turns it off.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = tokenpipe_cli::parse_duration)]
    idle_timeout: Duration,

    /// Run every request even when they fail to connect (by default the run stops once 8
    /// requests failed to connect since the last success: the server is gone;
    /// docs/fire/protocol.md).
    #[arg(long)]
    keep_going: bool,

    /// When 8 requests failed to connect since the last success, wait for the server instead of
    /// stopping: new requests wait while fire tries to connect after 100 ms, then twice as
    /// long each time up to 5 s, and sending goes on once a connection opens, so that a run
    /// survives a server restart. The requests that failed stay failed (they are data). It
    /// gives up, and the run stops, when no connection opened within DURATION of waiting (60s
    /// unless given, as --retry-connect=2m). Off by default.
    #[arg(long, value_name = "DURATION", num_args = 0..=1, default_missing_value = "60s", require_equals = true, value_parser = positive_duration, conflicts_with = "keep_going")]
    retry_connect: Option<Duration>,

    /// Do not send `ignore_eos: true` (then the model may stop before `max_tokens`).
    #[arg(long)]
    no_ignore_eos: bool,

    /// Write each request's generated text (reasoning left out) in its `done` record
    /// (`done.text`), to check answers or replay a conversation.
    #[arg(long)]
    record_text: bool,

    /// Network threads (1 runs everything on one thread, the cheapest for a few thousand
    /// streams).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    threads: u16,

    /// Show the progress view on stderr even when it is not a terminal (then as a plain line a
    /// second). Without it the view shows only on a terminal.
    #[arg(long, conflicts_with = "quiet")]
    progress: bool,

    /// No progress view and no end-of-run counts. Warnings that the measurements may be
    /// distorted (the client did not keep up, a stalled output) and errors still print.
    #[arg(long, short = 'q')]
    quiet: bool,

    /// Also write the events to FILE, from fire's own writer: the file is complete (whole
    /// lines) after Ctrl-C even when a `tee` or `reduce` downstream died of it.
    #[arg(long, value_name = "FILE")]
    save: Option<PathBuf>,

    /// Output bytes held for a slow reader before fire waits for it and writes a `stall`
    /// record (suffixes K, M, G: KiB, MiB, GiB); a token is held as 22 bytes until written.
    #[arg(long, value_name = "BYTES", default_value = "256M", value_parser = parse_bytes)]
    output_buffer: u64,

    // --- server metrics ---
    /// Read the server's Prometheus metrics before the first request and after the last (and
    /// on Ctrl-C), each as a `server_metrics` record, so that `reduce` reports the server's own
    /// token counts and mean TTFT, ITL and E2E latency beside the client's. The URL is the base
    /// URL without `/v1`, then `/metrics` (where vLLM serves it), unless one is given. A scrape
    /// that fails is a warning, never a failed run. Give another URL with `=`
    /// (`--server-metrics=http://host:9090/metrics`): after a space it would be read as the
    /// input file. The API key and -H headers go only to the host the requests go to.
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "", require_equals = true)]
    server_metrics: Option<String>,

    /// Also scrape every endpoint (the server's metrics, each --scrape URL) this often while
    /// the run goes on, each scrape a `server_metrics` record with phase `during` stamped on
    /// fire's clock (its histogram buckets left out), so that reduce's summary and `--every`
    /// intervals carry the server's gauges: KV-cache usage, requests running and waiting, GPU
    /// utilisation and power. Implies --server-metrics. The scrapes run beside the send loop,
    /// never in its way: one still going when the next is due skips it, and the skipped
    /// scrapes are counted in a warning at the end.
    ///
    /// Example: fire --url http://gpu-box:8000/v1 --server-metrics-every 1s
    ///   --scrape http://gpu-box:9400/metrics < schedule.ndjson > run.ndjson
    #[arg(long, value_name = "DURATION", value_parser = positive_duration)]
    server_metrics_every: Option<Duration>,

    /// Scrape another Prometheus endpoint before and after the run (and during it with
    /// --server-metrics-every), repeatable: an NVIDIA DCGM exporter (`DCGM_…` samples: power,
    /// energy, utilisation, for reduce's energy per token), a node exporter (its `node_load…`
    /// and `node_memory_…` gauges), another engine. Same bounded, timeout-guarded client as
    /// --server-metrics; the API key and -H headers go only to the host the requests go to.
    #[arg(long, value_name = "URL")]
    scrape: Vec<String>,

    // --- llama-benchy's steps before the first batch (batch schedules only) ---
    /// Batch schedules: do not send llama-benchy's two warm-up requests before the first batch
    /// (one-token chat requests, user `Warmup ` × 10, then the same as a system message and a
    /// user `.`; their `usage.prompt_tokens` go in the header as `warmup_prompt_tokens`). As
    /// llama-benchy's --no-warmup, they are still sent when the prompts are adapted (see
    /// --no-adapt-prompt). The schedule's warm-up batch is arrivals' (`arrivals --no-warmup`).
    #[arg(long, help_heading = "llama-benchy (batch schedules)")]
    no_warmup: bool,

    /// Batch schedules: send the prompts as written. By default, when the schedule names its
    /// tokenizer (`arrivals --tokenizer`), every prompt is shortened by the tokens the server
    /// counts beyond the text in the warm-up (its chat template), as llama-benchy adapts them:
    /// at depth 0 the prompt, otherwise the system context, each to no less than one token.
    /// The tokens cut are the header's `adapt_tokens`.
    #[arg(long, help_heading = "llama-benchy (batch schedules)")]
    no_adapt_prompt: bool,

    /// Batch schedules: how the network latency is measured before the first batch, written as
    /// the header's `net_latency_ms`, which reduce's llama-benchy figures subtract.
    #[arg(
        long,
        value_enum,
        value_name = "MODE",
        default_value = "api",
        help_heading = "llama-benchy (batch schedules)"
    )]
    latency_mode: LatencyMode,

    /// TLS, HTTP/2, connections (docs/fire/transport.md).
    #[command(flatten)]
    transport: TransportArgs,

    /// Several hosts: the host label and a common start (docs/fire/start.md).
    #[command(flatten)]
    start: StartArgs,

    /// Schedule to read instead of stdin.
    file: Option<PathBuf>,
}

/// The help's closing section: exit statuses and examples.
const AFTER_HELP: &str = "\
Exit status:
  0    every request ended and at least one succeeded (requests the server failed are data);
       or nothing was sent; or stdout's reader went away
  1    no request succeeded (the message counts what they got: 3 × HTTP 404 Not Found); or
       the server could not be reached: the model list, or 8 requests failed to connect
       since the last success, at the start or mid-run (the run stops then, unless
       --keep-going or --retry-connect; the rest end as not_sent)
  2    bad usage or input (a flag, the schedule)
  130  interrupted (Ctrl-C); 143 terminated (SIGTERM); everything measured was written

Examples:
  # open loop, Poisson arrivals at 2 requests/s
  arrivals --rate 2 --num-prompts 100 | fire --url http://127.0.0.1:8000/v1 > run.ndjson

  # closed loop through the chat API, keeping 16 requests in flight
  arrivals --concurrency 16 -n 256 | fire --url http://127.0.0.1:8000/v1 --api chat | reduce | table

  # a gateway with its own path and header, stalled streams failing after 20 s of silence
  arrivals -n 50 | fire --url http://gw:8000/v1 --endpoint /llm/v1/completions -H 'X-Tenant: blue' --idle-timeout 20s

  # https with a private CA, HTTP/2 on 4 connections
  arrivals --concurrency 512 -n 4096 | fire --url https://gpu-1:8443/v1 --cacert ca.pem --http2 --connections 4 > run.ndjson

  # llama-benchy's pp 2048 tg 32 at c4, depth 1024: chat API, warm-up, adapted prompts, latency
  arrivals --batch 4 --pp 2048 --tg 32 --depth 1024 --tokenizer tokenizer.json --corpus 1661-0.txt \
    | fire --url http://127.0.0.1:8000/v1 | reduce | table --style llama-bench

  # keep the raw events (whole even after Ctrl-C) and the summary
  arrivals --rate 1 -n 50 | fire --url http://127.0.0.1:8000/v1 --save run.ndjson | reduce | table

  # one part of a plan on each Slurm task, all starting 5 s after a shared reference
  export TOKENPIPE_START_BASE=$(date -u +%s.%N)
  srun -n3 -o 'part%t.ndjson' sh -c 'arrivals --rate 30 -n 900 --shard auto | fire --url http://gpu-1:8000/v1 --start-at +5s'
  reduce part*.ndjson | table --by host";

const _: () = assert!(
    DEFAULT_OUTPUT_BUFFER == 256 << 20,
    "keep --output-buffer's default in step"
);

/// A duration that is not zero.
fn positive_duration(text: &str) -> Result<Duration, String> {
    let d = tokenpipe_cli::parse_duration(text)?;
    if d.is_zero() {
        return Err(format!("`{text}`: expected a duration longer than zero"));
    }
    Ok(d)
}

/// Reads a byte count such as `65536`, `64K`, `256M` or `1G` (binary units).
fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((i, 'K' | 'k')) => (&t[..i], 10),
        Some((i, 'M' | 'm')) => (&t[..i], 20),
        Some((i, 'G' | 'g')) => (&t[..i], 30),
        _ => (t, 0),
    };
    let n: u64 = digits.parse().map_err(|_| {
        format!("expected a byte count such as 65536, 64K, 256M or 1G, not {text:?}")
    })?;
    n.checked_mul(1 << shift)
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("{text}: expected a positive byte count that fits 64 bits"))
}

impl Args {
    /// The run's settings, with `argv` as the command line to record.
    fn into_config(self, argv: Vec<String>) -> Config {
        Config {
            schedule: self.file,
            url: self.url.unwrap_or_default(),
            api: self.api,
            warmup: !self.no_warmup,
            adapt_prompt: !self.no_adapt_prompt,
            latency_mode: self.latency_mode,
            model: self.model,
            api_key: self.api_key,
            endpoint: self.endpoint,
            headers: self.header,
            extra_body: self.extra_body,
            temperature: self.temperature,
            stream_usage: self.stream_usage,
            concurrency: self.concurrency,
            timeout: self.timeout,
            connect_timeout: self.connect_timeout,
            first_token_timeout: self.first_token_timeout,
            idle_timeout: Some(self.idle_timeout).filter(|d| !d.is_zero()),
            keep_going: self.keep_going,
            retry_connect: self.retry_connect,
            ignore_eos: !self.no_ignore_eos,
            record_text: self.record_text,
            threads: self.threads,
            progress: self.progress,
            quiet: self.quiet,
            save: self.save,
            output_buffer: self.output_buffer,
            server_metrics: match (self.server_metrics, self.server_metrics_every) {
                (None, Some(_)) => Some(String::new()),
                (given, _) => given,
            },
            server_metrics_every: self.server_metrics_every,
            scrape: self.scrape,
            transport: self.transport.into(),
            start: self.start.into(),
            argv,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_definition_is_valid() {
        tokenpipe_cli::command::<Args>().debug_assert();
    }

    fn parse(words: &[&str]) -> Result<Args, clap::Error> {
        let m = tokenpipe_cli::command::<Args>()
            .try_get_matches_from(["fire", "--url", "http://x/v1"].iter().chain(words))?;
        <Args as clap::FromArgMatches>::from_arg_matches(&m)
    }

    fn config(words: &[&str]) -> Config {
        parse(words).unwrap().into_config(vec![])
    }

    #[test]
    fn the_flags_defaults_are_the_configs() {
        let mut c = config(&[]);
        // The one default that the environment gives (OPENAI_API_KEY).
        c.api_key = None;
        assert_eq!(c, Config::new("http://x/v1"));
    }

    #[test]
    fn durations_and_their_defaults() {
        let a = config(&[]);
        assert_eq!(a.timeout, Duration::from_secs(1800));
        assert_eq!(a.connect_timeout, Duration::from_secs(10));
        assert_eq!(a.first_token_timeout, None);
        assert_eq!(a.idle_timeout, Some(Duration::from_secs(60)));
        let a = config(&[
            "--timeout",
            "90",
            "--idle-timeout",
            "0",
            "--first-token-timeout",
            "500ms",
        ]);
        assert_eq!(a.timeout, Duration::from_secs(90));
        assert_eq!(a.idle_timeout, None);
        assert_eq!(a.first_token_timeout, Some(Duration::from_millis(500)));
        for bad in [
            ["--timeout", "0"],
            ["--connect-timeout", "0s"],
            ["--timeout", "soon"],
        ] {
            assert!(parse(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn flags_become_the_config() {
        let c = config(&[
            "--api",
            "chat",
            "--stream-usage",
            "off",
            "--no-ignore-eos",
            "-H",
            "X-A: 1",
            "--server-metrics",
            "--http2",
            "--connections",
            "3",
            "--no-preconnect",
            "sched.ndjson",
        ]);
        assert_eq!(c.api, Some(Api::Chat));
        assert_eq!(c.stream_usage, StreamUsage::Off);
        assert!(!c.ignore_eos);
        assert_eq!(c.headers, ["X-A: 1"]);
        assert_eq!(c.server_metrics.as_deref(), Some(""));
        assert!(c.transport.http2);
        assert_eq!(c.transport.connections, 3);
        assert_eq!(c.transport.preconnect, Some(false));
        assert_eq!(c.schedule, Some(PathBuf::from("sched.ndjson")));
        // The last of --preconnect and --no-preconnect wins.
        let c = config(&["--no-preconnect", "--preconnect"]);
        assert_eq!(c.transport.preconnect, Some(true));
        assert!(parse(&["--connections", "2"]).is_err(), "needs --http2");
        assert!(parse(&["--insecure", "--cacert", "ca.pem"]).is_err());
        assert_eq!(config(&[]).api, None);
        let c = config(&["--no-warmup", "--no-adapt-prompt", "--latency-mode", "none"]);
        assert!(!c.warmup && !c.adapt_prompt);
        assert_eq!(c.latency_mode, LatencyMode::None);
    }

    #[test]
    fn byte_counts() {
        assert_eq!(parse_bytes("65536"), Ok(65536));
        assert_eq!(parse_bytes("64K"), Ok(64 << 10));
        assert_eq!(parse_bytes("256M"), Ok(DEFAULT_OUTPUT_BUFFER));
        assert_eq!(parse_bytes("1g"), Ok(1 << 30));
        for bad in ["", "0", "-1", "1.5M", "M", "1T", "99999999999G"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
    }
}
