//! The second step of a run: everything started, in the order that keeps its times honest.
//! First, while no clock runs, the network (`network`: runtime, client, connections, model,
//! the scrape before the run), so that none of it delays a request. Then the clock starts, and
//! with it the output (its header first), the progress view, the schedule reader and the
//! dispatcher. The send loop is not started here: it runs on the calling thread (`report`).
use super::network::Network;
use super::plan::{Plan, Schedule};
use crate::api::BodyOptions;
use crate::config::Config;
use crate::dispatch::{self, Dispatcher, Inbox, Pace};
use crate::error::Error;
use crate::exchange::Ctx;
use crate::http::HttpClient;
use crate::limits::Limits;
use crate::live::{self, Counters, Progress};
use crate::salt::RunSalt;
use crate::scrape::Scraper;
use crate::selfcheck::ThreadCpu;
use crate::sink::{Output, Sink};
use crate::stop::{Stop, StopReason};
use crate::verdict::Verdict;
use hyper::header::HeaderMap;
use hyper::Uri;
use std::io::IsTerminal;
use std::sync::Arc;
use std::thread::JoinHandle;
use tokenpipe_format::clock::RunClock;
use tokenpipe_format::Record;
use tokio::runtime::Runtime;

/// A run under way: what the last step waits on and gives account of.
pub(super) struct Running {
    /// The run's settings.
    pub config: Config,
    /// The network runtime, which the send loop runs on.
    pub runtime: Runtime,
    /// What every request task shares: client, output, clock, limits, stop, verdict, counts.
    pub ctx: Arc<Ctx>,
    /// What the send loop hears from the dispatcher, and where it reports ends.
    pub inbox: Inbox,
    /// The `--server-metrics` and `--scrape` scrapers, for the scrapes during and after the
    /// run.
    pub scrapers: Vec<Scraper>,
    /// The dispatcher thread; it ends with the error of a malformed schedule line, if any.
    pub dispatcher: JoinHandle<Result<(), Error>>,
    /// The progress view, on a terminal.
    pub progress: Option<Progress>,
    /// CPU time of the network threads, each adding its own as it ends.
    pub network_cpu: Arc<ThreadCpu>,
}

/// Starts everything `plan` needs; `Err` is bad input, a server that cannot be reached, or a
/// thread or runtime that could not be started.
pub(super) fn start(mut plan: Plan) -> Result<Running, Error> {
    if let Some(at_ns) = plan.config.start.at_ns {
        crate::start_at::wait_before_setup(at_ns, &plan.stop)?;
    }
    let mut network = Network::ready(&plan)?;
    if let Some(at_ns) = plan.config.start.at_ns {
        crate::start_at::wait(at_ns, &plan.stop)?;
    }
    let mut recorder = Recorder::start(&mut plan, &network)?;
    let Plan {
        config,
        uri,
        headers,
        body_options,
        stop,
        schedule,
        ..
    } = plan;
    let counters = Arc::new(Counters::default());
    let progress = if live::wanted(
        config.progress,
        config.quiet,
        std::io::stderr().is_terminal(),
    ) {
        Progress::start(counters.clone(), schedule.requests).ok()
    } else {
        None
    };
    let body = BodyOptions {
        model: network.model.take(),
        ..body_options
    };
    let pace = Pace {
        clock: recorder.clock,
        stop: stop.clone(),
    };
    let mut schedule = schedule;
    // The adapt step runs on the reader thread, as each request is read.
    schedule.rewrite = network
        .prelude
        .take()
        .and_then(|p| p.adapt)
        .map(|adapt| -> dispatch::feed::Rewrite { Box::new(move |req| adapt.apply(req)) });
    let (dispatcher, inbox) = start_dispatcher(
        schedule,
        &config,
        body,
        recorder.salt.take(),
        pace,
        &recorder.sink,
        &counters,
    )?;
    let ctx = request_context(
        &config,
        uri,
        headers,
        network.client,
        recorder,
        stop,
        counters,
    );
    Ok(Running {
        config,
        runtime: network.runtime,
        ctx: Arc::new(ctx),
        inbox,
        scrapers: std::mem::take(&mut network.scrapers),
        dispatcher,
        progress,
        network_cpu: network.network_cpu,
    })
}

/// The run's clock and the output it stamps, started together once the network is ready.
struct Recorder {
    clock: RunClock,
    sink: Arc<Sink>,
    /// The run's unique hash: its id, its requests' `x-request-id`s, its salt.
    run_hash: u64,
    /// The salt drawn from the hash, when the schedule asks for one.
    salt: Option<RunSalt>,
}

impl Recorder {
    /// Starts the clock and the output, and writes the header (with the salt, when there is
    /// one) and the scrape before the run.
    fn start(plan: &mut Plan, network: &Network) -> Result<Self, Error> {
        let clock = RunClock::start();
        let sink = open_output(&plan.config, plan.saved.take(), clock, &plan.stop)?;
        plan.last_resort.arm(sink.clone());
        let run_hash = tokenpipe_format::ids::unique_run_hash(clock.origin_ns());
        let salt = plan
            .schedule
            .salt
            .as_ref()
            .map(|spec| RunSalt::new(spec, run_hash));
        let mut header =
            plan.config
                .header(&plan.schedule.upstream, &clock, run_hash, &network.model);
        plan.config
            .transport
            .record(&mut header.params, network.preconnected);
        crate::start_at::record(&mut header, &plan.config.start, plan.schedule.requests);
        if let Some(prelude) = &network.prelude {
            header.params.extend(prelude.params());
        }
        if let Some(salt) = &salt {
            // Kept with the data, so that a run's exact prompts can be rebuilt from its schedule.
            header.params.insert(
                tokenpipe_format::vocab::SALT.key.into(),
                serde_json::json!(salt.text),
            );
        }
        sink.record(&Record::Header(header));
        for before in &network.before {
            sink.record(before);
        }
        Ok(Self {
            clock,
            sink,
            run_hash,
            salt,
        })
    }
}

/// What every request task shares, for requests to `uri` through `client`.
fn request_context(
    config: &Config,
    uri: Uri,
    headers: HeaderMap,
    client: HttpClient,
    recorder: Recorder,
    stop: Arc<Stop>,
    live: Arc<Counters>,
) -> Ctx {
    Ctx {
        client,
        uri,
        dialect: config.chosen_api().dialect(),
        headers,
        clock: recorder.clock,
        sink: recorder.sink,
        limits: Limits {
            first_token: config.first_token_timeout,
            idle: config.idle_timeout,
            whole: Some(config.timeout),
        },
        connect_timeout: config.connect_timeout,
        stop,
        run_hash: recorder.run_hash,
        verdict: Verdict::new(config.on_unreachable()),
        live,
        record_text: config.record_text,
        server_clock: crate::server_clock::ServerClock::new(&recorder.clock),
    }
}

/// Starts the output's writer threads: stdout, whose reader going away stops the run, and the
/// `--save` file, whose failure only ends what is saved.
fn open_output(
    config: &Config,
    saved: Option<(String, std::fs::File)>,
    clock: RunClock,
    stop: &Arc<Stop>,
) -> Result<Arc<Sink>, Error> {
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
    Sink::start(outputs, config.output_buffer, clock).map_err(|source| Error::Thread {
        what: "output writer threads",
        source,
    })
}

/// Starts the schedule reader and the dispatcher threads, which release `schedule`'s requests
/// with bodies encoded in the API's dialect; returns the dispatcher and the send loop's inbox.
fn start_dispatcher(
    schedule: Schedule,
    config: &Config,
    body: BodyOptions,
    salt: Option<RunSalt>,
    pace: Pace,
    sink: &Arc<Sink>,
    live: &Arc<Counters>,
) -> Result<(JoinHandle<Result<(), Error>>, Inbox), Error> {
    let (queue_tx, queue_rx) = tokio::sync::mpsc::unbounded_channel();
    let (priority_tx, priority_rx) = tokio::sync::mpsc::unbounded_channel();
    let (events_tx, events_rx) = dispatch::feed::channel();
    let source = schedule.reader.source_name().to_string();
    dispatch::feed::spawn(
        schedule.reader,
        schedule.first,
        schedule.gate.clone(),
        events_tx.clone(),
        schedule.rewrite,
    )
    .map_err(|source| Error::Thread {
        what: "schedule reader thread",
        source,
    })?;
    let dispatcher = Dispatcher {
        pace,
        queue: queue_tx,
        priority: priority_tx,
        events: events_rx,
        gate: schedule.gate,
        sink: sink.clone(),
        dialect: config.chosen_api().dialect(),
        body,
        policy: schedule.policy,
        salt,
        duration_ns: schedule.duration_ns,
        source,
        live: live.clone(),
    };
    let dispatcher = std::thread::Builder::new()
        .name("fire-dispatch".into())
        .spawn(move || dispatcher.run())
        .map_err(|source| Error::Thread {
            what: "dispatcher thread",
            source,
        })?;
    let inbox = Inbox {
        queue: queue_rx,
        priority: priority_rx,
        ends: events_tx,
    };
    Ok((dispatcher, inbox))
}
