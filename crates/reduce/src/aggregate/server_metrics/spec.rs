//! Speculative decoding as the server counted it (docs/metrics.md, "Speculative decoding"):
//! from the changes of vLLM's `vllm:spec_decode_*` counters between the scrapes around the
//! run, the acceptance rate (accepted over proposed draft tokens), vLLM's mean acceptance
//! length (1 + accepted tokens per draft) and the acceptance per draft position.

use super::ServerMetricsAggregator;
use std::collections::BTreeSet;
use tokenpipe_format::Summary;

const DRAFTS: &str = "vllm:spec_decode_num_drafts_total";
const DRAFT_TOKENS: &str = "vllm:spec_decode_num_draft_tokens_total";
const ACCEPTED: &str = "vllm:spec_decode_num_accepted_tokens_total";
const PER_POS: &str = "vllm:spec_decode_num_accepted_tokens_per_pos_total";

/// The value of label `name` in a series key, if it has one.
pub(crate) fn label<'a>(series: &'a str, name: &str) -> Option<&'a str> {
    let labels = series.split_once('{')?.1;
    let needle = format!("{name}=\"");
    let mut rest = labels;
    loop {
        let at = rest.find(&needle)?;
        // A whole label name: at the start or after a comma.
        let whole = at == 0 || rest[..at].ends_with(',');
        let value = &rest[at + needle.len()..];
        if whole {
            return value.split('"').next();
        }
        rest = value;
    }
}

/// Fills the summary's `spec_*` members; nothing when the server drafted nothing.
pub(super) fn fill(a: &ServerMetricsAggregator, s: &mut Summary) {
    let all = |_: &str| true;
    let Some(drafts) = a.delta(DRAFTS, all).filter(|d| *d > 0.0) else {
        return;
    };
    let accepted = a.delta(ACCEPTED, all);
    s.spec_acceptance_length = accepted.map(|n| 1.0 + n / drafts);
    s.spec_acceptance_rate = match (accepted, a.delta(DRAFT_TOKENS, all)) {
        (Some(n), Some(proposed)) if proposed > 0.0 => Some(n / proposed),
        _ => None,
    };
    let positions: BTreeSet<u32> = a
        .servers
        .values()
        .filter_map(|(_, after)| after.as_ref())
        .flat_map(|samples| samples.keys())
        .filter(|series| tokenpipe_format::series_name(series) == PER_POS)
        .filter_map(|series| label(series, "position")?.parse().ok())
        .collect();
    // Positions 0, 1, … in order: a gap (a position not exposed) ends the list.
    let mut per_position = Vec::new();
    for (expected, position) in positions.into_iter().enumerate() {
        if position as usize != expected {
            break;
        }
        let text = position.to_string();
        let keep = |series: &str| label(series, "position") == Some(text.as_str());
        match a.delta(PER_POS, keep) {
            Some(n) => per_position.push(n / drafts),
            None => break,
        }
    }
    s.spec_acceptance_per_position = per_position;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::server_metrics::tests::scrape;
    use crate::aggregate::{Aggregator, RunSpan};
    use tokenpipe_format::ScrapePhase;

    #[test]
    fn labels_are_read_whole() {
        let s = "x{model_name=\"a\",xposition=\"9\",position=\"2\"}";
        assert_eq!(label(s, "position"), Some("2"));
        assert_eq!(label(s, "model_name"), Some("a"));
        assert_eq!(label(s, "engine"), None);
        assert_eq!(label("x", "position"), None);
    }

    #[test]
    fn rate_length_and_positions_from_the_counters_deltas() {
        let l = "{model_name=\"m\",engine=\"0\"";
        let pos = |p: u32| format!("{PER_POS}{l},position=\"{p}\"}}");
        let (p0, p1, p2) = (pos(0), pos(1), pos(2));
        let (d, t, acc) = (
            format!("{DRAFTS}{l}}}"),
            format!("{DRAFT_TOKENS}{l}}}"),
            format!("{ACCEPTED}{l}}}"),
        );
        let before = [
            (d.as_str(), 10.0),
            (t.as_str(), 30.0),
            (acc.as_str(), 5.0),
            (p0.as_str(), 4.0),
            (p1.as_str(), 1.0),
            (p2.as_str(), 0.0),
        ];
        // 100 drafts of 3 tokens; 150 accepted: 80 at position 0, 50 at 1, 20 at 2.
        let after = [
            (d.as_str(), 110.0),
            (t.as_str(), 330.0),
            (acc.as_str(), 155.0),
            (p0.as_str(), 84.0),
            (p1.as_str(), 51.0),
            (p2.as_str(), 20.0),
        ];
        let mut a = ServerMetricsAggregator::default();
        a.server_metrics(&scrape(ScrapePhase::Before, &before));
        a.server_metrics(&scrape(ScrapePhase::After, &after));
        let mut s = Summary::default();
        a.finish(&RunSpan::default(), &mut s, &mut vec![]);
        assert_eq!(s.spec_acceptance_rate, Some(0.5));
        assert_eq!(s.spec_acceptance_length, Some(2.5));
        assert_eq!(s.spec_acceptance_per_position, vec![0.8, 0.5, 0.2]);
        // No drafts between the scrapes: no figures.
        let mut a = ServerMetricsAggregator::default();
        a.server_metrics(&scrape(ScrapePhase::Before, &before));
        a.server_metrics(&scrape(ScrapePhase::After, &before));
        let mut s = Summary::default();
        a.finish(&RunSpan::default(), &mut s, &mut vec![]);
        assert_eq!(s.spec_acceptance_rate, None);
        assert_eq!(s.spec_acceptance_length, None);
        assert!(s.spec_acceptance_per_position.is_empty());
    }
}
