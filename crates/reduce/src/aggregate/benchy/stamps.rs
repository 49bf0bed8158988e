//! A request's token timestamps as llama-benchy 0.4 builds them (`client.py`,
//! `_finalize_stream_tokens`), and its peak throughput over them (`results.py`,
//! `_calculate_peak_throughput`). Stamps are nanoseconds on the run clock, as `f64` because an
//! interpolated stamp falls between two integers.
//!
//! llama-benchy keeps only content chunks (non-empty `content`, `reasoning_content` or
//! `reasoning`: our `token` events with `empty: false`) and picks one of three branches:
//! every chunk's `token_ids` known (k stamps per chunk, spread after the previous stamp), else
//! the stream's usage count spread evenly from the first to the last content chunk, else one
//! token per chunk. Which branch our events stand for is [`Counting`]'s choice.

use crate::request::RequestResult;

/// How one request's tokens are laid on the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Counting {
    /// Each content event's `tokens` are its chunk's token ids (llama-benchy's `token_ids`
    /// branch): exact when fire read usage on every chunk (`fire --stream-usage continuous`),
    /// and with one token per chunk (vLLM's default stream) also without it.
    Observed,
    /// The request's usage count spread evenly from its first to its last content event
    /// (llama-benchy's branch for servers that send no `token_ids`), when usage is known.
    #[default]
    Usage,
}

impl Counting {
    /// The branch for a run whose fire header says `stream_usage`: with `on` (fire's default)
    /// or `off` each event counts 1 and the usage at the end is the total, so usage is spread;
    /// with `continuous` each event's count is exact, as token ids are. A header that does not
    /// say (hand-made events, a fire before the parameter) is taken at its word: each event's
    /// `tokens` are its chunk's token ids.
    pub fn of_stream_usage(stream_usage: Option<&str>) -> Self {
        match stream_usage {
            None | Some("continuous") => Counting::Observed,
            Some(_) => Counting::Usage,
        }
    }
}

/// One request's tokens as llama-benchy counts them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stamps {
    /// One stamp per token, in order (llama-benchy's `token_timestamps`).
    pub at_ns: Vec<f64>,
    /// Its `total_tokens`.
    pub total: u64,
}

impl Stamps {
    /// The stamps of `r` under `counting`. Without usage the observed branch is taken whatever
    /// `counting` says (one token per chunk is then what fire counted, llama-benchy's last
    /// fallback). Without the request's events (not kept) only the usage branch is possible:
    /// the observed one is spread between the first and the last content event too.
    pub fn of(r: &RequestResult, counting: Counting) -> Self {
        let usage =
            (r.output_source == crate::request::CountSource::Usage).then_some(r.output_tokens);
        let Some(first) = r.first_token_ns else {
            // No content chunk: the usage count, no stamp.
            return Stamps {
                at_ns: Vec::new(),
                total: usage.unwrap_or(0),
            };
        };
        let content = r
            .events
            .as_ref()
            .map(|events| events.iter().filter(|e| !e.empty).collect::<Vec<_>>());
        match (counting, usage, content) {
            (Counting::Usage, Some(n), _) | (_, Some(n), None) => {
                let last = r.last_token_ns.unwrap_or(first);
                Stamps {
                    at_ns: interpolate(first, last, r.content_events.max(1), n),
                    total: n,
                }
            }
            (_, _, Some(content)) => {
                let mut s = Stamps::default();
                for e in content {
                    s.total += u64::from(e.tokens);
                    s.append_observed(first, e.at_ns, e.tokens);
                }
                s
            }
            (_, None, None) => Stamps {
                at_ns: interpolate(
                    first,
                    r.last_token_ns.unwrap_or(first),
                    r.content_events.max(1),
                    r.content_events,
                ),
                total: r.content_events,
            },
        }
    }

    /// llama-benchy's `_append_observed_token_timestamps`: one token at the chunk's time, or k
    /// spread over `(previous stamp, chunk]` (the first chunk's previous stamp is its own time).
    pub fn append_observed(&mut self, first_ns: u64, chunk_ns: u64, tokens: u32) {
        let chunk = chunk_ns as f64;
        match tokens {
            0 => {}
            1 => self.at_ns.push(chunk),
            k => {
                let last = self.at_ns.last().copied().unwrap_or(first_ns as f64);
                let window = chunk - last;
                for i in 0..k {
                    self.at_ns
                        .push(last + window * f64::from(i + 1) / f64::from(k));
                }
            }
        }
    }

    /// Tokens stamped strictly after the first (`_count_tokens_after_first_timestamp`): the
    /// decode tokens; 0 with fewer than two stamps.
    pub fn decode_tokens(&self) -> u64 {
        match self.at_ns.as_slice() {
            [first, rest @ ..] if !rest.is_empty() => {
                rest.iter().filter(|&&t| t > *first).count() as u64
            }
            _ => 0,
        }
    }

    /// First and last stamp.
    pub fn ends(&self) -> Option<(f64, f64)> {
        Some((*self.at_ns.first()?, *self.at_ns.last()?))
    }
}

/// llama-benchy's `_interpolate_token_timestamps`: `n` stamps from the first to the last
/// content chunk, evenly; all at the first when there is one token, one chunk, or no time
/// between them.
pub fn interpolate(first_ns: u64, last_ns: u64, chunks: u64, n: u64) -> Vec<f64> {
    let first = first_ns as f64;
    if n == 0 {
        return Vec::new();
    }
    if n == 1 || chunks == 1 || last_ns <= first_ns {
        return vec![first; n as usize];
    }
    let step = (last_ns as f64 - first) / (n - 1) as f64;
    (0..n).map(|i| first + step * i as f64).collect()
}

/// The 1 s window of llama-benchy's peak throughput, in ns.
pub const PEAK_WINDOW_NS: f64 = 1e9;

/// llama-benchy's `_calculate_peak_throughput`, in tokens per second: the most stamps in any
/// window `(t − 1 s, t]` ending at a stamp, per second; when all stamps lie within less than
/// the window (but not at one instant), `stamps / their span` instead (its short-burst rule).
/// `None` without stamps. Sorts `stamps`.
pub fn peak_tps(stamps: &mut [f64]) -> Option<f64> {
    stamps.sort_by(f64::total_cmp);
    let duration = stamps.last()? - stamps.first()?;
    if duration > 0.0 && duration < PEAK_WINDOW_NS {
        return Some(stamps.len() as f64 * 1e9 / duration);
    }
    let (mut start, mut most) = (0usize, 0usize);
    for (end, &t) in stamps.iter().enumerate() {
        while start < end && stamps[start] <= t - PEAK_WINDOW_NS {
            start += 1;
        }
        most = most.max(end - start + 1);
    }
    Some(most as f64 * 1e9 / PEAK_WINDOW_NS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{CountSource, EventTime};

    const MS: u64 = 1_000_000;

    fn event(ms: u64, tokens: u32, empty: bool) -> EventTime {
        EventTime {
            at_ns: ms * MS,
            tokens,
            empty,
        }
    }

    /// A request with these events (ms) and, when given, usage.
    fn request(events: &[EventTime], usage: Option<u64>) -> RequestResult {
        let content: Vec<_> = events.iter().filter(|e| !e.empty).collect();
        RequestResult {
            first_token_ns: content.first().map(|e| e.at_ns),
            last_token_ns: content.last().map(|e| e.at_ns),
            content_events: content.len() as u64,
            output_tokens: usage.unwrap_or(events.iter().map(|e| u64::from(e.tokens)).sum()),
            output_source: if usage.is_some() {
                CountSource::Usage
            } else {
                CountSource::Counted
            },
            events: Some(events.to_vec()),
            ..RequestResult::default()
        }
    }

    fn in_ms(s: &Stamps) -> Vec<f64> {
        s.at_ns.iter().map(|t| t / MS as f64).collect()
    }

    #[test]
    fn interpolation_spreads_usage_from_the_first_to_the_last_content_chunk() {
        assert_eq!(interpolate(10, 40, 3, 4), [10.0, 20.0, 30.0, 40.0]);
        // One token, one chunk, or no time between them: every stamp at the first.
        assert_eq!(interpolate(10, 40, 3, 1), [10.0]);
        assert_eq!(interpolate(10, 10, 1, 3), [10.0; 3]);
        assert_eq!(interpolate(10, 40, 1, 3), [10.0; 3]);
        assert_eq!(interpolate(40, 40, 2, 2), [40.0; 2]);
        assert!(interpolate(10, 40, 2, 0).is_empty());
    }

    #[test]
    fn a_chunk_of_k_tokens_spreads_them_after_the_previous_stamp() {
        let mut s = Stamps::default();
        // The first chunk's previous stamp is its own time: all 3 at 100.
        s.append_observed(100, 100, 3);
        s.append_observed(100, 110, 1);
        // 4 tokens over (110, 130]: 115, 120, 125, 130.
        s.append_observed(100, 130, 4);
        s.append_observed(100, 140, 0);
        assert_eq!(
            s.at_ns,
            [100.0, 100.0, 100.0, 110.0, 115.0, 120.0, 125.0, 130.0]
        );
        // Stamps strictly after the first: the two others at 100 are not decode tokens.
        assert_eq!(s.decode_tokens(), 5);
    }

    #[test]
    fn the_branch_follows_usage_and_how_fire_counted() {
        // Content at 10 (2 tokens), 20, 40 (2 tokens); an empty event at 30 (1 token).
        let events = [
            event(10, 2, false),
            event(20, 1, false),
            event(30, 1, true),
            event(40, 2, false),
        ];
        // Usage known, counts per event not exact: usage's 6 spread from 10 to 40.
        let s = Stamps::of(&request(&events, Some(6)), Counting::Usage);
        assert_eq!(in_ms(&s), [10.0, 16.0, 22.0, 28.0, 34.0, 40.0]);
        assert_eq!((s.total, s.decode_tokens()), (6, 5));
        // Counts exact per event (continuous usage): the token-id branch, empty events left out.
        let s = Stamps::of(&request(&events, Some(6)), Counting::Observed);
        assert_eq!(in_ms(&s), [10.0, 10.0, 20.0, 30.0, 40.0]);
        assert_eq!((s.total, s.decode_tokens()), (5, 3));
        // No usage: what fire counted per content event, whichever branch was asked for.
        let ones = [event(10, 1, false), event(25, 1, true), event(30, 1, false)];
        for counting in [Counting::Usage, Counting::Observed] {
            let s = Stamps::of(&request(&ones, None), counting);
            assert_eq!((in_ms(&s), s.total), (vec![10.0, 30.0], 2));
        }
        // No content at all: usage's count, no stamp.
        let s = Stamps::of(&request(&[event(10, 1, true)], Some(1)), Counting::Usage);
        assert_eq!((s.at_ns.len(), s.total), (0, 1));
        assert_eq!(
            Counting::of_stream_usage(Some("continuous")),
            Counting::Observed
        );
        assert_eq!(Counting::of_stream_usage(Some("on")), Counting::Usage);
        assert_eq!(Counting::of_stream_usage(Some("off")), Counting::Usage);
        assert_eq!(Counting::of_stream_usage(None), Counting::Observed);
    }

    #[test]
    fn peak_counts_the_busiest_second_and_a_short_burst_its_own_span() {
        let s = |v: &[f64]| v.iter().map(|ms| ms * MS as f64).collect::<Vec<_>>();
        // Under 1 s end to end: stamps / span = 4 / 0.3 s.
        close(peak_tps(&mut s(&[300.0, 0.0, 100.0, 200.0])), 4.0 / 0.3);
        // One instant: the window rule, 3 stamps in 1 s.
        close(peak_tps(&mut s(&[5.0, 5.0, 5.0])), 3.0);
        close(peak_tps(&mut s(&[5.0])), 1.0);
        // Over 2.5 s: windows (t − 1 s, t]; a stamp exactly 1 s before t is out. 0, 500, 900,
        // 1000 (0 drops out), 1400, 1800, 2500: at 1400 the window holds 500, 900, 1000,
        // 1400 = 4; at 1800, 900..1800 = 4.
        close(
            peak_tps(&mut s(&[0.0, 500.0, 900.0, 1000.0, 1400.0, 1800.0, 2500.0])),
            4.0,
        );
        // Exactly 1 s end to end is not a short burst: 2 stamps, the first drops out at the last.
        close(peak_tps(&mut s(&[0.0, 1000.0])), 1.0);
        assert_eq!(peak_tps(&mut []), None);
    }

    fn close(got: Option<f64>, want: f64) {
        let got = got.expect("a peak");
        assert!((got - want).abs() < 1e-9 * want, "got {got}, want {want}");
    }
}
