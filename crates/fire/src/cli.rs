//! `fire`'s command line: the flags, their checks, and what of them the output header records.

use crate::api::{self, Api, StreamUsage};
use crate::headers;
use crate::sink::DEFAULT_OUTPUT_BUFFER;
use clap::Parser;
use hyper::header::HeaderMap;
use hyper::Uri;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use tokenpipe_format::clock::RunClock;
use tokenpipe_format::vocab;
use tokenpipe_format::Header;

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
/// Ctrl-C (or SIGTERM) stops sending, ends requests in flight as `cancelled` and the requests
/// still readable without waiting as `not_sent`, and exits 130 (143) after writing everything
/// measured; during model discovery it skips discovery and does the same. A second Ctrl-C quits
/// at once: what is buffered is written (whole lines only), requests in flight get no `done`.
///
/// A reader slower than the run (a `tee` to a slow disk, a stopped pager) is buffered up to
/// --output-buffer bytes; past that, fire waits for it, which delays its time stamps, and writes
/// a `stall` record for every such wait.
#[derive(Debug, Parser)]
#[command(name = "fire", version, after_help = AFTER_HELP)]
pub struct Args {
    /// Base URL of the API, up to and including `/v1` (http:// or https://).
    #[arg(long, env = "TOKENPIPE_URL", required_unless_present = "generate")]
    pub url: Option<String>,

    /// Which endpoint to call.
    #[arg(long, value_enum, default_value = "completions")]
    pub api: Api,

    /// Model name to send; by default the first model listed by `GET {url}/models`.
    #[arg(long)]
    pub model: Option<String>,

    /// Bearer token for the `Authorization` header (never written anywhere: the output records
    /// only that one was given).
    #[arg(long, env = "OPENAI_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,

    /// Path of the generation endpoint on the host of --url, for servers whose API is not at
    /// `{url}/completions` (`{url}/chat/completions`): e.g. `/openai/deployments/m/completions`.
    /// A full `http://` URL is taken as it is. --url stays the base of `GET {url}/models`.
    #[arg(long, value_name = "PATH")]
    pub endpoint: Option<String>,

    /// Extra HTTP header on every request, models list included: "Name: value" (repeatable).
    /// Values of headers whose name looks secret (authorization, *key*, *token*, cookie) are
    /// recorded as `***`. An `Authorization` header replaces --api-key.
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub header: Vec<String>,

    /// JSON object merged into every request body (`'{"top_p":0.9}'`). A request's own
    /// `extra_body` wins for a member both give; fire's own members (model, prompt, messages,
    /// max_tokens, stream, stream_options, ignore_eos) cannot be set this way.
    #[arg(long, value_name = "JSON")]
    pub extra_body: Option<String>,

    /// Sampling temperature sent in every body; it replaces a `temperature` from --extra-body or
    /// a request's `extra_body`. Not sent unless given (the server's default applies).
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    pub temperature: Option<f64>,

    /// Usage reporting asked of the stream: `on` (`stream_options.include_usage`), `continuous`
    /// (also vLLM's `continuous_usage_stats`, usage on every event), `off` (no `stream_options`,
    /// for servers that refuse it; tokens are then counted one per event).
    #[arg(long, value_enum, value_name = "HOW", default_value = "on")]
    pub stream_usage: StreamUsage,

    /// Closed loop: requests kept in flight, overriding the schedule's concurrency (ignored, with
    /// a warning, for open-loop schedules).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub concurrency: Option<u64>,

    /// Longest a request may take from send to the end of its stream (`timeout`): a duration
    /// such as 500ms, 90s, 30m, or plain seconds.
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = positive_duration)]
    pub timeout: Duration,

    /// Longest wait for a TCP connection to be made (`connect_timeout`).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = positive_duration)]
    pub connect_timeout: Duration,

    /// Longest wait from the send to the first event with content (`first_token_timeout`);
    /// off unless given, since queueing on a loaded server is a wait worth measuring.
    #[arg(long, value_name = "DURATION", value_parser = positive_duration)]
    pub first_token_timeout: Option<Duration>,

    /// Longest silence between two reads of a response body, once its first byte came
    /// (`idle_timeout`), so that a stalled stream fails in a minute rather than at --timeout;
    /// 0 turns it off.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = tokenpipe_cli::parse_duration)]
    pub idle_timeout: Duration,

    /// Run every request even when the first ones all fail to connect (by default the run
    /// stops after the first 8 requests to end all failed to connect).
    #[arg(long)]
    pub keep_going: bool,

    /// Do not send `ignore_eos: true` (then the model may stop before `max_tokens`).
    #[arg(long)]
    pub no_ignore_eos: bool,

    /// Write each request's generated text (reasoning left out) in its `done` record
    /// (`done.text`), to check answers or replay a conversation.
    #[arg(long)]
    pub record_text: bool,

    /// Network threads (1 runs everything on one thread, the cheapest for a few thousand
    /// streams).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: u16,

    /// Show the progress view on stderr even when it is not a terminal (then as a plain line a
    /// second). Without it the view shows only on a terminal.
    #[arg(long, conflicts_with = "quiet")]
    pub progress: bool,

    /// No progress view and no end-of-run counts. Warnings that the measurements may be
    /// distorted (the client did not keep up, a stalled output) and errors still print.
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// Also write the events to FILE, from fire's own writer: the file is complete (whole
    /// lines) after Ctrl-C even when a `tee` or `reduce` downstream died of it.
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,

    /// Output bytes held for a slow reader before fire waits for it and writes a `stall`
    /// record (suffixes K, M, G: KiB, MiB, GiB).
    #[arg(long, value_name = "BYTES", default_value = "256M", value_parser = parse_bytes)]
    pub output_buffer: u64,

    // --- server metrics ---
    /// Read the server's Prometheus metrics before the first request and after the last (and
    /// on Ctrl-C), each as a `server_metrics` record, so that `reduce` reports the server's own
    /// token counts and mean TTFT, ITL and E2E latency beside the client's. The URL is the base
    /// URL without `/v1`, then `/metrics` (where vLLM serves it), unless one is given. A scrape
    /// that fails is a warning, never a failed run. Give another URL with `=`
    /// (`--server-metrics=http://host:9090/metrics`): after a space it would be read as the
    /// input file. The API key and -H headers go only to the host the requests go to.
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "", require_equals = true)]
    pub server_metrics: Option<String>,

    /// TLS, HTTP/2, connections (docs/fire/transport.md).
    #[command(flatten)]
    pub transport: crate::http::TransportArgs,

    /// Schedule to read instead of stdin.
    pub file: Option<PathBuf>,
}

/// The help's closing section: exit statuses and examples.
const AFTER_HELP: &str = "\
Exit status:
  0    at least one request succeeded (or nothing was sent, or stdout's reader went away)
  1    no request succeeded; the server could not be reached (the model list, or the first 8
       requests to end all failed to connect: the run stops early unless --keep-going)
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

  # keep the raw events (whole even after Ctrl-C) and the summary
  arrivals --rate 1 -n 50 | fire --url http://127.0.0.1:8000/v1 --save run.ndjson | reduce | table";

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

/// Opens the `--save` file, refusing to truncate the schedule it would overwrite.
pub fn save_file(args: &Args) -> anyhow::Result<Option<(String, std::fs::File)>> {
    let Some(path) = &args.save else {
        return Ok(None);
    };
    if let Some(input) = &args.file {
        if same_file(path, input) {
            return Err(tokenpipe_cli::bad_input(format!(
                "--save {}: that is the schedule being read; name another file",
                path.display()
            )));
        }
    }
    let file = std::fs::File::create(path)
        .map_err(|e| tokenpipe_cli::bad_input(format!("--save {}: {e}", path.display())))?;
    Ok(Some((path.display().to_string(), file)))
}

/// True when both paths exist and name the same file.
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The endpoint's URI and the model list's: `{url}` + the API's path (or `--endpoint`: a path
/// on the same host, or a whole URL), and `{url}/models`.
pub fn endpoint(base: &str, api: Api, path: Option<&str>) -> anyhow::Result<(Uri, Uri)> {
    let base = base.trim_end_matches('/');
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(tokenpipe_cli::bad_input(format!(
            "--url {base}: expected an http:// or https:// URL"
        )));
    }
    let parse = |flag: &str, s: String| {
        s.parse::<Uri>()
            .map_err(|e| tokenpipe_cli::bad_input(format!("{flag} {s}: {e}")))
    };
    let models = parse("--url", format!("{base}/models"))?;
    let generate = match path {
        None => parse("--url", format!("{base}{}", api.path()))?,
        Some(p) if p.starts_with("http://") || p.starts_with("https://") => {
            parse("--endpoint", p.to_string())?
        }
        Some(p) if p.starts_with('/') => {
            let scheme = models.scheme_str().unwrap_or("http");
            let host = models.authority().map(|a| a.as_str()).unwrap_or_default();
            parse("--endpoint", format!("{scheme}://{host}{p}"))?
        }
        Some(p) => {
            return Err(tokenpipe_cli::bad_input(format!(
            "--endpoint {p}: expected a path starting with / (or a whole http:// or https:// URL)"
        )))
        }
    };
    Ok((generate, models))
}

/// The extra headers of every request (`-H`, `--api-key`), checked.
pub fn request_headers(args: &Args) -> anyhow::Result<HeaderMap> {
    headers::request_headers(&args.header, args.api_key.as_deref())
        .map_err(tokenpipe_cli::bad_input)
}

/// The body settings that come from flags (`--temperature`, `--extra-body`, `--stream-usage`),
/// checked; the model and `ignore_eos` are filled in by the caller.
pub fn body_options(args: &Args) -> anyhow::Result<api::BodyOptions> {
    if let Some(t) = args.temperature {
        if !t.is_finite() || t < 0.0 {
            return Err(tokenpipe_cli::bad_input(format!(
                "--temperature {t}: expected a finite number, zero or more"
            )));
        }
    }
    let extra = match &args.extra_body {
        None => None,
        Some(text) => {
            let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
                tokenpipe_cli::bad_input(format!("--extra-body: not valid JSON: {e}"))
            })?;
            let serde_json::Value::Object(map) = value else {
                return Err(tokenpipe_cli::bad_input(
                    "--extra-body: expected a JSON object such as '{\"top_p\":0.9}'",
                ));
            };
            if let Some(own) = map.keys().find(|k| api::is_own_member(k)) {
                return Err(tokenpipe_cli::bad_input(format!(
                    "--extra-body: member \"{own}\" is set by fire itself and cannot be replaced (use its own flag)"
                )));
            }
            Some(map)
        }
    };
    Ok(api::BodyOptions {
        temperature: args.temperature,
        extra,
        stream_usage: args.stream_usage,
        ..api::BodyOptions::default()
    })
}

/// The idle timeout, `None` when 0 turned it off.
pub fn idle_timeout(args: &Args) -> Option<Duration> {
    Some(args.idle_timeout).filter(|d| !d.is_zero())
}

/// The header of fire's output: how the run was made, with the upstream chain.
pub fn header(
    args: &Args,
    upstream: &Header,
    clock: &RunClock,
    run_hash: u64,
    model: &Option<String>,
) -> Header {
    let mut params = BTreeMap::new();
    params.insert(
        vocab::URL.key.to_string(),
        serde_json::json!(args.url.as_deref().unwrap_or_default()),
    );
    params.insert(vocab::API.key.to_string(), serde_json::json!(args.api));
    params.insert(vocab::MODEL.key.to_string(), serde_json::json!(model));
    params.insert(
        "timeout_s".to_string(),
        serde_json::json!(args.timeout.as_secs_f64()),
    );
    params.insert(
        "connect_timeout_s".to_string(),
        serde_json::json!(args.connect_timeout.as_secs_f64()),
    );
    params.insert(
        "first_token_timeout_s".to_string(),
        serde_json::json!(args.first_token_timeout.map(|d| d.as_secs_f64())),
    );
    params.insert(
        "idle_timeout_s".to_string(),
        serde_json::json!(idle_timeout(args).map(|d| d.as_secs_f64())),
    );
    params.insert(
        "stream_usage".to_string(),
        serde_json::json!(args.stream_usage),
    );
    params.insert("keep_going".to_string(), serde_json::json!(args.keep_going));
    params.insert(
        "record_text".to_string(),
        serde_json::json!(args.record_text),
    );
    // Only whether a key was given: its value is never written.
    params.insert(
        "api_key".to_string(),
        serde_json::json!(args.api_key.is_some()),
    );
    if let Some(e) = &args.endpoint {
        params.insert("endpoint".to_string(), serde_json::json!(e));
    }
    if !args.header.is_empty() {
        params.insert(
            "headers".to_string(),
            serde_json::Value::Object(headers::recorded(&args.header)),
        );
    }
    if let Some(t) = args.temperature {
        params.insert("temperature".to_string(), serde_json::json!(t));
    }
    if let Some(e) = &args.extra_body {
        // Checked by `body_options` before the header is written.
        let parsed = serde_json::from_str::<serde_json::Value>(e).unwrap_or_default();
        params.insert("extra_body".to_string(), parsed);
    }
    params.insert(
        "ignore_eos".to_string(),
        serde_json::json!(!args.no_ignore_eos),
    );
    if let Some(c) = args.concurrency {
        params.insert(vocab::CONCURRENCY.key.to_string(), serde_json::json!(c));
    }
    let mut header = Header::measured(
        "fire",
        format!("fire-{run_hash:016x}"),
        headers::redact_argv(tokenpipe_cli::argv()),
        clock,
    );
    header.params = params;
    // A shard's run is that part of the schedule: say so on fire's own header too, so that
    // merged runs tell their parts apart without reading the chain.
    header.shard = upstream.shard;
    header.upstream = Header::chain(upstream);
    header
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_definition_is_valid() {
        tokenpipe_cli::command::<Args>().debug_assert();
    }

    #[test]
    fn endpoints_and_bad_urls() {
        let (u, m) = endpoint("http://127.0.0.1:8000/v1/", Api::Chat, None).unwrap();
        assert_eq!(u.to_string(), "http://127.0.0.1:8000/v1/chat/completions");
        assert_eq!(m.to_string(), "http://127.0.0.1:8000/v1/models");
        let (u, m) = endpoint("http://h:1/v1", Api::Chat, Some("/gw/generate")).unwrap();
        assert_eq!(u.to_string(), "http://h:1/gw/generate");
        assert_eq!(m.to_string(), "http://h:1/v1/models");
        let (u, _) = endpoint("http://h:1/v1", Api::Chat, Some("http://o:2/x")).unwrap();
        assert_eq!(u.to_string(), "http://o:2/x");
        assert!(endpoint("http://h/v1", Api::Chat, Some("gw/generate")).is_err());
        let (u, _) = endpoint("https://x:8443/v1", Api::Completions, None).unwrap();
        assert_eq!(u.to_string(), "https://x:8443/v1/completions");
        let (u, _) = endpoint("https://x:8443/v1", Api::Chat, Some("/gw")).unwrap();
        assert_eq!(u.to_string(), "https://x:8443/gw");
        assert!(endpoint("ftp://x/v1", Api::Chat, None).is_err());
        assert!(endpoint("http://exa mple/v1", Api::Chat, None).is_err());
    }

    fn parse(words: &[&str]) -> Result<Args, clap::Error> {
        let m = tokenpipe_cli::command::<Args>()
            .try_get_matches_from(["fire", "--url", "http://x/v1"].iter().chain(words))?;
        <Args as clap::FromArgMatches>::from_arg_matches(&m)
    }

    #[test]
    fn durations_and_their_defaults() {
        let a = parse(&[]).unwrap();
        assert_eq!(a.timeout, Duration::from_secs(1800));
        assert_eq!(a.connect_timeout, Duration::from_secs(10));
        assert_eq!(a.first_token_timeout, None);
        assert_eq!(idle_timeout(&a), Some(Duration::from_secs(60)));
        let a = parse(&[
            "--timeout",
            "90",
            "--idle-timeout",
            "0",
            "--first-token-timeout",
            "500ms",
        ])
        .unwrap();
        assert_eq!(a.timeout, Duration::from_secs(90));
        assert_eq!(idle_timeout(&a), None);
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
    fn body_flags_are_checked() {
        let opts = body_options(
            &parse(&["--extra-body", r#"{"top_p":0.5}"#, "--temperature", "0"]).unwrap(),
        )
        .unwrap();
        assert_eq!(opts.temperature, Some(0.0));
        assert_eq!(opts.extra.unwrap()["top_p"], 0.5);
        for bad in [
            vec!["--extra-body", "[1]"],
            vec!["--extra-body", "{oops"],
            vec!["--extra-body", r#"{"stream":false}"#],
            vec!["--temperature", "-1"],
            vec!["--temperature", "NaN"],
        ] {
            let e = body_options(&parse(&bad).unwrap())
                .err()
                .unwrap()
                .to_string();
            assert!(e.starts_with(bad[0]), "{e}");
        }
    }

    #[test]
    fn save_never_overwrites_the_schedule() {
        let dir = std::env::temp_dir().join(format!("tokenpipe-fire-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sched = dir.join("sched.ndjson");
        std::fs::write(&sched, "schedule").unwrap();
        let args = |save: &str| {
            let m = tokenpipe_cli::command::<Args>().get_matches_from([
                "fire",
                "--url",
                "http://x/v1",
                "--save",
                save,
                "sched.ndjson",
            ]);
            <Args as clap::FromArgMatches>::from_arg_matches(&m).unwrap()
        };
        let mut same = args(dir.join("./sched.ndjson").to_str().unwrap());
        same.file = Some(sched.clone());
        assert!(save_file(&same).is_err());
        assert_eq!(std::fs::read_to_string(&sched).unwrap(), "schedule");
        let mut other = args(dir.join("events.ndjson").to_str().unwrap());
        other.file = Some(sched.clone());
        assert!(save_file(&other).unwrap().is_some());
        let _ = std::fs::remove_dir_all(&dir);
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
