//! What reduce learns of each part of a plan while it folds it, and the summary's account of
//! them all: `parts`, `requests_lost`, `start_spread_ms` and the clock skew (docs/metrics.md,
//! "Shards"). The verdict's rule on them is format's (`tokenpipe_format::parts_failures`).

use std::collections::BTreeMap;
use tokenpipe_format::{clock, clock_skew, Client, Header, Part, PartStatus, Summary};

/// One part as read: its header, how many requests its output mentioned, its `client` record.
#[derive(Debug, Clone)]
pub struct PartRead {
    /// The part's fire header.
    pub header: Header,
    /// Requests its output mentioned (a `sent` or a `done`).
    pub seen: u64,
    /// Its `client` record, when its output has one.
    pub client: Option<Client>,
}

impl PartRead {
    /// A part whose header is `header`, nothing folded yet.
    pub fn new(header: &Header) -> Self {
        Self {
            header: header.clone(),
            seen: 0,
            client: None,
        }
    }
}

/// Fills the merged summary's account of the parts of a plan of `count` parts, whose plan
/// header is `plan` (for a missing part's share), from the parts read.
pub fn account(summary: &mut Summary, plan: &Header, count: u32, read: &BTreeMap<u32, PartRead>) {
    let starts: Vec<i128> = read
        .values()
        .filter_map(|p| started_ns(&p.header))
        .collect();
    let earliest = starts.iter().min().copied();
    let mut lost_total = 0u64;
    let parts: Vec<Part> = (0..count)
        .map(|index| {
            let part = match read.get(&index) {
                Some(p) => part_of(index, p, earliest),
                None => {
                    let planned = missing_share(plan, index, count);
                    Part {
                        index,
                        status: PartStatus::Missing,
                        requests_planned: planned,
                        requests_lost: planned,
                        ..Part::default()
                    }
                }
            };
            lost_total = lost_total.saturating_add(part.requests_lost.unwrap_or(0));
            part
        })
        .collect();
    summary.start_spread_ms = match (earliest, starts.iter().max()) {
        (Some(lo), Some(hi)) => Some((hi - lo) as f64 / 1e6),
        _ => None,
    };
    let offsets: Vec<[f64; 2]> = parts
        .iter()
        .filter_map(|p| p.server_clock_offset_ms)
        .collect();
    if let Some((skew, error)) = clock_skew(&offsets) {
        summary.clock_skew_ms = Some(skew);
        summary.clock_skew_error_ms = Some(error);
    }
    summary.requests_lost = Some(lost_total);
    summary.parts = parts;
}

/// The account of a part that was read.
fn part_of(index: u32, p: &PartRead, earliest: Option<i128>) -> Part {
    let h = &p.header;
    let status = if p.client.is_some() {
        PartStatus::Ok
    } else {
        PartStatus::Lost
    };
    let planned = h.schedule_requests;
    let lost = match status {
        PartStatus::Lost => planned.map(|n| n.saturating_sub(p.seen)),
        _ => None,
    };
    let client_reason = p
        .client
        .as_ref()
        .and_then(|c| c.warnings.first().cloned().or_else(|| c.not_judged.clone()));
    Part {
        index,
        status,
        host: h.host.clone(),
        run_id: Some(h.run_id.clone()),
        started_at: h.started_at.clone(),
        start_offset_ms: started_ns(h)
            .zip(earliest)
            .map(|(t, e)| (t - e) as f64 / 1e6),
        start_at: h.start_at.clone(),
        start_late_ms: h.start_late_ms,
        requests_planned: planned,
        requests_seen: Some(p.seen),
        requests_lost: lost,
        kept_up: p.client.as_ref().map(|c| c.kept_up),
        client_reason,
        server_clock_offset_ms: p.client.as_ref().and_then(|c| c.server_clock_offset_ms),
    }
}

/// A header's `started_at` in ns since the Unix epoch.
fn started_ns(h: &Header) -> Option<i128> {
    clock::parse_rfc3339_ns(h.started_at.as_deref()?).ok()
}

/// The requests a missing part owned, when the plan says: `num_prompts` requests, one per
/// arrival (no sessions), not in batches; arrival `u` is part `u mod count`'s.
fn missing_share(plan: &Header, index: u32, count: u32) -> Option<u64> {
    let arrivals = plan.find("arrivals")?;
    let n = arrivals.params.get("num_prompts")?.as_u64()?;
    let turns = arrivals
        .params
        .get("turns")
        .and_then(|t| t.as_u64())
        .unwrap_or(1);
    let mode = arrivals.params.get("mode").and_then(|m| m.as_str());
    if turns > 1 || mode == Some("batch") || count == 0 {
        return None;
    }
    let (n, i, c) = (n, u64::from(index), u64::from(count));
    Some(n / c + u64::from(i < n % c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(index: u32, started: &str, host: &str, planned: u64) -> Header {
        let mut h = Header::new("fire", format!("fire-{index}"), vec![]);
        h.started_at = Some(started.into());
        h.host = Some(host.into());
        h.schedule_requests = Some(planned);
        h
    }

    fn client(offset: [f64; 2]) -> Client {
        serde_json::from_value(serde_json::json!({
            "wall_ns": 1, "cpu_user_ns": 0, "cpu_system_ns": 0, "cpu_busy": 0.0, "threads": 1,
            "sent": 1, "ok": 1, "failed": 0, "cancelled": 0, "not_sent": 0, "peak_in_flight": 1,
            "dispatcher_behind_max_ns": 0, "kept_up": true, "server_clock_offset_ms": offset
        }))
        .unwrap()
    }

    #[test]
    fn lost_and_missing_parts_spread_and_skew() {
        let mut plan = Header::new("arrivals", "a".into(), vec![]);
        plan.params
            .insert("num_prompts".into(), serde_json::json!(10));
        let fire = {
            let mut f = Header::new("fire", "f".into(), vec![]);
            f.upstream = vec![plan];
            f
        };
        let mut read = BTreeMap::new();
        let mut ok = PartRead::new(&header(0, "2026-11-27T21:00:00Z", "h0", 3));
        ok.seen = 3;
        ok.client = Some(client([-5.0, 5.0]));
        read.insert(0, ok);
        let mut killed = PartRead::new(&header(1, "2026-11-27T21:00:02Z", "h1", 3));
        killed.seen = 1;
        read.insert(1, killed);
        let mut third = PartRead::new(&header(3, "2026-11-27T21:00:00.010Z", "h3", 2));
        third.seen = 2;
        third.client = Some(client([1990.0, 2010.0]));
        read.insert(3, third);
        let mut s = Summary::default();
        account(&mut s, &fire, 4, &read);
        let status: Vec<PartStatus> = s.parts.iter().map(|p| p.status).collect();
        use PartStatus::*;
        assert_eq!(status, [Ok, Lost, Missing, Ok]);
        assert_eq!(s.parts[1].requests_lost, Some(2));
        assert_eq!(s.parts[1].host.as_deref(), Some("h1"));
        // 10 prompts over 4 parts: part 2 owns arrivals 2 and 6.
        assert_eq!(s.parts[2].requests_lost, Some(2));
        assert_eq!(s.requests_lost, Some(4));
        assert_eq!(s.start_spread_ms, Some(2000.0));
        assert_eq!(s.parts[3].start_offset_ms, Some(10.0));
        assert_eq!(s.clock_skew_ms, Some(2000.0));
        assert_eq!(s.clock_skew_error_ms, Some(15.0));
    }

    #[test]
    fn a_missing_parts_share_is_known_only_for_a_plain_plan() {
        let mut plan = Header::new("arrivals", "a".into(), vec![]);
        plan.params
            .insert("num_prompts".into(), serde_json::json!(7));
        let shares: Vec<Option<u64>> = (0..3).map(|i| missing_share(&plan, i, 3)).collect();
        assert_eq!(shares, [Some(3), Some(2), Some(2)]);
        plan.params.insert("turns".into(), serde_json::json!(3));
        assert_eq!(missing_share(&plan, 0, 3), None);
    }
}
