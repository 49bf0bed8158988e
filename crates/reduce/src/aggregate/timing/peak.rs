//! Peak output throughput: the most tokens stamped in any one second of the run, found by
//! counting tokens per 1 ms cell of the run clock and sliding a 1000-cell window one cell at a
//! time. Memory is one `u32` per millisecond of run (14.4 MB per hour), whatever the number of
//! events, and the answer does not depend on the order events were read in.

/// Cells per sliding window: 1 s of 1 ms cells.
const WINDOW_CELLS: usize = 1000;
const NS_PER_CELL: u64 = 1_000_000;
/// Stamps past this many cells (24 h) are not counted: a corrupt stamp must not allocate
/// gigabytes.
const MAX_CELLS: u64 = 24 * 3600 * 1000;

/// Tokens per millisecond of the run clock.
#[derive(Debug, Default)]
pub struct PeakTokens {
    cells: Vec<u32>,
}

/// The busiest second found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Peak {
    /// Tokens stamped in that second (so also tokens per second).
    pub tokens: u64,
    /// Where that second begins, ns from the run start (a whole millisecond).
    pub start_ns: u64,
}

impl PeakTokens {
    /// Counts `tokens` stamped at `at_ns`.
    pub fn add(&mut self, at_ns: u64, tokens: u32) {
        let cell = at_ns / NS_PER_CELL;
        if cell >= MAX_CELLS {
            return;
        }
        let cell = cell as usize;
        if cell >= self.cells.len() {
            self.cells.resize(cell + 1, 0);
        }
        self.cells[cell] = self.cells[cell].saturating_add(tokens);
    }

    /// The busiest 1 s window, of whole milliseconds, among the milliseconds that the span
    /// `[start_ns, end_ns]` touches (the earliest if several tie); `None` when it touches fewer
    /// than 1000. Only tokens the caller added count, so the caller adds the span's tokens only.
    pub fn peak(&self, start_ns: u64, end_ns: u64) -> Option<Peak> {
        let first = (start_ns / NS_PER_CELL) as usize;
        let touched_end = end_ns / NS_PER_CELL + 1;
        let last_start = touched_end.checked_sub(WINDOW_CELLS as u64)? as usize;
        if last_start < first {
            return None;
        }
        let cell = |i: usize| u64::from(self.cells.get(i).copied().unwrap_or(0));
        let mut sum: u64 = (first..first + WINDOW_CELLS).map(cell).sum();
        let mut best = Peak {
            tokens: sum,
            start_ns: first as u64 * NS_PER_CELL,
        };
        for s in first + 1..=last_start {
            sum = sum + cell(s + WINDOW_CELLS - 1) - cell(s - 1);
            if sum > best.tokens {
                best = Peak {
                    tokens: sum,
                    start_ns: s as u64 * NS_PER_CELL,
                };
            }
            if s >= self.cells.len() {
                break;
            }
        }
        Some(best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn a_stamp_belongs_to_its_millisecond_and_the_window_slides_by_one() {
        let events = [
            (0, 5),
            (999 * MS + 999_999, 1),
            (1000 * MS, 7),
            (1999 * MS + 999_999, 2),
        ];
        let mut forward = PeakTokens::default();
        let mut backward = PeakTokens::default();
        for &(at, n) in &events {
            forward.add(at, n);
        }
        for &(at, n) in events.iter().rev() {
            backward.add(at, n);
        }
        // [0, 1 s) holds 6, [1 ms, 1.001 s) 8, [1 s, 2 s) 9, [1.001 s, 2.001 s) 2.
        let want = Some(Peak {
            tokens: 9,
            start_ns: 1000 * MS,
        });
        assert_eq!(forward.peak(0, 2500 * MS), want);
        assert_eq!(backward.peak(0, 2500 * MS), want, "order does not matter");
        // A span that ends within [1 s, 2 s) cannot hold that whole second.
        assert_eq!(
            forward.peak(0, 1500 * MS),
            Some(Peak {
                tokens: 8,
                start_ns: MS,
            })
        );
    }

    #[test]
    fn a_span_shorter_than_a_second_has_no_peak() {
        let mut p = PeakTokens::default();
        p.add(10 * MS, 3);
        assert_eq!(p.peak(0, 998 * MS), None);
        assert_eq!(p.peak(500 * MS, 1200 * MS), None);
        assert_eq!(
            p.peak(0, 999 * MS).map(|p| p.tokens),
            Some(3),
            "[0, 999 ms] touches 1000 milliseconds"
        );
    }
}
