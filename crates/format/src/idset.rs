//! A set of request ids kept as disjoint ranges, so that it stays as small as the gaps between
//! the ids it holds: requests numbered 0, 1, 2, ... seen roughly in order collapse into a few
//! ranges, however long the run. `fire` uses it to refuse a repeated request id, `reduce` to
//! catch records that arrive after their request's `done`.

use std::collections::BTreeMap;

/// A set of `u64` ids stored as inclusive ranges `start..=end`, merged when they touch.
#[derive(Debug, Default, Clone)]
pub struct IdSet {
    /// start -> end (inclusive); ranges never overlap or touch.
    ranges: BTreeMap<u64, u64>,
}

impl IdSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// True when `id` is in the set.
    pub fn contains(&self, id: u64) -> bool {
        self.ranges
            .range(..=id)
            .next_back()
            .is_some_and(|(_, &end)| id <= end)
    }

    /// Adds `id`; returns false when it was already present.
    pub fn insert(&mut self, id: u64) -> bool {
        if self.contains(id) {
            return false;
        }
        // The range ending just below `id`, if any, absorbs it.
        let below = id.checked_sub(1).and_then(|prev| {
            self.ranges
                .range(..=prev)
                .next_back()
                .filter(|(_, &end)| end == prev)
                .map(|(&start, _)| start)
        });
        // The range starting just above `id`, if any, is absorbed.
        let above = id
            .checked_add(1)
            .and_then(|next| self.ranges.remove(&next).map(|end| (next, end)));
        let start = below.unwrap_or(id);
        let end = above.map_or(id, |(_, end)| end);
        self.ranges.insert(start, end);
        true
    }

    /// Number of stored ranges (the memory this set holds), for tests.
    pub fn range_count(&self) -> usize {
        self.ranges.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_neighbours() {
        let mut s = IdSet::new();
        assert!(s.insert(5));
        assert!(s.insert(7));
        assert_eq!(s.range_count(), 2);
        assert!(s.insert(6));
        assert_eq!(s.range_count(), 1);
        assert!(!s.insert(6));
        assert!(s.contains(5) && s.contains(6) && s.contains(7));
        assert!(!s.contains(4) && !s.contains(8));
    }

    #[test]
    fn in_order_ids_stay_one_range() {
        let mut s = IdSet::new();
        for id in 0..10_000 {
            s.insert(id);
        }
        assert_eq!(s.range_count(), 1);
        assert!(s.contains(9_999) && !s.contains(10_000));
    }

    #[test]
    fn extremes() {
        let mut s = IdSet::new();
        assert!(s.insert(u64::MAX));
        assert!(s.insert(0));
        assert!(s.contains(0) && s.contains(u64::MAX) && !s.contains(1));
        assert!(s.insert(u64::MAX - 1));
        assert_eq!(s.range_count(), 2);
    }
}
