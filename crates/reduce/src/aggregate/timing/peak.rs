//! Peak output throughput: the most tokens stamped in any one second of the run, found by
//! counting tokens per cell of the run clock (1 ms, wider past 8 min 44 s: [`Grid`]) and
//! sliding a 1 s window one cell at a time. Memory is at most [`super::grid::MAX_CELLS`] counters
//! (2 MiB), whatever the number of events or the length of the run, and the answer does not
//! depend on the order events were read in.

use super::grid::{Grid, Rounding};

const NS_PER_S: u64 = 1_000_000_000;
/// Stamps past 24 h of run clock are not counted: a corrupt stamp must not stretch the grid.
const MAX_STAMP_NS: u64 = 24 * 3600 * NS_PER_S;

/// Tokens per cell of the run clock.
#[derive(Debug)]
pub struct PeakTokens {
    cells: Grid<u32>,
}

impl Default for PeakTokens {
    fn default() -> Self {
        PeakTokens {
            cells: Grid::new(Rounding::Down),
        }
    }
}

/// The busiest second found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Peak {
    /// Tokens stamped in that second (so also tokens per second).
    pub tokens: u64,
    /// Where that second begins, ns from the run start (on a cell boundary).
    pub start_ns: u64,
}

impl PeakTokens {
    /// Counts `tokens` stamped at `at_ns`.
    pub fn add(&mut self, at_ns: u64, tokens: u32) {
        if at_ns < MAX_STAMP_NS {
            self.cells.add(at_ns, tokens);
        }
    }

    /// The busiest 1 s window, of whole cells, among the cells that the span
    /// `[start_ns, end_ns]` touches (the earliest if several tie); `None` when it touches fewer
    /// than a second's worth. Only tokens the caller added count, so the caller adds the
    /// span's tokens only.
    pub fn peak(&self, start_ns: u64, end_ns: u64) -> Option<Peak> {
        let width = self.cells.width_ns();
        let window = (NS_PER_S / width) as usize;
        let first = (start_ns / width) as usize;
        let touched_end = end_ns / width + 1;
        let last_start = touched_end.checked_sub(window as u64)? as usize;
        if last_start < first {
            return None;
        }
        let cell = |i: usize| u64::from(self.cells.get(i));
        let mut sum: u64 = (first..first + window).map(cell).sum();
        let mut best = Peak {
            tokens: sum,
            start_ns: first as u64 * width,
        };
        for s in first + 1..=last_start {
            sum = sum + cell(s + window - 1) - cell(s - 1);
            if sum > best.tokens {
                best = Peak {
                    tokens: sum,
                    start_ns: s as u64 * width,
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

    #[test]
    fn a_long_run_slides_in_wider_steps_and_stays_bounded() {
        let mut p = PeakTokens::default();
        // Two hours of one token per second, and a burst of 50 tokens at 1 h 0 min 0.005 s.
        for s in 0..7200 {
            p.add(s * 1000 * MS, 1);
        }
        p.add(3600 * 1000 * MS + 5 * MS, 50);
        assert_eq!(
            p.cells.width_ns(),
            100 * MS,
            "2 h of 1 ms cells is past the cap twice"
        );
        let peak = p.peak(0, 7200 * 1000 * MS).expect("a peak");
        assert_eq!(peak.tokens, 51, "the burst and the tick of its second");
        assert_eq!(
            peak.start_ns,
            3599 * 1000 * MS + 100 * MS,
            "the earliest window holding both"
        );
    }
}
