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
mod failure;
pub mod headers;
pub mod http;
pub mod input;
pub mod job;
pub mod limits;
pub mod live;
pub mod salt;
pub mod scrape;
pub mod selfcheck;
pub mod session;
pub mod signals;
pub mod sink;
pub mod sse_split;
pub mod stop;
mod sync;
pub mod verdict;

use anyhow::Context;
pub use cli::Args;
use dispatch::{Dispatch, Dispatcher, Pace};
use exchange::Ctx;
use http::HttpClient;
use sink::{Output, Sink};
use std::io::BufRead;
use std::io::IsTerminal;
use std::sync::Arc;
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
    let mut options = args.transport.options(https, in_flight);
    options.connect_timeout = Some(args.connect_timeout);
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
    let url = args.url.clone().unwrap_or_default();
    let (uri, models_uri) = cli::endpoint(&url, args.api, args.endpoint.as_deref())?;
    let headers = cli::request_headers(&args)?;
    let body_options = cli::body_options(&args)?;
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
    let (salt_spec, scheduled_requests) = match &first {
        Some(Record::Schedule(s)) => (s.salt.clone(), s.requests),
        _ => (None, None),
    };
    let duration_ns = first.as_ref().and_then(dispatch::duration_of);
    let gate = Arc::new(job::credit::Gate::for_schedule(first.as_ref()));
    let first = first.filter(|r| matches!(r, Record::Request(_)));

    let network_cpu = Arc::new(selfcheck::ThreadCpu::default());
    let runtime = if args.threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .on_thread_stop(selfcheck::on_thread_stop(&network_cpu))
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(usize::from(args.threads))
            .enable_all()
            .on_thread_stop(selfcheck::on_thread_stop(&network_cpu))
            .build()?
    };
    let (client, preconnected) = start_client(&args, &runtime, &*policy, &uri, &stop)?;
    let model = match &args.model {
        Some(m) => Some(m.clone()),
        None => {
            let found = runtime.block_on(discover::model(
                &client,
                models_uri.clone(),
                &headers,
                args.timeout,
                &stop,
            ));
            match found {
                discover::Discovery::Found(m) => Some(m),
                discover::Discovery::Unknown | discover::Discovery::Stopped => None,
                discover::Discovery::Unreachable(why) => {
                    return Err(tokenpipe_cli::failure(
                        tokenpipe_cli::EXIT_FAILURE,
                        format!("cannot connect to {url} (GET {models_uri}: {why}); is the server up and --url right? Nothing was sent"),
                    ));
                }
            }
        }
    };
    warn_if_fds_short(policy.in_flight_limit());
    let scraper = match &args.server_metrics {
        Some(given) => Some(
            runtime
                .block_on(async { scrape::Scraper::new(&url, given, &headers, &args.transport) })?,
        ),
        None => None,
    };
    // Before the clock starts, so that it delays no request: its `at_ns` is 0.
    let before = scraper.as_ref().and_then(|scraper| {
        let phase = tokenpipe_format::ScrapePhase::Before;
        runtime.block_on(scraper.scrape(&client, phase, || 0, &stop))
    });

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
                live::say(&format!(
                    "fire: warning: writing {shown}: {e}; the saved events end here"
                ));
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
    if let Some(before) = &before {
        sink.record(before);
    }

    let counters = Arc::new(live::Counters::default());
    let progress = if live::wanted(args.progress, args.quiet, std::io::stderr().is_terminal()) {
        live::Progress::start(counters.clone(), scheduled_requests).ok()
    } else {
        None
    };

    let dialect = args.api.dialect();
    let (queue_tx, queue_rx) = tokio::sync::mpsc::unbounded_channel();
    let (priority_tx, priority_rx) = tokio::sync::mpsc::unbounded_channel();
    let (events_tx, events_rx) = dispatch::feed::channel();
    let source = reader.source_name().to_string();
    dispatch::feed::spawn(reader, first, gate.clone(), events_tx.clone())
        .context("starting the schedule reader thread")?;
    let dispatcher = Dispatcher {
        pace: Pace {
            clock,
            stop: stop.clone(),
        },
        queue: queue_tx,
        priority: priority_tx,
        events: events_rx,
        gate,
        sink: sink.clone(),
        dialect,
        body: api::BodyOptions {
            model,
            ignore_eos: !args.no_ignore_eos,
            ..body_options
        },
        policy,
        salt,
        duration_ns,
        source,
        live: counters.clone(),
    };
    let dispatcher = std::thread::Builder::new()
        .name("fire-dispatch".into())
        .spawn(move || dispatcher.run())
        .context("starting the dispatcher thread")?;

    let ctx = Arc::new(Ctx {
        client,
        uri,
        dialect,
        headers,
        clock,
        sink: sink.clone(),
        limits: limits::Limits {
            first_token: args.first_token_timeout,
            idle: cli::idle_timeout(&args),
            whole: Some(args.timeout),
        },
        connect_timeout: args.connect_timeout,
        stop: stop.clone(),
        run_hash,
        verdict: verdict::Verdict::new(args.keep_going),
        live: counters.clone(),
        record_text: args.record_text,
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
        let inbox = dispatch::Inbox {
            queue: queue_rx,
            priority: priority_rx,
            ends: events_tx,
        };
        dispatch::send_loop(&ctx, inbox).await;
        ticker.abort();
        if let (Some(scraper), false) = (&scraper, stop.reason() == Some(StopReason::OutputClosed))
        {
            let phase = tokenpipe_format::ScrapePhase::After;
            let now = || clock.now_ns();
            if let Some(after) = scraper.scrape(&ctx.client, phase, now, &ctx.stop).await {
                sink.record(&after);
            }
        }
    });
    // Ending the runtime ends its threads, each adding its CPU time; the calling thread ran
    // network work too (all of it with one thread).
    drop(runtime);
    network_cpu.add_current_thread();
    let dispatched = dispatcher
        .join()
        .map_err(|_| anyhow::anyhow!("dispatcher thread panicked"))?;
    if let Some(progress) = progress {
        progress.finish();
    }
    let counts = counters.snapshot();
    let client = selfcheck::record(
        &counts,
        clock.now_ns(),
        network_cpu.total_ns(),
        u32::from(args.threads),
        selfcheck::process_usage(),
    );
    sink.record(&Record::Client(client.clone()));
    sink.finish()?;
    report(&args, &stop, &counts, &client);
    if stop.reason() != Some(StopReason::OutputClosed) && ctx.verdict.saw_not_found() {
        if let Some(hint) = discover::v1_hint(&url) {
            eprintln!("fire: requests were answered 404 Not Found: {hint}");
        }
    }
    dispatched?;
    match stop.reason() {
        Some(StopReason::Unreachable) => Err(tokenpipe_cli::failure(
            tokenpipe_cli::EXIT_FAILURE,
            ctx.verdict.early_stop_message(&ctx.uri.to_string()),
        )),
        Some(StopReason::OutputClosed) => Ok(()),
        Some(other) => match other.exit() {
            Some((code, message)) => Err(tokenpipe_cli::failure(code, message)),
            None => Ok(()),
        },
        None => ctx
            .verdict
            .outcome()
            .map_err(|m| tokenpipe_cli::failure(tokenpipe_cli::EXIT_FAILURE, m)),
    }
}

/// File descriptors a run needs besides one socket per request in flight: standard streams,
/// the schedule and --save files, the runtime's epoll and wakers, and some slack.
const FD_RESERVE: u64 = 64;

/// Says before the run when the in-flight limit does not fit the open-file limit (requests past
/// it would fail to connect). An open loop without a cap has no limit to check.
fn warn_if_fds_short(limit: Option<Dispatch>) {
    let n = match limit {
        Some(Dispatch::Limit(n) | Dispatch::Cap(n)) => n,
        _ => return,
    };
    let Some((soft, hard)) = tokenpipe_cli::open_file_limit() else {
        return;
    };
    let needed = n.saturating_add(FD_RESERVE);
    if needed <= soft {
        return;
    }
    let hard = if hard == u64::MAX {
        "unlimited".to_string()
    } else {
        hard.to_string()
    };
    eprintln!(
        "fire: warning: {n} requests in flight need about {needed} open files, but this process may open {soft} (hard limit {hard}); requests past that fail as `connect`. Raise it before running fire: `ulimit -n {needed}` in the shell (as root, or after raising the hard limit in /etc/security/limits.conf), or LimitNOFILE={needed} in a systemd unit"
    );
}

/// The end of the run on stderr: the counts (unless `--quiet`), then why the client did not
/// keep up, if it did not (even with `--quiet`: the numbers it wrote may be distorted). Nothing
/// when the reader of the output went away: a `fire | head` ends without chatter.
fn report(args: &Args, stop: &Stop, counts: &live::Snapshot, client: &tokenpipe_format::Client) {
    if stop.reason() == Some(StopReason::OutputClosed) {
        return;
    }
    if !args.quiet {
        eprintln!("fire: {}", selfcheck::counts_line(counts));
    }
    for warning in &client.warnings {
        eprintln!("fire: warning: the client did not keep up: {warning}");
    }
}
