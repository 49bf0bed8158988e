//! Default names of runs. A label alone names a run only when no other run shown has it; runs
//! that share a label (a sweep reduced with one `--label`) get what tells them apart appended,
//! in this order: the `reduce --meta` values that differ between them (`sim gpu=h100`), then
//! the settings that differ, written short (`sim c=16`, `sim rate=0.3`, `sim isl=1024`), only
//! as many as it takes to tell them apart, and last the schedule's seed (`sim c=4 seed=2`); then
//! the input file's name (`sim fp8` for `fp8.ndjson`), then their position among the runs still
//! alike (`sim #2`).

use crate::report::{Report, RunReport};
use crate::workload::setting_text;
use std::collections::BTreeSet;
use tokenpipe_format::vocab::{self, Role};

/// The label of each run of `report` (index for index): see the module doc. Runs shown and runs
/// pooled by a group summary are told apart separately, as they never share a table.
pub fn column_labels(report: &Report) -> Vec<String> {
    named(
        report,
        |r| r.name().to_string(),
        |runs| suffixes(runs, &[], true),
    )
}

/// The name of each run's line in a chart whose x axis is the setting `x` (`concurrency`): its
/// label with what tells it apart from the other runs of that label except `x` (and the seed),
/// so that the runs of one line differ only in `x`. A setting that moves one for one with `x`
/// (a sweep's `-n $((c * 4))`) does not split a line either. Unlabelled runs share one line,
/// `runs`.
pub fn series_labels(report: &Report, x: &str) -> Vec<String> {
    named(
        report,
        |r| {
            if r.summary.label.is_empty() {
                "runs".to_string()
            } else {
                r.summary.label.clone()
            }
        },
        |runs| suffixes(runs, &[x], false),
    )
}

/// Whether the value `get` reads moves one for one with setting `x` over `runs`: each value of
/// `x` comes with one value, each value with one of `x` (a prompt count scaled with the load).
/// Such a setting cannot tell apart two runs at one load, so it is no line of its own.
fn follows(runs: &[&RunReport], x: &str, get: &dyn Fn(&RunReport) -> Option<String>) -> bool {
    let pairs: BTreeSet<(String, String)> = runs
        .iter()
        .filter_map(|r| Some((r.param(x).map(setting_text)?, get(r)?)))
        .collect();
    let xs: BTreeSet<&String> = pairs.iter().map(|(x, _)| x).collect();
    let values: BTreeSet<&String> = pairs.iter().map(|(_, v)| v).collect();
    pairs.len() >= 2 && xs.len() == pairs.len() && values.len() == pairs.len()
}

/// Names runs by `base`, runs that share a base told apart by `suffixes`.
fn named(
    report: &Report,
    base: impl Fn(&RunReport) -> String,
    suffixes: impl Fn(&[&RunReport]) -> Vec<String>,
) -> Vec<String> {
    let shown: BTreeSet<usize> = report.shown().into_iter().collect();
    let base: Vec<String> = report.runs.iter().map(base).collect();
    let mut labels = base.clone();
    let mut done = vec![false; base.len()];
    for i in 0..base.len() {
        if done[i] {
            continue;
        }
        let twins: Vec<usize> = (0..base.len())
            .filter(|&j| base[j] == base[i] && shown.contains(&j) == shown.contains(&i))
            .collect();
        for &j in &twins {
            done[j] = true;
        }
        if twins.len() < 2 {
            continue;
        }
        let runs: Vec<&RunReport> = twins.iter().map(|&j| &report.runs[j]).collect();
        for (k, suffix) in suffixes(&runs).into_iter().enumerate() {
            labels[twins[k]] = if suffix.is_empty() {
                base[twins[k]].clone()
            } else {
                format!("{} {suffix}", base[twins[k]])
            };
        }
    }
    labels
}

/// What tells each of `runs` (which share a label) apart from the others: the fewest of the
/// differing metadata values and settings, taken in order, that leave no two runs alike (a sweep
/// over concurrency reads `c=16`, not every setting that happens to differ too).
///
/// `leave_out` names settings not to use; without `fallbacks`, neither the seed, the file name
/// nor a position is used, and runs that stay alike share their name.
fn suffixes(runs: &[&RunReport], leave_out: &[&str], fallbacks: bool) -> Vec<String> {
    let differs = |get: &dyn Fn(&RunReport) -> Option<String>| {
        let first = get(runs[0]);
        runs.iter().any(|r| get(r) != first)
    };
    // Each candidate: what each run shows for it (empty when the run has no value).
    let mut candidates: Vec<Vec<String>> = Vec::new();
    let meta_keys: BTreeSet<&String> = runs.iter().flat_map(|r| r.summary.meta.keys()).collect();
    for key in meta_keys {
        let get = |r: &RunReport| r.summary.meta.get(key.as_str()).cloned();
        if differs(&get) {
            candidates.push(
                runs.iter()
                    .map(|r| get(r).map_or(String::new(), |v| format!("{key}={v}")))
                    .collect(),
            );
        }
    }
    // The settings that tell runs apart, in the vocabulary's order, each written short.
    for setting in vocab::settings_with(&[Role::Load, Role::Workload, Role::Identity]) {
        let (key, short) = (&setting.key, setting.short);
        if leave_out.contains(key) {
            continue;
        }
        let get = |r: &RunReport| r.param(key).map(setting_text);
        if differs(&get) && !leave_out.iter().any(|x| follows(runs, x, &get)) {
            candidates.push(
                runs.iter()
                    .map(|r| get(r).map_or(String::new(), |v| format!("{short}={v}")))
                    .collect(),
            );
        }
    }
    // The schedule's seed: repeats of one configuration differ only in it.
    let seed = |r: &RunReport| {
        r.header
            .as_ref()
            .and_then(|h| h.find("arrivals"))
            .and_then(|h| h.seed)
            .map(|s| s.to_string())
    };
    if fallbacks && differs(&seed) {
        candidates.push(
            runs.iter()
                .map(|r| seed(r).map_or(String::new(), |v| format!("seed={v}")))
                .collect(),
        );
    }
    let mut parts: Vec<Vec<String>> = vec![Vec::new(); runs.len()];
    for candidate in candidates {
        let joined =
            |parts: &[Vec<String>]| -> Vec<String> { parts.iter().map(|p| p.join(" ")).collect() };
        let before = distinct(&joined(&parts));
        if before == runs.len() {
            break;
        }
        let mut with = parts.clone();
        for (k, part) in candidate.into_iter().enumerate() {
            if !part.is_empty() {
                with[k].push(part);
            }
        }
        if distinct(&joined(&with)) > before {
            parts = with;
        }
    }
    let mut out: Vec<String> = parts.iter().map(|p| p.join(" ")).collect();
    if !fallbacks {
        return out;
    }
    if !all_distinct(&out) && differs(&|r| Some(file_stem(&r.source))) {
        for (k, r) in runs.iter().enumerate() {
            out[k] = [out[k].clone(), file_stem(&r.source)]
                .iter()
                .filter(|s| !s.is_empty())
                .cloned()
                .collect::<Vec<_>>()
                .join(" ");
        }
    }
    if !all_distinct(&out) {
        // Number the runs that are still alike, each set from 1, in input order.
        let alike = out.clone();
        for (k, s) in out.iter_mut().enumerate() {
            if alike.iter().filter(|o| **o == alike[k]).count() < 2 {
                continue;
            }
            let n = alike[..k].iter().filter(|o| **o == alike[k]).count() + 1;
            *s = if s.is_empty() {
                format!("#{n}")
            } else {
                format!("{s} #{n}")
            };
        }
    }
    out
}

fn all_distinct(v: &[String]) -> bool {
    distinct(v) == v.len()
}

fn distinct(v: &[String]) -> usize {
    v.iter().collect::<BTreeSet<_>>().len()
}

/// `runs/fp8.ndjson` → `fp8`: the file's name without its directory and NDJSON/JSON extension.
pub fn file_stem(source: &str) -> String {
    let name = source.rsplit('/').next().unwrap_or(source);
    [".ndjson", ".jsonl", ".json"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext))
        .unwrap_or(name)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use tokenpipe_format::{Header, Summary};

    fn run(
        label: &str,
        params: &[(&str, Value)],
        meta: &[(&str, &str)],
        source: &str,
    ) -> RunReport {
        let mut h = Header::new("reduce", "r".into(), vec![]);
        let mut up = Header::new("arrivals", "a".into(), vec![]);
        for (k, v) in params {
            up.params.insert((*k).into(), v.clone());
        }
        h.upstream.push(up);
        let mut summary = Summary {
            label: label.into(),
            run_id: format!("id-{label}-{source}"),
            ..Summary::default()
        };
        for (k, v) in meta {
            summary.meta.insert((*k).into(), (*v).into());
        }
        RunReport {
            header: Some(h),
            summary,
            source: source.into(),
            ..RunReport::default()
        }
    }

    fn labels(runs: Vec<RunReport>) -> Vec<String> {
        column_labels(&Report {
            runs,
            ..Default::default()
        })
    }

    fn seeded(concurrency: u64, seed: Option<u64>) -> RunReport {
        let mut r = run("sim", &[("concurrency", concurrency.into())], &[], "-");
        if let Some(h) = r.header.as_mut() {
            h.upstream[0].seed = seed;
        }
        r
    }

    #[test]
    fn repeats_are_told_apart_by_seed_then_numbered_within_their_set() {
        let got = labels(vec![
            seeded(1, Some(1)),
            seeded(1, Some(2)),
            seeded(4, Some(1)),
            seeded(4, Some(2)),
        ]);
        assert_eq!(
            got,
            [
                "sim c=1 seed=1",
                "sim c=1 seed=2",
                "sim c=4 seed=1",
                "sim c=4 seed=2"
            ]
        );
        let got = labels(vec![
            seeded(1, None),
            seeded(1, None),
            seeded(4, None),
            seeded(4, None),
        ]);
        assert_eq!(
            got,
            ["sim c=1 #1", "sim c=1 #2", "sim c=4 #1", "sim c=4 #2"]
        );
    }

    #[test]
    fn a_label_no_other_run_has_stays_alone() {
        let got = labels(vec![
            run("fp8", &[("concurrency", 1.into())], &[], "-"),
            run("awq", &[("concurrency", 4.into())], &[], "-"),
        ]);
        assert_eq!(got, ["fp8", "awq"]);
    }

    #[test]
    fn metadata_that_differs_comes_first() {
        let got = labels(vec![
            run(
                "sim",
                &[("concurrency", 1.into())],
                &[("gpu", "h100"), ("os", "x")],
                "-",
            ),
            run(
                "sim",
                &[("concurrency", 4.into())],
                &[("gpu", "h200"), ("os", "x")],
                "-",
            ),
        ]);
        // The metadata tells them apart, so the concurrency (in the workload) is not repeated.
        assert_eq!(got, ["sim gpu=h100", "sim gpu=h200"]);
        let got = labels(vec![
            run(
                "sim",
                &[("concurrency", 1.into()), ("output_tokens", 8.into())],
                &[],
                "-",
            ),
            run(
                "sim",
                &[("concurrency", 4.into()), ("output_tokens", 8.into())],
                &[],
                "-",
            ),
            run(
                "sim",
                &[("concurrency", 4.into()), ("output_tokens", 9.into())],
                &[],
                "-",
            ),
        ]);
        assert_eq!(got, ["sim c=1 osl=8", "sim c=4 osl=8", "sim c=4 osl=9"]);
    }

    #[test]
    fn settings_that_differ_are_written_short() {
        let got = labels(vec![
            run(
                "sim",
                &[("rate_per_s", 0.3.into()), ("input_tokens", 128.into())],
                &[],
                "-",
            ),
            run(
                "sim",
                &[("rate_per_s", 1.5.into()), ("input_tokens", 128.into())],
                &[],
                "-",
            ),
            run(
                "sim",
                &[("rate_per_s", 1.5.into()), ("input_tokens", 1024.into())],
                &[],
                "-",
            ),
        ]);
        assert_eq!(
            got,
            [
                "sim rate=0.3 isl=128",
                "sim rate=1.5 isl=128",
                "sim rate=1.5 isl=1024"
            ]
        );
        let got = labels(vec![
            run("m", &[("batch", 1.into())], &[], "-"),
            run("m", &[("batch", 8.into())], &[], "-"),
        ]);
        assert_eq!(got, ["m batch=1", "m batch=8"]);
    }

    #[test]
    fn then_the_file_name_then_the_position() {
        let got = labels(vec![
            run("sim", &[], &[], "runs/fp8.ndjson"),
            run("sim", &[], &[], "awq.jsonl"),
        ]);
        assert_eq!(got, ["sim fp8", "sim awq"]);
        let got = labels(vec![
            run("sim", &[], &[], "-"),
            run("sim", &[], &[], "-"),
            run("", &[], &[], "-"),
        ]);
        assert_eq!(got, ["sim #1", "sim #2", "id---"]);
        assert_eq!(file_stem("a/b.c.json"), "b.c");
        assert_eq!(file_stem("<stdin>"), "<stdin>");
    }

    #[test]
    fn settings_that_do_not_tell_all_apart_get_the_position_too() {
        let got = labels(vec![
            run("sim", &[("concurrency", 1.into())], &[], "-"),
            run("sim", &[("concurrency", 1.into())], &[], "-"),
            run("sim", &[("concurrency", 4.into())], &[], "-"),
        ]);
        assert_eq!(got, ["sim c=1 #1", "sim c=1 #2", "sim c=4"]);
    }

    /// A run labelled `label` with the schedule setting `concurrency`, or with no header.
    fn at(label: &str, concurrency: Option<u64>) -> RunReport {
        let header = concurrency.map(|c| {
            let mut h = Header::new("reduce", "r".into(), vec![]);
            let mut up = Header::new("arrivals", "a".into(), vec![]);
            up.params.insert("concurrency".into(), c.into());
            up.params.insert("num_prompts".into(), 64.into());
            h.upstream.push(up);
            h
        });
        RunReport {
            header,
            summary: Summary {
                label: label.into(),
                run_id: format!("id-{label}"),
                ..Summary::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn shared_labels_are_told_apart_by_what_differs() {
        let report = Report {
            runs: vec![at("m", Some(1)), at("m", Some(4)), at("other", Some(4))],
            ..Default::default()
        };
        assert_eq!(column_labels(&report), ["m c=1", "m c=4", "other"]);
        let report = Report {
            runs: vec![at("m", None), at("m", None), at("", None)],
            ..Default::default()
        };
        assert_eq!(column_labels(&report), ["m #1", "m #2", "id-"]);
    }

    #[test]
    fn a_setting_that_follows_the_load_does_not_split_a_line() {
        let at = |c: u64, n: u64, osl: u64| {
            run(
                "sim",
                &[
                    ("concurrency", c.into()),
                    ("num_prompts", n.into()),
                    ("output_tokens", osl.into()),
                ],
                &[],
                "-",
            )
        };
        // A sweep with -n $((c * 2)): one line.
        let sweep = Report {
            runs: vec![at(1, 2, 64), at(2, 4, 64), at(4, 8, 64)],
            ..Default::default()
        };
        assert_eq!(series_labels(&sweep, "concurrency"), ["sim"; 3]);
        // The tables still tell the runs apart by their load.
        assert_eq!(column_labels(&sweep), ["sim c=1", "sim c=2", "sim c=4"]);
        // Two answer lengths over the same loads: two lines, though each count follows the load.
        let two = Report {
            runs: vec![at(1, 2, 64), at(2, 4, 64), at(1, 2, 128), at(2, 4, 128)],
            ..Default::default()
        };
        let names = series_labels(&two, "concurrency");
        assert_eq!(names[0], names[1]);
        assert_eq!(names[2], names[3]);
        assert_ne!(names[0], names[2]);
        assert!(!names[0].contains("n="), "{names:?}");
    }
}
