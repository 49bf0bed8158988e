//! Requests in flight over time: each sent request is the interval `[sent, done)` of the run
//! clock (failures too; one still in flight at the end of the run ends at the run's last
//! event). The time-weighted mean is exact always. The peak is exact for the first
//! [`MAX_EXACT`] requests of a run, by a sweep over the intervals' ends (two `u64` per
//! request); past that, the intervals are folded into a [`Grid`] of what is in flight at each
//! cell boundary (1 ms, wider for long runs), so memory stops growing: the peak is then the
//! most in flight at any boundary, and a spike shorter than a cell can be missed.

use super::grid::{Grid, Rounding};

/// Requests whose intervals are kept whole: 2 MiB of them.
pub const MAX_EXACT: usize = 1 << 17;

/// The `[sent, done)` intervals of a run's requests.
#[derive(Debug)]
pub struct InFlightIntervals {
    /// Where the measured span can lie: what falls outside is never counted.
    clip: (u64, u64),
    spans: Vec<(u64, u64)>,
    /// Past [`MAX_EXACT`] requests: the intervals folded so far.
    folded: Option<Folded>,
}

/// Intervals folded into counters: time in flight inside `clip`, the sends of requests that
/// never ended (cut to the span's end once it is known), and the boundary grid.
#[derive(Debug)]
struct Folded {
    busy_ns: u128,
    unended: Vec<u64>,
    boundaries: Grid<i32>,
}

/// Requests in flight over a span.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Concurrency {
    /// Time-weighted mean: the sum of each request's time inside the span over the span.
    pub mean: f64,
    /// Most at once at any instant of the span.
    pub peak: u64,
}

impl Default for InFlightIntervals {
    fn default() -> Self {
        InFlightIntervals::within(0, u64::MAX)
    }
}

impl InFlightIntervals {
    /// Intervals whose measured span will lie inside `[start_ns, end_ns)` (the window, when
    /// there is one): the span itself is known only at the end.
    pub fn within(start_ns: u64, end_ns: u64) -> Self {
        InFlightIntervals {
            clip: (start_ns, end_ns),
            spans: Vec::new(),
            folded: None,
        }
    }

    /// Adds a request in flight from `sent_ns` to `end_ns` (`u64::MAX`: it never ended).
    pub fn push(&mut self, sent_ns: u64, end_ns: u64) {
        let span = (sent_ns, end_ns.max(sent_ns));
        match &mut self.folded {
            Some(f) => f.fold(span, self.clip),
            None => {
                self.spans.push(span);
                if self.spans.len() >= MAX_EXACT {
                    let mut f = Folded {
                        busy_ns: 0,
                        unended: Vec::new(),
                        boundaries: Grid::new(Rounding::Up),
                    };
                    for span in std::mem::take(&mut self.spans) {
                        f.fold(span, self.clip);
                    }
                    self.folded = Some(f);
                }
            }
        }
    }

    /// Mean and peak over `[start_ns, end_ns)`; `None` for an empty span.
    pub fn over(&mut self, start_ns: u64, end_ns: u64) -> Option<Concurrency> {
        if end_ns <= start_ns {
            return None;
        }
        if let Some(f) = &self.folded {
            return Some(f.over(start_ns, end_ns));
        }
        let mut busy_ns: u128 = 0;
        // +1 at a send, -1 at an end; at equal times the end goes first, since the interval
        // is half-open: a request sent as another ends does not overlap it.
        let mut steps: Vec<(u64, i64)> = Vec::with_capacity(self.spans.len() * 2);
        let mut at_start: u64 = 0;
        for &(sent, done) in &self.spans {
            let (s, e) = (sent.max(start_ns), done.min(end_ns));
            if s < e {
                busy_ns += u128::from(e - s);
            }
            if sent <= start_ns && done > start_ns {
                at_start += 1;
            }
            if sent > start_ns && sent < end_ns {
                steps.push((sent, 1));
            }
            if done > start_ns && done < end_ns {
                steps.push((done, -1));
            }
        }
        steps.sort_unstable();
        let (mut now, mut peak) = (at_start as i64, at_start as i64);
        for (_, step) in steps {
            now += step;
            peak = peak.max(now);
        }
        Some(Concurrency {
            mean: busy_ns as f64 / (end_ns - start_ns) as f64,
            peak: peak.max(0) as u64,
        })
    }
}

impl Folded {
    /// Counts one interval: its time inside `clip` (exact, since every interval lies inside
    /// the span but for the window's cut and the unended ones), and +1 / −1 at the first cell
    /// boundaries at or after its send and its end.
    fn fold(&mut self, (sent, done): (u64, u64), clip: (u64, u64)) {
        if done == u64::MAX {
            self.unended.push(sent);
        } else {
            let (s, e) = (sent.max(clip.0), done.min(clip.1));
            if s < e {
                self.busy_ns += u128::from(e - s);
            }
        }
        if self.boundaries.add(sent, 1) && done != u64::MAX {
            self.boundaries.add(done, -1);
        }
    }

    fn over(&self, start_ns: u64, end_ns: u64) -> Concurrency {
        let unended: u128 = self
            .unended
            .iter()
            .map(|&sent| u128::from(end_ns.saturating_sub(sent.max(start_ns))))
            .sum();
        // In flight at each boundary c·w inside [start, end): the running sum of the cells.
        let first = self.boundaries.index(start_ns) as usize;
        let mut now: i64 = 0;
        let mut peak: i64 = 0;
        for c in 0..self.boundaries.len() {
            now += i64::from(self.boundaries.get(c));
            let at = c as u64 * self.boundaries.width_ns();
            if c >= first && at < end_ns {
                peak = peak.max(now);
            }
        }
        Concurrency {
            mean: (self.busy_ns + unended) as f64 / (end_ns - start_ns) as f64,
            peak: peak.max(0) as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touching_requests_do_not_overlap() {
        let mut c = InFlightIntervals::default();
        c.push(0, 10);
        c.push(10, 20);
        assert_eq!(c.over(0, 20), Some(Concurrency { mean: 1.0, peak: 1 }));
    }

    #[test]
    fn overlaps_are_weighted_by_time_and_cut_to_the_span() {
        let mut c = InFlightIntervals::default();
        c.push(0, 10);
        c.push(5, 15);
        c.push(5, 8);
        c.push(12, u64::MAX); // still in flight at the end
                              // In [0, 20): 10 + 10 + 3 + 8 = 31.
        assert_eq!(
            c.over(0, 20),
            Some(Concurrency {
                mean: 1.55,
                peak: 3
            })
        );
        // In [8, 12): the first two only (the third ended at 8, the fourth starts at 12):
        // 2 + 4 over 4.
        assert_eq!(c.over(8, 12), Some(Concurrency { mean: 1.5, peak: 2 }));
        assert_eq!(c.over(5, 5), None);
    }

    #[test]
    fn past_the_exact_limit_the_mean_stays_exact_and_the_peak_comes_from_boundaries() {
        const MS: u64 = 1_000_000;
        // A closed loop of 4: each slot sends every 10 ms, a request lasting 10 ms.
        let mut c = InFlightIntervals::within(0, u64::MAX);
        let rounds = (MAX_EXACT / 4 + 10) as u64;
        for r in 0..rounds {
            for slot in 0..4 {
                let sent = r * 10 * MS + slot * MS;
                c.push(sent, sent + 10 * MS);
            }
        }
        c.push(rounds * 10 * MS, u64::MAX); // one that never ended
        assert!(
            c.spans.is_empty() && c.folded.is_some(),
            "folded past the limit"
        );
        let end = rounds * 10 * MS + 5 * MS;
        let got = c.over(0, end).expect("a span");
        // 4 in flight from 3 ms on, but the first 3 ms and the last 5 ms: 4·end − (0+1+2+3)
        // ms at the start, − (5 + 4 + 3 + 2) ms at the end where the slots end and do not
        // resend, + 5 ms of the unended one.
        let busy = 4 * end - 6 * MS - 14 * MS + 5 * MS;
        assert_eq!(got.mean, busy as f64 / end as f64);
        assert_eq!(got.peak, 4, "never more than the loop's 4 at a boundary");
    }
}
