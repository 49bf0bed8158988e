//! The last step of a run: wait for it to end, then give its account. The send loop runs on
//! this thread, in the network runtime, until every request has ended; the metrics scrape after
//! the run follows. Then the threads are joined, the `client` record is written last, the end
//! of the run is told on stderr, and how the run ended becomes fire's exit status.

use super::start::Running;
use crate::config::Config;
use crate::discover;
use crate::dispatch::{self, Inbox};
use crate::error::Error;
use crate::exchange::Ctx;
use crate::live::Snapshot;
use crate::scrape::Scraper;
use crate::selfcheck;
use crate::stop::{Stop, StopReason};
use std::sync::Arc;
use std::time::Duration;
use tokenpipe_format::{Client, Record, ScrapePhase};
use tokio::runtime::Runtime;

/// Waits for the run to end and gives its account; `Err` says how the run failed or was
/// stopped.
pub(super) fn report(running: Running) -> Result<(), Error> {
    let Running {
        config,
        runtime,
        ctx,
        inbox,
        scraper,
        dispatcher,
        progress,
        network_cpu,
    } = running;
    // With one thread, this one runs every request: its account starts with the send loop.
    let calling_thread = selfcheck::Span::now();
    send_all(&runtime, &ctx, inbox, scraper.as_ref());
    // Ending the runtime ends its workers, each adding its CPU time and lifetime.
    drop(runtime);
    if config.threads == 1 {
        network_cpu.add_since(calling_thread);
    }
    let dispatched = dispatcher.join().map_err(|_| Error::DispatcherPanicked)?;
    if let Some(progress) = progress {
        progress.finish();
    }
    let counts = ctx.live.snapshot();
    // A refused schedule is bad input, not a run: it gets no account of the client's pace.
    let client = dispatched.is_ok().then(|| {
        let mut client = selfcheck::record(
            &counts,
            ctx.clock.now_ns(),
            network_cpu.cpu(),
            u32::from(config.threads),
            selfcheck::process_usage(),
        );
        client.server_clock_offset_ms = ctx.server_clock.bounds_ms();
        client
    });
    if let Some(client) = &client {
        ctx.sink.record(&Record::Client(client.clone()));
    }
    ctx.sink.finish()?;
    print_end(&config, &ctx.stop, &counts, client.as_ref());
    if ctx.stop.reason() != Some(StopReason::OutputClosed) && ctx.verdict.saw_not_found() {
        if let Some(hint) = discover::v1_hint(&crate::userinfo::redact(&config.url)) {
            eprintln!("fire: requests were answered 404 Not Found: {hint}");
        }
    }
    dispatched?;
    outcome(&ctx)
}

/// Runs the send loop until every request has ended, writing out what the output holds every
/// 200 ms meanwhile, then scrapes the server's metrics after the run (unless the reader of the
/// output went away).
fn send_all(runtime: &Runtime, ctx: &Arc<Ctx>, inbox: Inbox, scraper: Option<&Scraper>) {
    runtime.block_on(async {
        let ticker_sink = ctx.sink.clone();
        let ticker = tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_millis(200));
            loop {
                every.tick().await;
                ticker_sink.flush_now();
            }
        });
        dispatch::send_loop(ctx, inbox).await;
        ticker.abort();
        if let (Some(scraper), false) =
            (scraper, ctx.stop.reason() == Some(StopReason::OutputClosed))
        {
            let phase = ScrapePhase::After;
            let now = || ctx.clock.now_ns();
            if let Some(after) = scraper.scrape(&ctx.client, phase, now, &ctx.stop).await {
                ctx.sink.record(&after);
            }
        }
    });
}

/// The end of the run on stderr: the counts (unless `--quiet`), then why the client did not
/// keep up, if it did not (even with `--quiet`: the numbers it wrote may be distorted). Nothing
/// when the reader of the output went away: a `fire | head` ends without chatter. A refused
/// schedule has no `client`, so no verdict on its pace.
fn print_end(config: &Config, stop: &Stop, counts: &Snapshot, client: Option<&Client>) {
    if stop.reason() == Some(StopReason::OutputClosed) {
        return;
    }
    if !config.quiet {
        eprintln!("fire: {}", selfcheck::counts_line(counts));
    }
    for warning in client.iter().flat_map(|c| &c.warnings) {
        eprintln!("fire: warning: the client did not keep up: {warning}");
    }
}

/// How the run ended: a stop's own ending (none when the reader went away), the stop for a
/// server that could not be reached, and otherwise the verdict on the requests that ended.
fn outcome(ctx: &Ctx) -> Result<(), Error> {
    match ctx.stop.reason() {
        Some(StopReason::Unreachable) => Err(ctx.verdict.stop_error(&ctx.uri.to_string())),
        Some(StopReason::OutputClosed) => Ok(()),
        Some(other) => match other.exit() {
            Some((ending, message)) => Err(Error::Stopped { ending, message }),
            None => Ok(()),
        },
        None => ctx.verdict.outcome(&ctx.uri.to_string()),
    }
}
