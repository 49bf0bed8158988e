//! The parts of a merged run (one plan sharded over several `fire` processes or hosts): what
//! each part was (`Part`, the summary's `parts`), and the rules that judge them together (the
//! verdict's `parts` check): lost parts, the start spread, the hosts' clock skew. The rules are
//! functions of the summary alone, as the rest of the verdict (docs/metrics.md, "Shards").

use crate::Summary;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The least start spread or clock skew that makes a merged run not comparable, in ms: below
/// it, process start on a loaded machine; the limit grows with the run ([`SPREAD_FRACTION`]).
pub const SPREAD_FLOOR_MS: f64 = 50.0;
/// The share of the merged run's duration the parts' starts may be apart: a part that starts
/// late shifts its share of the load by as much.
pub const SPREAD_FRACTION: f64 = 0.01;

/// What became of one part of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PartStatus {
    /// Its output ends with fire's `client` record.
    #[default]
    Ok,
    /// It has a header but no `client` record: its fire was killed, its host died, its output
    /// was cut.
    Lost,
    /// No input holds its index.
    Missing,
}

/// One part of a merged run, as the summary's `parts` lists it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Part {
    /// The part's index in the plan, from 0.
    pub index: u32,
    /// `ok`, `lost` or `missing`.
    pub status: PartStatus,
    /// The host its fire ran on (`fire --host`, else the machine's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Its fire run's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Its run's t = 0 on its host's wall clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// Its `started_at` after the earliest part's, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_offset_ms: Option<f64>,
    /// The instant it was to start at (`fire --start-at`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<String>,
    /// How late it started against `start_at`, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_late_ms: Option<f64>,
    /// Requests its schedule owned (fire's `schedule_requests`; for a missing part, its share
    /// of the plan's `num_prompts` when that can be known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_planned: Option<u64>,
    /// Requests its output mentions (a `sent` or a `done`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_seen: Option<u64>,
    /// Requests it owned that its output never mentions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_lost: Option<u64>,
    /// Its own client verdict: whether its fire kept up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_up: Option<bool>,
    /// Why its client did not keep up (its first warning) or was not judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_reason: Option<String>,
    /// `[lo, hi]`: its host's offset to the server's clock, from its `client` record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_clock_offset_ms: Option<[f64; 2]>,
}

/// The limit a merged run's start spread and clock skew are judged against: the larger of
/// [`SPREAD_FLOOR_MS`] and [`SPREAD_FRACTION`] of its duration.
pub fn spread_limit_ms(duration_s: f64) -> f64 {
    let of_run = if duration_s.is_finite() {
        duration_s * 1e3 * SPREAD_FRACTION
    } else {
        0.0
    };
    SPREAD_FLOOR_MS.max(of_run)
}

/// The skew of the hosts' clocks from the parts' offsets to the server's clock, each an
/// interval `[lo, hi]`: the largest middle minus the smallest, and its error (the two parts'
/// half widths added). `None` with fewer than two intervals.
pub fn clock_skew(offsets: &[[f64; 2]]) -> Option<(f64, f64)> {
    if offsets.len() < 2 {
        return None;
    }
    let mid = |o: &[f64; 2]| (o[0] + o[1]) / 2.0;
    let half = |o: &[f64; 2]| (o[1] - o[0]).abs() / 2.0;
    let by_mid = |a: &&[f64; 2], b: &&[f64; 2]| mid(a).total_cmp(&mid(b));
    let low = offsets.iter().min_by(by_mid)?;
    let high = offsets.iter().max_by(by_mid)?;
    Some((mid(high) - mid(low), half(high) + half(low)))
}

/// Seconds in words for a reason: `2.0 s` from 1 s up, `74 ms` below.
fn span(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.1} s", ms / 1e3)
    } else {
        format!("{ms:.0} ms")
    }
}

/// What fails the `parts` check of a merged run, each one phrase; empty when nothing does.
/// `None` for a run that is not merged.
pub fn parts_failures(summary: &Summary) -> Option<Vec<String>> {
    if summary.parts.is_empty() {
        return None;
    }
    let mut failures = Vec::new();
    for p in &summary.parts {
        let who = match &p.host {
            Some(h) => format!("shard {} (host {h})", p.index),
            None => format!("shard {}", p.index),
        };
        let lost = match (p.requests_lost, p.requests_planned) {
            (Some(n), Some(of)) => format!(": {n} of {of} requests never reported"),
            (Some(n), None) => format!(": {n} requests never reported"),
            _ => String::new(),
        };
        match p.status {
            PartStatus::Ok => {}
            PartStatus::Lost => failures.push(format!("{who} lost{lost}")),
            PartStatus::Missing => failures.push(format!("{who} missing{lost}")),
        }
    }
    let limit = spread_limit_ms(summary.duration_s);
    if let Some(spread) = summary.start_spread_ms.filter(|s| *s > limit) {
        failures.push(format!(
            "parts started {} apart (limit {})",
            span(spread),
            span(limit)
        ));
    }
    if let (Some(skew), Some(error)) = (summary.clock_skew_ms, summary.clock_skew_error_ms) {
        if skew - error > limit {
            failures.push(format!(
                "host clocks {} apart (± {}, by the server's Date; limit {})",
                span(skew),
                span(error),
                span(limit)
            ));
        }
    }
    Some(failures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_grows_with_the_run() {
        assert_eq!(spread_limit_ms(1.0), 50.0);
        assert_eq!(spread_limit_ms(20.0), 200.0);
        assert_eq!(spread_limit_ms(f64::NAN), 50.0);
    }

    #[test]
    fn skew_is_the_spread_of_the_middles_with_both_half_widths() {
        assert_eq!(clock_skew(&[[0.0, 10.0]]), None);
        let (skew, err) = clock_skew(&[[-5.0, 5.0], [1990.0, 2010.0], [0.0, 2.0]]).unwrap();
        assert_eq!((skew, err), (2000.0, 15.0));
    }

    fn merged(parts: Vec<Part>) -> Summary {
        Summary {
            duration_s: 20.0,
            parts,
            ..Summary::default()
        }
    }

    #[test]
    fn lost_parts_spread_and_skew_fail_naming_what() {
        let ok = Part::default();
        assert_eq!(parts_failures(&Summary::default()), None);
        assert_eq!(parts_failures(&merged(vec![ok.clone()])), Some(vec![]));
        let lost = Part {
            index: 2,
            status: PartStatus::Lost,
            host: Some("h2".into()),
            requests_planned: Some(160),
            requests_lost: Some(122),
            ..Part::default()
        };
        let mut s = merged(vec![ok.clone(), lost]);
        s.start_spread_ms = Some(2000.0);
        s.clock_skew_ms = Some(2000.0);
        s.clock_skew_error_ms = Some(100.0);
        assert_eq!(
            parts_failures(&s).unwrap(),
            [
                "shard 2 (host h2) lost: 122 of 160 requests never reported",
                "parts started 2.0 s apart (limit 200 ms)",
                "host clocks 2.0 s apart (± 100 ms, by the server's Date; limit 200 ms)",
            ]
        );
        // Within the limit, or a skew within its error: reported, not judged.
        let mut s = merged(vec![ok]);
        s.start_spread_ms = Some(150.0);
        s.clock_skew_ms = Some(400.0);
        s.clock_skew_error_ms = Some(300.0);
        assert_eq!(parts_failures(&s), Some(vec![]));
    }
}
