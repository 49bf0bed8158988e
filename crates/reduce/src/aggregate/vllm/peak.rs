//! vLLM's "Peak output token throughput" and "Peak concurrent requests": the run cut into 1 s
//! buckets from the earliest send of a successful request, the chunks counted per bucket and
//! the requests in flight counted per bucket, and the fullest bucket of each reported.

use tokenpipe_format::IntMap;

const NS_PER_S: u64 = 1_000_000_000;

/// The send, end and chunk times of the successful requests of a run.
#[derive(Debug, Default)]
pub struct PeakCounter {
    /// `(start, end)` of each successful request, where end is its last chunk.
    spans: Vec<(u64, u64)>,
    /// Every chunk time of those requests.
    chunks: Vec<u64>,
}

/// The two peaks of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Peaks {
    /// The most chunks that arrived within one bucket.
    pub max_output_tokens_per_s: f64,
    /// The most requests whose span touched one bucket.
    pub max_concurrent_requests: u64,
}

impl PeakCounter {
    /// Adds a successful request sent at `start_ns` whose chunks arrived at `chunks_ns`
    /// (ascending, not empty: its last is the request's end).
    pub fn add(&mut self, start_ns: u64, chunks_ns: &[u64]) {
        let end = chunks_ns.last().copied().unwrap_or(start_ns);
        self.spans.push((start_ns, end));
        self.chunks.extend_from_slice(chunks_ns);
    }

    /// The peaks, computed as vLLM's `calculate_metrics` does: with *m* the earliest start,
    /// there are ⌈(max end − m) / 1 s⌉ + 1 buckets; a chunk at *t* counts in bucket
    /// ⌊(t − m) / 1 s⌋ (vLLM's `int()`); a request counts in every bucket from
    /// ⌊(start − m) / 1 s⌋ to ⌊(end − m) / 1 s⌋, both included. Zero for a run without
    /// successful requests.
    pub fn peaks(&self) -> Peaks {
        let Some(min_start) = self.spans.iter().map(|s| s.0).min() else {
            return Peaks {
                max_output_tokens_per_s: 0.0,
                max_concurrent_requests: 0,
            };
        };
        let max_end = self.spans.iter().map(|s| s.1).max().unwrap_or(min_start);
        let buckets = max_end.saturating_sub(min_start).div_ceil(NS_PER_S) + 1;
        let bucket = |t: u64| t.saturating_sub(min_start) / NS_PER_S;
        // Only the buckets that hold something are kept, so a stray far stamp costs one entry.
        let mut tokens: IntMap<u64, u64> = IntMap::default();
        for &t in &self.chunks {
            let b = bucket(t);
            if b < buckets {
                *tokens.entry(b).or_insert(0) += 1;
            }
        }
        // Requests in flight per bucket: +1 at the first bucket, −1 after the last.
        let mut deltas: Vec<(u64, i64)> = Vec::with_capacity(self.spans.len() * 2);
        for &(start, end) in &self.spans {
            deltas.push((bucket(start), 1));
            deltas.push((bucket(end).saturating_add(1), -1));
        }
        deltas.sort_unstable();
        let (mut in_flight, mut most) = (0i64, 0i64);
        let mut i = 0;
        while i < deltas.len() {
            let b = deltas[i].0;
            while i < deltas.len() && deltas[i].0 == b {
                in_flight += deltas[i].1;
                i += 1;
            }
            if b < buckets {
                most = most.max(in_flight);
            }
        }
        Peaks {
            max_output_tokens_per_s: tokens.values().copied().max().unwrap_or(0) as f64,
            max_concurrent_requests: most.max(0) as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn buckets_start_at_the_earliest_send_and_include_both_ends() {
        let mut p = PeakCounter::default();
        // Sent at 0.5 s: chunks at 0.6, 0.9, 1.4 s (buckets 0, 0, 0 from m = 0.5 s).
        p.add(500 * MS, &[600 * MS, 900 * MS, 1_400 * MS]);
        // Sent at 1.2 s: chunks at 1.5, 1.6, 1.7 and 2.6 s (buckets 1, 1, 1, 2).
        p.add(
            1_200 * MS,
            &[1_500 * MS, 1_600 * MS, 1_700 * MS, 2_600 * MS],
        );
        // Request 1 spans buckets 0..=0, request 2 spans 0..=2: both in bucket 0.
        assert_eq!(
            p.peaks(),
            Peaks {
                max_output_tokens_per_s: 3.0,
                max_concurrent_requests: 2
            }
        );
    }

    #[test]
    fn no_successful_request_gives_zero() {
        assert_eq!(PeakCounter::default().peaks().max_concurrent_requests, 0);
        assert_eq!(PeakCounter::default().peaks().max_output_tokens_per_s, 0.0);
    }
}
