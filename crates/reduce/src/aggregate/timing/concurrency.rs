//! Requests in flight over time, exactly: each sent request is the interval `[sent, done)` of
//! the run clock (failures too; one still in flight at the end of the run ends at the run's
//! last event), and a sweep over the intervals' ends gives the time-weighted mean and the peak.
//! Memory is two `u64` per request of the run.

/// The `[sent, done)` intervals of a run's requests.
#[derive(Debug, Default)]
pub struct InFlightIntervals {
    spans: Vec<(u64, u64)>,
}

/// Requests in flight over a span.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Concurrency {
    /// Time-weighted mean: the sum of each request's time inside the span over the span.
    pub mean: f64,
    /// Most at once at any instant of the span.
    pub peak: u64,
}

impl InFlightIntervals {
    /// Adds a request in flight from `sent_ns` to `end_ns`.
    pub fn push(&mut self, sent_ns: u64, end_ns: u64) {
        self.spans.push((sent_ns, end_ns.max(sent_ns)));
    }

    /// Mean and peak over `[start_ns, end_ns)`; `None` for an empty span.
    pub fn over(&mut self, start_ns: u64, end_ns: u64) -> Option<Concurrency> {
        if end_ns <= start_ns {
            return None;
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
}
