//! Everything a run makes ready before its clock starts, so that none of it delays a request
//! or counts in its times: the network runtime, the client and the connections it opens ahead,
//! the model (asked of the server unless `--model` names it), a warning when the open-file
//! limit is short of the requests in flight, and the metrics scrape before the run.

use super::plan::Plan;
use crate::benchy::probe::Prober;
use crate::benchy::{self, Prelude};
use crate::config::Config;
use crate::discover::{self, Discovery};
use crate::dispatch::{Dispatch, Policy};
use crate::error::Error;
use crate::http::{self, HttpClient};
use crate::scrape::Scraper;
use crate::selfcheck::{self, ThreadCpu};
use crate::stop::Stop;
use hyper::Uri;
use std::sync::Arc;
use tokenpipe_format::{Record, ScrapePhase};
use tokio::runtime::Runtime;

/// What is made ready before the clock starts.
pub(super) struct Network {
    /// The network runtime; the send loop runs on it later.
    pub runtime: Runtime,
    /// CPU time of the runtime's threads, each adding its own as it ends.
    pub network_cpu: Arc<ThreadCpu>,
    /// The client every request goes through.
    pub client: HttpClient,
    /// Connections opened ahead of the run.
    pub preconnected: u64,
    /// The model every request names (`--model`, or the server's first).
    pub model: Option<String>,
    /// The `--server-metrics` scraper, then one per `--scrape` URL, kept for the scrapes
    /// during and after the run.
    pub scrapers: Vec<Scraper>,
    /// The `server_metrics` records of the scrapes before the run.
    pub before: Vec<Record>,
    /// What llama-benchy's prelude found, for a batch schedule.
    pub prelude: Option<Prelude>,
}

impl Network {
    /// The runtime, the client with its connections, the model and the first scrape, in that
    /// order; `Err` is bad input or a server that cannot be reached.
    pub(super) fn ready(plan: &Plan) -> Result<Self, Error> {
        let config = &plan.config;
        let network_cpu = Arc::new(ThreadCpu::default());
        let runtime = runtime(config.threads, &network_cpu)?;
        let (client, preconnected) = start_client(
            config,
            &runtime,
            &*plan.schedule.policy,
            plan.schedule.requests,
            &plan.uri,
            &plan.stop,
        )?;
        let model = match &config.model {
            Some(m) => Some(m.clone()),
            None => discover_model(plan, &runtime, &client)?,
        };
        let prelude = match plan.schedule.batch {
            true => Some(prelude(plan, &runtime, &client, model.as_deref())?),
            false => None,
        };
        warn_if_fds_short(
            plan.schedule.policy.in_flight_limit(),
            plan.schedule.requests,
        );
        let scrapers = runtime.block_on(async {
            let (url, headers, transport) = (&config.url, &plan.models_headers, &config.transport);
            let mut scrapers = Vec::new();
            if let Some(given) = &config.server_metrics {
                scrapers.push(Scraper::new(url, given, headers, transport)?);
            }
            for other in &config.scrape {
                scrapers.push(Scraper::other(url, other, headers, transport)?);
            }
            Ok::<_, Error>(scrapers)
        })?;
        // Before the clock starts, so that it delays no request: its `at_ns` is 0.
        let before = scrapers
            .iter()
            .filter_map(|scraper| {
                let phase = ScrapePhase::Before;
                runtime.block_on(scraper.scrape(&client, phase, || 0, &plan.stop))
            })
            .collect();
        Ok(Self {
            runtime,
            network_cpu,
            client,
            preconnected,
            model,
            scrapers,
            before,
            prelude,
        })
    }
}

/// llama-benchy's steps before its first batch: the warm-up requests, the adapt step's
/// deltas and the measured latency (see `benchy`).
fn prelude(
    plan: &Plan,
    runtime: &Runtime,
    client: &HttpClient,
    model: Option<&str>,
) -> Result<Prelude, Error> {
    let config = &plan.config;
    let (tokenizer, depth) = benchy::Settings::from_header(&plan.schedule.upstream);
    let settings = benchy::Settings {
        warmup: config.warmup,
        adapt_prompt: config.adapt_prompt,
        latency_mode: config.latency_mode,
        tokenizer,
        depth,
        api: config.chosen_api(),
        generate: plan.uri.clone(),
        models: plan.models_uri.clone(),
    };
    let prober = Prober {
        client,
        headers: &plan.headers,
        models_headers: &plan.models_headers,
        model,
        stop: &plan.stop,
    };
    runtime.block_on(benchy::run(&prober, &settings))
}

/// The network runtime: `threads` worker threads, or the calling thread alone for 1. Each
/// worker adds its CPU time and lifetime to `network_cpu` as it ends.
fn runtime(threads: u16, network_cpu: &Arc<ThreadCpu>) -> std::io::Result<Runtime> {
    let mut builder = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(usize::from(threads));
        b
    };
    builder
        .enable_all()
        .on_thread_start(selfcheck::on_thread_start())
        .on_thread_park(selfcheck::on_thread_park())
        .on_thread_stop(selfcheck::on_thread_stop(network_cpu))
        .build()
}

/// Builds the run's HTTP client and, when asked (by default for a closed loop), opens its
/// connections: before the clock starts, so that no request waits on them. Returns the client
/// and the connections it opened: no more than the run can use (see [`usable_in_flight`]).
fn start_client(
    config: &Config,
    runtime: &Runtime,
    policy: &dyn Policy,
    requests: Option<u64>,
    uri: &Uri,
    stop: &Stop,
) -> Result<(HttpClient, u64), Error> {
    let (closed, in_flight) = match policy.in_flight_limit() {
        Some(Dispatch::Limit(n)) => (true, Some(n)),
        Some(Dispatch::Cap(n)) => (false, Some(n)),
        _ => (false, None),
    };
    let https = uri.scheme_str() == Some("https");
    config.transport.warn(https);
    let mut options = config.transport.options(https, in_flight);
    options.connect_timeout = Some(config.connect_timeout);
    let client = runtime.block_on(async { HttpClient::new(&options) })?;
    let fd_room = tokenpipe_cli::open_file_limit().map(|(soft, _)| soft.saturating_sub(FD_RESERVE));
    let usable = in_flight.map(|n| usable_in_flight(n, requests, fd_room));
    if let Some(n) = config.transport.to_preconnect(closed, usable) {
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

/// The model the server lists first, `None` when it names none (or the run was stopped);
/// `Err` when the server cannot be reached at all, since then nothing could be sent.
fn discover_model(
    plan: &Plan,
    runtime: &Runtime,
    client: &HttpClient,
) -> Result<Option<String>, Error> {
    let found = runtime.block_on(discover::model(
        client,
        plan.models_uri.clone(),
        &plan.models_headers,
        plan.config.timeout,
        &plan.stop,
    ));
    match found {
        Discovery::Found(m) => Ok(Some(m)),
        Discovery::Unknown | Discovery::Stopped => Ok(None),
        Discovery::Unreachable(why) => Err(Error::Unreachable {
            url: crate::userinfo::redact(&plan.config.url),
            models: plan.models_uri.to_string(),
            why,
        }),
    }
}

/// How many connections are worth opening before a run that keeps `in_flight` requests in
/// flight: no more than the schedule's `requests` (when it says), since 19,000 slots for 4
/// requests use 4 connections, and no more than the open files left (`fd_room`), since a
/// connect past the limit fails anyway. At least one, so that a run is never left with none.
fn usable_in_flight(in_flight: u64, requests: Option<u64>, fd_room: Option<u64>) -> u64 {
    let mut n = in_flight;
    for bound in [requests, fd_room].into_iter().flatten() {
        n = n.min(bound.max(1));
    }
    n
}

/// File descriptors a run needs besides one socket per request in flight: standard streams,
/// the schedule and --save files, the runtime's epoll and wakers, and some slack.
const FD_RESERVE: u64 = 64;

/// Says before the run when the in-flight limit does not fit the open-file limit (requests past
/// it would fail to connect). An open loop without a cap has no limit to check, and a schedule
/// that says how many requests it has never has more than those in flight.
fn warn_if_fds_short(limit: Option<Dispatch>, requests: Option<u64>) {
    let n = match limit {
        Some(Dispatch::Limit(n) | Dispatch::Cap(n)) => n.min(requests.unwrap_or(u64::MAX)),
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

#[cfg(test)]
mod tests {
    use super::usable_in_flight;

    #[test]
    fn preconnects_only_what_the_run_can_use() {
        assert_eq!(usable_in_flight(8, None, None), 8);
        assert_eq!(usable_in_flight(19_000, Some(4), None), 4);
        assert_eq!(usable_in_flight(19_000, Some(40_000), Some(1_000)), 1_000);
        assert_eq!(usable_in_flight(4, Some(100), Some(960)), 4);
        assert_eq!(usable_in_flight(0, Some(4), None), 0);
        assert_eq!(usable_in_flight(8, Some(0), Some(0)), 1);
    }
}
