//! `fire`: executes a schedule against an OpenAI-compatible streaming endpoint and writes one
//! record per sent request, per content event and per finished request.
//!
//! This file only wires the parts together. Threads: signals (see [`signals`]), the dispatcher
//! (reads the schedule, decides send instants, see [`dispatch`]), the network runtime (tokio +
//! hyper; one task per request, see [`exchange`], over the client of [`http`]), and a writer per
//! output (see [`sink`]).
//! Times are stamped on `CLOCK_MONOTONIC` relative to the run start written in the header.

pub mod api;
pub mod cli;
pub mod discover;
pub mod dispatch;
pub mod exchange;
pub mod http;
pub mod input;
pub mod job;
pub mod salt;
pub mod signals;
pub mod sink;
pub mod sse_split;
pub mod stop;

use anyhow::Context;
pub use cli::Args;
use dispatch::{Dispatch, Dispatcher, Pace};
use exchange::Ctx;
use http::HttpClient;
use sink::{Output, Sink};
use std::io::BufRead;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use stop::{Stop, StopReason};
use tokenpipe_format::clock::RunClock;
use tokenpipe_format::{Header, ReadError, Record, RecordReader, RecordType};

/// Parses the process arguments and runs.
pub fn main() -> anyhow::Result<()> {
    let Some(args) = tokenpipe_cli::parse_or_generate::<Args>()? else {
        return Ok(());
    };
    tokenpipe_cli::raise_fd_limit();
    run(args)
}

/// Builds the run's HTTP client and, when asked (by default for a closed loop), opens its
/// connections: before the clock starts, so that no request waits on them. Returns the client
/// and the connections it opened.
fn start_client(
    args: &Args,
    runtime: &tokio::runtime::Runtime,
    policy: &dyn dispatch::Policy,
    uri: &hyper::Uri,
    stop: &Stop,
) -> anyhow::Result<(HttpClient, u64)> {
    let (closed, in_flight) = match policy.in_flight_limit() {
        Some(Dispatch::Limit(n)) => (true, Some(n)),
        Some(Dispatch::Cap(n)) => (false, Some(n)),
        _ => (false, None),
    };
    let https = uri.scheme_str() == Some("https");
    args.transport.warn(https);
    let options = args.transport.options(https, in_flight);
    let client = runtime.block_on(async { HttpClient::new(&options) })?;
    if let Some(n) = args.transport.preconnect(closed, in_flight) {
        let done = runtime.block_on(http::preconnect::preconnect(&client, uri, n, stop));
        if let (Some(problem), None) = (&done.problem, stop.reason()) {
            eprintln!(
                "fire: warning: pre-connect: {} of {n} connections opened ({problem}); the first requests connect as they are sent",
                done.opened
            );
        }
    }
    let opened = client.connections_opened();
    Ok((client, opened))
}

/// Reads the schedule's header and then up to its first `schedule` or `request` record, so that
/// nothing is written before the input is known to be a schedule (and not, say, fire's own
/// events, which the reader refuses naming the tool that reads them).
fn read_ahead<R: BufRead>(
    reader: &mut RecordReader<R>,
) -> Result<(Header, Option<Record>), ReadError> {
    let header = reader.read_header()?;
    loop {
        match reader.next_record()? {
            Some(Record::Header(_)) => continue,
            other => return Ok((header, other)),
        }
    }
}

/// Runs a whole benchmark with parsed arguments.
pub fn run(args: Args) -> anyhow::Result<()> {
    let timeout = cli::timeout(&args)?;
    let url = args.url.clone().unwrap_or_default();
    let (uri, models_uri) = cli::endpoint(&url, args.api)?;
    let auth = cli::auth(args.api_key.as_deref())?;
    let stop = Arc::new(Stop::default());
    let last_resort = signals::watch(stop.clone());
    let saved = cli::save_file(&args)?;

    let input = input::open(args.file.as_deref(), stop.clone())?;
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
    let (upstream, first) = match read_ahead(&mut reader) {
        Ok(found) => found,
        Err(e) => {
            if let Some((code, _)) = stop.reason().and_then(StopReason::exit) {
                return Err(tokenpipe_cli::failure(
                    code,
                    "stopped before a schedule was read; nothing was sent",
                ));
            }
            return Err(e.into());
        }
    };
    let policy = match &first {
        Some(r) => dispatch::policy_for(r, args.concurrency).map_err(|m| {
            tokenpipe_cli::bad_input(format!(
                "{}: line {}: {m}",
                reader.source_name(),
                reader.line()
            ))
        })?,
        None => Box::new(dispatch::Open { cap: None }),
    };
    let salt_spec = match &first {
        Some(Record::Schedule(s)) => s.salt.clone(),
        _ => None,
    };
    let first = first.filter(|r| matches!(r, Record::Request(_)));

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
    let (client, preconnected) = start_client(&args, &runtime, &*policy, &uri, &stop)?;
    let model = match &args.model {
        Some(m) => Some(m.clone()),
        None => runtime.block_on(discover::model(&client, models_uri, auth.as_ref(), &stop)),
    };

    let clock = RunClock::start();
    let stop_on_close = stop.clone();
    let mut outputs = vec![Output {
        name: "<stdout>".into(),
        out: Box::new(std::io::stdout()),
        on_error: Some(Box::new(move |_: &std::io::Error| {
            stop_on_close.trigger(StopReason::OutputClosed)
        })),
    }];
    if let Some((name, file)) = saved {
        let shown = name.clone();
        outputs.push(Output {
            name,
            out: Box::new(file),
            on_error: Some(Box::new(move |e: &std::io::Error| {
                eprintln!("fire: warning: writing {shown}: {e}; the saved events end here");
            })),
        });
    }
    let sink = Sink::start(outputs, args.output_buffer, clock)
        .context("starting the output writer threads")?;
    last_resort.arm(sink.clone());
    let run_hash = tokenpipe_format::ids::unique_run_hash(clock.origin_ns());
    let salt = salt_spec.map(|spec| salt::RunSalt::new(&spec, run_hash));
    let mut header = cli::header(&args, &upstream, &clock, run_hash, &model);
    args.transport.record(&mut header.params, preconnected);
    if let Some(salt) = &salt {
        // Kept with the data, so that a run's exact prompts can be rebuilt from its schedule.
        header
            .params
            .insert("salt".into(), serde_json::json!(salt.text));
    }
    sink.record(&Record::Header(header));

    let dialect = args.api.dialect();
    let (jobs_tx, jobs_rx) = tokio::sync::mpsc::channel::<Dispatch>(dispatch::JOB_QUEUE);
    let dispatcher = Dispatcher {
        pace: Pace {
            clock,
            stop: stop.clone(),
        },
        jobs: jobs_tx,
        sink: sink.clone(),
        dialect,
        body: api::BodyOptions {
            model,
            ignore_eos: !args.no_ignore_eos,
        },
        policy,
        salt,
    };
    let dispatcher = std::thread::Builder::new()
        .name("fire-dispatch".into())
        .spawn(move || dispatcher.run(reader, first))
        .context("starting the dispatcher thread")?;

    let ctx = Arc::new(Ctx {
        client,
        uri,
        dialect,
        auth,
        clock,
        sink: sink.clone(),
        timeout,
        stop: stop.clone(),
        run_hash,
        failures: Mutex::new(Vec::new()),
    });
    runtime.block_on(async {
        let ticker_sink = sink.clone();
        let ticker = tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_millis(200));
            loop {
                every.tick().await;
                ticker_sink.flush_now();
            }
        });
        dispatch::send_loop(&ctx, jobs_rx).await;
        ticker.abort();
    });
    let dispatched = dispatcher
        .join()
        .map_err(|_| anyhow::anyhow!("dispatcher thread panicked"))?;
    sink.finish()?;
    if stop.reason() != Some(StopReason::OutputClosed) {
        report_failures(&ctx);
    }
    dispatched?;
    match stop.reason().and_then(StopReason::exit) {
        Some((code, message)) => Err(tokenpipe_cli::failure(code, message)),
        None => Ok(()),
    }
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
