//! Shards merged into one run: the parts of one plan (`arrivals --shard i/n`, each sent by its
//! own `fire`, possibly on another host) are folded into one [`RunReducer`], on one clock, so
//! the plan gets one summary whose percentiles come from all its requests (docs/metrics.md,
//! "Shards").
//!
//! **Which parts belong together.** A part's plan is the nearest `arrivals` header of its chain:
//! its `params` and `seed`, and the shard count, in a canonical form ([`key`]). Parts may come
//! one after another in a stream or in separate files, in any order. A part whose index the
//! open plan already holds starts a new plan of the same key (the next repeat of a sharded
//! benchmark). How far apart parts started never decides which plan they join, so the result
//! does not depend on the order of the inputs; the spread is judged instead ([`parts`]).
//!
//! **One clock.** Each part's times are shifted by its `started_at` minus a reference, so that
//! all parts line up on the wall clock. Times are unsigned, and a part read later may have
//! started earlier, so the reference is [`SLACK_NS`] (a day) before the start of the first part
//! read: a part that started more than that before it is refused. The merged run's time zero is
//! therefore the reference, not any part's start; figures that are differences of times
//! (latencies, the duration from the first send to the last done) do not depend on it.

mod key;
mod parts;

pub use key::plan_key;

use crate::aggregate::{Aggregator, RunReducer, SummaryOptions};
use crate::error::{Error, RequestError, ShardError};
use crate::request::RequestResult;
use crate::run::{fold_run, Emit, FoldOptions, RunEnd};
use parts::PartRead;
use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use tokenpipe_format::{
    clock, Client, Header, IdSet, Record, RecordReader, Sent, Stall, Summary, Token,
};

/// How long before the start of the first part read another part may have started: a day, so
/// that no real plan's parts are refused (their spread is judged instead, docs/metrics.md
/// "Shards") while times stay far from overflowing.
pub const SLACK_NS: i128 = 86_400_000_000_000;

/// One plan whose parts are being folded.
pub struct OpenPlan {
    key: String,
    /// How many parts the plan has.
    pub count: u32,
    parts: BTreeSet<u32>,
    /// What each part read was, by index: for the summary's `parts`.
    read: BTreeMap<u32, PartRead>,
    reducer: RunReducer,
    ids: IdSet,
    client: Option<Client>,
    reference_ns: i128,
    /// The input header of the first part read: the merged run's configuration.
    pub header: Header,
    /// The merged run's header in reduce's output.
    pub output: Header,
    /// The merged run's label.
    pub label: String,
    /// The parts' run ids, in the order read.
    pub part_runs: Vec<String>,
}

impl OpenPlan {
    /// A plan opened by its first part, `header`.
    /// `output` is reduce's header for it, whose run id becomes the merged run's.
    pub fn new(
        header: &Header,
        mut output: Header,
        label: String,
        reducer: RunReducer,
    ) -> Result<Self, ShardError> {
        let (key, count) = plan_key(header).ok_or_else(|| ShardError::NotAShard {
            run: header.run_id.clone(),
        })?;
        output.run_id = format!("{}-reduce", merged_run_id(header));
        Ok(OpenPlan {
            key,
            count,
            parts: BTreeSet::new(),
            read: BTreeMap::new(),
            reducer,
            ids: IdSet::new(),
            client: None,
            reference_ns: started_at_ns(header)? - SLACK_NS,
            header: header.clone(),
            output,
            label,
            part_runs: Vec::new(),
        })
    }

    /// Whether the part `header` belongs to this plan and is not in it yet.
    pub fn takes(&self, header: &Header) -> bool {
        let index = header.shard.map(|s| s.index);
        plan_key(header).is_some_and(|(key, _)| key == self.key)
            && index.is_some_and(|i| !self.parts.contains(&i))
    }

    /// Folds the part that `header` starts from `reader` into the plan, shifted onto the plan's
    /// clock. A request id that another part already held is bad input.
    pub fn fold<R: BufRead>(
        &mut self,
        reader: &mut RecordReader<R>,
        header: &Header,
        keep_events: bool,
        emit: &mut Emit<'_>,
    ) -> Result<RunEnd, Error> {
        let bad = |fault| Error::Shard {
            input: reader.source_name().to_string(),
            run: header.run_id.clone(),
            source: fault,
        };
        let start = started_at_ns(header).map_err(bad)?;
        let offset = u64::try_from(start - self.reference_ns).map_err(|_| {
            bad(ShardError::TooEarly {
                early_s: (self.reference_ns + SLACK_NS - start) as f64 / 1e9,
                first: self.header.shard.map_or(0, |s| s.index),
                apart_s: SLACK_NS / 1_000_000_000,
            })
        })?;
        if let Some(shard) = header.shard {
            self.parts.insert(shard.index);
        }
        self.part_runs.push(header.run_id.clone());
        let opts = FoldOptions {
            keep_events,
            offset_ns: offset,
            empty_ok: true,
        };
        let mut part = PartRead::new(header);
        let mut unique = UniqueIds {
            inner: &mut self.reducer,
            ids: &mut self.ids,
            client: &mut self.client,
            part: &mut part,
        };
        let end = fold_run(reader, header, &mut unique, &opts, emit);
        if let Some(shard) = header.shard {
            self.read.insert(shard.index, part);
        }
        end
    }

    /// Whether every part of the plan has been folded.
    pub fn complete(&self) -> bool {
        self.parts.len() as u64 >= u64::from(self.count)
    }

    /// The indices of the parts not folded.
    pub fn missing(&self) -> Vec<u32> {
        (0..self.count)
            .filter(|i| !self.parts.contains(i))
            .collect()
    }

    /// The merged run's summary, and the extras' last records in `out`.
    pub fn finish(&mut self, opts: &SummaryOptions, out: &mut Vec<Record>) -> Summary {
        let run_id = merged_run_id(&self.header);
        let mut summary = self
            .reducer
            .finish_summary(self.label.clone(), run_id, opts, out);
        summary.shards = Some(self.count);
        summary.shard_runs = self.part_runs.clone();
        summary.shards_missing = self.missing();
        parts::account(&mut summary, &self.header, self.count, &self.read);
        summary
    }
}

/// Warns of each part of the merged run `run` that was read but is lost (no `client` record),
/// naming its host and the requests it never reported.
pub fn warn_lost(
    warn: &mut dyn std::io::Write,
    run: &str,
    summary: &Summary,
) -> std::io::Result<()> {
    for p in &summary.parts {
        if p.status != tokenpipe_format::PartStatus::Lost {
            continue;
        }
        let host = p.host.as_deref().unwrap_or("unknown host");
        let lost = match (p.requests_lost, p.requests_planned) {
            (Some(n), Some(of)) => format!("; {n} of its {of} requests never reported"),
            _ => String::new(),
        };
        writeln!(
            warn,
            "reduce: warning: sharded run {run}: shard {} (host {host}) lost: its output has no client record (fire killed, host down, output cut){lost}",
            p.index
        )?;
    }
    Ok(())
}

/// The run id of the run merged from a plan whose first part read is `first`.
fn merged_run_id(first: &Header) -> String {
    format!("{}-merged", first.run_id)
}

/// A header's `started_at` in nanoseconds since the Unix epoch.
fn started_at_ns(header: &Header) -> Result<i128, ShardError> {
    let at = header.started_at.as_deref().ok_or(ShardError::NoStart)?;
    clock::parse_rfc3339_ns(at).map_err(ShardError::BadStart)
}

/// The open plans, by key.
#[derive(Default)]
pub struct ShardPlans {
    open: Vec<OpenPlan>,
}

impl ShardPlans {
    /// Where the open plan that takes part `header` is, if there is one.
    pub fn position(&self, header: &Header) -> Option<usize> {
        self.open.iter().position(|p| p.takes(header))
    }

    /// The open plan at `at`, as [`ShardPlans::position`] or [`ShardPlans::open`] gave it.
    pub fn get(&mut self, at: usize) -> &mut OpenPlan {
        &mut self.open[at]
    }

    /// The open plan of the same key as `header` that already holds its index: that plan is
    /// over (a new one of the same configuration starts), so it is taken out.
    pub fn displaced_by(&mut self, header: &Header) -> Option<OpenPlan> {
        let (key, _) = plan_key(header)?;
        let at = self.open.iter().position(|p| p.key == key)?;
        Some(self.open.remove(at))
    }

    /// Adds a newly opened plan; returns where it is.
    pub fn open(&mut self, plan: OpenPlan) -> usize {
        self.open.push(plan);
        self.open.len() - 1
    }

    /// Takes out the plan that `header`'s part completed, if it did.
    pub fn take_complete(&mut self, header: &Header) -> Option<OpenPlan> {
        let (key, _) = plan_key(header)?;
        let at = self
            .open
            .iter()
            .position(|p| p.key == key && p.complete())?;
        Some(self.open.remove(at))
    }

    /// Every plan still open, in the order they were opened.
    pub fn into_open(self) -> Vec<OpenPlan> {
        self.open
    }
}

/// Passes everything to the plan's reducer, refusing a request id that an earlier part held:
/// the parts of a plan are disjoint slices of one schedule.
/// Each part's `client` record is combined with the earlier parts' ones, so the merged run's
/// reflects every client.
struct UniqueIds<'a> {
    inner: &'a mut RunReducer,
    ids: &'a mut IdSet,
    client: &'a mut Option<Client>,
    /// The part being folded: its requests are counted and its `client` record kept.
    part: &'a mut PartRead,
}

impl Aggregator for UniqueIds<'_> {
    fn sent(&mut self, sent: &Sent) {
        self.inner.sent(sent);
    }

    fn token(&mut self, token: &Token) {
        self.inner.token(token);
    }

    fn add(&mut self, result: &RequestResult) -> Result<(), RequestError> {
        if !self.ids.insert(result.id) {
            return Err(RequestError::InAnotherShard { request: result.id });
        }
        self.part.seen += 1;
        self.inner.add(result)
    }

    fn stall(&mut self, stall: &Stall) {
        self.inner.stall(stall);
    }

    fn client(&mut self, client: &Client) {
        self.part.client = Some(client.clone());
        // Each warning says which host it is about.
        let mut client = client.clone();
        if let Some(host) = &self.part.header.host {
            for w in &mut client.warnings {
                *w = format!("{host}: {w}");
            }
        }
        let combined = match self.client.take() {
            Some(earlier) => combine_clients(earlier, &client),
            None => client,
        };
        self.inner.client(&combined);
        *self.client = Some(combined);
    }

    fn server_metrics(&mut self, scrape: &tokenpipe_format::ServerMetrics) {
        self.inner.server_metrics(scrape);
    }

    fn drain(&mut self, out: &mut Vec<Record>) {
        self.inner.drain(out);
    }
}

/// The clients of two parts as one: kept up only if both did; their warnings, CPU time, threads,
/// request counts and peaks in flight added (the plan's peak is at most that sum); their worst
/// lags and memory the larger.
fn combine_clients(a: Client, b: &Client) -> Client {
    let max = |x: Option<u64>, y: Option<u64>| x.max(y);
    Client {
        wall_ns: a.wall_ns.max(b.wall_ns),
        cpu_user_ns: a.cpu_user_ns.saturating_add(b.cpu_user_ns),
        cpu_system_ns: a.cpu_system_ns.saturating_add(b.cpu_system_ns),
        cpu_busy: a.cpu_busy.max(b.cpu_busy),
        cpu_wait_per_slice_ns: max(a.cpu_wait_per_slice_ns, b.cpu_wait_per_slice_ns),
        threads: a.threads.saturating_add(b.threads),
        max_rss_bytes: max(a.max_rss_bytes, b.max_rss_bytes),
        sent: a.sent.saturating_add(b.sent),
        ok: a.ok.saturating_add(b.ok),
        failed: a.failed.saturating_add(b.failed),
        cancelled: a.cancelled.saturating_add(b.cancelled),
        not_sent: a.not_sent.saturating_add(b.not_sent),
        peak_in_flight: a.peak_in_flight.saturating_add(b.peak_in_flight),
        dispatch_lag_p50_ns: max(a.dispatch_lag_p50_ns, b.dispatch_lag_p50_ns),
        dispatch_lag_p99_ns: max(a.dispatch_lag_p99_ns, b.dispatch_lag_p99_ns),
        dispatch_lag_max_ns: max(a.dispatch_lag_max_ns, b.dispatch_lag_max_ns),
        dispatcher_behind_max_ns: a.dispatcher_behind_max_ns.max(b.dispatcher_behind_max_ns),
        kept_up: a.kept_up && b.kept_up,
        warnings: a
            .warnings
            .into_iter()
            .chain(b.warnings.iter().cloned())
            .collect(),
        // Judged when any part was.
        not_judged: a.not_judged.and(b.not_judged.clone()),
        // Each part's offset is its own host's: the summary's `parts` keep them.
        server_clock_offset_ms: None,
    }
}
