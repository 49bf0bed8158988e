//! Running moments of one metric: count, an exact mean, the population standard deviation, the
//! minimum and the maximum, in memory that does not grow with the samples, and mergeable so
//! that a request's samples can join its run's, or one run's another's, exactly.

/// Count, compensated sum, Welford's mean and sum of squared deviations, min and max.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Running {
    count: u64,
    /// Neumaier-compensated sum and its running error: the mean is their sum over the count,
    /// correctly rounded for any realistic run.
    sum: f64,
    sum_err: f64,
    /// Welford's running mean and sum of squared deviations, for the variance.
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
}

impl Running {
    /// Adds one sample.
    pub fn push(&mut self, x: f64) {
        self.count += 1;
        self.add_to_sum(x);
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x - self.mean);
        if self.count == 1 {
            (self.min, self.max) = (x, x);
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        }
    }

    /// Adds `n` samples of the value `x`.
    pub fn push_n(&mut self, x: f64, n: u64) {
        match n {
            0 => {}
            1 => self.push(x),
            _ => self.merge(&Running::from_parts(n, x * n as f64, 0.0, x, x)),
        }
    }

    fn add_to_sum(&mut self, x: f64) {
        let t = self.sum + x;
        self.sum_err += if self.sum.abs() >= x.abs() {
            (self.sum - t) + x
        } else {
            (x - t) + self.sum
        };
        self.sum = t;
    }

    /// Adds every sample of `other`. The mean and variance combine by Chan et al.'s formula:
    /// with `d` the difference of the means, `m2 = m2_a + m2_b + d² · n_a · n_b / n`.
    pub fn merge(&mut self, other: &Running) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
            return;
        }
        let (na, nb) = (self.count as f64, other.count as f64);
        let n = na + nb;
        let delta = other.mean - self.mean;
        self.m2 += other.m2 + delta * delta * na * nb / n;
        self.mean += delta * nb / n;
        self.count += other.count;
        self.add_to_sum(other.sum);
        self.add_to_sum(other.sum_err);
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Rebuilds moments saved with [`Running::sum`], [`Running::m2`] and the rest.
    pub fn from_parts(count: u64, sum: f64, m2: f64, min: f64, max: f64) -> Self {
        let mean = if count == 0 { 0.0 } else { sum / count as f64 };
        Running {
            count,
            sum,
            sum_err: 0.0,
            mean,
            m2,
            min,
            max,
        }
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The sum of the samples.
    pub fn sum(&self) -> f64 {
        self.sum + self.sum_err
    }

    /// The exact mean; 0 without samples.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum() / self.count as f64
        }
    }

    /// Sum of squared deviations from the mean.
    pub fn m2(&self) -> f64 {
        self.m2
    }

    /// Population standard deviation (divides by n, as numpy's default does).
    pub fn std(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            (self.m2 / self.count as f64).max(0.0).sqrt()
        }
    }

    /// Sample standard deviation (divides by n − 1, numpy's `ddof=1`): the estimate of the
    /// spread of the population the samples were drawn from; `None` for fewer than 2 samples.
    pub fn sample_std(&self) -> Option<f64> {
        (self.count >= 2).then(|| (self.m2 / (self.count - 1) as f64).max(0.0).sqrt())
    }

    /// The smallest sample.
    pub fn min(&self) -> f64 {
        self.min
    }

    /// The largest sample.
    pub fn max(&self) -> f64 {
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_halves_equal_the_whole() {
        let xs: Vec<f64> = (1..=1000)
            .map(|i| ((i * 7919) % 1013) as f64 * 1.5)
            .collect();
        let mut whole = Running::default();
        let (mut a, mut b) = (Running::default(), Running::default());
        for (i, &x) in xs.iter().enumerate() {
            whole.push(x);
            if i % 3 == 0 {
                a.push(x)
            } else {
                b.push(x)
            }
        }
        a.merge(&b);
        assert_eq!(a.count(), whole.count());
        assert_eq!(a.mean(), whole.mean());
        assert!((a.std() - whole.std()).abs() <= whole.std() * 1e-12);
        assert_eq!((a.min(), a.max()), (whole.min(), whole.max()));
        let mut empty = Running::default();
        empty.merge(&whole);
        assert_eq!(empty, whole);
    }

    #[test]
    fn exact_moments() {
        let mut r = Running::default();
        for x in [50.0, 70.0] {
            r.push(x);
        }
        assert_eq!(
            (r.mean(), r.std(), r.min(), r.max()),
            (60.0, 10.0, 50.0, 70.0)
        );
        let back = Running::from_parts(r.count(), r.sum(), r.m2(), r.min(), r.max());
        assert_eq!((back.mean(), back.std()), (60.0, 10.0));
        // (50 − 60)² + (70 − 60)² = 200; 200 / (2 − 1) = 200.
        assert_eq!(back.sample_std(), Some(200f64.sqrt()));
        let mut one = Running::default();
        one.push(5.0);
        assert_eq!(one.sample_std(), None, "one sample has no sample spread");
    }
}
