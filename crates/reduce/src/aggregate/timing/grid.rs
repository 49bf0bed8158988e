//! Counters over the run clock whose memory has a ceiling: one cell per millisecond while the
//! run fits in [`MAX_CELLS`] of them, then ten times wider cells (10 ms, 100 ms, 1 s), each
//! coarsening folding ten neighbours into one. A long run therefore costs at most
//! `MAX_CELLS` cells, and a short one is counted at full resolution. The folding is the same
//! whatever order the stamps arrive in, so the result does not depend on reading order
//! (sharded parts are read one after another, each from its own start).

/// Most cells a grid holds before it coarsens: 2 MiB of 4-byte cells, 8 min 44 s at 1 ms.
pub const MAX_CELLS: usize = 1 << 19;
/// The cell widths, narrowest first; each divides 1 s, so a 1 s window is a whole number of
/// cells at every width.
const WIDTHS_NS: [u64; 4] = [1_000_000, 10_000_000, 100_000_000, 1_000_000_000];

/// A value a cell holds, and how ten of them fold into one.
pub trait Cell: Copy + Default {
    /// This cell and `other` as one cell.
    fn merge(self, other: Self) -> Self;
}

impl Cell for u32 {
    fn merge(self, other: Self) -> Self {
        self.saturating_add(other)
    }
}

impl Cell for i32 {
    fn merge(self, other: Self) -> Self {
        self.saturating_add(other)
    }
}

/// Which cell an instant belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    /// The cell that holds it: `⌊t / w⌋` (counting events within a cell).
    Down,
    /// The first cell boundary at or after it: `⌈t / w⌉` (counting what is in flight at each
    /// boundary `c·w`).
    Up,
}

/// Cells of the run clock, widened tenfold whenever the run outgrows [`MAX_CELLS`].
#[derive(Debug)]
pub struct Grid<T> {
    cells: Vec<T>,
    level: usize,
    rounding: Rounding,
}

impl<T: Cell> Grid<T> {
    /// An empty grid of 1 ms cells.
    pub fn new(rounding: Rounding) -> Self {
        Grid {
            cells: Vec::new(),
            level: 0,
            rounding,
        }
    }

    /// The current cell width.
    pub fn width_ns(&self) -> u64 {
        WIDTHS_NS[self.level]
    }

    /// The cell of `at_ns` at the current width.
    pub fn index(&self, at_ns: u64) -> u64 {
        let w = self.width_ns();
        match self.rounding {
            Rounding::Down => at_ns / w,
            Rounding::Up => at_ns.div_ceil(w),
        }
    }

    /// Adds `v` to the cell of `at_ns`, widening the cells until it fits; `false` (nothing
    /// added) past `MAX_CELLS` cells of the widest width.
    pub fn add(&mut self, at_ns: u64, v: T) -> bool {
        let mut i = self.index(at_ns);
        while i >= MAX_CELLS as u64 {
            if self.level + 1 == WIDTHS_NS.len() {
                return false;
            }
            self.coarsen();
            i = self.index(at_ns);
        }
        let i = i as usize;
        if i >= self.cells.len() {
            self.cells.resize(i + 1, T::default());
        }
        self.cells[i] = self.cells[i].merge(v);
        true
    }

    /// The value of cell `i` (the default past the last cell).
    pub fn get(&self, i: usize) -> T {
        self.cells.get(i).copied().unwrap_or_default()
    }

    /// Cells up to the last that holds anything added.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Folds each ten neighbours into one cell ten times as wide. With `Rounding::Up`, cell
    /// `c` at the new width is boundary `10c` at the old one, so it takes old cells
    /// `10c − 9 ..= 10c` (`⌈k / 10⌉`); with `Down`, old cells `10c ..= 10c + 9` (`⌊k / 10⌋`).
    fn coarsen(&mut self) {
        let old = std::mem::take(&mut self.cells);
        let fold = |k: usize| match self.rounding {
            Rounding::Down => k / 10,
            Rounding::Up => k.div_ceil(10),
        };
        let mut cells = vec![T::default(); old.last().map_or(0, |_| fold(old.len() - 1) + 1)];
        for (k, v) in old.into_iter().enumerate() {
            let c = fold(k);
            cells[c] = cells[c].merge(v);
        }
        self.cells = cells;
        self.level += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn a_run_past_the_cap_is_counted_in_wider_cells_in_any_order() {
        let late = (MAX_CELLS as u64) * MS + 5 * MS;
        let mut forward = Grid::<u32>::new(Rounding::Down);
        let mut backward = Grid::<u32>::new(Rounding::Down);
        let stamps = [(3 * MS, 1), (17 * MS, 2), (late, 4)];
        for &(at, n) in &stamps {
            assert!(forward.add(at, n));
        }
        for &(at, n) in stamps.iter().rev() {
            assert!(backward.add(at, n));
        }
        for g in [&forward, &backward] {
            assert_eq!(g.width_ns(), 10 * MS);
            assert_eq!(
                (g.get(0), g.get(1)),
                (1, 2),
                "3 ms in cell 0, 17 ms in cell 1"
            );
            assert_eq!(g.get((late / (10 * MS)) as usize), 4);
            assert!(g.len() <= MAX_CELLS);
        }
    }

    #[test]
    fn boundary_cells_fold_onto_the_boundary_they_reach_first() {
        let mut g = Grid::<i32>::new(Rounding::Up);
        g.add(MS + 1, 1); // counts from the 2 ms boundary on
        g.add(10 * MS, 1); // exactly on the 10 ms boundary
        g.add(11 * MS, -1);
        g.coarsen();
        // At 10 ms cells: boundary 1 (10 ms) sees the first two; 11 ms reaches boundary 2.
        assert_eq!((g.get(0), g.get(1), g.get(2)), (0, 2, -1));
    }

    #[test]
    fn the_widest_grid_refuses_what_lies_beyond_it() {
        let mut g = Grid::<u32>::new(Rounding::Down);
        assert!(!g.add(u64::MAX, 1));
        assert_eq!(g.width_ns(), 1_000_000_000);
        assert_eq!(g.len(), 0);
    }
}
