//! The accumulator against samples whose moments and percentiles are known exactly.

use super::*;

const P: [f64; 3] = [50.0, 90.0, 99.0];

#[test]
fn empty_has_no_moments() {
    assert_eq!(Stat::new().moments(&P), None);
}

#[test]
fn exact_mean_std_max() {
    let mut s = Stat::new();
    for ms in [50u64, 70] {
        s.push_ns(ms * 1_000_000);
    }
    let m = s.moments(&P).unwrap();
    assert_eq!(m.mean_ms, 60.0);
    assert_eq!(m.std_ms, 10.0);
    assert_eq!(m.max_ms, 70.0);
    assert_eq!(s.count(), 2);
}

#[test]
fn mean_is_the_sum_over_the_count() {
    let mut s = Stat::new();
    for ns in [1_000_000u64, 3_000_000, 1_000_000] {
        s.push_ns(ns);
    }
    assert_eq!(s.moments(&P).unwrap().mean_ms, 5e6 / 3.0 / NS_PER_MS);
    let mut s = Stat::new();
    // Far past 2^53 in total: the compensation keeps the small samples.
    s.push_ns(1 << 60);
    for _ in 0..1000 {
        s.push_ns(3);
    }
    let want = ((1u128 << 60) + 3000) as f64 / 1001.0 / NS_PER_MS;
    assert_eq!(s.moments(&P).unwrap().mean_ms, want);
}

#[test]
fn percentiles_within_a_tenth_of_a_percent() {
    let mut s = Stat::new();
    for i in 1..=1000u64 {
        s.push_ns(i * 1_234_567);
    }
    let m = s.moments(&P).unwrap();
    for (got, want) in [
        (m.p(50.0).unwrap(), 500.0 * 1.234567),
        (m.p(90.0).unwrap(), 900.0 * 1.234567),
        (m.p(99.0).unwrap(), 990.0 * 1.234567),
    ] {
        assert!((got - want).abs() / want <= 5e-4, "{got} vs {want}");
    }
    assert_eq!(m.max_ms, 1000.0 * 1.234567);
}

#[test]
fn percentiles_stay_within_min_and_max() {
    let mut s = Stat::new();
    s.push_ns(123_456_789);
    let m = s.moments(&P).unwrap();
    assert_eq!(m.p(99.0).unwrap(), m.max_ms);
    assert_eq!(m.p(50.0).unwrap(), 123.456789);
    let mut s = Stat::new();
    s.push_ns(15_000_000);
    s.push_ns(20_000_000);
    let m = s.moments(&P).unwrap();
    // No interpolation: the median is the lower sample, to within half a bucket.
    assert!((m.p(50.0).unwrap() - 15.0).abs() <= 15.0 * 5e-4, "{m:?}");
    assert_eq!(format!("{:.2}", m.p(50.0).unwrap()), "15.00");
    assert!((m.p(99.0).unwrap() - 20.0).abs() <= 20.0 * 5e-4, "{m:?}");
    assert!(m.p(99.0).unwrap() <= m.max_ms);
}

#[test]
fn fractional_samples_keep_their_fraction() {
    let mut s = Stat::new();
    s.push_ns_f64(2.5);
    s.push_ns_f64(3.5);
    let m = s.moments(&P).unwrap();
    assert_eq!(m.mean_ms, 3.0 / NS_PER_MS);
    assert_eq!(m.std_ms, 0.5 / NS_PER_MS);
    assert_eq!(m.max_ms, 3.5 / NS_PER_MS);
}

#[test]
fn huge_values_do_not_fail() {
    let mut s = Stat::new();
    s.push_ns(u64::MAX);
    assert!(s.moments(&P).is_some());
}

#[test]
fn merged_and_saved_accumulators_give_the_same_figures() {
    let mut whole = Stat::new();
    let (mut a, mut b) = (Stat::new(), Stat::new());
    for i in 1..=5000u64 {
        let ns = (i * 7919 % 10_007) * 1_000 + 17;
        whole.push_ns(ns);
        if i % 2 == 0 {
            a.push_ns(ns)
        } else {
            b.push_ns(ns)
        }
    }
    let ps = [50.0, 90.0, 95.0, 99.0, 99.9];
    let saved = Stat::from_state(&b.to_state()).unwrap();
    a.merge(&saved);
    let (got, want) = (a.moments(&ps).unwrap(), whole.moments(&ps).unwrap());
    assert_eq!(
        got.percentiles, want.percentiles,
        "percentiles merge exactly"
    );
    assert_eq!((got.min_ms, got.max_ms), (want.min_ms, want.max_ms));
    assert!((got.mean_ms - want.mean_ms).abs() <= want.mean_ms * 1e-12);
    assert!((got.std_ms - want.std_ms).abs() <= want.std_ms * 1e-9);
    assert!(
        b.to_state().hdr.starts_with("HISTF"),
        "HdrHistogram's standard encoding"
    );
}

#[test]
fn a_damaged_saved_histogram_is_refused() {
    let mut s = Stat::new();
    s.push_ns(5);
    let mut state = s.to_state();
    state.count = 2;
    assert!(Stat::from_state(&state)
        .unwrap_err()
        .to_string()
        .contains("count says 2"));
    state.hdr = "not base64!".into();
    assert!(Stat::from_state(&state).is_err());
}

#[test]
fn nearest_rank_is_not_moved_by_float_rounding() {
    // 0.999 · 1000 is 999.0000000000001 in floating point: the rank is still 999.
    assert_eq!(super::nearest_rank(99.9, 1000), 999);
    assert_eq!(super::nearest_rank(7.0, 100), 7);
    assert_eq!(super::nearest_rank(50.0, 2), 1);
    assert_eq!(super::nearest_rank(99.0, 40), 40);
    assert_eq!(super::nearest_rank(0.0, 10), 1);
    assert_eq!(super::nearest_rank(100.0, 10), 10);
    assert_eq!(super::nearest_rank(50.0, 0), 1);
    // p99.9 of the values 1 … 1000 ms is the 999th, not the largest.
    let mut s = super::Stat::new();
    for v in 1..=1000u64 {
        s.push_ns(v * 1_000_000);
    }
    let m = s.moments(&[99.9]).unwrap();
    let p = m.p(99.9).unwrap();
    assert!((p - 999.0).abs() <= 999.0 * 5e-4, "{p}");
}
