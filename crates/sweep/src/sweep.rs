//! sweep as a library: [`run`] takes a plain [`Config`], runs its points one after another,
//! writes each point's records as soon as the point ends and the `sweep` record last, and
//! returns the error that says how it ended when it was stopped or a command failed.

use crate::config::{Config, Plan};
use crate::error::Error;
use crate::point::{self, Budget, Stop};
use crate::search::Find;
use std::io::Write;
use tokenpipe_cli::Ending;
use tokenpipe_format::{
    clock, Bracket, Header, PointStatus, Record, RecordWriter, SloTerm, Sweep, SweepEnd, SweepMode,
    SweepPoint,
};

/// Runs the sweep `config` describes, writing records to `out` and one line per point to
/// `progress`. Ends with `Ok` when the plan was done or a limit stopped it; with
/// [`Error::Stopped`] or [`Error::Command`] after the `sweep` record said so.
pub fn run<W: Write>(
    config: &Config,
    out: &mut RecordWriter<W>,
    progress: &mut dyn Write,
) -> Result<Sweep, Error> {
    let mut budget = Budget::new();
    let mut points: Vec<SweepPoint> = Vec::new();
    let mut stop = None;
    let (mut find, mut scan) = match &config.plan {
        Plan::Find { low, high } => (Some(Find::new(*low, *high, config.domain)), Vec::new()),
        Plan::Scan(values) => (None, values.iter().rev().copied().collect::<Vec<_>>()),
    };
    let first = match &config.plan {
        Plan::Find { low, .. } => Some(*low),
        Plan::Scan(values) => values.first().copied(),
    };
    let Some(first) = first else {
        return Err(Error::Flags("--scan: no values to run".into()));
    };
    if config.warmup {
        writeln!(progress, "sweep: warm-up run at {}", label(config, first))?;
        stop = point::warm_up(config, &mut budget, first)?;
    }
    let mut knee_stop = false;
    while stop.is_none() {
        let next = match &find {
            Some(f) => f.next(),
            None => scan.pop(),
        };
        let Some(value) = next else { break };
        let Some(measured) = point::measure(config, &mut budget, value, progress)? else {
            stop = budget.exhausted(config);
            break;
        };
        for record in &measured.records {
            out.write(record)?;
        }
        out.flush()?;
        let p = &measured.point;
        writeln!(
            progress,
            "sweep: {}: {} after {} run(s): {}",
            label(config, value),
            status_word(p),
            p.runs,
            p.reason
        )?;
        if let Some(f) = &mut find {
            f.record(value, p.status.is(PointStatus::Pass));
        }
        points.push(measured.point);
        stop = measured.stop;
        if stop.is_none()
            && find.is_none()
            && config.stop_at_knee
            && crate::knee::find(&points, config.knee_gain).is_some()
        {
            knee_stop = true;
            break;
        }
    }
    let ended = match &stop {
        None if knee_stop => SweepEnd::Knee,
        None => SweepEnd::Done,
        Some(Stop::Signal(Ending::Terminated)) => SweepEnd::Terminated,
        Some(Stop::Signal(_)) => SweepEnd::Interrupted,
        Some(Stop::Failed(_)) => SweepEnd::Failed,
        Some(Stop::MaxRuns) => SweepEnd::MaxRuns,
        Some(Stop::MaxTime) => SweepEnd::MaxTime,
    };
    let record = outcome(config, points, &budget, ended, stop.as_ref());
    let mut header = Header::new("sweep", run_id(config), config.argv.clone());
    header.started_at = Some(clock::rfc3339_now());
    out.write(&Record::Header(header))?;
    out.write(&Record::Sweep(Box::new(record.clone())))?;
    out.flush()?;
    writeln!(progress, "sweep: {}", record.reason)?;
    match stop {
        Some(Stop::Signal(ending)) => Err(Error::Stopped {
            what: if ending == Ending::Terminated {
                "terminated"
            } else {
                "interrupted"
            },
            runs: budget.runs,
            ending,
        }),
        Some(Stop::Failed(why)) => Err(Error::Command(why)),
        _ => Ok(record),
    }
}

fn label(config: &Config, value: f64) -> String {
    format!("{}={}", config.variable, config.domain.format(value))
}

fn status_word(p: &SweepPoint) -> String {
    let word = match &p.status {
        tokenpipe_format::OrOther::Known(s) => match s {
            PointStatus::Pass => "pass",
            PointStatus::Fail => "fail",
            PointStatus::Measured => "measured",
            PointStatus::Unusable => "unusable",
        },
        tokenpipe_format::OrOther::Other(s) => s.as_str(),
    };
    if p.sure {
        word.to_string()
    } else {
        format!("{word} (unsure)")
    }
}

/// The sweep's id: its command and plan hashed, so that reruns of one sweep share it.
fn run_id(config: &Config) -> String {
    let plan = format!("{:?}", config.plan);
    let hash = tokenpipe_format::ids::fnv1a([config.command.as_bytes(), plan.as_bytes()]);
    format!("sweep-{hash:016x}")
}

/// The `sweep` record: capacity and bracket from the points in increasing value, the knee, and
/// the reason in words.
fn outcome(
    config: &Config,
    points: Vec<SweepPoint>,
    budget: &Budget,
    ended: SweepEnd,
    stop: Option<&Stop>,
) -> Sweep {
    let mut by_value: Vec<&SweepPoint> = points.iter().collect();
    by_value.sort_by(|a, b| a.value.total_cmp(&b.value));
    let judged = !config.slo.is_empty();
    let mut last_pass: Option<&SweepPoint> = None;
    let mut first_fail: Option<&SweepPoint> = None;
    if judged {
        for p in &by_value {
            if p.status.is(PointStatus::Pass) {
                last_pass = Some(p);
            } else {
                first_fail = Some(p);
                break;
            }
        }
    }
    let sure = last_pass.is_none_or(|p| p.sure) && first_fail.is_none_or(|p| p.sure);
    let capacity = last_pass.map(|p| p.value);
    let knee = crate::knee::find(&points, config.knee_gain);
    let name = &config.variable;
    let fmt = |v: f64| config.domain.format(v);
    let runs = match budget.runs {
        1 => "1 run".to_string(),
        n => format!("{n} runs"),
    };
    let mut reason = match (judged, last_pass, first_fail) {
        (false, _, _) => format!("{} point(s) measured, no SLO", points.len()),
        (true, Some(p), Some(f)) => format!(
            "capacity {name}={} (bracket {}–{}, {runs}){}",
            fmt(p.value),
            fmt(p.value),
            fmt(f.value),
            if sure {
                ""
            } else {
                "; unsure: a point of the bracket was decided by its estimate"
            }
        ),
        (true, Some(p), None) => format!(
            "every value run meets the SLO, up to {name}={} ({runs})",
            fmt(p.value)
        ),
        (true, None, Some(f)) => format!(
            "no value meets the SLO: {name}={} {} ({runs})",
            fmt(f.value),
            if f.status.is(PointStatus::Fail) {
                "fails"
            } else {
                "is unusable"
            }
        ),
        (true, None, None) => "nothing was measured".to_string(),
    };
    if let Some(k) = &knee {
        reason.push_str(&format!(
            "; knee at {name}={} (+{:.1} % output tokens/s per doubling to {})",
            fmt(k.value),
            100.0 * k.gain_per_doubling,
            fmt(k.next)
        ));
    }
    match stop {
        Some(Stop::Failed(why)) => reason = format!("failed: {why}; {reason}"),
        Some(Stop::Signal(Ending::Terminated)) => reason = format!("terminated; {reason}"),
        Some(Stop::Signal(_)) => reason = format!("interrupted; {reason}"),
        Some(Stop::MaxRuns) => reason = format!("stopped at --max-runs; {reason}"),
        Some(Stop::MaxTime) => reason = format!("stopped at --max-time; {reason}"),
        None if ended == SweepEnd::Knee => reason = format!("stopped at the knee; {reason}"),
        None => {}
    }
    Sweep {
        variable: config.variable.clone(),
        mode: match config.plan {
            Plan::Scan(_) => SweepMode::Scan,
            Plan::Find { .. } => SweepMode::Find,
        }
        .into(),
        command: config.command.clone(),
        slo: config
            .slo
            .iter()
            .map(|b| SloTerm {
                key: b.key(),
                bound: b.bound_ms,
            })
            .collect(),
        capacity,
        bracket: Bracket {
            last_pass: capacity,
            first_fail: first_fail.map(|p| p.value),
        },
        sure,
        knee,
        runs: budget.runs,
        ended: ended.into(),
        reason,
        duration_s: budget.start.elapsed().as_secs_f64(),
        points,
    }
}
