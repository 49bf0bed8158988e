//! Exact statistics over samples held in memory, computed the way numpy computes them (to the
//! last digit, which numpy's pairwise summation may round differently), so that a
//! figure can be compared with a tool that reports `np.mean`, `np.std` and `np.percentile`
//! (`vllm bench serve`). The summary's own statistics stream through histograms instead
//! ([`crate::stat`]); these cost memory per sample and are used only where exact agreement with
//! numpy is the point.

/// Every sample of one metric, in the unit the caller reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Samples {
    values: Vec<f64>,
    sorted: bool,
}

impl Samples {
    /// Adds one sample.
    pub fn push(&mut self, x: f64) {
        self.values.push(x);
        self.sorted = false;
    }

    /// Adds every sample of `xs`.
    pub fn extend(&mut self, xs: impl IntoIterator<Item = f64>) {
        self.values.extend(xs);
        self.sorted = false;
    }

    /// Arithmetic mean (`np.mean`); `None` without samples.
    pub fn mean(&self) -> Option<f64> {
        mean(&self.values)
    }

    /// Population standard deviation (`np.std`, `ddof=0`): two passes, the mean first, then the
    /// mean of squared deviations, as numpy does; `None` without samples.
    pub fn std(&self) -> Option<f64> {
        let m = mean(&self.values)?;
        let var =
            self.values.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / self.values.len() as f64;
        Some(var.sqrt())
    }

    /// Percentile `p` (0 to 100) by numpy's default linear interpolation (`np.percentile`);
    /// `None` without samples.
    pub fn percentile(&mut self, p: f64) -> Option<f64> {
        if !self.sorted {
            self.values.sort_by(f64::total_cmp);
            self.sorted = true;
        }
        percentile_of_sorted(&self.values, p)
    }
}

fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// numpy's `method="linear"` percentile of ascending `sorted`: the virtual rank
/// *h = (n − 1)·p/100* is split into *i = ⌊h⌋* and *g = h − i*, and the result lies between the
/// neighbours *a = x<sub>i</sub>* and *b = x<sub>i+1</sub>*: *a + (b − a)·g*, or, for *g ≥ ½*,
/// *b − (b − a)·(1 − g)* (numpy's `_lerp`, which takes the nearer end for accuracy). With 40
/// samples p99 is at rank 38.61, 61% of the way from the second largest to the largest.
pub fn percentile_of_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    let n = sorted.len();
    let last = n.checked_sub(1)?;
    let rank = last as f64 * (p / 100.0);
    let below = (rank.floor() as usize).min(last);
    let above = (below + 1).min(last);
    let g = rank - below as f64;
    let (a, b) = (sorted[below], sorted[above]);
    let diff = b - a;
    Some(if g >= 0.5 {
        b - diff * (1.0 - g)
    } else {
        a + diff * g
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(xs: &[f64]) -> Samples {
        let mut s = Samples::default();
        s.extend(xs.iter().copied());
        s
    }

    #[test]
    fn matches_numpy_on_a_small_set() {
        // python3 -c "import numpy as np; x=[3.0,1.0,4.0,1.5,9.0,2.6,5.0]; \
        //   print(np.mean(x), np.std(x), np.median(x), np.percentile(x,99), \
        //   np.percentile(x,90), np.percentile(x,25), np.percentile(x,99.9))"
        // 3.7285714285714286 2.498407656153521 3.0 8.759999999999998 6.600000000000001 2.05 8.976000000000003
        let mut s = samples(&[3.0, 1.0, 4.0, 1.5, 9.0, 2.6, 5.0]);
        assert_eq!(s.mean(), Some(3.7285714285714286));
        let std = s.std().unwrap();
        assert!((std - 2.498407656153521).abs() < 1e-15, "{std}");
        assert_eq!(s.percentile(50.0), Some(3.0));
        assert_eq!(s.percentile(99.0), Some(8.759999999999998));
        assert_eq!(s.percentile(90.0), Some(6.600000000000001));
        assert_eq!(s.percentile(25.0), Some(2.05));
        assert_eq!(s.percentile(99.9), Some(8.976000000000003));
        assert_eq!(s.percentile(0.0), Some(1.0));
        assert_eq!(s.percentile(100.0), Some(9.0));
    }

    #[test]
    fn two_samples_interpolate_and_one_is_itself() {
        // np.median([50, 70]) = 60.0; np.percentile([50, 70], 99) = 69.8 (50 + 20 * 0.99).
        let mut s = samples(&[70.0, 50.0]);
        assert_eq!(s.percentile(50.0), Some(60.0));
        assert!((s.percentile(99.0).unwrap() - 69.8).abs() < 1e-12);
        let mut one = samples(&[42.5]);
        assert_eq!(one.percentile(99.0), Some(42.5));
        assert_eq!(one.std(), Some(0.0));
        let mut none = Samples::default();
        assert_eq!(none.percentile(50.0), None);
        assert_eq!(none.mean(), None);
        assert_eq!(none.std(), None);
    }

    #[test]
    fn forty_samples_put_p99_between_the_two_largest() {
        // python3 -c "import numpy as np; print(np.percentile(np.arange(1, 41) * 1.5, 99))"
        // 59.415 (rank 38.61: 58.5 + 1.5 * 0.61)
        let mut s = samples(&(1..=40).map(|i| i as f64 * 1.5).collect::<Vec<_>>());
        let p99 = s.percentile(99.0).unwrap();
        assert!((p99 - 59.415).abs() < 1e-12, "{p99}");
    }
}
