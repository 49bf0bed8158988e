//! Percentiles over the few thousand samples of one run.

/// The `q` quantile (0..=1) by nearest rank, sorting `v` in place; NaN when empty.
pub fn percentile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v[i]
}
