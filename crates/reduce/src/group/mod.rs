//! Repeated runs of one configuration, grouped: after every run has its own summary, each group
//! of two or more runs gets a group summary with the runs' latencies pooled, the spread of
//! every figure over the runs (`across_runs`) and bootstrap intervals of the pooled
//! percentiles (docs/metrics.md, "Several runs").
//!
//! Runs are of one configuration when they have the same label and the same `params` in every
//! header of their chain; what differs between repeats (run ids, start times, hosts, argv,
//! seeds) is not a parameter, so it does not split a group. Memory: one summary, with its
//! histograms, per run.

mod bootstrap;
mod pool;
mod spread;

pub use bootstrap::percentile_intervals;
pub use spread::across;
#[cfg(test)]
pub use spread::t975;

use crate::error::Error;
use std::collections::{BTreeMap, HashMap};
use tokenpipe_format::vocab::{self, Family, Role};
use tokenpipe_format::{clock, Header, Record, StatName, Summary};

/// Summary members that describe how a run was put together rather than measure it, so they
/// have no spread worth reporting.
const NOT_FIGURES: &[&str] = &["shards"];

/// The runs of one configuration, in the order they were read.
struct Group {
    key: String,
    label: String,
    header: Header,
    runs: Vec<Summary>,
}

/// Collects every run's summary and writes the group summaries at the end.
#[derive(Default)]
pub struct Grouper {
    groups: Vec<Group>,
    index: HashMap<String, usize>,
}

/// What a group summary is built with.
pub struct GroupOptions<'a> {
    /// Percentiles of every latency metric.
    pub percentiles: &'a [f64],
    /// Whether the group summary carries its merged histograms.
    pub histograms: bool,
    /// reduce's command line, for the group's header.
    pub argv: Vec<String>,
}

/// Parameters that differ between repeats of one configuration by design: fire draws a fresh
/// prompt `salt` per run so that repeats do not hit each other's prefix cache; a `vllm bench
/// serve` result imported with `--from-vllm` carries its own date and measured figures.
fn per_run_param(key: &str) -> bool {
    vocab::setting(key).is_some_and(|s| s.role == Role::Provenance)
}

/// The configuration a run belongs to: its label and the parameters of its header chain (less
/// those that differ between repeats by design, [`Role::Provenance`]), as canonical JSON (object
/// keys sorted).
pub fn group_key(label: &str, header: &Header) -> String {
    let params: Vec<serde_json::Value> = Header::chain(header)
        .iter()
        .map(|h| {
            let mut params = h.params.clone();
            params.retain(|k, _| !per_run_param(k));
            serde_json::json!([h.tool, canonical(&serde_json::json!(params))])
        })
        .collect();
    format!("{label}\n{}", serde_json::Value::Array(params))
}

/// `value` with every object's keys in sorted order, whatever map the JSON library uses.
fn canonical(value: &serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            let sorted: BTreeMap<&String, serde_json::Value> =
                map.iter().map(|(k, v)| (k, canonical(v))).collect();
            serde_json::Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
        }
        serde_json::Value::Array(items) => {
            serde_json::Value::Array(items.iter().map(canonical).collect())
        }
        other => other.clone(),
    }
}

impl Grouper {
    /// Files a finished run (its input `header`, and its summary with histograms).
    pub fn add(&mut self, header: &Header, summary: Summary) {
        let key = group_key(&summary.label, header);
        let at = *self.index.entry(key.clone()).or_insert_with(|| {
            self.groups.push(Group {
                key,
                label: summary.label.clone(),
                header: header.clone(),
                runs: Vec::new(),
            });
            self.groups.len() - 1
        });
        self.groups[at].runs.push(summary);
    }

    /// A header and a group summary for every group of two or more runs, in the order the
    /// groups' first runs were read.
    pub fn finish(self, opts: &GroupOptions<'_>) -> Result<Vec<Record>, Error> {
        let mut out = Vec::new();
        for group in self.groups.iter().filter(|g| g.runs.len() >= 2) {
            let summary = group_summary(group, opts)?;
            let mut header = Header::new(
                "reduce",
                format!("{}-reduce", summary.run_id),
                opts.argv.clone(),
            );
            header.started_at = Some(clock::rfc3339_now());
            header.upstream = Header::chain(&group.header);
            out.push(Record::Header(header));
            out.push(Record::Summary(Box::new(summary)));
        }
        Ok(out)
    }
}

/// The group summary of `group`'s runs.
fn group_summary(group: &Group, opts: &GroupOptions<'_>) -> Result<Summary, Error> {
    let runs = &group.runs;
    let hash = tokenpipe_format::ids::fnv1a([group.key.as_bytes()]);
    let mut s = Summary {
        label: group.label.clone(),
        run_id: format!("group-{hash:016x}"),
        runs: runs.iter().map(|r| r.run_id.clone()).collect(),
        percentiles: opts.percentiles.to_vec(),
        ..Summary::default()
    };
    pool::pooled_counts(runs, &mut s);
    let merged = pool::merged_metrics(runs)?;
    let written_by_every_run =
        vocab::metrics_of(Family::Latency).chain(vocab::metrics_of(Family::Client));
    for metric in written_by_every_run.map(|m| m.name) {
        let empty = crate::stat::Stat::new();
        let stat = merged.get(metric).unwrap_or(&empty);
        pool::set_metric(&mut s, metric, stat, opts.percentiles);
    }
    for (metric, stat) in &merged {
        let unit = vocab::unit_of(metric);
        let (unit, per_unit) = (unit.suffix(), unit.per_unit());
        if !s
            .stats
            .0
            .contains_key(&tokenpipe_format::stat_key(metric, StatName::Mean, unit))
        {
            pool::set_metric(&mut s, metric, stat, opts.percentiles);
        }
        if let Some(intervals) = percentile_intervals(stat, opts.percentiles, metric) {
            for (&p, [lo, hi]) in opts.percentiles.iter().zip(intervals) {
                let key = tokenpipe_format::stat_key(metric, StatName::Percentile(p), unit);
                s.percentile_ci95
                    .insert(key, [lo / per_unit, hi / per_unit]);
            }
        }
        if opts.histograms && stat.count() > 0 {
            s.histograms.insert(metric.clone(), stat.to_state());
        }
    }
    s.itl_jitter = pool::jitter(merged.get(vocab::ITL.name));
    s.across_runs = across_runs(runs)?;
    s.verdict = Some(tokenpipe_format::Verdict::of(&s));
    Ok(s)
}

/// The 95 % bootstrap interval `[lo, hi]` of percentile `p` of `metric` in `summary`, in the
/// summary's unit, from the histogram it carries: the interval a group summary writes in
/// `percentile_ci95`, for one run as for a group (`sweep` judges its points by it). `None`
/// when the summary carries no histogram of the metric, or an unreadable one.
pub fn summary_interval(summary: &Summary, metric: &str, p: f64) -> Option<[f64; 2]> {
    let state = summary.histograms.get(metric)?;
    let stat = crate::stat::Stat::from_state(state).ok()?;
    let per_unit = vocab::unit_of(metric).per_unit();
    let [lo, hi] = percentile_intervals(&stat, &[p], metric)?.pop()?;
    Some([lo / per_unit, hi / per_unit])
}

/// For every numeric top-level member of the runs' summaries, its spread over the runs that
/// carry a number for it (at least two).
fn across_runs(runs: &[Summary]) -> Result<BTreeMap<String, tokenpipe_format::AcrossRuns>, Error> {
    let mut values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for run in runs {
        let json = serde_json::to_value(run).map_err(|source| Error::Figures {
            run: run.run_id.clone(),
            source,
        })?;
        let serde_json::Value::Object(members) = json else {
            continue;
        };
        for (key, value) in members {
            if let Some(x) = value
                .as_f64()
                .filter(|_| !NOT_FIGURES.contains(&key.as_str()))
            {
                values.entry(key).or_default().push(x);
            }
        }
    }
    Ok(values
        .into_iter()
        .filter_map(|(key, xs)| Some((key, across(&xs)?)))
        .collect())
}
