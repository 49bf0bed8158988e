//! One point of a sweep: run the command at a value (again while the SLO's intervals straddle
//! a bound, up to `--repeat`), reduce each run's events in-process with reduce's library, and
//! judge the point by the pass rule over its comparable runs (docs/sweep.md).

use crate::config::Config;
use crate::slo::{self, Judgement};
use std::io::{self, Cursor, Write};
use std::sync::Arc;
use std::time::Instant;
use tokenpipe_cli::{Ending, Input};
use tokenpipe_format::{
    PointStatus, Record, RecordReader, RecordWriter, StatName, Summary, SweepPoint,
};

/// Why a sweep stops before its plan is done.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// Ctrl-C or SIGTERM.
    Signal(Ending),
    /// The command or `--between` failed, as said.
    Failed(String),
    /// `--max-runs` runs were made.
    MaxRuns,
    /// `--max-time` passed.
    MaxTime,
}

/// What the sweep has spent, and the limits on it.
pub struct Budget {
    /// Measured runs so far.
    pub runs: u64,
    /// When the first run started.
    pub start: Instant,
    /// Whether any command has run yet (`--between` runs before every run but the first).
    ran_any: bool,
}

impl Budget {
    /// Nothing spent yet.
    pub fn new() -> Self {
        Budget {
            runs: 0,
            start: Instant::now(),
            ran_any: false,
        }
    }

    /// Why no further run may start, if one may not.
    pub fn exhausted(&self, config: &Config) -> Option<Stop> {
        if let Some(ending) = crate::signals::received() {
            return Some(Stop::Signal(ending));
        }
        if config.max_runs.is_some_and(|n| self.runs >= n) {
            return Some(Stop::MaxRuns);
        }
        if config.max_time.is_some_and(|t| self.start.elapsed() >= t) {
            return Some(Stop::MaxTime);
        }
        None
    }

    /// Runs `--between` unless this is the first run of the sweep.
    fn between(&mut self, config: &Config) -> io::Result<Option<Stop>> {
        let first = !self.ran_any;
        self.ran_any = true;
        let Some(between) = config.between.as_deref().filter(|_| !first) else {
            return Ok(None);
        };
        let ran = crate::process::run(between, false)?;
        if let Some(ending) = crate::signals::received() {
            return Ok(Some(Stop::Signal(ending)));
        }
        Ok(ran
            .failure
            .map(|how| Stop::Failed(format!("--between `{between}` {how}"))))
    }
}

/// A point measured: its entry in the `sweep` record, the records to write for it, and why the
/// sweep must stop after it, if it must.
pub struct Measured {
    /// The point's entry.
    pub point: SweepPoint,
    /// Each run's header and summary, then the group's when there are several comparable runs.
    pub records: Vec<Record>,
    /// Why the sweep stops here.
    pub stop: Option<Stop>,
}

/// Runs the command once at `value`, unmeasured (`--warmup`); a failure stops the sweep.
pub fn warm_up(config: &Config, budget: &mut Budget, value: f64) -> io::Result<Option<Stop>> {
    if let Some(stop) = budget.exhausted(config) {
        return Ok(Some(stop));
    }
    budget.ran_any = true;
    let command = command_at(config, value);
    let ran = crate::process::run(&command, false)?;
    if let Some(ending) = crate::signals::received() {
        return Ok(Some(Stop::Signal(ending)));
    }
    Ok(ran
        .failure
        .map(|how| Stop::Failed(format!("the warm-up run `{command}` {how}"))))
}

fn command_at(config: &Config, value: f64) -> String {
    let text = config.domain.format(value);
    crate::values::substitute(&config.command, &config.variable, &text)
}

/// Measures the point at `value`; `None` when no run could start (the budget was spent).
pub fn measure(
    config: &Config,
    budget: &mut Budget,
    value: f64,
    warn: &mut dyn Write,
) -> io::Result<Option<Measured>> {
    let mut point = SweepPoint {
        value,
        status: PointStatus::Unusable.into(),
        sure: true,
        ..SweepPoint::default()
    };
    let mut records = Vec::new();
    let mut comparable: Vec<Arc<[u8]>> = Vec::new();
    let mut group: Vec<Record> = Vec::new();
    let mut decision: Option<Summary> = None;
    let mut last_verdict = String::new();
    let name = format!("{}={}", config.variable, config.domain.format(value));
    let mut stop = None;
    loop {
        if let Some(s) = budget.exhausted(config) {
            if point.runs == 0 {
                return Ok(None);
            }
            stop = Some(s);
            break;
        }
        if let Some(s) = budget.between(config)? {
            if point.runs == 0 {
                point.reason = "not run: --between before it did not succeed".into();
            }
            stop = Some(s);
            break;
        }
        let command = command_at(config, value);
        let ran = crate::process::run(&command, true)?;
        budget.runs += 1;
        point.runs += 1;
        let events: Arc<[u8]> = ran.stdout.into();
        let run_name = format!("{name} run {}", point.runs);
        let reduced = reduce(config, std::slice::from_ref(&events), &run_name, warn);
        if let Some(ending) = crate::signals::received() {
            // What the stopped run measured is written, and not judged.
            keep_unjudged(&mut point, &mut records, reduced);
            point.reason = format!("run {} was stopped; not judged", point.runs);
            stop = Some(Stop::Signal(ending));
            break;
        }
        if let Some(how) = ran.failure {
            keep_unjudged(&mut point, &mut records, reduced);
            point.reason = format!("the command {how}");
            stop = Some(Stop::Failed(format!(
                "{name}: the command `{command}` {how}"
            )));
            break;
        }
        let run_records = match reduced {
            Ok(r) => r,
            Err(e) => {
                let message = tokenpipe_cli::message(&e);
                point.reason = format!("its output is not fire's events: {message}");
                stop = Some(Stop::Failed(format!(
                    "{name}: the output of `{command}` is not fire's events: {message}"
                )));
                break;
            }
        };
        let summary = last_summary(&run_records);
        records.extend(run_records);
        let Some(summary) = summary else {
            point.reason = "its output held no run".into();
            stop = Some(Stop::Failed(format!("{name}: `{command}` wrote no run")));
            break;
        };
        point.run_ids.push(summary.run_id.clone());
        match &summary.verdict {
            Some(v) if !v.comparable => last_verdict = v.reason.clone(),
            _ => {
                comparable.push(events);
                point.comparable_runs += 1;
                decision = Some(if comparable.len() == 1 {
                    summary
                } else {
                    let all = reduce(config, &comparable, &name, &mut io::sink());
                    match pooled_group(all.unwrap_or_default(), comparable.len()) {
                        Some((records, pooled)) => {
                            group = records;
                            pooled
                        }
                        // Runs that reduce does not group (their settings differ): the
                        // latest run alone is judged.
                        None => summary,
                    }
                });
            }
        }
        let more = point.runs < u64::from(config.repeat);
        let Some(pooled) = &decision else {
            point.reason = format!("no comparable run: {last_verdict}");
            if more {
                continue;
            }
            break;
        };
        point.output_tps = Some(pooled.output_throughput_tokens_per_s);
        point.e2el_p50_ms = pooled.stat("e2el", StatName::Percentile(50.0));
        if config.slo.is_empty() {
            point.status = PointStatus::Measured.into();
            point.reason = format!("{} comparable run(s), no SLO", point.comparable_runs);
            if more {
                continue;
            }
            break;
        }
        point.slo = slo::values(&config.slo, pooled);
        let over = format!(
            "{} over {} comparable run(s)",
            slo::describe(&point.slo),
            point.comparable_runs
        );
        match slo::judge(&point.slo) {
            Judgement::Pass => {
                point.status = PointStatus::Pass.into();
                point.sure = true;
                point.reason = over;
                break;
            }
            Judgement::Fail => {
                point.status = PointStatus::Fail.into();
                point.sure = true;
                point.reason = over;
                break;
            }
            Judgement::NoValue(key) => {
                point.status = PointStatus::Unusable.into();
                point.reason = format!("no request gave a value for {key}");
                break;
            }
            Judgement::Unsure { passes } => {
                point.status = if passes {
                    PointStatus::Pass
                } else {
                    PointStatus::Fail
                }
                .into();
                point.sure = false;
                point.reason =
                    format!("{over}; the interval straddles the bound, the estimate decides");
                if more {
                    continue;
                }
                break;
            }
        }
    }
    if let Some(s) = &stop {
        if !matches!(s, Stop::Failed(_)) && point.runs > 0 && decision.is_some() {
            // The budget ran out between repeats: the point stands as judged so far.
            point.reason = format!("{}; stopped before --repeat was reached", point.reason);
        }
    }
    if matches!(stop, Some(Stop::Signal(_)) | Some(Stop::Failed(_))) {
        point.status = PointStatus::Unusable.into();
    }
    records.extend(group);
    Ok(Some(Measured {
        point,
        records,
        stop,
    }))
}

/// The group summary of `runs` comparable runs reduced together, with its header: the last two
/// records when reduce grouped them all; `None` when it did not.
fn pooled_group(mut records: Vec<Record>, runs: usize) -> Option<(Vec<Record>, Summary)> {
    let pooled = last_summary(&records).filter(|s| s.runs.len() == runs)?;
    let keep = records.len().checked_sub(2)?;
    records.drain(..keep);
    matches!(records[0], Record::Header(_)).then_some((records, pooled))
}

/// Keeps what a stopped or failed run wrote, if reduce could read it, among the point's
/// records and run ids; such a run is never judged.
fn keep_unjudged(
    point: &mut SweepPoint,
    records: &mut Vec<Record>,
    reduced: Result<Vec<Record>, tokenpipe_reduce::Error>,
) {
    let reduced = reduced.unwrap_or_default();
    if let Some(summary) = last_summary(&reduced) {
        point.run_ids.push(summary.run_id);
    }
    records.extend(reduced);
}

fn last_summary(records: &[Record]) -> Option<Summary> {
    records.iter().rev().find_map(|r| match r {
        Record::Summary(s) => Some((**s).clone()),
        _ => None,
    })
}

/// Reduces `runs` (each one command's stdout) together with reduce's library, as `reduce`
/// would with its defaults and the sweep's percentiles; its warnings go to `warn`.
fn reduce(
    config: &Config,
    runs: &[Arc<[u8]>],
    name: &str,
    warn: &mut dyn Write,
) -> Result<Vec<Record>, tokenpipe_reduce::Error> {
    let inputs = runs
        .iter()
        .map(|events| Input {
            reader: Box::new(Cursor::new(events.clone())),
            name: name.to_string(),
        })
        .collect();
    let reduce_config = tokenpipe_reduce::Config {
        labels: config.label.iter().cloned().collect(),
        summary: tokenpipe_reduce::SummaryOptions {
            percentiles: config.percentiles(),
            outcomes: tokenpipe_reduce::OutcomeOptions {
                meta: config.meta.clone(),
                ..Default::default()
            },
            ..Default::default()
        },
        runs: tokenpipe_reduce::RunsOptions::default(),
        argv: config.argv.clone(),
    };
    let mut bytes = Vec::new();
    {
        let mut out = RecordWriter::new(&mut bytes);
        tokenpipe_reduce::reduce(reduce_config, inputs, &mut out, warn)?;
        out.flush()?;
    }
    let mut reader = RecordReader::new(&bytes[..], "reduce's output");
    let mut records = Vec::new();
    while let Some(record) = reader.next_record()? {
        records.push(record);
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokenpipe_format::Header;

    fn summary(id: &str, runs: &[&str]) -> Record {
        Record::Summary(Box::new(Summary {
            run_id: id.into(),
            runs: runs.iter().map(|r| r.to_string()).collect(),
            ..Summary::default()
        }))
    }

    #[test]
    fn only_a_group_of_every_run_is_taken_as_the_pooled_summary() {
        let header = || Record::Header(Header::new("reduce", "r".into(), vec![]));
        let grouped = vec![
            header(),
            summary("a", &[]),
            header(),
            summary("b", &[]),
            header(),
            summary("g", &["a", "b"]),
        ];
        let (records, pooled) = pooled_group(grouped, 2).unwrap();
        assert_eq!((records.len(), pooled.run_id.as_str()), (2, "g"));
        let apart = vec![header(), summary("a", &[]), header(), summary("b", &[])];
        assert!(
            pooled_group(apart, 2).is_none(),
            "runs reduce did not group"
        );
        assert!(pooled_group(vec![summary("g", &["a", "b"])], 2).is_none());
    }
}
