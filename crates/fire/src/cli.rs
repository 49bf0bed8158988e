//! `fire`'s command line: the flags, their checks, and what of them the output header records.

use crate::api::Api;
use crate::sink::DEFAULT_OUTPUT_BUFFER;
use clap::Parser;
use hyper::header::HeaderValue;
use hyper::Uri;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use tokenpipe_format::clock::RunClock;
use tokenpipe_format::Header;

/// Execute a request schedule against an OpenAI-compatible streaming endpoint.
///
/// Reads the NDJSON schedule written by `arrivals` (stdin, or FILE), sends each request at its
/// scheduled instant (open loop) or keeps N in flight (closed loop), and writes NDJSON events to
/// stdout: a `sent` record per request, a `token` record per streamed event that carries
/// content (stamped when its bytes are read), and exactly one `done` record per request,
/// failures included. Nothing is written until the input is known to be a schedule.
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
#[command(name = "fire", version, after_help = EXAMPLES)]
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

    /// Bearer token for the `Authorization` header.
    #[arg(long, env = "OPENAI_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,

    /// Closed loop: requests kept in flight, overriding the schedule's concurrency (ignored, with
    /// a warning, for open-loop schedules).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub concurrency: Option<u64>,

    /// Seconds a request may take from send to the end of its stream.
    #[arg(long, value_name = "SECONDS", default_value_t = 1800.0)]
    pub timeout: f64,

    /// Do not send `ignore_eos: true` (then the model may stop before `max_tokens`).
    #[arg(long)]
    pub no_ignore_eos: bool,

    /// Network threads (1 runs everything on one thread, the cheapest for a few thousand
    /// streams).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: u16,

    /// Also write the events to FILE, from fire's own writer: the file is complete (whole
    /// lines) after Ctrl-C even when a `tee` or `reduce` downstream died of it.
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,

    /// Output bytes held for a slow reader before fire waits for it and writes a `stall`
    /// record (suffixes K, M, G: KiB, MiB, GiB).
    #[arg(long, value_name = "BYTES", default_value = "256M", value_parser = parse_bytes)]
    pub output_buffer: u64,

    /// TLS, HTTP/2, connections (docs/fire/transport.md).
    #[command(flatten)]
    pub transport: crate::http::TransportArgs,

    /// Schedule to read instead of stdin.
    pub file: Option<PathBuf>,
}

const EXAMPLES: &str = "\
Examples:
  # open loop, Poisson arrivals at 2 requests/s
  arrivals --rate 2 --num-prompts 100 | fire --url http://127.0.0.1:8000/v1 > run.ndjson

  # closed loop through the chat API, keeping 16 requests in flight
  arrivals --concurrency 16 -n 256 | fire --url http://127.0.0.1:8000/v1 --api chat | reduce | table

  # https with a private CA, HTTP/2 on 4 connections
  arrivals --concurrency 512 -n 4096 | fire --url https://gpu-1:8443/v1 --cacert ca.pem --http2 --connections 4 > run.ndjson

  # keep the raw events (whole even after Ctrl-C) and the summary
  arrivals --rate 1 -n 50 | fire --url http://127.0.0.1:8000/v1 --save run.ndjson | reduce | table";

const _: () = assert!(
    DEFAULT_OUTPUT_BUFFER == 256 << 20,
    "keep --output-buffer's default in step"
);

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

/// The per-request time limit, checked.
pub fn timeout(args: &Args) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(args.timeout)
        .ok()
        .filter(|t| !t.is_zero())
        .ok_or_else(|| {
            tokenpipe_cli::bad_input(format!(
                "--timeout {}: expected a positive number of seconds that fits a duration",
                args.timeout
            ))
        })
}

/// The endpoint's URI and the model list's, from the base URL.
pub fn endpoint(base: &str, api: Api) -> anyhow::Result<(Uri, Uri)> {
    let base = base.trim_end_matches('/');
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(tokenpipe_cli::bad_input(format!(
            "--url {base}: expected an http:// or https:// URL"
        )));
    }
    let parse = |s: String| {
        s.parse::<Uri>()
            .map_err(|e| tokenpipe_cli::bad_input(format!("--url {base}: {e}")))
    };
    Ok((
        parse(format!("{base}{}", api.path()))?,
        parse(format!("{base}/models"))?,
    ))
}

/// The `Authorization` header for an API key.
pub fn auth(api_key: Option<&str>) -> anyhow::Result<Option<HeaderValue>> {
    api_key
        .map(|k| {
            HeaderValue::from_str(&format!("Bearer {k}"))
                .map_err(|_| tokenpipe_cli::bad_input("--api-key contains invalid characters"))
        })
        .transpose()
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
        "url".to_string(),
        serde_json::json!(args.url.as_deref().unwrap_or_default()),
    );
    params.insert("api".to_string(), serde_json::json!(args.api));
    params.insert("model".to_string(), serde_json::json!(model));
    params.insert("timeout_s".to_string(), serde_json::json!(args.timeout));
    params.insert(
        "ignore_eos".to_string(),
        serde_json::json!(!args.no_ignore_eos),
    );
    if let Some(c) = args.concurrency {
        params.insert("concurrency".to_string(), serde_json::json!(c));
    }
    let mut header = Header::measured(
        "fire",
        format!("fire-{run_hash:016x}"),
        redact_key(tokenpipe_cli::argv()),
        clock,
    );
    header.params = params;
    header.upstream = Header::chain(upstream);
    header
}

/// Keeps API keys given on the command line out of the recorded argv.
fn redact_key(mut argv: Vec<String>) -> Vec<String> {
    let mut redact_next = false;
    for a in argv.iter_mut() {
        if redact_next {
            *a = "***".into();
            redact_next = false;
        } else if a == "--api-key" {
            redact_next = true;
        } else if a.starts_with("--api-key=") {
            *a = "--api-key=***".into();
        }
    }
    argv
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
        let (u, m) = endpoint("http://127.0.0.1:8000/v1/", Api::Chat).unwrap();
        assert_eq!(u.to_string(), "http://127.0.0.1:8000/v1/chat/completions");
        assert_eq!(m.to_string(), "http://127.0.0.1:8000/v1/models");
        let (u, _) = endpoint("https://x:8443/v1", Api::Completions).unwrap();
        assert_eq!(u.to_string(), "https://x:8443/v1/completions");
        assert!(endpoint("ftp://x/v1", Api::Chat).is_err());
        assert!(endpoint("http://exa mple/v1", Api::Chat).is_err());
    }

    #[test]
    fn api_key_never_recorded() {
        let a = redact_key(vec![
            "fire".into(),
            "--api-key".into(),
            "sk-1".into(),
            "--api-key=sk-2".into(),
        ]);
        assert!(!a.join(" ").contains("sk-"));
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
