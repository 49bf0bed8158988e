//! Naming what a table shows: `--columns ttft.p99,output_tps`, `--sort concurrency`, `--rows
//! model`, `--cell output_tps` all name a [`Field`]. A field is resolved once against the runs
//! read, so that a name means one thing in every row, and it knows its heading with its unit
//! (`TTFT p99 [ms]`), whether more is better, and how to read its [`Cell`] from a run.
//!
//! Names, tried in this order:
//! - `label`, `run_id`, `file` (the input a run came from), `workload` (its lengths and load),
//!   `runs` (how many runs a row stands for: a group summary's, else 1);
//! - short names of summary members (`output_tps`, `ok`, `jitter`, …: format's `vocab::FIGURES`),
//!   `comparable` (the run's verdict, `yes` or `no: ` with what made it so) among them;
//! - `METRIC.STAT` for a latency or rate statistic (`ttft.p99`, `tpot.mean`, `e2el.max`,
//!   `itl.median`, `user_tps.p50`), or the member's own name (`ttft_p99_ms`);
//! - `meta.KEY` (`reduce --meta`) and `param.KEY` (a schedule or client setting in the run's
//!   header chain, `param.concurrency`);
//! - a bare KEY that some run has as metadata, then as a setting (`model`, `concurrency`,
//!   `rate`, `isl`, `osl`, …: the names of format's settings, `tokenpipe_format::vocab`);
//! - any other summary member by name, dotted into nested members
//!   (`llama_benchy.tg_tps.mean`, `vllm.mean_ttft_ms`).
//!
//! `A|B` is each run's A where it has one, else its B: one column for figures that runs of
//! different kinds name differently (`tg_tps|output_tps`: llama-benchy's decode rate for batch
//! runs, the output throughput for the others).

use crate::error::Error;
use crate::grid::Kind;
use crate::grid::{Cell, Num, Spread};
use crate::member::{member_num, member_value};
use crate::report::{Report, RunReport};
use serde_json::Value;
use std::cmp::Ordering;
use tokenpipe_format::vocab;
use tokenpipe_format::{parse_stat_key, StatName};

/// Which way a figure is better, for rankings and for a default sort.
pub use tokenpipe_format::vocab::Better;

/// Where a field's value comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// The run's column label.
    Label,
    /// The run id.
    RunId,
    /// The input file's name.
    File,
    /// Input and output lengths and the load, in a few words.
    Workload,
    /// The number of runs shown as one: a group summary's runs, else 1.
    Runs,
    /// The first of these fields that the run has (`A|B`).
    FirstOf(Vec<Field>),
    /// A numeric summary member by its name in the summary (dotted for nested members).
    Member(String),
    /// llama-benchy's own `mean` with its `std` over the requests or batches of one run
    /// (`llama_benchy.tg_tps`).
    Benchy(String),
    /// Any summary member shown as it is (text or number).
    Raw(String),
    /// Whether the run is comparable: `yes`, or `no: ` with what made it so.
    Verdict,
    /// A `reduce --meta` value.
    Meta(String),
    /// A schedule or client setting.
    Param(String),
}

/// A named column, sort key or pivot cell, resolved against the runs read.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The name as given on the command line: the stable column name of machine formats.
    pub name: String,
    /// The heading people read, unit in brackets.
    pub heading: String,
    /// Where the value comes from.
    pub source: Source,
    /// How numbers are written.
    pub kind: Kind,
    /// Which way is better.
    pub better: Better,
}

/// llama-benchy's figures by short name: (name, member of `llama_benchy`, heading).
const BENCHY: &[(&str, &str, &str)] = &[
    ("tg_tps", "tg_tps", "Decode [t/s]"),
    ("pp_tps", "pp_tps", "Prefill [t/s]"),
    ("ttfr", "ttfr_ms", "TTFR [ms]"),
];

impl Field {
    /// Resolves `name` against the runs of `report`; a name no run has is bad input, with a
    /// hint of what names look like.
    pub fn parse(name: &str, report: &Report) -> Result<Self, Error> {
        let name = name.trim();
        if name.contains('|') {
            return Self::first_of(name, report);
        }
        Self::resolve(name, report)
            .filter(|field| field.some_run_has_it(report))
            .ok_or_else(|| Error::UnknownField {
                name: name.to_string(),
            })
    }

    /// Whether some run of `report` has a value for the field: a name is only as good as the
    /// input it is used on. Names and statistics the summaries carry (null where no request
    /// counted) always pass.
    fn some_run_has_it(&self, report: &Report) -> bool {
        match self.source {
            Source::Label
            | Source::RunId
            | Source::File
            | Source::Workload
            | Source::Runs
            | Source::Verdict => true,
            Source::Member(ref key) if parse_stat_key(key).is_some() => true,
            _ => report
                .runs
                .iter()
                .any(|r| !matches!(self.cell(r, r.name()), Cell::Missing)),
        }
    }

    /// `A|B|…`: each alternative a field some run has; the heading names them all (`Decode
    /// [t/s] or Output [tok/s]`), and how numbers are written and which way is better are the
    /// first's (no direction when the alternatives disagree).
    fn first_of(name: &str, report: &Report) -> Result<Self, Error> {
        let alternatives = name
            .split('|')
            .map(|n| Self::parse(n, report))
            .collect::<Result<Vec<_>, _>>()?;
        let first = &alternatives[0];
        let better = if alternatives.iter().all(|f| f.better == first.better) {
            first.better
        } else {
            Better::Neither
        };
        let heading = alternatives
            .iter()
            .map(|f| f.heading.as_str())
            .collect::<Vec<_>>()
            .join(" or ");
        Ok(Self::new(
            name,
            heading,
            Source::FirstOf(alternatives.clone()),
            first.kind,
            better,
        ))
    }

    fn new(name: &str, heading: String, source: Source, kind: Kind, better: Better) -> Self {
        Self {
            name: name.to_string(),
            heading,
            source,
            kind,
            better,
        }
    }

    fn resolve(name: &str, report: &Report) -> Option<Self> {
        let text = |heading: &str, source| {
            Some(Self::new(
                name,
                heading.into(),
                source,
                Kind::Value,
                Better::Neither,
            ))
        };
        match name {
            "label" => return text("Label", Source::Label),
            "run_id" => return text("Run", Source::RunId),
            "file" => return text("File", Source::File),
            "workload" => return text("Workload", Source::Workload),
            "runs" => {
                return Some(Self::new(
                    name,
                    "Runs".into(),
                    Source::Runs,
                    Kind::Count,
                    Better::Neither,
                ))
            }
            _ => {}
        }
        // A short name, or the summary member it stands for (`output_throughput_tokens_per_s`
        // reads as `output_tps`, with its unit and direction).
        if let Some(figure) = vocab::figure_named(name).or_else(|| vocab::figure(name)) {
            if figure.kind == vocab::ValueKind::Text {
                let source = if figure.name == vocab::COMPARABLE.name {
                    Source::Verdict
                } else {
                    Source::Raw(figure.member.to_string())
                };
                return text(figure.heading, source);
            }
            return Some(Self::new(
                name,
                figure.heading.to_string(),
                Source::Member(figure.member.to_string()),
                figure.kind.into(),
                figure.better,
            ));
        }
        if let Some((_, member, heading)) = BENCHY.iter().find(|(n, ..)| *n == name) {
            let better = if member.ends_with("_ms") {
                Better::Lower
            } else {
                Better::Higher
            };
            return Some(Self::new(
                name,
                heading.to_string(),
                Source::Benchy(member.to_string()),
                Kind::Value,
                better,
            ));
        }
        if let Some(field) = Self::stat(name, report) {
            return Some(field);
        }
        if let Some(key) = name.strip_prefix("meta.") {
            return text(key, Source::Meta(key.into()));
        }
        if let Some(key) = name.strip_prefix("param.") {
            return Some(Self::param(name, key, key, Kind::Value));
        }
        if report
            .runs
            .iter()
            .any(|r| r.summary.meta.contains_key(name))
        {
            return text(name, Source::Meta(name.into()));
        }
        if let Some(setting) = vocab::setting_named(name) {
            return Some(Self::param(
                name,
                setting.key,
                setting.heading,
                setting.kind.into(),
            ));
        }
        if report.runs.iter().any(|r| r.param(name).is_some()) {
            return Some(Self::param(name, name, name, Kind::Value));
        }
        let values: Vec<Value> = report
            .runs
            .iter()
            .filter_map(|r| member_value(r, name))
            .filter(|v| !v.is_object() && !v.is_array())
            .collect();
        if values.is_empty() {
            return None;
        }
        // Whole numbers everywhere (`requests_sent`) are counts.
        let kind = if values.iter().all(|v| v.is_u64() || v.is_i64()) {
            Kind::Count
        } else {
            Kind::Value
        };
        Some(Self::new(
            name,
            name.into(),
            Source::Raw(name.into()),
            kind,
            Better::Neither,
        ))
    }

    fn param(name: &str, key: &str, heading: &str, kind: Kind) -> Self {
        Self::new(
            name,
            heading.into(),
            Source::Param(key.into()),
            kind,
            Better::Neither,
        )
    }

    /// `ttft.p99` or `ttft_p99_ms`: a statistic some run carries, with the unit it has there.
    fn stat(name: &str, report: &Report) -> Option<Self> {
        let (metric, stat) = match name.split_once('.') {
            Some((metric, stat)) => {
                let stat = match stat {
                    "median" => StatName::Percentile(50.0),
                    "sd" => StatName::SampleStd,
                    other => StatName::parse(other)?,
                };
                (metric.to_string(), stat)
            }
            None => {
                let (metric, stat, _) = parse_stat_key(name)?;
                (metric.to_string(), stat)
            }
        };
        let want = stat.key_part();
        let member = report.runs.iter().find_map(|r| {
            r.summary.stats.0.keys().find(|k| {
                parse_stat_key(k).is_some_and(|(m, s, _)| m == metric && s.key_part() == want)
            })
        })?;
        let (_, _, unit) = parse_stat_key(member)?;
        let shown_unit = match unit {
            "tps" => "tok/s",
            "ratio" => "",
            other => other,
        };
        let stat_word = match stat {
            StatName::Std => "pop. sd".into(),
            StatName::SampleStd => "sd".into(),
            other => other.key_part(),
        };
        let heading = match shown_unit {
            "" => format!("{} {stat_word}", metric_words(&metric)),
            u => format!("{} {stat_word} [{u}]", metric_words(&metric)),
        };
        let better = match vocab::metric_named(&metric) {
            Some(known) => known.better,
            None if unit == "tps" => Better::Higher,
            None => Better::Lower,
        };
        Some(Self::new(
            name,
            heading,
            Source::Member(member.clone()),
            Kind::Value,
            better,
        ))
    }

    /// The field's cell for `run`.
    pub fn cell(&self, run: &RunReport, label: &str) -> Cell {
        let text = |s: Option<String>| s.map_or(Cell::Missing, Cell::Text);
        match &self.source {
            Source::Label => Cell::text(label),
            Source::RunId => Cell::text(run.summary.run_id.clone()),
            Source::File => Cell::text(run.source.clone()),
            Source::Workload => text(crate::workload::describe(run)),
            Source::Runs => Cell::Num(Num {
                value: run.summary.runs.len().max(1) as f64,
                kind: Kind::Count,
                spread: None,
            }),
            Source::FirstOf(alternatives) => alternatives
                .iter()
                .map(|f| f.cell(run, label))
                .find(|c| !matches!(c, Cell::Missing))
                .unwrap_or(Cell::Missing),
            Source::Member(key) => member_num(run, key, self.kind).map_or(Cell::Missing, Cell::Num),
            Source::Benchy(key) => benchy_num(run, key).map_or(Cell::Missing, Cell::Num),
            Source::Raw(key) => value_cell(member_value(run, key), self.kind),
            Source::Verdict => crate::verdict::cell(run),
            Source::Meta(key) => text(run.summary.meta.get(key).cloned()),
            Source::Param(key) => value_cell(run.param(key).cloned(), self.kind),
        }
    }

    /// Whether the field holds numbers (so its column aligns right and it can be ranked).
    pub fn is_numeric(&self) -> bool {
        if let Source::FirstOf(alternatives) = &self.source {
            return alternatives.iter().all(Field::is_numeric);
        }
        matches!(
            self.source,
            Source::Member(_) | Source::Benchy(_) | Source::Runs
        ) || (matches!(self.source, Source::Param(_) | Source::Raw(_)) && self.kind != Kind::Value)
    }
}

/// A metric's heading: the vocabulary's (`ttft` → `TTFT`, `user_tps` → `User`), or for a metric
/// this build does not know, its name in words (`queue_wait` → `Queue wait`).
pub fn metric_words(metric: &str) -> String {
    match vocab::metric_named(metric) {
        Some(known) => known.heading.to_string(),
        None => {
            let words = metric.replace('_', " ");
            let mut chars = words.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect(),
                None => words,
            }
        }
    }
}

/// A JSON scalar as a cell: numbers as numbers, text as text.
fn value_cell(value: Option<Value>, kind: Kind) -> Cell {
    match value {
        Some(Value::Number(n)) => n.as_f64().map_or(Cell::Missing, |value| {
            Cell::Num(Num {
                value,
                kind: if kind == Kind::Count && value.fract() != 0.0 {
                    Kind::Value
                } else {
                    kind
                },
                spread: None,
            })
        }),
        Some(Value::String(s)) => Cell::Text(s),
        Some(Value::Bool(b)) => Cell::text(if b { "yes" } else { "no" }),
        _ => Cell::Missing,
    }
}

/// llama-benchy's mean of `member` with its own standard deviation over requests or batches.
fn benchy_num(run: &RunReport, member: &str) -> Option<Num> {
    let figure = member_value(run, &format!("llama_benchy.{member}"))?;
    let mean = figure.get("mean")?.as_f64()?;
    let sd = figure.get("std").and_then(Value::as_f64);
    let n = figure.get("n").and_then(Value::as_u64).unwrap_or(0);
    let cv_pct = figure.get("cv_pct").and_then(Value::as_f64);
    Some(Num {
        value: mean,
        kind: Kind::Value,
        spread: sd.map(|sd| Spread {
            n,
            sd,
            cv_pct: cv_pct.or_else(|| (mean != 0.0).then(|| 100.0 * sd / mean)),
            ci95: None,
            within_run: true,
        }),
    })
}

/// Orders cells as people expect: numbers by value, text in natural order (`c2` before `c16`),
/// missing values last.
pub fn compare_cells(a: &Cell, b: &Cell) -> Ordering {
    let plain = |c: &Cell| match c {
        Cell::Verdict { text, .. } => Cell::Text(text.clone()),
        Cell::Marked(cell, _) => (**cell).clone(),
        other => other.clone(),
    };
    if matches!(a, Cell::Verdict { .. } | Cell::Marked(..))
        || matches!(b, Cell::Verdict { .. } | Cell::Marked(..))
    {
        return compare_cells(&plain(a), &plain(b));
    }
    match (a, b) {
        (Cell::Num(x), Cell::Num(y)) => x.value.total_cmp(&y.value),
        (Cell::Text(x), Cell::Text(y)) => natural_cmp(x, y),
        (Cell::Missing, Cell::Missing) => Ordering::Equal,
        (Cell::Missing, _) => Ordering::Greater,
        (_, Cell::Missing) => Ordering::Less,
        (Cell::Num(_), _) => Ordering::Less,
        (_, Cell::Num(_)) => Ordering::Greater,
        _ => Ordering::Equal,
    }
}

/// Compares text with runs of digits compared as numbers: `c2` < `c16`, `run-9` < `run-10`.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a, b);
    loop {
        match (a.chars().next(), b.chars().next()) {
            (None, None) => return Ordering::Equal,
            (None, _) => return Ordering::Less,
            (_, None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let da = a.len() - a.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                let db = b.len() - b.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                let (na, nb) = (
                    a[..da].trim_start_matches('0'),
                    b[..db].trim_start_matches('0'),
                );
                let by_number = na.len().cmp(&nb.len()).then_with(|| na.cmp(nb));
                if by_number != Ordering::Equal {
                    return by_number;
                }
                a = &a[da..];
                b = &b[db..];
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(&y);
                }
                a = &a[x.len_utf8()..];
                b = &b[y.len_utf8()..];
            }
        }
    }
}

/// Every field name the runs of `report` have, for `--list-fields`: the fixed names, then each
/// statistic as `METRIC.STAT`, each metadata key and each setting found.
pub fn list_fields(report: &Report) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = ["label", "run_id", "file", "workload", "runs"]
        .iter()
        .filter_map(|n| Field::parse(n, report).ok())
        .map(|f| (f.name, f.heading))
        .collect();
    for name in vocab::FIGURES.iter().map(|f| f.name) {
        if let Ok(f) = Field::parse(name, report) {
            if report
                .runs
                .iter()
                .any(|r| !matches!(f.cell(r, ""), Cell::Missing))
            {
                out.push((f.name, f.heading));
            }
        }
    }
    for (name, ..) in BENCHY {
        if let Ok(f) = Field::parse(name, report) {
            if report
                .runs
                .iter()
                .any(|r| !matches!(f.cell(r, ""), Cell::Missing))
            {
                out.push((f.name, f.heading));
            }
        }
    }
    let mut stats: Vec<String> = report
        .runs
        .iter()
        .flat_map(|r| r.summary.stats.0.keys())
        .filter_map(|k| parse_stat_key(k).map(|(m, s, _)| format!("{m}.{}", s.key_part())))
        .collect();
    stats.sort_by(|a, b| natural_cmp(a, b));
    stats.dedup();
    for name in stats {
        if let Ok(f) = Field::parse(&name, report) {
            out.push((f.name, f.heading));
        }
    }
    let mut keys: Vec<String> = report
        .runs
        .iter()
        .flat_map(|r| r.summary.meta.keys().map(|k| format!("meta.{k}")))
        .collect();
    for setting in vocab::SETTINGS {
        if report.runs.iter().any(|r| r.param(setting.key).is_some()) {
            keys.extend(setting.names.iter().map(|n| n.to_string()));
        }
    }
    keys.sort();
    keys.dedup();
    for name in keys {
        if let Ok(f) = Field::parse(&name, report) {
            out.push((f.name, f.heading));
        }
    }
    out
}

#[cfg(test)]
mod tests;
