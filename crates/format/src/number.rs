//! Numbers as people read them, in a bounded number of characters. Rust writes a float in fixed
//! notation whatever its size (`1e308` with `{:.2}` is 309 digits and two decimals), so a
//! corrupt or hostile figure would fill a table or a message. Every tool writes a number for
//! people through [`fixed`] or [`shortest`]: normal figures as before, and figures past
//! [`FIXED_LIMIT`] (or, for [`shortest`], below [`SHORTEST_SMALL`]) in scientific notation.
//! JSON output is left to serde_json, which already writes `1e308` as `1e+308`.

/// The magnitude from which a number is written in scientific notation: a thousand trillion,
/// far past any figure a benchmark measures, and below 2^53, so every whole number under it is
/// written exactly.
pub const FIXED_LIMIT: f64 = 1e15;

/// The smallest magnitude (but 0) that [`shortest`] writes in fixed notation.
pub const SHORTEST_SMALL: f64 = 1e-6;

/// `v` with `decimals` decimals (`{v:.2}`), or in scientific notation with as many decimals
/// (`1.00e308`) from [`FIXED_LIMIT`] on.
pub fn fixed(v: f64, decimals: usize) -> String {
    if v.is_finite() && v.abs() >= FIXED_LIMIT {
        format!("{v:.decimals$e}")
    } else {
        format!("{v:.decimals$}")
    }
}

/// `v` in the fewest digits that read back to it (`{v}`: `0.3`, `16`), or in scientific
/// notation (`1e308`, `5e-324`) from [`FIXED_LIMIT`] on and below [`SHORTEST_SMALL`].
pub fn shortest(v: f64) -> String {
    let a = v.abs();
    if v.is_finite() && a != 0.0 && !(SHORTEST_SMALL..FIXED_LIMIT).contains(&a) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_figures_are_written_as_before() {
        for v in [
            0.0,
            1.0,
            57.2249,
            -3.5,
            0.001,
            123_456_789.125,
            999_999_999_999_999.0,
        ] {
            assert_eq!(fixed(v, 2), format!("{v:.2}"));
            assert_eq!(fixed(v, 0), format!("{v:.0}"));
            assert_eq!(shortest(v), format!("{v}"));
        }
        assert_eq!(shortest(0.000001), "0.000001");
        assert_eq!(fixed(f64::NAN, 2), "NaN");
        assert_eq!(shortest(f64::INFINITY), "inf");
    }

    #[test]
    fn extreme_figures_stay_short() {
        assert_eq!(fixed(1e308, 2), "1.00e308");
        assert_eq!(fixed(-1e15, 1), "-1.0e15");
        assert_eq!(fixed(1.8446744073709552e19, 0), "2e19");
        assert_eq!(fixed(5e-324, 2), "0.00");
        assert_eq!(shortest(1e308), "1e308");
        assert_eq!(shortest(5e-324), "5e-324");
        assert_eq!(shortest(1.5e20), "1.5e20");
        for v in [f64::MAX, f64::MIN, f64::MIN_POSITIVE, 5e-324, -5e-324] {
            assert!(fixed(v, 2).len() < 16, "{}", fixed(v, 2));
            assert!(shortest(v).len() < 26, "{}", shortest(v));
        }
    }
}
