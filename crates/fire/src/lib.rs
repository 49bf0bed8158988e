//! `fire`: executes a schedule against an OpenAI-compatible streaming endpoint and writes one
//! record per sent request, per content event and per finished request.
//!
//! Threads: the dispatcher (reads the schedule, decides send instants, see [`pacer`]), the
//! network runtime (tokio + hyper; one task per request, see [`exchange`]), and the writer
//! (owns stdout, see [`sink`]). Times are stamped on `CLOCK_MONOTONIC` relative to the run
//! start written in the header.

pub mod body;
pub mod chunk;
pub mod exchange;
pub mod pacer;
pub mod scan;
pub mod sink;
pub mod sse;
pub mod stop;

use anyhow::Context;
use body::{Api, BodyOptions};
use clap::Parser;
use exchange::{Ctx, HttpClient};
use http_body_util::BodyExt;
use hyper::header::HeaderValue;
use hyper::Uri;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use pacer::{Dispatch, Pacer};
use sink::Sink;
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use stop::{Stop, StopReason};
use tokenpipe_format::clock::RunClock;
use tokenpipe_format::{Header, Record, RecordReader, RecordType};

/// Execute a request schedule against an OpenAI-compatible streaming endpoint.
///
/// Reads the NDJSON schedule written by `arrivals` (stdin, or FILE), sends each request at its
/// scheduled instant (open loop) or keeps N in flight (closed loop), and writes NDJSON events to
/// stdout: a `sent` record per request, a `token` record per streamed event that carries
/// content (stamped when its bytes are read), and exactly one `done` record per request,
/// failures included. Ctrl-C (or SIGTERM) stops sending, ends requests in flight as `cancelled`
/// and unsent ones as `not_sent`, and exits 130 (143) after writing everything measured.
#[derive(Debug, Parser)]
#[command(name = "fire", version, after_help = EXAMPLES)]
pub struct Args {
    /// Base URL of the API, up to and including `/v1` (http:// only for now).
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

    /// Schedule to read instead of stdin.
    pub file: Option<PathBuf>,
}

const EXAMPLES: &str = "\
Examples:
  # open loop, Poisson arrivals at 2 requests/s
  arrivals --rate 2 --num-prompts 100 | fire --url http://127.0.0.1:8000/v1 > run.ndjson

  # closed loop through the chat API, keeping 16 requests in flight
  arrivals --concurrency 16 -n 256 | fire --url http://127.0.0.1:8000/v1 --api chat | reduce | table

  # keep the raw events and the summary
  arrivals --rate 1 -n 50 | fire --url http://127.0.0.1:8000/v1 | tee events.ndjson | reduce | table";

/// Parses the process arguments and runs.
pub fn main() -> anyhow::Result<()> {
    let Some(args) = tokenpipe_cli::parse_or_generate::<Args>()? else {
        return Ok(());
    };
    tokenpipe_cli::raise_fd_limit();
    run(args)
}

fn endpoint(base: &str, api: Api) -> anyhow::Result<(Uri, Uri)> {
    let base = base.trim_end_matches('/');
    if !base.starts_with("http://") {
        return Err(tokenpipe_cli::bad_input(format!(
            "--url {base}: only http:// URLs are supported"
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

fn build_client() -> HttpClient {
    let mut http = HttpConnector::new();
    http.set_nodelay(true);
    http.enforce_http(true);
    Client::builder(TokioExecutor::new())
        .pool_timer(TokioTimer::new())
        .timer(TokioTimer::new())
        .pool_max_idle_per_host(usize::MAX)
        .pool_idle_timeout(Duration::from_secs(90))
        .build(http)
}

/// Asks the server which model it serves; `None` (with a warning) if it cannot tell us.
async fn discover_model(
    client: &HttpClient,
    models: Uri,
    auth: Option<&HeaderValue>,
) -> Option<String> {
    let attempt = async {
        let mut req = hyper::Request::get(models.clone());
        if let Some(auth) = auth {
            req = req.header(hyper::header::AUTHORIZATION, auth.clone());
        }
        let req = req
            .body(http_body_util::Full::new(bytes::Bytes::new()))
            .map_err(|e| e.to_string())?;
        let resp = client
            .request(req)
            .await
            .map_err(|e| exchange::error_chain(&e))?;
        let status = resp.status();
        let bytes = tokio::time::timeout(Duration::from_secs(30), resp.into_body().collect())
            .await
            .map_err(|_| "timed out".to_string())?
            .map_err(|e| e.to_string())?
            .to_bytes();
        if !status.is_success() {
            return Err(format!("HTTP {status}"));
        }
        let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
        v.pointer("/data/0/id")
            .and_then(|m| m.as_str())
            .map(str::to_string)
            .ok_or_else(|| "no model listed".to_string())
    };
    match tokio::time::timeout(Duration::from_secs(30), attempt).await {
        Ok(Ok(m)) => Some(m),
        Ok(Err(e)) => {
            eprintln!("fire: warning: GET {models}: {e}; sending requests without a model name (use --model)");
            None
        }
        Err(_) => {
            eprintln!("fire: warning: GET {models}: timed out; sending requests without a model name (use --model)");
            None
        }
    }
}

/// Runs a whole benchmark with parsed arguments.
pub fn run(args: Args) -> anyhow::Result<()> {
    let timeout = Duration::try_from_secs_f64(args.timeout)
        .ok()
        .filter(|t| !t.is_zero())
        .ok_or_else(|| {
            tokenpipe_cli::bad_input(format!(
                "--timeout {}: expected a positive number of seconds that fits a duration",
                args.timeout
            ))
        })?;
    let url = args.url.clone().unwrap_or_default();
    let (uri, models_uri) = endpoint(&url, args.api)?;
    let auth = match &args.api_key {
        Some(k) => Some(
            HeaderValue::from_str(&format!("Bearer {k}"))
                .map_err(|_| tokenpipe_cli::bad_input("--api-key contains invalid characters"))?,
        ),
        None => None,
    };
    let inputs = tokenpipe_cli::open_inputs(args.file.as_slice())?;
    let input = inputs.into_iter().next().context("no input to read")?;
    let mut reader = RecordReader::new(input.reader, input.name)
        .keep(&[RecordType::Schedule, RecordType::Request])
        .reject(
            &[
                RecordType::Sent,
                RecordType::Token,
                RecordType::Done,
                RecordType::Stall,
                RecordType::Summary,
                RecordType::Stamp,
            ],
            "a schedule (what arrivals writes, and fire reads)",
        );
    let upstream = reader.read_header()?;

    let runtime = if args.threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(usize::from(args.threads))
            .enable_all()
            .build()?
    };
    let client = runtime.block_on(async { build_client() });
    let model = match &args.model {
        Some(m) => Some(m.clone()),
        None => runtime.block_on(discover_model(&client, models_uri, auth.as_ref())),
    };

    let stop = Arc::new(Stop::default());
    let stop_on_close = stop.clone();
    let sink = Sink::new(std::io::stdout(), move || {
        stop_on_close.trigger(StopReason::OutputClosed)
    });
    let clock = RunClock::start();
    let run_hash = tokenpipe_format::ids::unique_run_hash(clock.origin_ns());
    sink.record(&Record::Header(header(
        &args, &upstream, &clock, run_hash, &model,
    )));

    let (jobs_tx, jobs_rx) = tokio::sync::mpsc::channel::<Dispatch>(JOB_QUEUE);
    let pacer = Pacer {
        clock,
        jobs: jobs_tx,
        stop: stop.clone(),
        sink: sink.clone(),
        body: BodyOptions {
            api: args.api,
            model,
            ignore_eos: !args.no_ignore_eos,
        },
        concurrency: args.concurrency,
    };
    let dispatcher = std::thread::Builder::new()
        .name("fire-dispatch".into())
        .spawn(move || pacer.run(reader))
        .context("starting the dispatcher thread")?;

    let ctx = Arc::new(Ctx {
        client,
        uri,
        auth,
        clock,
        sink: sink.clone(),
        timeout,
        stop: stop.clone(),
        run_hash,
        failures: Mutex::new(Vec::new()),
    });
    runtime.block_on(async {
        let signal_stop = stop.clone();
        let signals = tokio::spawn(async move { stop_on_signals(&signal_stop).await });
        let ticker_sink = sink.clone();
        let ticker = tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_millis(200));
            loop {
                every.tick().await;
                ticker_sink.flush_now();
            }
        });
        send_loop(&ctx, jobs_rx).await;
        signals.abort();
        ticker.abort();
    });
    let dispatched = dispatcher
        .join()
        .map_err(|_| anyhow::anyhow!("dispatcher thread panicked"))?;
    sink.finish().context("writing output")?;
    if stop.reason() != Some(StopReason::OutputClosed) {
        report_failures(&ctx);
    }
    dispatched?;
    match stop.reason().and_then(StopReason::exit) {
        Some((code, message)) => Err(tokenpipe_cli::failure(code, message)),
        None => Ok(()),
    }
}

/// Stops the run on SIGINT (Ctrl-C) or SIGTERM (`kill`, `timeout`, container stop), so that
/// either way every request ends in a record and the buffers reach stdout.
async fn stop_on_signals(stop: &Stop) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        eprintln!("fire: warning: cannot watch for SIGINT/SIGTERM; an interrupted run loses its last records");
        return;
    };
    tokio::select! {
        _ = int.recv() => stop.trigger(StopReason::Interrupted),
        _ = term.recv() => stop.trigger(StopReason::Terminated),
    }
}

/// Requests encoded ahead by the dispatcher and waiting for their turn.
const JOB_QUEUE: usize = 4096;

/// Starts each released request as a task, keeping at most the dispatcher's limit in flight.
/// In closed loop the next request starts here, in the runtime, the moment one ends: its
/// `scheduled_ns` is that instant, and the delay to its `sent_ns` is the client's own.
async fn send_loop(ctx: &Arc<Ctx>, mut jobs: tokio::sync::mpsc::Receiver<Dispatch>) {
    let mut tasks = tokio::task::JoinSet::new();
    let mut limit = usize::MAX;
    let mut freed_at: VecDeque<u64> = VecDeque::new();
    loop {
        tokio::select! {
            biased;
            ended = tasks.join_next(), if !tasks.is_empty() => {
                if let (Some(Ok(at_ns)), true) = (ended, limit != usize::MAX) {
                    freed_at.push_back(at_ns);
                }
            }
            msg = jobs.recv(), if tasks.len() < limit => match msg {
                None => break,
                Some(Dispatch::Limit(n)) => limit = usize::try_from(n).unwrap_or(usize::MAX).max(1),
                Some(Dispatch::Job(mut job)) => {
                    if ctx.stop.is_stopped() {
                        pacer::not_sent(&ctx.sink, &ctx.clock, job.id, job.echo);
                        continue;
                    }
                    if job.scheduled_ns.is_none() {
                        job.scheduled_ns = Some(freed_at.pop_front().unwrap_or_else(|| ctx.clock.now_ns()));
                    }
                    tasks.spawn(exchange::run(ctx.clone(), job));
                }
            },
        }
    }
    while tasks.join_next().await.is_some() {}
}

fn report_failures(ctx: &Ctx) {
    let f = ctx.failures.lock().unwrap_or_else(|p| p.into_inner());
    if f.is_empty() {
        return;
    }
    let total: u64 = f.iter().map(|(_, n)| n).sum();
    let kinds: Vec<String> = f
        .iter()
        .map(|(k, n)| format!("{}: {n}", k.as_str()))
        .collect();
    eprintln!("fire: {total} requests failed ({})", kinds.join(", "));
}

fn header(
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
    let mut header = Header::new(
        "fire",
        format!("fire-{run_hash:016x}"),
        redact_key(tokenpipe_cli::argv()),
    );
    header.started_at = Some(clock.anchor());
    header.monotonic_origin_ns = Some(clock.origin_ns());
    header.host = tokenpipe_format::clock::host_name();
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
        assert!(endpoint("https://x/v1", Api::Chat).is_err());
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
}
